"""CTX101's fix on the shapes real code has: targets derived from the runtime
module (bag leaf, the parallel context's member, an instance-derived
accessor), function-local imports, aliases bound in several branches, and
the aliases it must leave."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixrun import fix_project
from helpers import cli, write

from ctxlint.fix.plan import FIXED, LEFT, ROLLED_BACK


def test_a_local_import_and_alias_keep_the_blank_lines_around_them(project: Path) -> None:
    write(
        project,
        {
            "app/example.py": '''\
def moe_cp() -> bool:
    """Docstring."""
    from specrt.context import get_server_args

    sa = get_server_args()
    return sa.tp_size > sa.dp_size
'''
        },
    )
    fix_project(project, {"CTX101"}, unsafe=True)
    assert (
        (project / "app/example.py").read_text()
        == '''\
def moe_cp() -> bool:
    """Docstring."""
    from specrt.context import get_parallel

    return get_parallel().tp_size > get_parallel().dp_size
'''
    )


def test_an_alias_bound_in_two_branches_is_rewritten_and_both_go(project: Path) -> None:
    write(
        project,
        {
            "app/example.py": """\
import specrt.context as ctx


def pick(flag: bool) -> str:
    if flag:
        # the seed, once
        sa = ctx.get_server_args()
        return sa.attention_backend
    sa = ctx.get_server_args()
    return sa.model_path
"""
        },
    )
    result = fix_project(project, {"CTX101"}, unsafe=True)
    assert [s.status for s in result.sites] == [FIXED, FIXED]
    assert (
        (project / "app/example.py").read_text()
        == """\
import specrt.context as ctx


def pick(flag: bool) -> str:
    if flag:
        # the seed, once
        return ctx.get_exec().kernel.attention_backend
    return ctx.get_model().model_path
"""
    )


def test_an_alias_that_may_be_a_handed_record_is_left(project: Path) -> None:
    text = """\
from specrt.context import get_server_args


def pages(server_args=None) -> int:
    if server_args is None:
        server_args = get_server_args()
    return server_args.max_running_requests
"""
    # a file with no import at all names it too (the search's first word must
    # not be one of the import line the pattern leaves out)
    handed = "def run(module, sa) -> int:\n    return module.pages(sa)\n"
    write(project, {"app/example.py": text, "app/handed.py": handed})
    result = fix_project(project, {"CTX101"}, unsafe=True)
    assert [(s.status, s.reason) for s in result.sites] == [
        (
            LEFT,
            "the parameter `server_args` stays: `module.pages` at app/handed.py:2 may be "
            "`pages` (an attribute's calls are not followed)",
        )
    ]
    assert (project / "app/example.py").read_text() == text


def test_a_parameter_defaulting_to_the_seed_that_no_call_passes_goes(project: Path) -> None:
    """SGLang 0.5.19's own edit of `spec_need_hidden_states(server_args=None)`:
    no call hands a record in, so the parameter is always the seed."""
    text = """\
from typing import Optional

from specrt.context import get_server_args


def pages(server_args: Optional[object] = None) -> int:
    if server_args is None:
        server_args = get_server_args()

    # the bound
    return server_args.max_running_requests


def twice() -> int:
    return 2 * pages()
"""
    caller = "from app.example import pages\n\n\ndef run() -> int:\n    return pages()\n"
    write(project, {"app/example.py": text, "app/caller.py": caller})
    assert [s.reason for s in fix_project(project, {"CTX101"}).sites] == [
        "an unsafe fix (the value changes to the resolved one): run with --unsafe"
    ]
    result = fix_project(project, {"CTX101"}, unsafe=True)
    assert [(s.status, s.unsafe) for s in result.sites] == [(FIXED, True)]
    assert result.sites[0].reason.endswith(
        "; the parameter `server_args`, which no call in the project passes, goes with its "
        "`if server_args is None` (a caller that passes a record now fails loudly)"
    )
    assert (project / "app/example.py").read_text() == text.replace(
        "pages(server_args: Optional[object] = None)", "pages()"
    ).replace("    if server_args is None:\n        server_args = get_server_args()\n", "").replace(
        "server_args.max_running_requests", "get_schedule().max_running_requests"
    ).replace(
        "from specrt.context import get_server_args", "from specrt.context import get_schedule"
    )


def test_a_parameter_defaulting_to_the_seed_that_a_call_here_passes_stays(
    project: Path,
) -> None:
    text = """\
