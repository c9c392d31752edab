"""CTX201 record-mutation: every write form and every kind of record instance
the issue lists, and the negatives (strings, comparisons, dicts, another
module's class of the same name, explicit non-record annotations)."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import REPO, run_cli
from helpers import RIVAL, run_engine, write
from rulecase import assert_case

RULE = "CTX201"
OTHER_RECORD = {"other/record.py": "class ServerArgs:\n    tp_size: int = 1\n"}

BAD = {
    "assignment-forms": """
        from specrt.record import ServerArgs

        def f(rec: ServerArgs) -> None:
            rec.tp_size = 1  # expect
            rec.dp_size: int = 2  # expect
            rec.context_length += 1  # expect
            rec.tp_size = rec.dp_size = 3  # expect x2
            x = rec.model_path = "m"  # expect
        """,
    "tuple-list-starred-targets": """
        from specrt.record import ServerArgs

        def f(rec: ServerArgs) -> None:
            (rec.tp_size, rec.dp_size) = 1, 2  # expect x2
            [rec.model_path, *rec.context_length] = ["m", 1]  # expect x2
            a, (b, rec.chunked_prefill_size) = 1, (2, 3)  # expect
        """,
    "for-with-del-targets": """
        from specrt.record import ServerArgs

        def f(rec: ServerArgs) -> None:
            for rec.tp_size in range(2):  # expect
                pass
            for i, rec.dp_size in enumerate([1]):  # expect
                pass
            with open("x") as rec.model_path:  # expect
                pass
            del rec.tp_size, rec.dp_size  # expect x2
        """,
    "setattr-family": """
        from specrt.record import ServerArgs

        class Sealed:
            pass

        def f(rec: ServerArgs, name: str) -> None:
            setattr(rec, "tp_size", 1)  # expect
            setattr(rec, name, 1)  # expect
            delattr(rec, "dp_size")  # expect
            object.__setattr__(rec, "tp_size", 1)  # expect
            Sealed.__setattr__(rec, "tp_size", 1)  # expect
            rec.__setattr__("dp_size", 1)  # expect
        """,
    "dict-backdoors": """
        from specrt.record import ServerArgs

        def f(rec: ServerArgs) -> None:
            vars(rec)["tp_size"] = 1  # expect
            rec.__dict__["dp_size"] = 1  # expect
            vars(rec).update(tp_size=1)  # expect
            rec.__dict__.update(dp_size=2)  # expect
        """,
    "the-seed-and-its-aliases": """
        from specrt.context import get_server_args

        SEED = get_server_args()

        def f() -> None:
            get_server_args().tp_size = 1  # expect
            sa = get_server_args()
            copy = sa
            copy.dp_size = 2  # expect
            SEED.model_path = "m"  # expect
        """,
    "annotation-spellings": """
        import typing
        from typing import Optional, Union
        import specrt.record as records
        from specrt.record import ServerArgs

        def a(x: Optional[ServerArgs]) -> None:
            x.tp_size = 1  # expect

        def b(x: "ServerArgs") -> None:
            x.tp_size = 1  # expect

        def c(x: ServerArgs | None) -> None:
            x.tp_size = 1  # expect

        def d(x: "ServerArgs | None", y: None | ServerArgs) -> None:
            x.tp_size = y.tp_size = 1  # expect x2

        def e(x: typing.Optional["ServerArgs"], y: Union[ServerArgs, None]) -> None:
            x.tp_size = y.tp_size = 1  # expect x2

        def g(x: records.ServerArgs) -> None:
            x.tp_size = 1  # expect

        def h() -> None:
            local: ServerArgs = make()
            local.tp_size = 1  # expect
        """,
    "annotated-attributes": """
        from specrt.record import ServerArgs

        class Runner:
            config: ServerArgs

            def __init__(self, args: ServerArgs) -> None:
                self.held: ServerArgs = args

            def tweak(self) -> None:
                self.config.tp_size = 1  # expect
                self.held.dp_size = 1  # expect
        """,
    "parked-seed": """
        from specrt.context import get_server_args

        class Runner:
            def __init__(self) -> None:
                self._sa = get_server_args()

            def tweak(self) -> None:
                self._sa.tp_size = 1  # expect
        """,
    "record-parameter-naming-convention": """
        from specrt.record import ServerArgs

        def build(cfg: ServerArgs) -> None:
            pass

        def launch(cfg: ServerArgs) -> None:
            pass

        def unannotated(cfg) -> None:
            cfg.tp_size = 1  # expect

        class Holder:
            def __init__(self, cfg) -> None:
                self.cfg = cfg

        def through_an_attribute(h: Holder) -> None:
            h.cfg.dp_size = 2  # expect
        """,
    # the strict guard refuses any attribute, so the ratchet counts every one
    "any-attribute-not-only-declared-fields": """
        from specrt.context import get_server_args
        from specrt.record import ServerArgs

        def f(server_args: ServerArgs) -> None:
            server_args.not_a_field = 3  # expect
            server_args.__dict__["not_a_field"] = 4  # expect
            setattr(server_args, "not_a_field", 5)  # expect
            server_args._chunk_size = 64  # expect
            global_server_args = get_server_args()
            global_server_args.resolved_dict = None  # expect
        """,
    "a-copy-of-a-record-is-a-record": """
        import copy
        import dataclasses
        from copy import deepcopy

        from specrt.context import get_server_args
        from specrt.record import ServerArgs

        def build(cfg: ServerArgs) -> None:
            pass

        def launch(cfg: ServerArgs) -> None:
            pass

        def f(server_args: ServerArgs, cfg) -> None:
            draft = deepcopy(server_args)
            draft.tp_size = 1  # expect
            draft.attention_backend = None  # expect
            dp = dataclasses.replace(cfg, tp_size=2)
            dp.placement_group = None  # expect
            again = copy.copy(draft)
            again.dp_size = 2  # expect
            seeded = copy.copy(get_server_args())
            seeded.dp_size = 3  # expect
            draft = {}
            draft.tp_size = 4
        """,
    "a-new-record-whatever-its-name": """
        from specrt.record import ServerArgs

        def setup_allocator_context() -> None:
            args = ServerArgs()
            args._mamba_cache_chunk_size = 64  # expect
            ServerArgs().tp_size = 2  # expect
            args = dict()
            args.tp_size = 1
        """,
}

GOOD = {
    "strings-comments-comparisons": '''
        from specrt.record import ServerArgs

        def f(server_args: ServerArgs) -> bool:
            """server_args.tp_size = 1"""
            # server_args.tp_size = 1
            print("server_args.tp_size = 1", f"{'setattr(server_args, 1)'}")
            return server_args.tp_size == 1 and server_args.dp_size != 2
        ''',
    "dicts-and-other-objects": """
        from specrt.context import get_server_args
        from specrt.record import ServerArgs

        def f(server_args: ServerArgs, opts: dict) -> None:
            values = {"tp_size": get_server_args()}
            values["tp_size"] = 1
            opts["dp_size"] = 2
        """,
    "a-copy-of-something-else": """
        import copy
        from copy import deepcopy

        def f(opts: dict, args) -> None:
            c = copy.copy(opts)
            c.tp_size = 1
            d = deepcopy(args)
            d.tp_size = 1
        """,
    "walrus-binds-a-name-not-a-field": """
        from specrt.context import get_server_args

        def f() -> int:
            if (tp_size := get_server_args()) is not None:
                return 1
            return 0
        """,
    "same-named-class-from-another-module": """
        from other.record import ServerArgs

        def f(args: ServerArgs) -> None:
            args.tp_size = 1

        def g(server_args: ServerArgs) -> None:
            server_args.tp_size = 1  # annotation beats the `server_args` naming convention
        """,
    "explicit-other-annotation-beats-the-convention": """
        from types import SimpleNamespace

        def f(server_args: SimpleNamespace) -> None:
            server_args.tp_size = 1

            def inner() -> None:
                server_args.dp_size = 2
        """,
    "a-name-that-is-not-a-convention": """
        from specrt.record import ServerArgs

        def once(args: ServerArgs) -> None:
            pass

        def other(args: dict) -> None:
            pass

        def another(args: list) -> None:
            pass

        def g(args) -> None:
            args.tp_size = 1
        """,
    "self-and-plain-runner-attributes": """
        from specrt.record import ServerArgs

        class Worker:
            def __init__(self, tp_size: int) -> None:
                self.tp_size = tp_size

            def method(self, args: ServerArgs) -> None:
                self.dp_size = args.dp_size
        """,
}


def _extra() -> dict[str, str]:
    return dict(OTHER_RECORD)


@pytest.mark.parametrize("source", BAD.values(), ids=BAD.keys())
def test_bad(project: Path, source: str) -> None:
    """Each marked line carries its CTX201 findings, no other line does."""
    assert_case(project, RULE, source, extra=_extra())


@pytest.mark.parametrize("source", GOOD.values(), ids=GOOD.keys())
def test_good(project: Path, source: str) -> None:
    """None of these writes a field of the record."""
    assert_case(project, RULE, source, extra=_extra())


def test_relative_import_of_the_record(project: Path) -> None:
    """`from .record import ServerArgs` inside the runtime package is the record."""
    source = """
        from .record import ServerArgs

        def f(x: ServerArgs) -> None:
            x.tp_size = 1  # expect
        """
    assert_case(project, RULE, source, path="specrt/user.py")


def test_resolution_pipeline_is_excluded_by_config(project: Path) -> None:
    """The fixture's `per-rule-exclude` keeps the record module's own writes out."""
    record = project / "specrt" / "record.py"
    record.write_text(
        record.read_text() + "\n\ndef resolve(sa: ServerArgs) -> None:\n    sa.tp_size = 2\n"
    )
    write(project, {"app/m.py": "from specrt.record import ServerArgs\n"})
    assert run_engine(project, select={RULE}).findings == []


def test_message_names_the_field_and_the_form(project: Path) -> None:
    """The message says which field, how it was written, and what to do instead;
    the details give the whole remedy and the field's bag leaf."""
    write(
        project,
        {
            "app/m.py": (
                "from specrt.record import ServerArgs\n\n"
                "def f(rec: ServerArgs, name: str) -> None:\n"
                "    rec.tp_size += 1\n"
                "    setattr(rec, name, 1)\n"
            )
        },
    )
    first, second = run_engine(project, select={RULE}).findings
    assert "`tp_size`" in first.message and "augmented assignment" in first.message
    assert "get_context().override" in first.message and len(first.message) <= 200
    assert "constructor argument" in first.details and "get_parallel().tp_size" in first.details
    assert "attribute named at run time" in second.message and "setattr()" in second.message
    assert (first.scope, first.snippet) == ("f", "rec.tp_size")


