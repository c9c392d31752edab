"""Navigation that knows the design (issue 37, item 5): hover, go to definition,
find references and workspace symbols for config leaves and namespaces, answered
from the program model (program/config_index.py) on examples/legacy_app (field
classes with `_NS_PATH`, ctxrt's runtime) and on a tiny project at the `NS()`
marker stage. The sglang wheels (0.5.17: markers, 0.5.23: field classes) are in
the slow tests at the end."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from textwrap import dedent

import pytest
from conftest import REPO
from helpers import project_config

from ctxlint.engine.run import Engine
from ctxlint.program.config_index import (
    BAG_READ,
    OVERRIDE,
    RECORD_READ,
    ROLE_ENTRY,
    config_index,
)
from ctxlint.program.core import Program
from ctxlint.server.navigation import (
    Location,
    definition,
    hover,
    references,
    workspace_symbols,
)

LEGACY = REPO / "examples" / "legacy_app"


def build(root: Path, config: Path | None = None, use_cache: bool = False) -> Program:
    cfg, rules = project_config(root, config)
    return Engine(cfg, rules, jobs=1, use_cache=use_cache, memo=False).run().program


def at(root: Path, path: str, needle: str, nth: int = 0, offset: int = 0) -> tuple[int, int]:
    """(line 1-based, column 0-based) of the nth occurrence of `needle` in a file."""
    text = (root / path).read_text()
    found = [m.start() for m in re.finditer(re.escape(needle), text)]
    start = found[nth] + offset
    line = text.count("\n", 0, start) + 1
    return line, start - (text.rfind("\n", 0, start) + 1)


def line_of(root: Path, path: str, needle: str) -> int:
    return at(root, path, needle)[0]


@pytest.fixture(scope="module")
def legacy() -> Program:
    return build(REPO, LEGACY / "ctxlint.toml")


# -- examples/legacy_app: field classes ---------------------------------------------
READBACK = "examples/legacy_app/readback.py"
PARALLEL = "src/ctxrt/fields/parallel.py"


def test_hover_on_a_record_read_shows_the_leaf_its_class_and_the_roles(legacy: Program) -> None:
    line, col = at(REPO, READBACK, "get_server_args().tp_size", offset=len("get_server_args()."))
    text = hover(legacy, READBACK, line, col)
    assert text is not None
    decl = line_of(REPO, PARALLEL, "    tp_size: int = arg(")
    assert "**`parallel.tp_size`** — config leaf" in text
    assert "tp_size: int = 1" in text  # the type and the default arg(1, ...) gives
    assert f"`Parallel` (ctxrt.fields.parallel.Parallel) at `{PARALLEL}:{decl}`" in text
    assert "`_NS_PATH = 'parallel'`" in text
    assert "Tensor-parallel width." in text  # its help
    assert "Read it as `get_parallel().tp_size`." in text
    assert "Not declared resolvable" in text
    # src/ctxrt/roles.py: detokenizer and dp_controller are restricted without parallel
    assert "`scheduler` (full tree)" in text
    assert "not: `detokenizer`, `dp_controller`" in text
    assert "a read off the seed record" in text


def test_definition_goes_from_a_bag_leaf_to_its_field_class_line(legacy: Program) -> None:
    path = "src/ctxrt/context.py"
    line, col = at(
        REPO, path, "return get_parallel().tp_size", offset=len("return get_parallel().")
    )
    decl = line_of(REPO, PARALLEL, "    tp_size: int = arg(")
    assert definition(legacy, path, line, col) == [Location(PARALLEL, (decl, 4, decl, 11))]
    # the accessor goes to its namespace's field class
    line, col = at(REPO, path, "return get_parallel().tp_size", offset=len("return "))
    cls = line_of(REPO, PARALLEL, "class Parallel:")
    assert definition(legacy, path, line, col) == [Location(PARALLEL, (cls, 6, cls, 14))]


def test_references_of_tp_size_list_every_read_and_the_declaration(legacy: Program) -> None:
    line, col = at(REPO, READBACK, "get_server_args().tp_size", offset=len("get_server_args()."))
    found = {(loc.path, loc.span[0]) for loc in references(legacy, READBACK, line, col)}
    assert found == {
        (PARALLEL, line_of(REPO, PARALLEL, "    tp_size: int = arg(")),
        (READBACK, line),
        ("examples/legacy_app/launcher.py", 47),  # server_args.tp_size (a record parameter)
        ("examples/legacy_app/scheduler.py", 23),  # server_args.tp_size * ...
        (
            "src/ctxrt/context.py",
            line_of(REPO, "src/ctxrt/context.py", "return get_parallel().tp_size"),
        ),
        ("src/ctxrt/subsystems.py", 49),  # get_parallel().tp_size
    }
    without = references(legacy, READBACK, line, col, include_declaration=False)
    assert len(without) == len(found) - 1
    assert all(loc.path != PARALLEL for loc in without)


def test_a_config_leaf_literal_and_a_declaration_keyword(legacy: Program) -> None:
    path = "examples/legacy_app/scheduler.py"
    line, col = at(REPO, path, "config_leaf('max_running_requests')", offset=len("config_leaf('"))
    text = hover(legacy, path, line, col)
    assert text is not None and "**`schedule.max_running_requests`**" in text
    assert 'a name-driven read, `config_leaf("max_running_requests")`' in text
    found = references(legacy, path, line, col)
    assert Location(path, (line, col - 1, line, col + len("max_running_requests") + 1)) in found
    path = "examples/legacy_app/launcher.py"
    line, col = at(REPO, path, "speculative_num_draft_tokens=4")
    text = hover(legacy, path, line, col)
    assert text is not None and "a keyword of `declare_resolution(...)`" in text
    assert "`declare_resolution(...)` names it at 1 site" in text
    assert definition(legacy, path, line, col)[0].path == "src/ctxrt/fields/spec.py"


def test_a_registered_override_s_returned_key_is_a_declaration(legacy: Program) -> None:
    path = "examples/legacy_app/model_overrides.py"
    line, col = at(REPO, path, '"page_size": 16', offset=1)
    text = hover(legacy, path, line, col)
    assert text is not None and "**`memory.page_size`**" in text
    assert (
        "Here: a key `examples.legacy_app.model_overrides.tiny_mistral_overrides` returns" in text
    )
    assert "a registered override or pass returns it at 1 site" in text
    found = references(legacy, path, line, col)
    assert Location(path, (line, col - 1, line, col + len("page_size") + 1)) in found
    # `return {}` and a dict no resolution function returns name nothing
    path = "examples/legacy_app/readback.py"
    line, col = at(REPO, path, '"tp_size": get_server_args()', offset=1)
    assert hover(legacy, path, line, col) is None


def test_workspace_symbols_name_leaves_by_namespace_path(legacy: Program) -> None:
    found = dict(workspace_symbols(legacy, "moe_a2a"))
    exec_py = "src/ctxrt/fields/exec.py"
    decl = line_of(REPO, exec_py, "    moe_a2a_backend:")
    assert found["exec.moe.moe_a2a_backend"] == Location(exec_py, (decl, 4, decl, 19))
    names = [name for name, _ in workspace_symbols(legacy, "")]
    assert "exec.moe" in names and "parallel.tp_size" in names
    assert names == sorted(names)  # (an empty query: everything, by name)
    assert workspace_symbols(legacy, "no_such_leaf_anywhere") == []


def test_nothing_to_say_off_a_config_name(legacy: Program) -> None:
    line, col = at(REPO, READBACK, "def server_info")
    assert hover(legacy, READBACK, line, col) is None
    assert definition(legacy, READBACK, line, col) == []
    assert references(legacy, READBACK, line, col) == []
    assert hover(legacy, "no/such/file.py", 1, 0) is None


# -- a tiny project at the NS() marker stage -----------------------------------------
FILES = {
    "pyproject.toml": """
        [tool.ctxlint]
        runtime-module = "rt.context"
        record-class = "rt.record.ServerArgs"
    """,
    "rt/__init__.py": "",
    "rt/record.py": """
        from dataclasses import dataclass
        from typing import Annotated


        def NS(path: str) -> str:
            return path


        @dataclass
        class ServerArgs:
            tp_size: Annotated[int, NS("parallel")] = 1
            moe_a2a_backend: Annotated[str, "The all-to-all backend.", NS("exec.moe")] = "none"
            model_path: str = (  # filled in by the launcher
                "dummy"  # none yet
            )
    """,
    "rt/context.py": """
        from rt.record import ServerArgs


        class RuntimeContext:
            def config_bag(self, name: str) -> object:
                return getattr(self, name)

            def config_leaf(self, name: str) -> object:
                return name

            def override(self, source: str, **fields: object) -> None:
                pass


        _CONTEXT = RuntimeContext()


        def get_context() -> RuntimeContext:
            return _CONTEXT


        def get_server_args() -> ServerArgs:
            return _CONTEXT.server_args


        def get_parallel() -> object:
            return _CONTEXT.config_bag("parallel")


        def get_exec() -> object:
            return _CONTEXT.config_bag("exec")


        def publish(server_args: ServerArgs, *, role: str) -> None:
            pass


        ROLE_NAMESPACE_SETS = {
            "scheduler": None,
            "detokenizer": frozenset({"parallel"}),
        }
    """,
    "app/__init__.py": "",
    "app/worker.py": """
        from rt.context import get_context, get_exec, get_parallel, publish
        from rt.record import ServerArgs


        def run(server_args: ServerArgs) -> int:
            publish(server_args, role="scheduler")
            moe = get_exec().moe
            backend = moe.moe_a2a_backend
            get_context().override("test", moe_a2a_backend="deepep")
            width = get_context().config_leaf("tp_size") + len(server_args.model_path)
            width += get_exec().tp_size  # the wrong bag
            return get_parallel().tp_size + server_args.tp_size + len(backend) + width
    """,
}


@pytest.fixture
def marked(tmp_path: Path) -> tuple[Path, Program]:
    for name, text in FILES.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dedent(text).lstrip())
    return tmp_path, build(tmp_path)


def test_a_local_rebound_to_something_else_is_no_bag_any_more(
    marked: tuple[Path, Program],
) -> None:
    root, _ = marked
    (root / "app/again.py").write_text(
        dedent("""
            from rt.context import get_exec


            def run(other) -> str:
                moe = get_exec().moe
                first = moe.moe_a2a_backend
                for moe in other:
                    pass
                return first + moe.moe_a2a_backend
        """).lstrip()
    )
    program = build(root)
    path = "app/again.py"
    line, col = at(root, path, "moe.moe_a2a_backend", offset=len("moe."))
    text = hover(program, path, line, col)
    assert text is not None and "**`exec.moe.moe_a2a_backend`**" in text
    # after the for loop rebinds it, `moe` holds whatever `other` yields
    line, col = at(root, path, "moe.moe_a2a_backend", nth=1, offset=len("moe."))
    assert hover(program, path, line, col) is None


def test_ns_markers_place_leaves_and_definition_lands_on_the_marked_field(
    marked: tuple[Path, Program],
) -> None:
    root, program = marked
    worker, record = "app/worker.py", "rt/record.py"
    line, col = at(root, worker, "get_parallel().tp_size", offset=len("get_parallel()."))
    decl = line_of(root, record, "    tp_size:")
    assert definition(program, worker, line, col) == [Location(record, (decl, 4, decl, 11))]
    text = hover(program, worker, line, col)
    assert text is not None
    assert "**`parallel.tp_size`** — config leaf" in text
    assert "tp_size: int = 1" in text
    assert 'its `NS("parallel")` marker places it' in text
    assert "`detokenizer`, `scheduler` (full tree)" in text  # the table names parallel
    # through a local bound to a sub-namespace bag
    line, col = at(root, worker, "moe.moe_a2a_backend", offset=len("moe."))
    text = hover(program, worker, line, col)
    assert text is not None and "**`exec.moe.moe_a2a_backend`**" in text
    assert "The all-to-all backend." in text
    assert "not: `detokenizer`" in text
    decl = line_of(root, record, "    moe_a2a_backend:")
    assert definition(program, worker, line, col) == [Location(record, (decl, 4, decl, 19))]
    # a namespace with no field class goes to its first marked field
    line, col = at(root, worker, "get_exec().moe", offset=len("get_exec()."))
    assert definition(program, worker, line, col) == [Location(record, (decl, 4, decl, 19))]
    assert dict(workspace_symbols(program, "exec.moe"))["exec.moe"] == Location(
        record, (decl, 4, decl, 19)
    )


def test_a_leaf_read_off_the_wrong_bag_says_so(marked: tuple[Path, Program]) -> None:
    root, program = marked
    worker = "app/worker.py"
    line, col = at(root, worker, "get_exec().tp_size", offset=len("get_exec()."))
    text = hover(program, worker, line, col)
    assert text is not None and "**`parallel.tp_size`**" in text
    assert "off the `exec` bag through `get_exec()`, but `parallel` declares it" in text
    assert "read `get_parallel().tp_size`" in text


def test_a_declaration_is_shown_without_its_comments(marked: tuple[Path, Program]) -> None:
    root, program = marked
    worker = "app/worker.py"
    line, col = at(root, worker, "server_args.model_path", offset=len("server_args."))
    text = hover(program, worker, line, col)
    assert text is not None and "**`model_path`** — record field" in text
    assert 'model_path: str = ( "dummy" )' in text and "#" not in text
    assert "no namespace places it" in text


def test_references_on_the_marker_stage_cover_every_spelling(
    marked: tuple[Path, Program],
) -> None:
    root, program = marked
    worker, record = "app/worker.py", "rt/record.py"
    line, col = at(root, record, "tp_size:")
    kinds = {(loc.path, loc.span[0], loc.span[1]) for loc in references(program, record, line, col)}
    table = line_of(root, "rt/context.py", '"detokenizer"')
    assert kinds == {
        (record, line, 4),  # the declaration
        (worker, *at(root, worker, '"tp_size"')),  # config_leaf("tp_size")
        (worker, *at(root, worker, "get_parallel().tp_size", offset=len("get_parallel()."))),
        (worker, *at(root, worker, "server_args.tp_size", offset=len("server_args."))),
        (worker, *at(root, worker, "get_exec().tp_size", offset=len("get_exec()."))),  # wrong bag
        ("rt/context.py", table, at(root, "rt/context.py", '"parallel"', nth=1)[1]),
    }
    line, col = at(
        root, worker, 'override("test", moe_a2a_backend', offset=len('override("test", ')
    )
    found = references(program, worker, line, col)
    assert Location(worker, (line, col, line, col + len("moe_a2a_backend"))) in found
    assert len(found) == 3  # the declaration, the read through `moe`, the keyword


def test_the_answers_do_not_depend_on_the_cache(marked: tuple[Path, Program]) -> None:
    root, cold = marked
    build(root, use_cache=True)  # fills the cache
    warm = build(root, use_cache=True)
    worker = "app/worker.py"
    for needle, offset in (("get_parallel().tp_size", 15), ("moe.moe_a2a_backend", 4)):
        line, col = at(root, worker, needle, offset=offset)
        assert references(cold, worker, line, col)  # (something to compare)
        for ask in (hover, definition, references):
            assert ask(warm, worker, line, col) == ask(cold, worker, line, col)
    assert workspace_symbols(warm, "") == workspace_symbols(cold, "")


def test_the_index_is_built_once_per_state_of_the_files(legacy: Program) -> None:
    first = config_index(legacy)
    assert config_index(legacy) is first  # every question after the first reuses it
    legacy.files[READBACK] = legacy.files[READBACK]  # an edit: the files' state moves on
    assert config_index(legacy) is not first


# -- the sglang wheels: 0.5.23 (field classes) and 0.5.17 (NS() markers) -------------
def sglang_program(version: str) -> tuple[Path, Program]:
    """The wheel's program as a check builds it (its own fact cache: warm after
    the first run)."""
    from wheels import sglang_tree

    from ctxlint.session import Request, resolve

    tree = sglang_tree(version)
    setup = resolve(Request(paths=(str(tree),), profile="sglang"))
    return tree, Engine(setup.config, setup.rules, memo=False).run().program


def code_count(tree: Path, pattern: str, skip: str = "\0") -> int:
    """Matches of `pattern` in the wheel's code, comments left out (a grep)."""
    regex = re.compile(pattern)
    return sum(
        len(regex.findall(line.split("#")[0]))
        for p in sorted((tree / "sglang").rglob("*.py"))
        if skip not in p.as_posix()
        for line in p.read_text(errors="replace").splitlines()
    )