from specrt.context import get_server_args


def pages(server_args=None) -> int:
    if server_args is None:
        server_args = get_server_args()
    return server_args.max_running_requests


def twice(sa) -> int:
    return 2 * pages(sa)
"""
    write(project, {"app/example.py": text})
    result = fix_project(project, {"CTX101"}, unsafe=True)
    assert [(s.status, s.reason) for s in result.sites] == [
        (
            LEFT,
            "the parameter `server_args` stays: no call of `twice` in the project: what its "
            "`sa` holds is not known",
        )
    ]
    assert (project / "app/example.py").read_text() == text


CONTEXT = """
class ParallelContext:
    @property
    def world_size(self) -> int:
        return 1


def get_parallel() -> ParallelContext:
    return _CONTEXT.config_bag("parallel")


def chunk_size() -> int:
    return get_server_args().chunk_size
"""
RECORD = """

    world_size: int = 1

    @property
    def chunk_size(self) -> int:
        return 64

    @property
    def page_budget(self) -> int:
        if not hasattr(self, "_budget"):  # its own memo: not an input
            self._budget = getattr(self.model_config(), "budget", 8) * view(self).page_size
        return self._budget
"""


def test_targets_come_from_the_runtime_module(project: Path) -> None:
    context = project / "specrt" / "context.py"
    text = context.read_text().replace(
        'def get_parallel() -> object:\n    return _CONTEXT.config_bag("parallel")\n', ""
    )
    context.write_text(text + CONTEXT)
    record = project / "specrt" / "record.py"
    record.write_text(record.read_text() + RECORD)
    write(
        project,
        {
            "app/example.py": """\
from specrt.context import get_server_args


def sizes() -> tuple:
    sa = get_server_args()
    return get_server_args().world_size, get_server_args().chunk_size, sa.page_budget
"""
        },
    )
    result = fix_project(project, {"CTX101"}, unsafe=True)
    got = {s.snippet: (s.status, s.became or s.reason) for s in result.sites}
    assert got == {
        # a record field with no namespace: the member of get_parallel()'s class
        "get_server_args().world_size": (FIXED, "get_parallel().world_size"),
        # a computed member: the runtime module's same-named accessor
        "get_server_args().chunk_size": (FIXED, "chunk_size()"),
        # a computed member the runtime lacks: --unsafe adds its accessor there
        "sa.page_budget": (FIXED, "page_budget()"),
    }
    assert (
        "return get_parallel().world_size, chunk_size(), page_budget()"
        in (project / "app/example.py").read_text()
    )
    assert result.added == {"specrt/context.py": ["page_budget"]}
    assert (project / "specrt/context.py").read_text() == text + CONTEXT + ADDED


ADDED = """

def page_budget() -> int:
    \"\"\"The published record's `page_budget` (added by ctxlint fix).\"\"\"
    return get_server_args().page_budget
"""


BUDGET = """\
from specrt.context import get_server_args


def budget() -> int:
    return get_server_args().page_budget
