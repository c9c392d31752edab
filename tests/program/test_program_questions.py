"""Model questions the rules moved into program/ (issue 35): does `x.name` find a
method (program.method_lookup), and which process runs a class's methods
(program.process_roles.class_process), on a real program built from sources."""

from __future__ import annotations

import shutil
import textwrap

import pytest
from conftest import FIXTURE
from helpers import run_engine, write

from ctxlint.program.classes import class_index
from ctxlint.program.core import Program
from ctxlint.program.method_lookup import MemberReceiver, find_method
from ctxlint.program.process_roles import class_process

APP = {
    "app/m.py": """
        from specrt.context import get_exec, publish

        class Base:
            def get_x(self):
                return get_exec()

        class Child(Base):
            def handle(self):
                helper()

        class Empty:
            pass

        def helper():
            get_exec()

        def shared():
            get_exec()

        def run_tokenizer(server_args):
            publish(server_args, role="tokenizer")
            child = Child()
            child.handle()
            shared()

        def run_scheduler(server_args):
            publish(server_args, role="scheduler")
            shared()
        """,
}
M = "app.m"


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Program:
    root = tmp_path_factory.mktemp("questions") / "proj"
    shutil.copytree(FIXTURE, root)
    write(root, {k: textwrap.dedent(v) for k, v in APP.items()})
    return run_engine(root).program


def test_find_method_through_the_class_index(program: Program) -> None:
    index = class_index(program)

    def find(recv: MemberReceiver) -> tuple[bool, str | None, str | None]:
        found = find_method(index, recv, "get_x")
        return found.found, found.missing, found.owner

    assert find(MemberReceiver("class", "self", cls=f"{M}.Child")) == (True, None, None)
    assert find(MemberReceiver("super", "super()", cls=f"{M}.Child")) == (True, None, None)
    assert find(MemberReceiver("class", "self", cls=f"{M}.Empty")) == (False, "types", f"{M}.Empty")
    assert find(MemberReceiver("types", "e", types=[f"{M}.Empty"])) == (
        False, "types", f"{M}.Empty",
    )  # fmt: skip
    assert find(MemberReceiver("ref", "Empty", name=f"{M}.Empty")) == (False, "class", f"{M}.Empty")
    assert find(MemberReceiver("ref", "m", name=M)) == (False, "module", M)
    assert find(MemberReceiver("ref", "torch", name="torch")) == (True, None, None)  # a library
    assert find(MemberReceiver("unknown", "x")) == (False, "unknown", None)
    # the classes an object of the receiver's types is, bases included
    found = find_method(index, MemberReceiver("types", "c", types=[f"{M}.Child"]), "nothing")
    assert {f"{M}.Child", f"{M}.Base"} <= found.classes


def test_class_process_is_what_only_the_roles_reaching_its_methods_run(program: Program) -> None:
    process = class_process(program, [f"{M}.Child"])
    assert process.roles == {"tokenizer"}
    assert {f"{M}.Child", f"{M}.Base"} <= process.classes
    assert f"{M}.helper" in process.only  # reached from Child.handle under tokenizer only
    assert f"{M}.shared" not in process.only  # the scheduler runs it too
    assert class_process(program, [f"{M}.Empty"]).roles == frozenset()
