"""program.call_starts: process and thread starts, the model's one place for
where code runs a target elsewhere (in a new process, or a thread without the
caller's context)."""

from __future__ import annotations

import shutil
import textwrap

import pytest
from conftest import FIXTURE
from helpers import run_engine, write

from ctxlint.program.call_starts import process_starts, thread_starts
from ctxlint.program.calls import call_graph
from ctxlint.program.core import Program

APP = {
    "app/run.py": """
        import contextvars
        import multiprocessing
        import threading
        from concurrent.futures import ThreadPoolExecutor

        def proc():
            pass

        def work():
            pass

        class Server:
            def __init__(self):
                self.pool = ThreadPoolExecutor(2)

            def serve(self):
                self.pool.submit(self.step)

            def step(self):
                pass

        def main():
            multiprocessing.Process(target=proc).start()
            threading.Thread(target=work).start()
            ctx = contextvars.copy_context()
            threading.Thread(target=ctx.run, args=(work,)).start()
            with ThreadPoolExecutor() as ex:
                ex.map(work, [1])
        """,
}


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Program:
    root = tmp_path_factory.mktemp("starts") / "proj"
    shutil.copytree(FIXTURE, root)
    write(root, {k: textwrap.dedent(v) for k, v in APP.items()})
    return run_engine(root).program


def test_process_starts_are_the_call_graphs(program: Program) -> None:
    graph = call_graph(program)
    starts = process_starts(graph)
    assert [(p, s.kind.value, graph.start_targets(s)) for p, s in starts] == [
        ("app/run.py", "process", ["app.run.proc"])
    ]


def test_thread_starts_leave_out_a_target_run_in_a_copied_context(program: Program) -> None:
    got = [(s.kind, s.fn, s.span[0], s.targets) for s in thread_starts(program)]
    assert got == [
        ("Thread", "app.run.main", 25, [["g", "app.run.work"]]),
        ("ThreadPoolExecutor.map", "app.run.main", 29, [["g", "app.run.work"]]),
        # a pool on self is known once the class is seen: after the walk's own starts
        ("ThreadPoolExecutor.submit", "app.run.Server.serve", 18, [["s", "step"]]),
    ]
    assert all(s.path == "app/run.py" and s.module == "app.run" for s in thread_starts(program))
