"""The facts walk of a spliced module, taken up again at the edited statement.

A splice (facts.splice) replaces one top-level statement; every statement
before it is the same object as before. The walk's state (the file context
and every visitor, as the walk leaves them at the start of a top-level
statement) is a function of the file's set-up and of the statements walked so
far, so the state at the edited statement's start, kept from the last walk
(`Resume`), is the state a whole walk of the new module reaches there. The
walk then goes on from that statement to the end, and each visitor's
`finish()` runs as after a whole walk.

The state is kept pickled, its LibCST nodes by reference (they are the kept
module's: the statements before the edit), so that the walk going on cannot
change the kept copy. It is used only when all of these hold, else the whole
module is walked (and the state at the edited statement kept for the next):

- the statements before it are the same objects (`is`) as when it was taken;
- the path, module, vocabulary and visitors are the same;
- the set-up the context and visitors make from the whole module before the
  walk (the module's import table, the names a `def` below binds, ...) pickles
  to the same bytes and nodes as then (`_dump` of the fresh state);
- the state pickles and unpickles without error (a visitor holding a closure
  or a lock cannot be kept: the whole walk answers).

The text, the module and the vocabulary are not pickled: the state taken up
again refers to the new ones.
"""

from __future__ import annotations

import io
import pickle
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import libcst as cst

from ctxlint.facts.walk import TRIVIA, WALKED, walk

_NODES = WALKED | TRIVIA  # exact types: isinstance on LibCST's ABCs is slow


@dataclass(frozen=True)
class Setup:
    """What the walk's state depends on besides the module's statements."""

    path: str
    module: str
    vocab_json: Any
    kinds: tuple[Any, ...]

    def same(self, other: Setup) -> bool:
        return (
            (self.path, self.module, self.kinds) == (other.path, other.module, other.kinds)
        ) and (self.vocab_json is other.vocab_json or self.vocab_json == other.vocab_json)


@dataclass
class Pickled:
    """Objects pickled, their LibCST nodes by reference."""

    blob: bytes
    nodes: list[cst.CSTNode]

    def same(self, other: Pickled) -> bool:
        return (
            self.blob == other.blob
            and len(self.nodes) == len(other.nodes)
            and all(a is b for a, b in zip(self.nodes, other.nodes, strict=True))
        )


@dataclass
class Resume:
    """The walk's state at the start of top-level statement `index`."""

    setup: Setup
    init: Pickled  # the state before the walk (the set-up's part of it)
    index: int
    prefix: tuple[cst.BaseStatement, ...]  # the statements walked before it
    state: Pickled

    def fits(self, setup: Setup, init: Pickled, body: Sequence[cst.BaseStatement]) -> bool:
        return (
            self.index <= len(body)
            and all(a is b for a, b in zip(self.prefix, body, strict=False))
            and self.setup.same(setup)
            and self.init.same(init)
        )


class _Pickler(pickle.Pickler):
    def __init__(self, file: io.BytesIO, named: dict[int, str]) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.named = named
        self.nodes: list[cst.CSTNode] = []

    def persistent_id(self, obj: Any) -> Any:
        named = self.named.get(id(obj))
        if named is None and type(obj) in _NODES:
            self.nodes.append(obj)
            return len(self.nodes) - 1
        return named


class _Unpickler(pickle.Unpickler):
    def __init__(self, file: io.BytesIO, nodes: list[cst.CSTNode], named: dict[str, Any]) -> None:
        super().__init__(file)
        self.nodes, self.named = nodes, named

    def persistent_load(self, pid: Any) -> Any:
        return self.nodes[pid] if type(pid) is int else self.named[pid]


def _dump(state: Any, named: dict[str, Any]) -> Pickled | None:
    out = io.BytesIO()
    pickler = _Pickler(out, {id(obj): name for name, obj in named.items()})
    try:
        pickler.dump(state)
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
        return None  # a closure, a lock, a local class: not kept
    return Pickled(out.getvalue(), pickler.nodes)


def _load(pickled: Pickled, named: dict[str, Any]) -> Any:
    return _Unpickler(io.BytesIO(pickled.blob), pickled.nodes, named).load()


# the fresh state (the context and the visitors it walks with), and a dispatcher
# made for a state: facts.extract's
State = tuple[Any, list[Any]]
Dispatch = Callable[[State], Any]


def walked(
    kept: Any,
    setup: Setup,
    fresh: State,
    dispatch: Dispatch,
    text: str,
    at: int | None,
) -> tuple[State, Resume | None, bool]:
    """The state after the walk of `kept.module` (facts.splice.Kept) from
    `fresh`, taken up from `kept.walk` where it fits; the state at statement
    `at` (the edited one) for the next edit, or None; and whether it was
    taken up (kept.walked_from: the statement it started at)."""
    module: cst.Module = kept.module
    # what the pickled state names instead of holding: the module, its text,
    # the vocabulary, the snippets' texts (facts.context.Texts)
    ctx = fresh[0]
    named = {"m": module, "t": text, "v": ctx.vocab, "x": ctx.texts}
    init = _dump(fresh, named)
    old: Resume | None = kept.walk
    state, start = fresh, 0
    if init is not None and old is not None and old.fits(setup, init, module.body):
        try:
            state, start = _load(old.state, named), old.index
        except Exception:  # any failure: the whole walk answers, exactly
            state, start = fresh, 0
    resumed = start > 0 or state is not fresh
    keep = old if resumed and old is not None and old.index == at else None
    dispatcher = dispatch(state)
    if not resumed:
        dispatcher.on_visit(module)
    body = module.body
    for i in range(start, len(body)):
        if i == at and keep is None and init is not None:
            taken = _dump(state, named)
            if taken is not None:
                keep = Resume(setup, init, i, tuple(body[:i]), taken)
        walk(body[i], dispatcher.on_visit, dispatcher.on_leave)
    dispatcher.on_leave(module)
    kept.walked_from = start
    return state, keep, resumed
