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
change the kept copy. So are the objects nothing can change (`_frozen`: a
frozen slotted dataclass or a named tuple whose values are such objects,
strings, numbers, tuples and frozensets of them, ...): a load that made them
again would make equal objects that no one could tell apart from the kept
ones but by id(), and making them (the typed records) was most of a load's
time. It is used only when all of these hold, else the whole module is walked
(and the state at the edited statement kept for the next):

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

import dataclasses
import enum
import inspect
import io
import pickle
import types
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
    nodes: list[Any]  # LibCST nodes, and other objects nothing can change (`_frozen`)

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


# A slotted dataclass (the facts' typed records) pickles its fields' values
# and loads them through dataclasses' __setstate__, which asks fields() for
# every object: most of a load's time. Its fields are set here by their slot
# descriptors instead (what object.__setattr__ does there), from the same values.
_Setters = tuple[tuple[str, ...], tuple[Callable[[Any, Any], None], ...]]
_SLOTTED: dict[type, _Setters | None] = {}


def _slotted(cls: type) -> _Setters | None:
    """The field names and slot setters of a slotted dataclass that pickles
    by dataclasses' __getstate__/__setstate__; None for any other class."""
    if cls in _SLOTTED:
        return _SLOTTED[cls]
    how: _Setters | None = None
    setstate = cls.__dict__.get("__setstate__")
    if dataclasses.is_dataclass(cls) and getattr(setstate, "__name__", "") == "_dataclass_setstate":
        names = tuple(f.name for f in dataclasses.fields(cls))
        slots = [inspect.getattr_static(cls, n, None) for n in names]
        if all(type(d) is types.MemberDescriptorType for d in slots):
            how = names, tuple(d.__set__ for d in slots)  # type: ignore[union-attr]
    _SLOTTED[cls] = how
    return how


def _restore(cls: type, values: tuple[Any, ...]) -> Any:
    """A slotted dataclass's object from its fields' values (`_slotted`)."""
    how = _slotted(cls)
    assert how is not None  # (pickled by reducer_override only then)
    obj = object.__new__(cls)
    for setter, value in zip(how[1], values, strict=True):
        setter(obj, value)
    return obj


# Objects that cannot change once made, whatever holds them: kept by reference
# in a kept state (`_frozen`). Exact types: a subclass may add what changes.
_ATOMS: frozenset[type] = frozenset({str, int, float, complex, bool, bytes, type(None), type})
_FROZEN_CLASSES: dict[type, bool] = {}


def _frozen_class(cls: type) -> bool:
    """Whether no object of `cls` can be changed once made, where its values
    cannot be (decided once per class): a frozen dataclass made so by
    @dataclass itself (its __setattr__ and __delattr__ refuse every name)
    with no __dict__ and no slot but its fields' (nothing a frozen
    dataclass's own method could set by object.__setattr__ that pickling
    would not copy), or a named tuple with no __dict__ and no slots."""
    known = _FROZEN_CLASSES.get(cls)
    if known is not None:
        return known
    slots = {name for c in cls.__mro__ for name in _slot_names(c)} - {"__weakref__"}
    if issubclass(cls, tuple):
        frozen = hasattr(cls, "_fields") and cls.__dictoffset__ == 0 and not slots
    else:
        params = cls.__dict__.get("__dataclass_params__")
        frozen = (
            params is not None
            and params.frozen
            and cls.__dictoffset__ == 0
            and slots <= {f.name for f in dataclasses.fields(cls)}
        )
    _FROZEN_CLASSES[cls] = frozen
    return frozen


def _slot_names(cls: type) -> tuple[str, ...]:
    slots = cls.__dict__.get("__slots__", ())
    return (slots,) if isinstance(slots, str) else tuple(slots)


def _frozen(obj: Any, seen: dict[int, bool]) -> bool:
    """Whether nothing can change `obj` nor anything it holds: an atom (a
    string, a number, None, a class), a LibCST node (the walk's, kept by
    reference anyway), an Enum member (pickled by name: the same object), a
    tuple or frozenset of such objects, or a `_frozen_class` object whose
    values are. `seen`: the answers so far by id() (their objects live while
    the state is pickled)."""
    kind = type(obj)
    if kind in _ATOMS or kind in _NODES or isinstance(kind, enum.EnumMeta):
        return True
    answer = seen.get(id(obj))
    if answer is None:
        seen[id(obj)] = False  # (a cycle: not frozen)
        if kind is tuple or kind is frozenset:
            answer = all(_frozen(x, seen) for x in obj)
        elif not _frozen_class(kind):
            answer = False
        elif isinstance(obj, tuple):
            answer = all(_frozen(x, seen) for x in obj)
        else:
            answer = all(_frozen(getattr(obj, f.name), seen) for f in dataclasses.fields(obj))
        seen[id(obj)] = answer
    return answer


class _Pickler(pickle.Pickler):
    """Pickles `named` objects (id -> the index of the object the load is
    given in its place) and LibCST nodes by reference, and with `shared` the
    `_frozen` objects too (their index: past the named ones')."""

    def __init__(self, file: io.BytesIO, named: dict[int, int], shared: bool) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.named = named
        self.nodes: list[Any] = []
        self.shared = shared
        self.seen: dict[int, bool] = {}  # _frozen's answers
        self.index: dict[int, int] = {}  # id of an object kept by reference -> its pid

    def reducer_override(self, obj: Any) -> Any:
        how = _slotted(type(obj))
        if how is None:
            return NotImplemented
        return _restore, (type(obj), tuple(getattr(obj, n) for n in how[0]))

    def persistent_id(self, obj: Any) -> Any:
        key = id(obj)
        named = self.named.get(key)
        if named is not None:
            return named
        kind = type(obj)
        if kind in _ATOMS:
            return None  # (pickled as ever: a string's copy costs less than a reference)
        if kind in _NODES or (self.shared and _frozen(obj, self.seen)):
            pid = self.index.get(key)
            if pid is None:
                pid = self.index[key] = len(self.named) + len(self.nodes)
                self.nodes.append(obj)
            return pid
        return None


def _dump(state: Any, named: dict[str, Any], shared: bool = False) -> Pickled | None:
    """`state` pickled, `named` objects and LibCST nodes (and with `shared`,
    `_frozen` objects) by reference; None where it cannot be."""
    out = io.BytesIO()
    pickler = _Pickler(out, {id(obj): i for i, obj in enumerate(named.values())}, shared)
    try:
        pickler.dump(state)
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
        return None  # a closure, a lock, a local class: not kept
    return Pickled(out.getvalue(), pickler.nodes)


def _load(pickled: Pickled, named: dict[str, Any]) -> Any:
    """The state `_dump` pickled, `named` (the same names, in the same order)
    in place of the objects it named then."""
    unpickler = pickle.Unpickler(io.BytesIO(pickled.blob))
    # (a list's lookup: no Python call per object kept by reference)
    unpickler.persistent_load = [*named.values(), *pickled.nodes].__getitem__
    return unpickler.load()


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
            taken = _dump(state, named, shared=True)
            if taken is not None:
                keep = Resume(setup, init, i, tuple(body[:i]), taken)
        walk(body[i], dispatcher.on_visit, dispatcher.on_leave)
    dispatcher.on_leave(module)
    kept.walked_from = start
    return state, keep, resumed