"""


def _budget_read(project: Path, runtime_tail: str = "") -> Path:
    """The project with the computed member `page_budget` (no accessor) read in
    app/example.py (BUDGET); `runtime_tail` ends the runtime module. Its path."""
    context = project / "specrt" / "context.py"
    context.write_text(context.read_text() + CONTEXT + runtime_tail)
    record = project / "specrt" / "record.py"
    record.write_text(record.read_text() + RECORD)
    write(project, {"app/example.py": BUDGET})
    return context


def test_a_computed_member_with_no_accessor_says_what_to_add_without_unsafe(
    project: Path,
) -> None:
    context = _budget_read(project)
    before = context.read_text()
    result = fix_project(project, {"CTX101"})
    assert [(s.status, s.reason) for s in result.sites] == [
        (
            LEFT,
            # what the record's code for it reads: the accessor to add derives from those
            "the record computes it and specrt.context has no `page_budget()` accessor: "
            "add an accessor deriving page_budget from model_config(), budget and page_size "
            "(what the record's `page_budget` reads)",
        )
    ]
    assert (project / "app/example.py").read_text() == BUDGET
    assert context.read_text() == before and result.added == {}


def test_no_accessor_is_added_over_a_name_the_runtime_module_binds(project: Path) -> None:
    # a module-level value of that name (not a function the targets know)
    context = _budget_read(project, "\npage_budget = None\n")
    before = context.read_text()
    result = fix_project(project, {"CTX101"}, unsafe=True)
    assert [(s.status, s.reason) for s in result.sites] == [
        (
            ROLLED_BACK,
            "the accessor `page_budget()` cannot be added: `page_budget` is already bound "
            "in the runtime module",
        )
    ]
    assert (project / "app/example.py").read_text() == BUDGET
    assert context.read_text() == before and result.added == {}


def test_an_alias_assigned_in_a_try_is_left(project: Path) -> None:
    text = """\
from specrt.context import get_server_args


def backend() -> str:
    try:
        sa = get_server_args()
    except ValueError:
        return "auto"
    return sa.attention_backend
"""
    write(project, {"app/example.py": text})
    result = fix_project(project, {"CTX101"}, unsafe=True)
    assert [(s.status, s.reason) for s in result.sites] == [
        (LEFT, "the alias is assigned inside a `try` (its failure is handled there)")
    ]
    assert (project / "app/example.py").read_text() == text


def test_the_targets_read_the_schema_facts_the_check_read() -> None:
    """What the check's vocabulary read of the runtime (and the modules it
    names) is what a parse of those files gives: the fix takes it rather than
    parse them again."""
    from conftest import REPO
    from helpers import project_setup

    from ctxlint.facts.declarations import schema_facts
    from ctxlint.facts.extract import parse
    from ctxlint.fix_run import FixRun

    setup = project_setup(REPO / "examples" / "legacy_app")
    config = setup.config
    run = FixRun(setup, select={"CTX101"}, unsafe=True)
    run.run()
    schemas = run.runs.schemas
    assert config.runtime_module in schemas
    by_module = {m: rel for rel, m in run._files.items()}
    read = 0
    for module, schema in schemas.items():
        if schema is None:  # not a checked module (an import from outside the tree)
            assert module not in by_module
            continue
        read += 1
        rel = by_module[module]
        tree = parse((config.root / rel).read_text())
        fresh = schema_facts(tree, module, rel.endswith("__init__.py"))
        assert {k: v for k, v in schema.items() if k != "path"} == fresh
    assert read >= 2  # the runtime module and the record's


def test_a_read_through_the_dotted_module_keeps_that_form(project: Path) -> None:
    """`import pkg.context` then `pkg.context.get_server_args().f`: the accessor is
    named the way the read named the module, with no new import."""
    write(
        project,
        {
            "app/example.py": """\
import specrt.context


def limit() -> int:
    return specrt.context.get_server_args().max_running_requests
"""
        },
    )
    result = fix_project(project, {"CTX101"}, unsafe=True)
    assert [s.status for s in result.sites] == [FIXED]
    assert (project / "app/example.py").read_text() == (
        "import specrt.context\n\n\ndef limit() -> int:\n"
        "    return specrt.context.get_schedule().max_running_requests\n"
    )


def test_an_alias_with_other_uses_has_its_reads_rewritten_and_stays(project: Path) -> None:
    write(
        project,
        {
            "app/example.py": """\
from specrt.context import get_server_args


def describe(record) -> str:
    return str(record)


def pick() -> str:
    sa = get_server_args()
    print(describe(sa))
    return sa.attention_backend
