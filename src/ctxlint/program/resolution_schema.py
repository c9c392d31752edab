"""The part "resolution"'s facts, typed: what program.resolution_facts' visitor
keeps per file and program.resolution (with CTX103, CTX104 and CTX403) reads.
Each collection is left out of the stored form when empty (facts/typed.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ctxlint.facts.typed import Site


@dataclass(frozen=True, slots=True)
class Handed:
    """A call in `fn` handing functions by name (`refs`) to `callee`."""

    fn: str
    callee: str
    refs: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class StashWrite:
    """A write to a private slot: `how` is init, assign or append; `param` the
    parameter it was written through (None: another object)."""

    fn: str | None
    slot: str  # the slot, or `@module.NAME` for a constant naming it
    how: str
    param: str | None
    site: Site


@dataclass(frozen=True, slots=True)
class FieldAccess:
    """A direct read or write of a record field off a parameter (`holder`);
    a read's `kind`: recv (the receiver), ann (annotated with the record), name;
    `edits`: the read is the receiver of an in-place edit (an attribute or item
    store, `del`, a container mutator's call), directly or through a local."""

    fn: str
    holder: str
    field: str
    site: Site
    kind: str = ""
    edits: bool = False
    # in a method of a record class, outside any loop: how many calls of the
    # method ran before it (`RecordCalls`' order); -1 otherwise
    calls_before: int = -1


@dataclass(frozen=True, slots=True)
class ResolutionFileFacts:
    consts: dict[str, str] = field(default_factory=dict)  # module constant -> its string
    getattr_classes: tuple[str, ...] = ()  # classes defining __getattr__
    returns: dict[str, tuple[str, ...]] = field(default_factory=dict)  # fn -> callees returned
    decorators: dict[str, tuple[str, ...]] = field(default_factory=dict)
    decorator_like: tuple[str, ...] = ()  # returning a parameter or a nested def
    param_calls: dict[str, tuple[str, ...]] = field(default_factory=dict)  # fn -> handed calls
    handed: tuple[Handed, ...] = ()
    local_handed: tuple[str, ...] = ()  # functions that handed a name naming no program code
    stash: tuple[StashWrite, ...] = ()
    signatures: dict[str, str] = field(default_factory=dict)  # stash writer -> its params
    slot_reads: tuple[tuple[str | None, str], ...] = ()  # (function, slot) read
    reads: tuple[FieldAccess, ...] = ()
    writes: tuple[FieldAccess, ...] = ()
    view_bindings: tuple[tuple[str, str], ...] = ()  # `name = f(...)`: (name, f)
    # per method of a record class: its calls in the order they run ("self:m" for a
    # method of the receiver, "field" for a method of a field's value, else the
    # qualified callee; "?" when it names none or hands a function on)
    record_calls: dict[str, tuple[str, ...]] = field(default_factory=dict)