def kinds_of(program: Program, path: str, line: int, column: int) -> Counter[str]:
    index = config_index(program)
    site = index.at(path, line, column)
    assert site is not None
    return Counter(s.kind for s in index.references(site))


def direct_reads(program: Program, field: str, accessor: str) -> int:
    return sum(
        1
        for s in config_index(program).by_field[field]
        if s.kind == BAG_READ and s.detail == accessor
    )


@pytest.mark.slow
def test_tp_size_on_sglang_0_5_23_field_classes() -> None:
    tree, program = sglang_program("0.5.23")
    fields = "sglang/srt/arg_groups/fields/parallel.py"
    decl = line_of(tree, fields, "    tp_size: A[")  # line 45, in class Parallel
    path = "sglang/compile_deep_gemm.py"
    line, col = at(tree, path, "get_parallel().tp_size", offset=len("get_parallel()."))
    assert definition(program, path, line, col) == [Location(fields, (decl, 4, decl, 11))]
    text = hover(program, path, line, col)
    assert text is not None
    assert "**`parallel.tp_size`** — config leaf" in text
    assert f"`Parallel` (sglang.srt.arg_groups.fields.parallel.Parallel) at `{fields}:{decl}`" in (
        text
    )
    assert "`_NS_PATH = 'parallel'`" in text and "tp_size: int = 1" in text
    assert "The tensor parallelism size." in text
    # ROLE_NAMESPACE_SETS: dp_controller names parallel; the others read the full tree
    assert "Roles that may read `parallel` (`ROLE_NAMESPACE_SETS`): `dp_controller`, " in text
    # who reads tp_size: every spelling, each count checked against the code
    assert kinds_of(program, path, line, col) == {
        "declaration": 1,
        # 264 `get_parallel().tp_size` (a grep of the code: 265 less one in a
        # comment) and 95 `parallel.tp_size` through `parallel = get_parallel()`
        # (96 in the code: runtime_context.py:1577 reads the context's own
        # `context.parallel`, not the accessor)
        BAG_READ: 359,
        # `server_args.tp_size` outside multimodal_gen, whose own ServerArgs
        # takes the name over (program/record_conventions.py)
        RECORD_READ: 6,
        # get_parallel().override(tp_size=...), override_permanently(...) and
        # override_server_args(tp_size=...): 10 in multimodal_gen, 6 in test/kits
        OVERRIDE: 16,
        ROLE_ENTRY: 1,  # "parallel" in dp_controller's set
    }
    assert direct_reads(program, "tp_size", "get_parallel") == 264
    assert code_count(tree, r"get_parallel\(\)\.tp_size\b") == 264
    assert code_count(tree, r"\bserver_args\.tp_size\b", skip="multimodal_gen") == 6
    assert len(references(program, path, line, col)) == 383
    found = dict(workspace_symbols(program, "exec.moe.moe_a2a_backend"))
    exec_py = "sglang/srt/arg_groups/fields/exec_.py"
    decl = line_of(tree, exec_py, "    moe_a2a_backend:")
    assert found["exec.moe.moe_a2a_backend"] == Location(exec_py, (decl, 4, decl, 19))