"""
        },
    )
    result = fix_project(project, {"CTX101"}, unsafe=True)
    assert [s.status for s in result.sites] == [FIXED]
    assert (
        (project / "app/example.py").read_text()
        == """\
from specrt.context import get_exec, get_server_args


def describe(record) -> str:
    return str(record)


def pick() -> str:
    sa = get_server_args()
    print(describe(sa))
    return get_exec().kernel.attention_backend
"""
    )


def test_an_accessor_a_local_shadows_is_called_through_its_module(project: Path) -> None:
    context = project / "specrt" / "context.py"
    context.write_text(context.read_text() + CONTEXT)
    record = project / "specrt" / "record.py"
    record.write_text(record.read_text() + RECORD)
    write(
        project,
        {
            "app/example.py": """\
from specrt.context import get_server_args


def chunks(n: int) -> int:
    chunk_size = get_server_args().chunk_size
    return n // chunk_size
"""
        },
    )
    result = fix_project(project, {"CTX101"}, unsafe=True)
    assert [(s.status, s.became) for s in result.sites] == [(FIXED, "context.chunk_size()")]
    assert (
        (project / "app/example.py").read_text()
        == """\
from specrt import context


def chunks(n: int) -> int:
    chunk_size = context.chunk_size()
    return n // chunk_size
"""
    )


# SGLang 0.5.17's allocation_sizing.py, in small: a seed-default parameter that
# calls hand the published record, along a chain of functions and files
SIZING = """\
from typing import Optional

from specrt.context import get_server_args
from specrt.record import ServerArgs


def alloc_len(server_args: Optional[ServerArgs] = None) -> int:
    if server_args is None:
        server_args = get_server_args()
    return server_args.max_running_requests


def alloc_reserve(server_args: Optional[ServerArgs] = None) -> int:
    \"\"\"Twice alloc_len.\"\"\"
    return 2 * alloc_len(server_args)


def extra_len(server_args: ServerArgs) -> int:
    return max(4, alloc_reserve(server_args) + len(server_args.model_path))
"""
CONFIGURATOR = """\
from app.sizing import extra_len
from specrt.record import ServerArgs


class Configurator:
    def __init__(self, server_args: ServerArgs) -> None:
        self.server_args = server_args

    def rows(self) -> int:
        return extra_len(self.server_args)
"""
POOL = """\
from app.sizing import alloc_len


def per_request(kvc) -> int:
    sa = kvc.server_args
    print(sa)
    return 2 * alloc_len(sa)
