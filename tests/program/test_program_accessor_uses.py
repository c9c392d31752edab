"""Model questions CTX401 and CTX301 moved into program/ (issue 35): where an
accessor name is bound or used and which of those meet the runtime's accessor
(program.accessor_bindings), and which bag reads a process entry runs before
it publishes (program.unpublished_reads), on a real program built from sources."""

from __future__ import annotations

import shutil
import textwrap

import pytest
from conftest import FIXTURE
from helpers import run_engine, write

from ctxlint.facts.ruff import F811
from ctxlint.program.accessor_bindings import accessor_uses
from ctxlint.program.core import Program
from ctxlint.program.unpublished_reads import constructor_reads, early_reads

APP = {
    # binds the runtime's accessor, then rebinds it in a function
    "app/meets.py": """
        from specrt.context import get_exec

        def work():
            get_exec = make()
            return get_exec

        def make():
            return get_exec(1)
        """,
    # binds an accessor name, but never reads the runtime through one
    "app/apart.py": """
        def get_model():
            return 1
        """,
    "app/members.py": """
        from specrt.context import get_exec

        class Manager:
            pass

        def run():
            get_exec()
            mgr = Manager()
            return mgr.get_exec()
        """,
    "app/entry.py": """
        from specrt.context import get_exec, publish

        def helper():
            return get_exec()

        def run_worker(server_args):
            helper()
            publish(server_args, role="worker")
        """,
}


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Program:
    root = tmp_path_factory.mktemp("uses") / "proj"
    shutil.copytree(FIXTURE, root)
    write(root, {k: textwrap.dedent(v) for k, v in APP.items()})
    return run_engine(root).program


def _uses(program: Program, path: str):  # type: ignore[no-untyped-def]
    model = accessor_uses(program)
    facts = dict(model.files)[path]
    return model, model.uses(path, facts)


def test_a_binding_meets_the_accessor_only_where_the_module_binds_it(program: Program) -> None:
    model, meets = _uses(program, "app/meets.py")
    assert model.is_accessor("specrt.context.get_exec")
    assert [(b.name, b.kind, b.scope, shadows) for b, shadows in meets.bindings] == [
        ("get_exec", "assignment", "work", True)
    ]
    assert [c.scope for c in meets.calls] == ["make"]  # called with an argument
    _, apart = _uses(program, "app/apart.py")
    assert (apart.bindings, apart.apart) == ([], ["app/apart.py:2 def get_model"])


def test_a_member_use_is_kept_with_the_lookup_that_failed(program: Program) -> None:
    _, uses = _uses(program, "app/members.py")
    ((use, lookup),) = uses.members
    assert use.snippet == "mgr.get_exec"
    assert lookup is not None and (lookup.found, lookup.missing) == (False, "types")
    assert lookup.owner == "app.members.Manager"


def test_an_f811_hit_is_told_once_a_line_at_the_binding_there(program: Program) -> None:
    model = accessor_uses(program)
    hits = [F811("app/meets.py", 5, 5, "get_exec", "Redefinition")] * 2
    hits.append(F811("app/meets.py", 99, 1, "get_exec", "Redefinition"))
    told = [(h.row, s.scope, s.snippet) for h, s in model.f811_sites(hits, set())]
    assert told == [(5, "work", "assignment get_exec"), (99, "<module>", "ruff F811 get_exec")]
    assert list(model.f811_sites(hits, {("app/meets.py", 5), ("app/meets.py", 99)})) == []


def test_an_entry_reading_before_its_publish(program: Program) -> None:
    (read,) = [r for r in early_reads(program) if r.path == "app/entry.py"]
    assert (read.scope, read.snippet, read.publish) == ("run_worker", "helper()", 9)
    assert read.chain.startswith("run_worker -> helper -> get_exec()")
    assert read.entry is None
    assert [r for r in constructor_reads(program) if r.path.startswith("app/")] == []