@pytest.mark.slow
def test_tp_size_on_sglang_0_5_17_ns_markers() -> None:
    tree, program = sglang_program("0.5.17")
    record = "sglang/srt/server_args.py"
    decl = line_of(tree, record, "    tp_size: A[")  # line 996, with its NS("parallel")
    path = "sglang/srt/configs/zaya.py"
    line, col = at(tree, path, "get_parallel().tp_size", offset=len("get_parallel()."))
    assert definition(program, path, line, col) == [Location(record, (decl, 4, decl, 11))]
    text = hover(program, path, line, col)
    assert text is not None
    assert "**`parallel.tp_size`** — config leaf" in text
    assert f"`ServerArgs` (sglang.srt.server_args.ServerArgs) at `{record}:{decl}`" in text
    assert 'its `NS("parallel")` marker places it' in text
    assert "not: `dp_controller`" in text  # 0.5.17's dp_controller set has no parallel
    assert kinds_of(program, path, line, col) == {
        "declaration": 1,
        BAG_READ: 225,  # 218 `get_parallel().tp_size` (the code's count) and 7 through a local
        # 88 `server_args.tp_size` (89 outside multimodal_gen in the code, less
        # elastic_ep.py:127, annotated with ServerArgs re-exported by
        # schedule_batch, which the record tracker does not follow), 44
        # `self.tp_size` in ServerArgs (the code's count), 5 others
        # (`args: ServerArgs`, getattr on the seed)
        RECORD_READ: 137,
        OVERRIDE: 7,
    }
    assert direct_reads(program, "tp_size", "get_parallel") == 218
    assert code_count(tree, r"get_parallel\(\)\.tp_size\b") == 218
    index = config_index(program)
    records = [s for s in index.by_field["tp_size"] if s.kind == RECORD_READ]
    assert sum(1 for s in records if s.path == record and s.detail == "self") == 44
    lines = (tree / record).read_text().splitlines()
    assert sum(len(re.findall(r"\bself\.tp_size\b", x.split("#")[0])) for x in lines) == 44