def test_a_rival_record_class_takes_the_convention_over_in_its_package(project: Path) -> None:
    """Told apart by where the annotations' class comes from, not by a path list:
    `specrt.mmgen` annotates `server_args` with its own ServerArgs, so there an
    unannotated one is that record; an explicit record annotation and the seed
    still are the record, and outside the package the convention holds."""
    inside = """
        from specrt.context import get_server_args
        from specrt.record import ServerArgs as Record

        def validate(server_args) -> None:
            server_args.tp_size = 2
            setattr(server_args, "dp_size", 1)

        class Stage:
            def run(self, case) -> None:
                self.server_args.tp_size = 1
                case.server_args.dp_size = 2

        def real(server_args: Record) -> None:
            server_args.tp_size = 2  # expect
            get_server_args().dp_size = 1  # expect
        """
    assert_case(project, RULE, inside, path="specrt/mmgen/config.py", extra=RIVAL)
    outside = """
        def tune(server_args) -> None:
            server_args.tp_size = 2  # expect
        """
    assert_case(project, RULE, outside, extra=RIVAL)
    out = run_engine(project, select={RULE})
    assert out.program.sets[RULE]["record parameter names meaning a rival record class"] == [
        "server_args in specrt.mmgen (its own specrt.mmgen.args.ServerArgs)"
    ]


