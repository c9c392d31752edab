"""program.reach and program.ordered_reach: the walks rules ask of the call graph
(forward and backward reach, the through and same-module predicates, parent
paths), on a real program built from sources."""

from __future__ import annotations

import shutil
import textwrap

import pytest
from conftest import FIXTURE
from helpers import run_engine, write

from ctxlint.program.call_model import EventKind
from ctxlint.program.calls import CallGraph, call_graph
from ctxlint.program.core import Program
from ctxlint.program.ordered_reach import Hit, OrderedReach
from ctxlint.program.reach import (
    Walk,
    backward,
    caller_frontier,
    depth_first,
    first_call,
    first_reached,
    forward,
    path_to,
    same_module_publishers,
    spread_to_callers,
    steps,
)

APP = {
    "app/a.py": """
        from app import b
        from specrt.context import publish

        def helper(server_args):
            publish(server_args, role="worker")

        def entry(server_args):
            helper(server_args)
            b.work()

        def outer(server_args):
            entry(server_args)

        def early(server_args):
            b.work()
            helper(server_args)
            b.late()
        """,
    "app/b.py": """
        from specrt.context import get_exec, get_model

        def work():
            step()

        def step():
            get_model()

        def late():
            get_exec()

        def elsewhere(server_args):
            from app.a import helper
            helper(server_args)
        """,
}
A, B = "app.a", "app.b"


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Program:
    root = tmp_path_factory.mktemp("reach") / "proj"
    shutil.copytree(FIXTURE, root)
    write(root, {k: textwrap.dedent(v) for k, v in APP.items()})
    return run_engine(root).program


@pytest.fixture(scope="module")
def graph(program: Program) -> CallGraph:
    return call_graph(program)


def test_forward_keeps_a_shortest_parent_and_the_path_to_each(graph: CallGraph) -> None:
    parents = forward(graph, [f"{A}.outer"])
    assert parents == {
        f"{A}.outer": None,
        f"{A}.entry": f"{A}.outer",
        f"{A}.helper": f"{A}.entry",
        f"{B}.work": f"{A}.entry",
        f"{B}.step": f"{B}.work",
    }
    assert path_to(parents, f"{B}.step") == [f"{A}.outer", f"{A}.entry", f"{B}.work", f"{B}.step"]
    # `through`: a function that may not be entered stops the walk there
    cut = forward(graph, [f"{A}.outer"], through=lambda q: q != f"{B}.work")
    assert set(cut) == {f"{A}.outer", f"{A}.entry", f"{A}.helper"}


def test_backward_follows_callers_and_takes_only_the_edges_through_admits(
    graph: CallGraph,
) -> None:
    up = backward(graph, [f"{A}.helper"])
    assert set(up) == {
        f"{A}.helper", f"{A}.entry", f"{A}.outer", f"{A}.early", f"{B}.elsewhere",
    }  # fmt: skip
    assert up[f"{A}.outer"] == f"{A}.entry"  # the callee it was reached from
    near = backward(
        graph, [f"{A}.helper"], through=lambda c, q: graph.funcs[c].module == graph.funcs[q].module
    )
    assert f"{B}.elsewhere" not in near and f"{A}.outer" in near


def test_same_module_publishers_name_the_helper_each_publishes_through(program: Program) -> None:
    assert same_module_publishers(program) == {
        f"{A}.helper": None,
        f"{A}.early": f"{A}.helper",
        f"{A}.entry": f"{A}.helper",
        f"{A}.outer": f"{A}.entry",
    }
    assert same_module_publishers(program) is same_module_publishers(program)  # memoised


def test_labels_spread_to_callers_breadth_first(graph: CallGraph) -> None:
    labels = {f"{A}.helper": {"worker"}}
    spread = list(spread_to_callers(graph, labels, lambda c, _: c != f"{A}.early"))
    assert spread == [
        (f"{A}.entry", f"{A}.helper", "worker"),
        (f"{B}.elsewhere", f"{A}.helper", "worker"),
        (f"{A}.outer", f"{A}.entry", "worker"),
    ]
    assert f"{A}.early" not in labels
    assert first_call(graph, f"{A}.early", f"{A}.helper") == 1


def test_a_walk_started_past_an_event_sees_only_what_follows(graph: CallGraph) -> None:
    seen: list[tuple[str, EventKind]] = []
    walk = Walk(graph, on_event=lambda q, e: seen.append((q, e.kind)))
    walk.start(f"{A}.early", after=1)  # past its call of helper
    parents = walk.run()
    assert set(parents) == {f"{A}.early", f"{B}.late"}
    assert seen == [(f"{A}.early", EventKind.CALL), (f"{B}.late", EventKind.READ)]
    assert walk.path(f"{B}.late") == [f"{A}.early", f"{B}.late"]


def test_first_reached_keeps_the_first_site_of_each_function(graph: CallGraph) -> None:
    got = first_reached(
        graph, [("one", ["x"], [f"{B}.work"]), ("two", [], [f"{A}.entry", f"{B}.late"])]
    )
    assert got[f"{B}.step"] == ("one", ["x", f"{B}.work", f"{B}.step"])
    assert got[f"{B}.late"] == ("two", [f"{B}.late"])
    assert got[f"{A}.helper"] == ("two", [f"{A}.entry", f"{A}.helper"])


def test_depth_first_and_the_caller_frontier(graph: CallGraph) -> None:
    assert depth_first([f"{A}.entry"], lambda q: steps(graph, q)) == {
        f"{A}.entry", f"{A}.helper", f"{B}.work", f"{B}.step",
    }  # fmt: skip
    # walking up from step: outer, early and elsewhere-free paths end where no caller is new
    assert caller_frontier(graph, f"{B}.step") == {f"{A}.outer", f"{A}.early"}
    assert caller_frontier(graph, f"{B}.step", limit=2) == set()


def test_ordered_reach_finds_the_first_read_before_the_publish(graph: CallGraph) -> None:
    order = OrderedReach(graph)
    # early reads (through work -> step) before it publishes through helper
    hit, stops = order.first(f"{A}.early")
    assert stops and hit == Hit((f"{B}.work", f"{B}.step"), "get_model", "app/b.py", 8)
    # entry publishes first: nothing before, and its prefix ends at that call
    assert order.first(f"{A}.entry") == (None, True)
    prefix = order.prefix(f"{A}.early")
    assert [i for i, _, _ in prefix] == [0, 1] and prefix.stop is not None
    assert prefix.stop[0] == 1  # the call of helper, which publishes
    steps, stop = order.first_steps(f"{A}.early")
    assert [h.accessor for _, h in steps] == ["get_model"] and stop is not None
    # late's read runs after the publish: not in the prefix
    assert order.first(f"{B}.late") == (Hit((), "get_exec", "app/b.py", 11), False)
