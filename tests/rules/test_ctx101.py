"""CTX101 seed-read: every form the issue lists, beyond the spec examples, and
the negatives (strings, comments, shadowing, non-field attributes, the runtime
module itself)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import run_engine, write
from rulecase import assert_case

from ctxlint.facts.context import MODULE_SCOPE

RULE = "CTX101"

FIXTURE_CONTEXT = (Path(__file__).parents[1] / "fixtures/specrt/specrt/context.py").read_text()

BAD = {
    "direct-and-getattr": """
        from specrt.context import get_server_args

        def f() -> object:
            a = get_server_args().context_length  # expect
            b = getattr(get_server_args(), "model_path")  # expect
            c = getattr(get_server_args(), "tp_size", 1)  # expect
            return a, b, c
        """,
    "star-import-of-the-runtime": """
        from specrt.context import *

        def f() -> object:
            return get_server_args().tp_size  # expect
        """,
    "walrus-binding-the-seed": """
        from specrt.context import get_server_args

        def f() -> object:
            a = (sa := get_server_args()).tp_size  # expect
            return a, sa.dp_size  # expect
        """,
    "module-attribute-chain": """
        import specrt.context
        import specrt.context as ctx

        def f() -> object:
            return (
                specrt.context.get_server_args().tp_size,  # expect
                ctx.get_server_args().dp_size,  # expect
            )
        """,
    "function-local-import-under-another-name": """
        def f() -> int:
            from specrt.context import get_server_args as seed
            return seed().tp_size  # expect
        """,
    "alias-copies-and-walrus": """
        from specrt.context import get_server_args

        def f() -> object:
            sa = get_server_args()
            sb = sa
            sc = sb
            if (sw := get_server_args()) is not None:
                pass
            return sc.tp_size, getattr(sb, "dp_size", 0), sw.model_path  # expect x3
        """,
    "read-in-a-comparison-is-still-a-read": """
        from specrt.context import get_server_args

        def f() -> bool:
            return get_server_args().tp_size == 2  # expect
        """,
    "module-alias-with-global-declaration": """
        from specrt.context import get_server_args

        SEED = get_server_args()

        def f() -> int:
            global SEED
            n = SEED.tp_size  # expect
            SEED = None  # rebinds the global: SEED is not a local of f
            return n
        """,
    "module-alias-in-a-nested-function": """
        from specrt.context import get_server_args

        SEED = get_server_args()

        def outer() -> object:
            def inner() -> int:
                return SEED.dp_size  # expect
            return inner
        """,
    "closure-reads-a-local-alias": """
        from specrt.context import get_server_args

        def outer() -> object:
            sa = get_server_args()
            def inner() -> int:
                return sa.tp_size  # expect
            return inner
        """,
    "parked-alias-read-in-an-earlier-method-and-in-a-closure": """
        from specrt.context import get_server_args

        class Worker:
            def early(self) -> int:
                return self._sa.tp_size  # expect

            def __init__(self) -> None:
                self._sa = get_server_args()

            def later(self) -> object:
                def inner() -> int:
                    return self._sa.dp_size  # expect
                return [self._sa.model_path for _ in range(2)], inner  # expect
        """,
    "module-level-read": """
        from specrt.context import get_server_args

        TP = get_server_args().tp_size  # expect
        """,
}

GOOD = {
    "strings-comments-docstrings": '''
        from specrt.context import get_server_args

        def f() -> str:
            """get_server_args().tp_size"""
            # get_server_args().tp_size
            return "get_server_args().tp_size" + f"{'sa.tp_size'}"
        ''',
    "module-alias-shadowed-by-a-later-local-assignment": """
        from specrt.context import get_server_args

        SEED = get_server_args()

        def f() -> int:
            n = SEED.tp_size  # Python: SEED is local in all of f (UnboundLocalError)
            SEED = 3
            return n

        def g(SEED: object) -> int:
            return SEED.tp_size

        def h() -> int:
            for SEED in range(3):
                pass
            return SEED.tp_size
        """,
    "enclosing-function-shadows-the-module-alias": """
        from specrt.context import get_server_args

        SEED = get_server_args()

        def outer() -> object:
            SEED = object()
            def inner() -> int:
                return SEED.tp_size
            return inner
        """,
    "alias-rebound-to-something-else": """
        from specrt.context import get_server_args

        def f() -> int:
            sa = get_server_args()
            sa = make()
            return sa.tp_size
        """,
    "non-field-attributes-methods-and-hand-offs": """
        from specrt.context import get_server_args

        def f(name: str) -> object:
            dump(get_server_args())
            return (
                get_server_args().resolved_dict(),
                get_server_args().not_a_field,
                getattr(get_server_args(), name),
            )
        """,
    "a-write-is-not-a-read": """
        from specrt.context import get_server_args

        def f() -> None:
            get_server_args().tp_size = 1
            sa = get_server_args()
            del sa.dp_size
        """,
    "accessor-of-the-same-name-from-another-module": """
        from other.acc import get_server_args

        def f() -> int:
            return get_server_args().tp_size
        """,
    "parked-alias-belongs-to-its-own-class": """
        from specrt.context import get_server_args

        class Holder:
            def __init__(self) -> None:
                self._sa = get_server_args()

        class Other:
            def m(self) -> int:
                return self._sa.tp_size
        """,
}


@pytest.mark.parametrize("source", BAD.values(), ids=BAD.keys())
def test_bad(project: Path, source: str) -> None:
    """Each marked line carries exactly one CTX101 finding, no other line does."""
    assert_case(
        project, RULE, source, extra={"other/acc.py": "def get_server_args():\n    return 1\n"}
    )


@pytest.mark.parametrize("source", GOOD.values(), ids=GOOD.keys())
def test_good(project: Path, source: str) -> None:
    """None of these is a seed field read."""
    assert_case(
        project, RULE, source, extra={"other/acc.py": "def get_server_args():\n    return 1\n"}
    )


def test_the_runtime_module_is_exempt(project: Path) -> None:
    """The runtime module may read its own slot."""
    reader = "\n\ndef tp() -> int:\n    return get_server_args().tp_size\n"
    assert_case(project, RULE, FIXTURE_CONTEXT + reader, path="specrt/context.py")


def test_finding_names_the_bag_leaf_and_the_scope(project: Path) -> None:
    """The message tells the user where to read instead; scope is the qualname."""
    from helpers import run_engine, write

    write(
        project,
        {
            "app/m.py": (
                "from specrt.context import get_server_args\n\n"
                "class K:\n    def m(self) -> str:\n"
                "        return get_server_args().attention_backend\n\n"
                "X = get_server_args().tp_size\n"
            )
        },
    )
    out = run_engine(project, select={RULE})
    assert [(f.scope, f.snippet) for f in out.findings] == [
        ("K.m", "get_server_args().attention_backend"),
        (MODULE_SCOPE, "get_server_args().tp_size"),
    ]
    assert "get_exec().kernel.attention_backend" in out.findings[0].message
    assert "get_parallel().tp_size" in out.findings[1].message


def test_a_property_no_leaf_answers_names_what_the_runtime_lacks(project: Path) -> None:
    """sglang 0.5.17's `mamba_cache_chunk_size`/`max_speculative_num_draft_tokens`
    are record properties with no bag leaf and no accessor: the hint says the
    runtime lacks one (as CTX102's details do), not "read a runtime_context
    accessor" that does not exist."""
    record = project / "specrt" / "record.py"
    record.write_text(
        record.read_text() + "\n    @property\n    def wide(self) -> bool:\n"
        "        return self.tp_size > 1\n"
    )
    write(
        project,
        {
            "app/m.py": (
                "from specrt.context import get_server_args\n\n\n"
                "def f() -> bool:\n"
                "    return get_server_args().wide\n"
            )
        },
    )
    (finding,) = run_engine(project, select={RULE}).findings
    assert finding.message.startswith("`wide` read off the seed record")
    assert finding.message.endswith("; the runtime lacks an accessor deriving it")
    assert "the runtime lacks an accessor deriving it from the bags" in finding.details
    assert "add one to specrt.context" in finding.details
    assert "read a runtime_context accessor" not in finding.message + finding.details


def test_the_message_says_what_the_seed_holds_in_this_tree(project: Path) -> None:
    """sglang 0.5.17's `__post_init__` ends with `materialize_declarations(self)`
    (a pipeline function reading the stash and `setattr`ing its parameter by a
    computed name): after it the fields carry resolution's decisions, so the
    seed misses only post-publish overrides (program.materialised). Without it
    (the design's record, 0.5.23) the seed is raw input."""
    from resolution_rt import RUNTIME

    materialize = (
        "\n\ndef materialize(server_args) -> None:\n"
        "    for decided in getattr(server_args, STASH):\n"
        "        for name, value in decided.items():\n"
        "            setattr(server_args, name, value)\n"
    )
    record = RUNTIME["specrt/record.py"].replace(
        "        resolve(self)\n",
        "        resolve(self)\n        from specrt.resolution import materialize\n\n"
        "        materialize(self)\n",
    )
    reader = (
        "from specrt.context import get_server_args\n\n\n"
        "def f() -> int:\n"
        "    return get_server_args().tp_size\n"
    )
    pipeline = "def resolve(server_args) -> None:\n    pass\n"
    files = {**RUNTIME, "app/pipeline.py": pipeline, "app/m.py": reader}
    write(project, files)
    out = run_engine(project, select={RULE})
    (raw,) = out.findings
    assert "it is the operator's raw input and misses resolution and overrides" in raw.message
    assert out.program.sets[RULE]["declarations written onto the fields by"] == []
    resolution = RUNTIME["specrt/resolution.py"] + materialize
    write(project, {**files, "specrt/resolution.py": resolution, "specrt/record.py": record})
    out = run_engine(project, select={RULE})
    (decided,) = out.findings
    assert "misses resolution" not in decided.message
    assert decided.message.startswith(
        "`tp_size` read off the seed record: it holds resolution's decisions "
        "but misses post-publish overrides; "
    )
    assert "`materialize` writes resolution's decisions onto the fields" in decided.details
    writer = out.program.sets[RULE]["declarations written onto the fields by"]
    assert writer == ["specrt.resolution.materialize"]