def test_one_rival_annotation_is_not_a_convention(project: Path) -> None:
    """A single `server_args: OtherServerArgs` does not take the name over."""
    rival = {"specrt/mmgen/args.py": RIVAL["specrt/mmgen/args.py"]}
    rival["specrt/mmgen/entry.py"] = (
        "from specrt.mmgen.args import ServerArgs\n\n\n"
        "def launch(server_args: ServerArgs) -> None:\n    pass\n"
    )
    source = """
        def validate(server_args) -> None:
            server_args.tp_size = 2  # expect
        """
    assert_case(project, RULE, source, path="specrt/mmgen/config.py", extra=rival)


def test_the_runtime_module_owns_the_record_slot(project: Path) -> None:
    """The runtime builds the record a test override publishes and seeds its
    private caches (SGLang's `_ServerArgsOverride.install`): not a mutation."""
    context = project / "specrt" / "context.py"
    context.write_text(
        context.read_text()
        + "\n\ndef _seed(server_args: ServerArgs, seeds: dict) -> None:\n"
        + "    for name, value in seeds.items():\n"
        + "        object.__setattr__(server_args, name, value)\n"
    )
    assert run_engine(project, select={RULE}).findings == []


def test_a_write_before_resolution_says_what_it_is(project: Path) -> None:
    """A write followed, on the same name, by a call of a method that sets the
    record's write seal (a flag its `__setattr__` checks before refusing) is a
    write to the operator's input outside the pipeline, not one after resolution;
    a method setting a flag the guard checks negated (an exemption) is no entry."""
    record = project / "specrt" / "record.py"
    record.write_text(
        record.read_text()
        + "\n    def __setattr__(self, name, value):\n"
        + "        if getattr(self, '_sealed', False) and not getattr(self, '_lifted', False):\n"
        + "            raise AttributeError(name)\n"
        + "        object.__setattr__(self, name, value)\n"
        + "\n    def resolve_once(self) -> None:\n"
        + "        self._sealed = True\n"
        + "\n    def lift(self) -> None:\n"
        + "        self._lifted = True\n"
    )
    source = (
        "from specrt.record import ServerArgs\n\n"
        "def run_server(server_args: ServerArgs) -> None:\n"
        "    server_args.model_path = 'm'\n"
        "    server_args.resolve_once()\n"
        "    server_args.tp_size = 2\n\n"
        "def other(server_args: ServerArgs) -> None:\n"
        "    server_args.tp_size = 1\n"
        "    server_args.lift()\n"
    )
    write(project, {"app/m.py": source})
    out = run_engine(project, select={RULE})
    before, after, lifted = out.findings
    assert (before.line, after.line, lifted.line) == (4, 6, 9)
    assert "the operator's input, before .resolve_once() resolves it" in before.message
    assert "declare_resolution" in before.message and "launcher-stage" in before.details
    for f in (after, lifted):
        assert "read-only after resolution" in f.message
    assert out.program.sets[RULE]["resolution entries"] == ["resolve_once (sets _sealed)"]


