"""A spliced module's walk taken up at the edited statement (facts.resume) and
its positions from the last extraction's (facts.placed): the facts must be a
whole extraction's, and the whole walk must answer whenever the state kept
could differ from a whole walk's."""

from __future__ import annotations

import ast
import dataclasses
from typing import NamedTuple

import libcst as cst
from conftest import REPO
from test_splice import _facts, _project

from ctxlint.engine.kept_tree import KeptTree
from ctxlint.facts import resume
from ctxlint.facts.context import Anchor
from ctxlint.facts.extract import parse

REL, MODULE = "examples/serving_app/scheduler.py", "serving_app.scheduler"


def _setup() -> tuple[str, list, str, list[ast.stmt]]:
    _, vocab, visitors = _project(REPO / "pyproject.toml", REPO)
    text = (REPO / REL).read_text()
    return vocab, visitors, text, ast.parse(text).body


def _function(body: list[ast.stmt], name: str) -> tuple[int, int, int]:
    """The top-level def's index, its first body line (1-based) and indentation."""
    for i, stmt in enumerate(body):
        if isinstance(stmt, ast.FunctionDef) and stmt.name == name:
            return i, stmt.body[0].lineno, stmt.body[0].col_offset
    raise AssertionError(name)


def _insert(text: str, line: int, row: str) -> str:
    rows = text.splitlines(keepends=True)
    return "".join([*rows[: line - 1], row, *rows[line - 1 :]])


def _extracted(tree: KeptTree, parser, vocab: str, visitors: list, text: str) -> None:
    got = _facts(REL, MODULE, text.encode(), vocab, visitors, parser)
    assert got == _facts(REL, MODULE, text.encode(), vocab, visitors)


def test_edits_inside_one_function_walk_from_it_and_place_only_it() -> None:
    vocab, visitors, text, body = _setup()
    index, line, col = _function(body, "run_scheduler_process")
    tree = KeptTree()
    parser = tree.parser(REL, parse)
    _extracted(tree, parser, vocab, visitors, text)  # opened: a whole parse and walk
    assert tree.kept is not None and tree.kept.walked_from == 0
    for n in range(1, 4):
        text = _insert(text, line, " " * col + f"_ctxlint_edit_{n} = {n}\n")
        _extracted(tree, parser, vocab, visitors, text)
        kept = tree.kept
        assert kept is not None and kept.changed is not None and kept.changed.index == index
        # the first splice walks it all, keeping the state at the statement;
        # the next ones walk from there, and no edit generates the whole module
        assert kept.walked_from == (0 if n == 1 else index), n
        assert kept.generated == "statement", n
    assert tree.spliced == 3


def test_the_whole_walk_answers_where_the_kept_state_could_differ() -> None:
    vocab, visitors, text, body = _setup()
    index, line, col = _function(body, "run_scheduler_process")
    earlier, early_line, early_col = _function(body, "_drain")
    assert earlier < index
    tree = KeptTree()
    parser = tree.parser(REL, parse)
    _extracted(tree, parser, vocab, visitors, text)
    for n in (1, 2):  # the state at run_scheduler_process kept, then taken up
        text = _insert(text, line + n - 1, " " * col + f"_ctxlint_edit_{n} = {n}\n")
        _extracted(tree, parser, vocab, visitors, text)
    assert tree.kept is not None and tree.kept.walked_from == index
    # a statement before it changed: not the state there any more
    text = _insert(text, early_line, " " * early_col + "_ctxlint_early = 1\n")
    _extracted(tree, parser, vocab, visitors, text)
    assert tree.kept is not None and tree.kept.changed is not None
    assert (tree.kept.changed.index, tree.kept.walked_from) == (earlier, 0)
    # taken up at _drain now; then renamed: the module's names (set up from
    # the whole module before the walk) are not the kept state's
    text = _insert(text, early_line, " " * early_col + "_ctxlint_early = 2\n")
    _extracted(tree, parser, vocab, visitors, text)
    assert tree.kept is not None and tree.kept.walked_from == earlier
    renamed = text.replace("def _drain(", "def _drained(", 1)
    assert renamed != text
    _extracted(tree, parser, vocab, visitors, renamed)
    assert tree.kept is not None and tree.kept.changed is not None
    assert (tree.kept.changed.index, tree.kept.walked_from) == (earlier, 0)


def test_a_whole_parse_keeps_the_state_where_its_text_changed() -> None:
    vocab, visitors, text, _ = _setup()
    tree = KeptTree()
    parser = tree.parser(REL, parse)
    _extracted(tree, parser, vocab, visitors, text)
    assert tree.kept is not None and tree.kept.walk is None  # no text before: none kept
    text = text + "\n\nLATE = 1\n"  # a statement added at the end: a whole parse
    _extracted(tree, parser, vocab, visitors, text)
    assert tree.parsed == 2 and tree.kept is not None
    last = len(tree.kept.module.body) - 1
    assert (tree.kept.walked_from, tree.kept.generated) == (0, "module")
    assert tree.kept.walk is not None and tree.kept.walk.index == last  # (Kept.hint)
    _extracted(tree, parser, vocab, visitors, text.replace("LATE = 1", "LATE = 2"))
    assert tree.spliced == 1 and tree.kept.walked_from == last


