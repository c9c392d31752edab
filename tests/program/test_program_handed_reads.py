"""The model question CTX102 asks (program/handed_reads.py): which field reads
are off a record the code was handed, and how it is held there, asked directly
of a program built from sources."""

from __future__ import annotations

import shutil
import textwrap

import pytest
from conftest import FIXTURE
from helpers import run_engine, write

from ctxlint.program.core import Program
from ctxlint.program.handed_reads import Handed, handed_reads

APP = {
    # two annotated `server_args` parameters make the name the codebase's convention
    "app/conv.py": """
        from specrt.record import ServerArgs

        def a(server_args: ServerArgs) -> None:
            pass

        def b(server_args: ServerArgs) -> None:
            pass
        """,
    "app/h.py": """
        from specrt.record import ServerArgs

        class Runner:
            def __init__(self, server_args, other) -> None:
                self.cfg = server_args
                self.own = ServerArgs()
                self.server_args = server_args
                self.other = other

            def step(self) -> int:
                a = self.cfg.tp_size
                b = self.own.dp_size
                c = self.server_args.context_length
                return a + b + c + self.other.tp_size

        class Builder:
            def __init__(self) -> None:
                self.server_args = ServerArgs()

            def size(self) -> int:
                return self.server_args.tp_size

        def serve(server_args, cfg: ServerArgs, opts) -> int:
            return server_args.tp_size + cfg.dp_size + opts.tp_size

        def chain(runner) -> int:
            return runner.server_args.tp_size + runner.opts.tp_size
        """,
}


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Program:
    root = tmp_path_factory.mktemp("handed") / "proj"
    shutil.copytree(FIXTURE, root)
    write(root, {k: textwrap.dedent(v) for k, v in APP.items()})
    return run_engine(root, select={"CTX102"}).program


def test_each_holder_is_handed_or_not_as_the_model_decides(program: Program) -> None:
    handed = handed_reads(program)
    found = {(r.site.scope, r.field): held for path, _, r, held in handed.reads() if "h.py" in path}
    assert found == {
        # parked from the parameter under another name
        ("Runner.step", "tp_size"): Handed("self", "cfg", "server_args"),
        ("Runner.step", "context_length"): Handed("self", "server_args"),
        ("serve", "tp_size"): Handed("param", "server_args"),  # the convention's name
        ("serve", "dp_size"): Handed("param", "cfg"),  # annotated with the record
        ("chain", "tp_size"): Handed("chain", "server_args", "runner"),
    }  # not: a record the class builds itself (`self.own`, Builder's `self.server_args`),
    # `opts`, `self.other`
    assert [k[1:] for k in handed.parked] == [("Runner", "cfg"), ("Runner", "server_args")]
    assert sorted(k[1:] for k in handed.owned) == [("Builder", "server_args"), ("Runner", "own")]