"""
BATCH = (
    "from app.sizing import alloc_reserve\n\n\ndef reserve() -> int:\n    return alloc_reserve()\n"
)


def _chain(project: Path, pool: str = POOL) -> dict[str, str]:
    files = {
        "app/sizing.py": SIZING,
        "app/configurator.py": CONFIGURATOR,
        "app/pool.py": pool,
        "app/batch.py": BATCH,
    }
    write(project, files)
    return files


def test_a_parameter_every_call_hands_the_published_record_goes_along_the_chain(
    project: Path,
) -> None:
    """SGLang 0.5.19's own edit: `alloc_reserve` only hands its parameter on (it
    goes too), `extra_len` reads its own (it stays; only the argument goes),
    `self.server_args` and `sa = kvc.server_args` are the published record."""
    files = _chain(project)
    result = fix_project(project, {"CTX101"}, unsafe=True)
    assert [(s.path, s.status) for s in result.sites] == [("app/sizing.py", FIXED)]
    assert result.sites[0].reason.endswith(
        "; the parameter `server_args`, which every call in the project hands the published "
        "record, goes with its `if server_args is None`, and with it `alloc_reserve`'s "
        "`server_args`, the argument at 3 calls"
    )
    assert (project / "app/sizing.py").read_text() == SIZING.replace(
        "alloc_len(server_args: Optional[ServerArgs] = None)", "alloc_len()"
    ).replace("    if server_args is None:\n        server_args = get_server_args()\n", "").replace(
        "return server_args.max_running_requests", "return get_schedule().max_running_requests"
    ).replace(
        "from specrt.context import get_server_args", "from specrt.context import get_schedule"
    ).replace("alloc_reserve(server_args: Optional[ServerArgs] = None)", "alloc_reserve()").replace(
        "alloc_len(server_args)", "alloc_len()"
    ).replace("alloc_reserve(server_args) +", "alloc_reserve() +")
    assert (project / "app/pool.py").read_text() == POOL.replace("alloc_len(sa)", "alloc_len()")
    for path in ("app/configurator.py", "app/batch.py"):  # a kept parameter's calls: as they were
        assert (project / path).read_text() == files[path]
    for path in files:
        compile((project / path).read_text(), path, "exec")
    again = fix_project(project, {"CTX101"}, unsafe=True)
    assert again.sites == [] and again.after == {}


@pytest.mark.parametrize(
    ("pool", "why"),
    [
        (
            POOL.replace("alloc_len(sa)", "alloc_len(make())"),
            "the call at app/pool.py:7 hands `make()`, not provably the published record",
        ),
        (
            POOL.replace("sa = kvc.server_args", "sa = kvc.config"),
            "the call at app/pool.py:7 hands `sa`, not provably the published record "
            "(`sa = kvc.config`)",
        ),
        (
            "from app.sizing import alloc_len\n\n\nclass Pool:\n"
            "    def size(self, sa) -> int:\n        return alloc_len(sa)\n",
            "the call at app/pool.py:6 hands `sa`, a parameter of `size`, a method "
            "(its calls are not followed)",
        ),
        (
            POOL + "\n\nSIZER = alloc_len\n",
            "`alloc_len` is named other than in a call at app/pool.py:10",
        ),
        (
            POOL + '\n\n__all__ = ["per_request", "alloc_len"]\n',
            "`alloc_len` is named in a string at app/pool.py:10",
        ),
        (
            POOL.replace("import alloc_len", "import alloc_len as sizing_len"),
            "`alloc_len` is imported as `sizing_len` at app/pool.py:1",
        ),
        (
            POOL.replace("alloc_len(sa)", "alloc_len(*[sa])"),
            "the call at app/pool.py:7 passes `*` arguments",
        ),
    ],
)
def test_a_parameter_a_call_may_hand_another_record_stays_saying_where(
    project: Path, pool: str, why: str
) -> None:
    files = _chain(project, pool)
    result = fix_project(project, {"CTX101"}, unsafe=True)
    assert [(s.status, s.reason) for s in result.sites] == [
        (LEFT, f"the parameter `server_args` stays: {why}")
    ]
    for path, text in files.items():
        assert (project / path).read_text() == text


def test_a_dropped_parameter_is_rolled_back_with_every_file_it_edits(project: Path) -> None:
    """The rewrite reads a bag in `alloc_len`, which `run_scheduler_process` calls
    before it publishes (CTX301): the function's file is rolled back, and with it
    the caller's edit, though that file's own check holds."""
    entry = """\
from app.sizing import alloc_len
from specrt.context import get_server_args, publish


def run_scheduler_process(server_args) -> None:
    n = alloc_len(get_server_args())
    publish(server_args, role="scheduler")
    print(n)
"""
    files = _chain(project)
    write(project, {"app/entry.py": entry})
    result = fix_project(project, {"CTX101"}, unsafe=True)
    (site,) = [s for s in result.sites if s.path == "app/sizing.py"]
    assert site.status == ROLLED_BACK and "added a CTX301 finding" in site.reason
    assert {"app/sizing.py", "app/pool.py", "app/entry.py"} <= set().union(*result.units)
    assert result.after == {}
    for path, text in {**files, "app/entry.py": entry}.items():
        assert (project / path).read_text() == text


LAYER = """\
from specrt.context import get_server_args


class Layer:
    def _can_dual_stream(self, n: int, server_args=None) -> bool:
        if server_args is None:
            server_args = get_server_args()
        return n > 0 and server_args.max_running_requests > 1

    def forward(self, n: int) -> int:
        if n:
            server_args = get_server_args()
            if self._can_dual_stream(n, server_args):
                return 2
        return 1