def test_an_edits_first_whole_parse_keeps_the_state_at_the_statement_changed_since() -> None:
    """The text of the last run given (`before`: an editor's buffer opened,
    its facts the cache's): the first edit's whole parse keeps the walk's
    state at the statement it changed, so the first splice walks from it."""
    vocab, visitors, text, body = _setup()
    index, line, col = _function(body, "run_scheduler_process")
    tree = KeptTree()
    text = _insert(text, line, " " * col + "_ctxlint_edit = 1\n")
    before = (REPO / REL).read_text()
    _extracted(tree, tree.parser(REL, parse, None, before), vocab, visitors, text)
    assert tree.kept is not None and tree.kept.hint == index
    assert tree.kept.walk is not None and tree.kept.walk.index == index
    for n in (2, 3):
        text = _insert(text, line, " " * col + f"_ctxlint_edit = {n}\n")
        _extracted(tree, tree.parser(REL, parse), vocab, visitors, text)
        assert (tree.kept.walked_from, tree.kept.generated) == (index, "statement"), n
    # the same text before: nothing changed, no state kept
    fresh = KeptTree()
    _extracted(fresh, fresh.parser(REL, parse, None, text), vocab, visitors, text)
    assert fresh.kept is not None and fresh.kept.hint is None and fresh.kept.walk is None


@dataclasses.dataclass(frozen=True, slots=True)
class _Base:
    a: int
    b: list[int] = dataclasses.field(default_factory=list)


@dataclasses.dataclass(frozen=True, slots=True)
class _Derived(_Base):
    c: str = "c"
    d: int = dataclasses.field(default=0, kw_only=True)


@dataclasses.dataclass(frozen=True)
class _Plain:  # no slots: dataclasses' own pickling
    a: int


def test_slotted_dataclasses_load_through_their_slots_as_they_were() -> None:
    shared = [1, 2]
    state = [_Derived(1, shared, "x", d=4), _Base(2), _Plain(3), _Derived(5, shared)]
    pickled = resume._dump(state, {})
    assert pickled is not None
    got = resume._load(pickled, {})
    assert got == state and [type(x) for x in got] == [type(x) for x in state]
    assert got[0].b is got[3].b  # (one list, as pickled)
    assert resume._slotted(_Derived) is not None and resume._slotted(_Plain) is None
    assert b"_restore" in pickled.blob  # the slots' way was taken


@dataclasses.dataclass(frozen=True, slots=True)
class _Record:
    name: str
    parts: tuple[str, ...] = ()
    inner: object = None


class _Pair(NamedTuple):
    a: str
    b: object


@dataclasses.dataclass(frozen=True)
class _Dicted:  # frozen, but with a __dict__ (a cached_property could write there)
    a: str


class _Open(_Record):  # a frozen record's subclass that is not a dataclass itself
    pass


def test_a_kept_state_holds_what_nothing_can_change_by_reference_and_copies_the_rest() -> None:
    """The frozen records of only strings, tuples, numbers, enum members and
    nodes are the kept objects themselves at a load (no record made again);
    any that holds, or is, something mutable is a copy, as before."""
    node = cst.Name("x")
    frozen = _Record("a", ("b", "c"), _Record("d", (), (node, 1, 2.5, None, True)))
    pair = _Pair("p", frozenset({("q", 1)}))
    mutable = [
        _Record("e", (), []),  # a list inside
        _Record("f", (), (1, {"k": 2})),  # a dict inside a tuple
        _Record("g", (), Anchor(node)),  # a placeholder the walk's end fills in
        _Pair("h", [1]),
        _Dicted("i"),
        _Open("j"),
        _Derived(1),  # (its list field)
    ]
    state = {"frozen": frozen, "pair": pair, "mutable": mutable, "again": frozen}
    kept = resume._dump(state, {}, shared=True)
    assert kept is not None
    got = resume._load(kept, {})
    assert got["frozen"] is frozen and got["again"] is frozen and got["pair"] is pair
    assert got["mutable"] is not mutable
    for was, now in zip(mutable, got["mutable"], strict=True):
        assert now is not was and type(now) is type(was), was
    assert got["mutable"][2].inner.node is node  # (the node: by reference, as ever)
    assert got["mutable"][:2] == mutable[:2] and got["mutable"][3:] == mutable[3:]
    # the fresh state's pickle (compared with the last one's: Pickled.same) copies all
    fresh = resume._dump(state, {})
    assert fresh is not None
    again = resume._load(fresh, {})
    assert again["frozen"] == frozen and again["frozen"] is not frozen
    assert again["frozen"].inner.inner[0] is node
    assert resume._frozen_class(_Record) and resume._frozen_class(_Pair)
    assert not resume._frozen_class(_Dicted) and not resume._frozen_class(_Open)
    assert not resume._frozen_class(_Plain)  # (no slots: a __dict__)
