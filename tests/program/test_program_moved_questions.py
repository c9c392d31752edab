"""Model questions CTX203, CTX402, CTX501 and CTX701 moved into program/
(issue 35), asked directly on a real program built from sources: where the
record's lineage keeps public data (record_slots), what test code replaces
(test_doubles), which overrides and dispatches do not fit (plugin_dispatch,
signatures.through_base), the lease sites and subsystems (resource_leases) and
what runs inside CUDA graph capture (graph_capture)."""

from __future__ import annotations

import shutil
import textwrap

import pytest
from conftest import FIXTURE
from helpers import run_engine, write

from ctxlint.program.core import Program
from ctxlint.program.plugin_dispatch import plugin_graph
from ctxlint.program.record_slots import ClassSlot, SlotWrite, data_slots, public_non_fields
from ctxlint.program.resource_leases import leases
from ctxlint.program.signatures import CallShape, through_base
from ctxlint.program.test_doubles import Doubles

FIELDS = "from specrt.fields import ExecKernel, ExecMoe, Memory, Model, Parallel, Schedule\n"
BASES = "Parallel, Model, ExecKernel, ExecMoe, Schedule, Memory"
APP = {
    "specrt/record.py": FIELDS
    + f"from app.case import Mixin\n\n\nclass ServerArgs(Mixin, {BASES}):\n    pass\n",
    "app/__init__.py": "",
    "app/case.py": """
        class Mixin:
            cache = {}
            LIMIT = 1

            def remember(self) -> None:
                self.seen = True
                self._ok = 1
        """,
    "app/models/__init__.py": "",
    "app/models/llama.py": """
        import torch
        from specrt.context import get_buffer, get_stream

        def warm() -> None:
            get_buffer("ws", lambda: 0)

        def run(g: object) -> None:
            get_stream("alt")
            with torch.cuda.graph(g):
                warm()
        """,
    "app/layers/__init__.py": "",
    "app/layers/comm.py": """
        from specrt.context import get_stream

        S = get_stream("alt")
        """,
    "app/sched.py": "from specrt.context import get_exec\n",
    "app/test_x.py": """
        from types import SimpleNamespace
        from specrt import context
        from specrt.context import publish

        def test_x(monkeypatch) -> None:
            monkeypatch.setattr(context, "get_exec", lambda: None)
            monkeypatch.setattr("app.sched.get_exec", lambda: None)
            publish(SimpleNamespace(), role="x")
        """,
    "app/plug.py": """
        import abc

        class Algo(abc.ABC):
            @abc.abstractmethod
            def build(self, x, *, scoped=False): ...

        class Impl(Algo):
            def build(self, x, y):
                return x

        def go(a: Algo) -> None:
            a.build(1, scoped=True)
            a.build()
        """,
}
SELECT = {"CTX203", "CTX402", "CTX501", "CTX701"}


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Program:
    root = tmp_path_factory.mktemp("moved") / "proj"
    shutil.copytree(FIXTURE, root)
    write(root, {k: textwrap.dedent(v) for k, v in APP.items()})
    return run_engine(root, select=SELECT).program


def test_data_slots_of_the_record_lineage(program: Program) -> None:
    """A public class attribute and a public store on `self` in a base of the
    record are slots; a constant, a private store and a method are not."""
    found = [(path, type(s).__name__, s.cls, s.name) for path, s in data_slots(program, "CTX203")]
    assert found == [
        ("app/case.py", ClassSlot.__name__, "app.case.Mixin", "cache"),
        ("app/case.py", SlotWrite.__name__, "app.case.Mixin", "seen"),
    ]
    assert public_non_fields(program, "CTX203") == ["cache (attr)", "remember (method)"]


def test_test_doubles_judge_patches_by_the_runtime_accessors(program: Program) -> None:
    d = Doubles(program, "CTX402", [])
    assert d.test_files == ["app/test_x.py"]
    # the runtime's own binding, and a module's import of it
    assert d.accessor("specrt.context.get_exec") == "specrt.context.get_exec"
    assert d.accessor("app.sched.get_exec") == "specrt.context.get_exec"
    assert d.accessor("app.sched.other") is None
    assert "specrt.context.publish" in d.record_takers
    assert {"module:specrt.context", "module:app.sched"} <= d.patched_modules()


def test_overrides_and_dispatches_that_do_not_fit(program: Program) -> None:
    graph = plugin_graph(program)
    assert [(b, h) for b, h, _ in graph.interface_hooks()] == [("app.plug.Algo", "build")]
    misfits = [
        (call.site.span[0], problems) for _, call, _, _, problems in graph.misfit_dispatches()
    ]
    assert misfits == [(14, ["missing required `x`"])]
    [override] = graph.overrides()
    assert (override.impl, override.name, override.base) == (
        "app.plug.Impl",
        "build",
        "app.plug.Algo",
    )
    assert override.problems() == [
        "requires `y`, which the base does not pass",
        "unknown keyword `scoped` at the dispatch app/plug.py:13",
        "missing required `y` at the dispatch app/plug.py:13",
    ]


def test_through_base_keeps_what_the_base_names() -> None:
    base = [["x", "pk", None], ["scoped", "ko", "False"]]
    shape = CallShape(3, False, ("scoped", "other"), False)
    assert through_base(shape, base) == CallShape(1, False, ("scoped",), False)
    # a base catch-all may carry anything further
    catch_all = [*base, ["args", "va", None], ["kw", "vk", None]]
    assert through_base(shape, catch_all) == CallShape(1, True, ("scoped",), True)


def test_lease_sites_subsystems_and_capture(program: Program) -> None:
    model = leases(program, "CTX701")
    assert model.table() == {
        "buffers ws": ["app.models"],
        "streams alt": ["app.layers", "app.models"],
    }
    [(key, subs)] = model.shared_names()
    assert key == "streams alt" and sorted(subs) == ["app.layers", "app.models"]
    assert [c.span[0] for _, c in model.capture.blocks] == [10]
    reached = model.reached_from_capture(program, "CTX701")
    assert reached["app.models.llama.warm"] == (
        "app/models/llama.py:10",
        ["app.models.llama.run", "app.models.llama.warm"],
    )