def test_message_says_when_the_attribute_is_not_a_field(project: Path) -> None:
    """A method name or private attribute is reported as what it is."""
    write(
        project,
        {
            "app/m.py": (
                "from specrt.record import ServerArgs\n\n"
                "def f(rec: ServerArgs) -> None:\n"
                "    rec.resolved_dict = None\n"
            )
        },
    )
    (finding,) = run_engine(project, select={RULE}).findings
    assert "write to `resolved_dict` on the record (not a declared field)" in finding.message


def test_the_sglang_profile_checks_the_test_kits(tmp_path: Path) -> None:
    """SGLang's mutation ratchet covers `sglang/test/`: so does the built-in
    profile (a test kit seeding a private attribute onto a record is reported)."""
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import guard_probes
    finally:
        sys.path.remove(str(REPO / "bench"))
    kit = "sglang/test/kits/radix_fixtures.py"
    files = {
        **guard_probes.BASE,
        "sglang/test/__init__.py": "",
        "sglang/test/kits/__init__.py": "",
        kit: (
            "from sglang.srt.server_args import ServerArgs\n\n\n"
            "def make(server_args: ServerArgs) -> None:\n"
            "    server_args._mamba_cache_chunk_size = 64\n"
        ),
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    res = run_cli(
        "check", "--profile", "sglang", str(tmp_path), "--select", "CTX201", "--format", "json"
    )  # fmt: skip
    assert res.returncode == 1, res.stderr
    found = [(f["path"], f["line"]) for f in json.loads(res.stdout)["findings"]]
    assert found == [(kit, 5)]


def test_the_designs_copy_helper_is_configured_not_reported(project: Path) -> None:
    """`record-copy-helpers` names the one function the design lets copy and edit a
    record (SGLang's `server_args_variant`, for test doubles): neither its copy
    (CTX202) nor its writes to the copy (CTX201) are reported; the same code
    anywhere else is."""
    source = """
        import copy

        from specrt.record import ServerArgs

        def server_args_variant(server_args: ServerArgs, **fields) -> ServerArgs:
            variant = copy.deepcopy(server_args)
            for name, value in fields.items():
                object.__setattr__(variant, name, value)
            return variant

        def elsewhere(server_args: ServerArgs) -> None:
            variant = copy.deepcopy(server_args)  # expect: CTX202
            variant.tp_size = 2  # expect: CTX201
        """
    write(project, {"app/kit.py": textwrap.dedent(source).lstrip("\n")})
    config = project / "pyproject.toml"
    config.write_text(
        config.read_text().replace(
            "[tool.ctxlint]\n",
            '[tool.ctxlint]\nrecord-copy-helpers = ["app.kit.server_args_variant"]\n',
        )
    )
    out = run_engine(project, select={RULE, "CTX202"})
    assert sorted((f.rule, f.line) for f in out.findings) == [("CTX201", 13), ("CTX202", 12)]


def test_a_write_inside_resolution_is_answered_with_the_declaration(project: Path) -> None:
    """Code the record's `__post_init__` reaches (a platform default helper, as
    sglang 0.5.17's `npu/utils.py`) decides by declaring: the hint is the
    declaration function as this tree declares it, not `get_context().override`,
    which the resolving record has no bags for. A write outside it keeps that hint."""
    from resolution_rt import RUNTIME

    pipeline = (
        "from app.platform import set_defaults\n\n"
        "def resolve(server_args) -> None:\n"
        "    set_defaults(server_args)\n"
    )
    platform = (
        "from specrt.record import ServerArgs\n\n"
        "def set_defaults(server_args: ServerArgs) -> None:\n"
        "    server_args.page_size = 128\n\n"
        "def later(server_args: ServerArgs) -> None:\n"
        "    server_args.page_size = 64\n"
    )
    write(project, {**RUNTIME, "app/pipeline.py": pipeline, "app/platform.py": platform})
    inside, outside = run_engine(project, select={RULE}).findings
    assert (inside.scope, outside.scope) == ("set_defaults", "later")
    assert "inside resolution, where a decision is declared" in inside.message
    assert "reached from ServerArgs.__post_init__" in inside.details
    assert "declare_resolution(server_args, source, **fields)" in inside.message
    assert "override" not in inside.message
    assert "get_context().override" in outside.details


def test_a_declaration_a_later_step_replaces_is_named_before_it(project: Path) -> None:
    """sglang 0.5.17: the npu defaults (`set_default_server_args`, run by
    `_handle_npu_backends` from `__post_init__`) write fields, and a later step
    of the same pipeline (`_handle_model_specific_adjustments`) assigns the
    declaration stash afresh, which CTX104 reports. Declaring at the npu step
    would be dropped there: the remedy names that replacement first. A write in a
    step after the replacement, or with none, keeps the plain declaration."""
    from resolution_rt import RUNTIME

    def pipeline(replace_first: bool) -> str:
        steps = ["set_defaults(server_args)", "adjust(server_args)"]
        if replace_first:
            steps.reverse()
        body = "".join(f"    {s}\n" for s in steps)
        return (
            "from app.platform import set_defaults\n\n"
            "def collect(server_args) -> list:\n    return []\n\n"
            "def adjust(server_args) -> None:\n"
            "    server_args._stash = collect(server_args)\n\n"
            f"def resolve(server_args) -> None:\n{body}"
        )

    platform = (
        "from specrt.record import ServerArgs\n\n"
        "def set_defaults(server_args: ServerArgs) -> None:\n"
        "    server_args.page_size = 128\n"
    )
    for replace_first in (False, True):
        files = {**RUNTIME, "app/pipeline.py": pipeline(replace_first)}
        write(project, {**files, "app/platform.py": platform})
        found = run_engine(project, select={RULE}).findings
        (f,) = [f for f in found if f.scope == "set_defaults"]
        assert "reached from ServerArgs.__post_init__: declare it with declare_resolution(" in (
            f.details
        )
        named = "`adjust` replaces the declarations after this runs (app/pipeline.py:7, CTX104)"
        assert (named in f.details) is not replace_first, f.details
    assert len(f.message) <= 200


def test_a_private_memo_is_not_given_the_config_remedies(project: Path) -> None:
    """sglang 0.5.23's test kits seed `_mamba_cache_chunk_size`: no field, so
    `get_context().override` refuses it and the record's constructor takes no
    such argument; the remedy keeps it off the record, naming the property it
    backs where the record has one (`_x` behind `x`)."""
    record = project / "specrt" / "record.py"
    record.write_text(
        record.read_text() + "\n    @property\n    def chunk(self) -> int:\n"
        "        return getattr(self, '_chunk', self.tp_size)\n"
    )
    write(
        project,
        {
            "app/m.py": (
                "from specrt.record import ServerArgs\n\n"
                "def f(rec: ServerArgs) -> None:\n"
                "    rec._chunk = 64\n"
                "    rec._note = 'x'\n"
            )
        },
    )
    memo, note = run_engine(project, select={RULE}).findings
    for f in (memo, note):
        assert "not configuration" in f.message and "keep the value off the record" in f.details
        assert "change config with" not in f.details and "pass the value as" not in f.details
    assert "it backs the record's `chunk` property" in memo.details
    assert "backs" not in note.details


def test_a_declaration_is_offered_only_for_a_whitelisted_field(project: Path) -> None:
    """sglang 0.5.17's npu `set_default_server_args` (reached from
    `__post_init__`) writes `chunked_prefill_size`, which is not
    `resolvable=True` there: `run_post_process_pass(server_args, fn)` would
    raise at its slot (`validate_declarations`). The hint declares only a field
    on the whitelist (program.declarable) and otherwise says to mark it
    resolvable first."""
    from resolution_rt import whitelisted

    pipeline = (
        "from app.platform import set_defaults\n\n"
        "def resolve(server_args) -> None:\n"
        "    set_defaults(server_args)\n"
    )
    platform = (
        "from specrt.record import ServerArgs\n\n"
        "def set_defaults(server_args: ServerArgs) -> None:\n"
        "    server_args.tp_size = 2\n"
        "    server_args.dp_size = 2\n"
    )
    for gated in (True, False):
        files = {**whitelisted(gated=gated), "app/pipeline.py": pipeline}
        write(project, {**files, "app/platform.py": platform})
        ok, refused = sorted(run_engine(project, select={RULE}).findings, key=lambda f: f.line)
        assert "declared, not written: declare it with declare_resolution(" in ok.message
        assert "declared, not written: the field is not declared resolvable" in refused.message
        assert "`dp_size` is not declared resolvable" in refused.details
        assert "mark it `Arg(..., resolvable=True)` first, then declare it" in refused.details
        gate = "would raise at its slot (`_check_names` checks the whitelist)"
        assert (gate in refused.details) is gated, refused.details


def test_a_provenance_slot_is_listed_apart_where_its_write_cannot_raise(project: Path) -> None:
    """sglang 0.5.23 srt/entrypoints/engine.py:301: `Engine.__init__` sets the
    record's `_launch_command` through `msgspec.Struct.__setattr__` on the record
    it has just built; `launch_command` returns that slot and reads nothing else
    (no bag behind it), so the write neither desyncs nor raises: listed apart.
    A plain write with no resolution after it is still reported, and its hint no
    longer asks for inputs the property does not have."""
    record = project / "specrt" / "record.py"
    record.write_text(
        record.read_text() + "\n    @property\n    def launch_command(self) -> str | None:\n"
        "        return getattr(self, '_launch_command', None)\n\n"
        "    def resolve_once(self) -> None:\n"
        "        self._frozen = True\n\n"
        "    def __setattr__(self, name: str, value: object) -> None:\n"
        "        if getattr(self, '_frozen', False):\n"
        "            raise AttributeError(name)\n"
        "        object.__setattr__(self, name, value)\n"
    )
    write(
        project,
        {
            "app/m.py": (
                "from specrt.record import ServerArgs\n\n\n"
                "def build(**kwargs) -> ServerArgs:\n"
                "    server_args = ServerArgs(**kwargs)\n"
                "    object.__setattr__(server_args, '_launch_command', 'Engine()')\n"
                "    return server_args\n\n\n"
                "def launch(argv: list) -> ServerArgs:\n"
                "    server_args = ServerArgs()\n"
                "    server_args._launch_command = ' '.join(argv)\n"
                "    server_args.resolve_once()\n"
                "    return server_args\n\n\n"
                "def later(server_args: ServerArgs) -> None:\n"
                "    server_args._launch_command = 'again'\n"
            )
        },
    )
    out = run_engine(project, select={RULE})
    (late,) = out.findings
    assert late.line == 18
    assert "provenance (its `launch_command` property returns it" in late.message
    assert "inputs it is computed from" not in late.details
    key = "provenance writes before resolution or past the guard (no bag: not reported)"
    assert [a.split(" ")[0] for a in out.program.sets[RULE][key]] == ["app/m.py:6", "app/m.py:12"]


SEEDING_OVERRIDE = '''

class _Override:
    """What `override_server_args` returns (sglang 0.5.23's `_ServerArgsOverride`)."""

    def __init__(self, fields: dict) -> None:
        self._fields = fields

    def install(self) -> ServerArgs:
        server_args = ServerArgs()
        unknown = {n for n in self._fields if not n.startswith("_")} - {"tp_size"}
        if unknown:
            raise ValueError(sorted(unknown))
        for name, value in self._fields.items():
            object.__setattr__(server_args, name, value)  # seeds past the guard
        return server_args
'''

KIT = (
    "from specrt.context import publish\n"
    "from specrt.record import ServerArgs\n\n"
    "def kit() -> None:\n"
    "    args = ServerArgs()\n"
    "    args._chunk = 64\n"
    "    args.note = 1\n"
    "    publish(args, role='scheduler')\n"
)


@pytest.mark.parametrize("seeding", [True, False])
def test_a_test_seed_of_a_private_slot_is_told_the_runtime_override(
    project: Path, seeding: bool
) -> None:
    """sglang 0.5.23's test kits seed `_mamba_cache_chunk_size` on a hand-built
    record and publish it; "keep the value off the record" breaks them (the
    slot answers a property the dummy model cannot). Its runtime's
    `get_context().override_server_args(**fields)` seeds non-field names that
    start with `_` past the guard: in a test, that call is the remedy. Not for a
    name it refuses (no `_`), not outside tests, and not where the override
    seeds nothing (0.5.17's)."""
    context = project / "specrt" / "context.py"
    if seeding:
        context.write_text(context.read_text() + SEEDING_OVERRIDE)
    write(project, {"app/tests/kit_test.py": KIT, "app/m.py": KIT})
    found = {
        (f.path, f.snippet.strip()): f
        for f in run_engine(project, select={RULE}).findings
        if f.rule == RULE
    }
    kit = found[("app/tests/kit_test.py", "args._chunk")]
    call = "get_context().override_server_args"
    if seeding:
        assert f"a test seeds it on a hand-built record: use {call}(...)" in kit.message
        assert f"{call}(_chunk=..., <fields>)" in kit.details
        assert "off the record" not in kit.message + kit.details
    else:
        assert "keep the value off the record" in kit.details and call not in kit.message
    for where in [("app/tests/kit_test.py", "args.note"), ("app/m.py", "args._chunk")]:
        other = found[where]
        assert "keep the value off the record" in other.details, where
        assert call not in other.message + other.details, where