"""


def test_a_methods_parameter_its_own_class_hands_the_seed_goes(project: Path) -> None:
    """SGLang 0.5.19's `_can_dual_stream_graph(self, hidden_states)`: its one
    call, in its class, handed the seed through a local, which goes with it."""
    write(project, {"app/layer.py": LAYER})
    result = fix_project(project, {"CTX101"}, unsafe=True)
    assert [s.status for s in result.sites] == [FIXED]
    assert (
        (project / "app/layer.py").read_text()
        == """\
from specrt.context import get_schedule


class Layer:
    def _can_dual_stream(self, n: int) -> bool:
        return n > 0 and get_schedule().max_running_requests > 1

    def forward(self, n: int) -> int:
        if n:
            if self._can_dual_stream(n):
                return 2
        return 1
"""
    )
    assert fix_project(project, {"CTX101"}, unsafe=True).after == {}


def test_a_methods_parameter_another_object_may_hand_stays(project: Path) -> None:
    other = "def run(layer, sa) -> bool:\n    return layer._can_dual_stream(1, sa)\n"
    write(project, {"app/layer.py": LAYER, "app/other.py": other})
    result = fix_project(project, {"CTX101"}, unsafe=True)
    assert [(s.status, s.reason) for s in result.sites] == [
        (
            LEFT,
            "the parameter `server_args` stays: `layer._can_dual_stream` at app/other.py:2 may "
            "be `Layer._can_dual_stream` (only its own class's `self` calls are followed)",
        )
    ]
    assert (project / "app/layer.py").read_text() == LAYER


@pytest.mark.parametrize(
    ("files", "why"),
    [
        (
            {
                "app/reexport.py": "from app.sizing import alloc_len\n\nLIMIT = 2\n",
                "app/user.py": "from app.reexport import alloc_len\n\n\n"
                "def f(x) -> int:\n    return alloc_len(x)\n",
            },
            "`alloc_len` is imported from `app.reexport`, which re-exports it, at app/user.py:1",
        ),
        (
            {
                "app/user.py": "from .sizing import *\n\n\ndef f(x) -> int:\n    return alloc_len(x)\n"
            },
            "`app.sizing` is imported by `*` at app/user.py:1",
        ),
    ],
)
def test_a_call_the_search_could_miss_refuses(project: Path, files: dict, why: str) -> None:
    """A call through a re-export or a star import names the function under
    another module: the drop is refused, not made without it."""
    before = {**_chain(project), **files}
    write(project, files)
    result = fix_project(project, {"CTX101"}, unsafe=True)
    assert [(s.status, s.reason) for s in result.sites] == [
        (LEFT, f"the parameter `server_args` stays: {why}")
    ]
    for path, text in before.items():
        assert (project / path).read_text() == text


def test_a_drop_that_edits_a_file_outside_the_run_stays(project: Path) -> None:
    """`ctxlint fix app/sizing.py`: the call in app/pool.py may not change."""
    files = _chain(project)
    out = cli("fix", "--unsafe", "--select", "CTX101", "app/sizing.py", cwd=project)
    assert (
        "the parameter `server_args` stays: its calls in app/pool.py are outside this "
        "run's files" in out.stdout
    ), out.stdout + out.stderr
    for path, text in files.items():
        assert (project / path).read_text() == text


def test_a_drop_whose_calls_cannot_all_be_read_stays(project: Path) -> None:
    """A file naming the function that does not parse may hold a call: nothing goes."""
    files = _chain(project)
    write(project, {"app/broken.py": "from app.sizing import alloc_len\n\nalloc_len(\n"})
    result = fix_project(project, {"CTX101"}, unsafe=True)
    [site] = [s for s in result.sites if s.path == "app/sizing.py"]
    assert site.status == LEFT
    assert site.reason.startswith(
        "the parameter `server_args` stays: the search for its calls failed (SourceError: "
    ), site.reason
    for path, text in files.items():
        assert (project / path).read_text() == text
