"""Applying a file's plan: only the way to each edit is rebuilt."""

from __future__ import annotations

from unittest import mock

import libcst as cst

from ctxlint.fix import plan as fix_plan
from ctxlint.fix.plan import FilePlan, apply
from ctxlint.fix.source import SourceFile

TEXT = (
    "import os\n\n"
    + "".join(
        f"\ndef f{i}():\n    # keep {i}\n    return os.path.join('a',  'b')\n\n" for i in range(40)
    )
    + "\ndef g():\n    return old_name()  # here\n"
)


def _plan() -> FilePlan:
    src = SourceFile("m.py", "m", TEXT)
    node = next(n for n in src.walk.nodes if isinstance(n, cst.Name) and n.value == "old_name")
    plan = FilePlan(src, "rt")
    plan.replace[id(node)] = cst.Name("new_name")
    return plan


def _visits(ways_in: bool) -> tuple[str, int]:
    seen: list[cst.CSTNode] = []
    real = fix_plan._Apply.on_visit

    def counting(self: fix_plan._Apply, node: cst.CSTNode) -> bool:
        seen.append(node)
        return real(self, node)

    with mock.patch.object(fix_plan._Apply, "on_visit", counting):
        if ways_in:
            return apply(_plan()), len(seen)
        with mock.patch.object(fix_plan, "_ways_in", lambda _plan: None):
            return apply(_plan()), len(seen)


def test_a_rewrite_visits_only_the_nodes_on_the_way_to_its_edits() -> None:
    text, visited = _visits(ways_in=True)
    assert text == TEXT.replace("old_name", "new_name")
    # the module's statements are visited, not entered, except g's way down
    every_text, every = _visits(ways_in=False)
    assert every_text == text
    assert visited * 10 < every


def test_an_edit_the_walk_did_not_place_falls_back_to_visiting_every_node() -> None:
    plan = _plan()
    stray = cst.Name("stray")  # a node of no tree the walk placed: no way in
    plan.replace[id(stray)] = cst.Name("x")
    assert fix_plan._ways_in(plan) is None
    assert fix_plan._ways_in(_plan()) is not None
