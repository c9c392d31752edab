"""``get_parallel()``: one spelling per name, answered in three layers.

Every name, a configured size, a quotient, a rank or a group, answers from the first
layer that holds it: a scoped ``override(...)`` (restored on exit), then the *stamp*
(``override_permanently(...)``: for the process, until ``clear_stamp()`` or
``reset_context()``; it survives a re-publish), then what was published: the
``parallel`` bag's leaf for a size or quotient, the live topology for a rank or group
(raising before ``initialize_model_parallel``).

A leaf's answer is kept as a plain instance attribute, recomputed whenever a layer
changes, so a leaf read stays one attribute load and traces under ``torch.compile``.

Every scoped override and every stamp is checked against the topology it produces,
refusing what SGLang's validation refuses: a rank outside its size
(``tp_rank=7`` with ``tp_size=1``), sizes that do not factor (``tp_size ==
attn_tp_size * attn_dp_size * attn_cp_size`` and ``== moe_ep_size * moe_dp_size *
moe_tp_size``), a ``tp_rank`` that is not where its attention ranks lay it out, and a
group whose width is not its configured size. A name that cannot be read yet (a rank
before the groups exist) is skipped, so a partial view still validates."""

from __future__ import annotations

import sys
from collections.abc import Callable, Collection, Mapping
from types import TracebackType
from typing import Any

from ctxrt import topology
from ctxrt.bag import ConfigBag
from ctxrt.errors import (
    ConfigNotPublishedError,
    ParallelTopologyError,
    TopologyNotInitializedError,
    UnknownLeafError,
)
from ctxrt.frozen import freeze

_MISSING: Any = object()

# (rank, size): 0 <= rank < size. MoE-DP is absent on purpose: it may alias the wider
# attention-CP group, so its rank need not be below moe_dp_size.
_RANK_AND_SIZE = (
    ("tp_rank", "tp_size"),
    ("pp_rank", "pp_size"),
    ("attn_tp_rank", "attn_tp_size"),
    ("attn_dp_rank", "attn_dp_size"),
    ("attn_cp_rank", "attn_cp_size"),
    ("moe_ep_rank", "moe_ep_size"),
    ("moe_tp_rank", "moe_tp_size"),
)
# (size, group): the group is exactly as wide as configured (MoE-DP: see above).
_SIZE_AND_GROUP = (
    ("tp_size", "tp_group"),
    ("pp_size", "pp_group"),
    ("attn_tp_size", "attn_tp_group"),
    ("attn_cp_size", "attn_cp_group"),
    ("moe_ep_size", "moe_ep_group"),
    ("moe_tp_size", "moe_tp_group"),
)


def group_width(group: Any) -> int | None:
    """A process group's width: a torch ``ProcessGroup``, or any handle with an int
    ``world_size`` (SGLang's coordinators); ``None`` for anything else (a stand-in)."""
    dist = sys.modules.get("torch.distributed")
    if dist is not None and isinstance(group, dist.ProcessGroup):
        return int(group.size())
    width = getattr(group, "world_size", None)
    return width if isinstance(width, int) and not isinstance(width, bool) else None


def group_rank(group: Any) -> int | None:
    """This process's rank in ``group`` (a ``ProcessGroup``, or a handle with an int
    ``rank_in_group``); ``None`` when there is none to read."""
    dist = sys.modules.get("torch.distributed")
    if dist is not None and isinstance(group, dist.ProcessGroup):
        return int(dist.get_rank(group))
    rank = getattr(group, "rank_in_group", None)
    return rank if isinstance(rank, int) and not isinstance(rank, bool) else None


def validate_topology(read: Callable[[str], Any], source: str) -> None:
    """Raise ``ParallelTopologyError`` listing every inconsistency of the view ``read``."""

    def num(name: str) -> int | None:
        try:
            value = read(name)
        except (ConfigNotPublishedError, TopologyNotInitializedError, AttributeError):
            return None
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    problems: list[str] = []
    for rank_name, size_name in _RANK_AND_SIZE:
        rank, size = num(rank_name), num(size_name)
        if rank is not None and size is not None and not 0 <= rank < size:
            problems.append(f"{rank_name}={rank} is not a rank of {size_name}={size}")
    for terms in (
        ("attn_tp_size", "attn_dp_size", "attn_cp_size"),
        ("moe_ep_size", "moe_dp_size", "moe_tp_size"),
    ):
        tp_size, parts = num("tp_size"), [num(t) for t in terms]
        if tp_size is not None and None not in parts:
            a, b, c = (int(p) for p in parts if p is not None)
            if tp_size != a * b * c:
                problems.append(
                    f"tp_size={tp_size} != {' * '.join(terms)} = {a} * {b} * {c} = {a * b * c}"
                )
    layout = [
        num(n)
        for n in (
            "tp_rank",
            "attn_dp_rank",
            "attn_cp_rank",
            "attn_tp_rank",
            "attn_cp_size",
            "attn_tp_size",
        )
    ]
    if None not in layout:
        tp_rank, dp_r, cp_r, tp_r, cp_w, tp_w = (int(v) for v in layout if v is not None)
        laid_out = (dp_r * cp_w + cp_r) * tp_w + tp_r
        if tp_rank != laid_out:
            problems.append(
                f"tp_rank={tp_rank} != (attn_dp_rank * attn_cp_size + attn_cp_rank) * "
                f"attn_tp_size + attn_tp_rank = {laid_out}"
            )
    for size_name, group_name in _SIZE_AND_GROUP:
        size = num(size_name)
        try:
            group = read(group_name)
        except (TopologyNotInitializedError, AttributeError):
            continue
        width = group_width(group)
        if size is not None and width is not None and width != size:
            problems.append(f"{group_name} has {width} ranks; {size_name}={size}")
    if problems:
        raise ParallelTopologyError(
            f"parallel topology refused ({source}):\n  " + "\n  ".join(problems)
        )


def _live(name: str) -> property:
    def read(self: ParallelContext) -> Any:
        scoped = self._scoped
        if name in scoped:
            return scoped[name]
        stamp = self._stamp
        if name in stamp:
            return stamp[name]
        return getattr(topology.live_topology(), name)

    return property(read, doc=f"Live {name}: override, stamp, then the live topology.")


class ParallelContext(ConfigBag):
    """The parallel bag plus the live ranks/groups. It has no ``__getattr__``: that
    hook would take every leaf read off CPython's fast attribute path."""

    def __init__(
        self, leaves: Mapping[str, Any], types: Mapping[str, tuple[type, ...]] | None = None
    ) -> None:
        super().__init__("parallel", leaves, types=types)
        object.__setattr__(self, "_published", {n: self._leaf(n) for n in leaves})
        object.__setattr__(self, "_scoped", {})
        object.__setattr__(self, "_stamp", {})
        object.__setattr__(self, "_names", frozenset(leaves))

    def __repr__(self) -> str:
        return f"ParallelContext({super().__repr__()})"

    # ------------------------------------------------------------------ layers
    def _layered(self, name: str, scoped: Mapping[str, Any], stamp: Mapping[str, Any]) -> Any:
        """``name`` as the layers ``scoped`` > ``stamp`` > published would answer it."""
        if name in scoped:
            return scoped[name]
        if name in stamp:
            return stamp[name]
        if name in topology.LIVE_NAMES:
            return getattr(topology.live_topology(), name)
        value = self._published.get(name, _MISSING)
        if value is _MISSING:
            raise ConfigNotPublishedError("parallel")
        return value

    def _sync(self, names: Collection[str]) -> None:
        """Recompute the plain attribute of each leaf in ``names``."""
        for name in names:
            if name in topology.LIVE_NAMES:
                continue
            value = self._scoped.get(
                name, self._stamp.get(name, self._published.get(name, _MISSING))
            )
            if value is not _MISSING:
                object.__setattr__(self, name, value)
            else:  # back to unpublished (never through __dict__: see ConfigBag._leaf)
                try:
                    object.__delattr__(self, name)
                except AttributeError:
                    pass

    def _checked(self, names: Mapping[str, Any]) -> dict[str, Any]:
        bad = sorted(n for n in names if n not in topology.LIVE_NAMES and n not in self._names)
        if bad:
            raise UnknownLeafError(f"not parallel leaves or live names: {bad}")
        for name, value in names.items():
            if name in self._names:
                self._check_value(name, value)
        return {n: v if n in topology.LIVE_NAMES else freeze(v) for n, v in names.items()}

    def _validate(self, scoped: Mapping[str, Any], stamp: Mapping[str, Any], source: str) -> None:
        validate_topology(lambda n: self._layered(n, scoped, stamp), source)

    # ------------------------------------------------------------------ writes
    def override(self, **names: Any) -> ParallelScope:  # type: ignore[override]
        """Scoped override of leaves and/or live names, checked as a whole topology
        (here and again on entry). Overriding a size does not move its quotient:
        name the widths as well, or use ``patch_tensor_parallel_group``."""
        values = self._checked(names)
        self._validate({**self._scoped, **values}, self._stamp, "override")
        return ParallelScope(self, values)

    def override_permanently(self, **names: Any) -> None:
        """Stamp names for the process (until ``clear_stamp`` / ``reset_context``;
        a re-publish keeps the stamp). Refused as a whole if the result is not a
        consistent topology."""
        values = self._checked(names)
        self._validate(self._scoped, {**self._stamp, **values}, "override_permanently")
        self._stamp.update(values)
        self._sync(values)

    def clear_stamp(self) -> None:
        """Drop every stamped name, ranks and groups included."""
        names = list(self._stamp)
        self._stamp.clear()
        self._sync(names)

    def stamp(self) -> dict[str, Any]:
        return dict(self._stamp)

    def _adopt_stamp(self, stamp: Mapping[str, Any]) -> None:
        """Carry a stamp over a re-publish: set on this (new) view, unchecked, as
        SGLang keeps its stamp across a publish."""
        self._stamp.update(stamp)
        self._sync(stamp)

    def _set_leaf(self, name: str, value: Any) -> None:
        # The published layer (a logged get_context().override writes here): a
        # scope or a stamp over the name keeps answering until it goes.
        self._published[name] = freeze(value)
        self._sync((name,))


class ParallelScope:
    """The context manager ``get_parallel().override(...)`` returns; entered once."""

    __slots__ = ("_entered", "_parallel", "_saved", "_values")

    def __init__(self, parallel: ParallelContext, values: dict[str, Any]) -> None:
        self._parallel = parallel
        self._values = values
        self._saved: dict[str, Any] | None = None
        self._entered = False

    def __enter__(self) -> ParallelContext:
        if self._entered:
            raise RuntimeError("a scoped override is entered once")
        self._entered = True
        p = self._parallel
        p._validate({**p._scoped, **self._values}, p._stamp, "override")
        self._saved = {n: p._scoped.get(n, _MISSING) for n in self._values}
        p._scoped.update(self._values)
        p._sync(self._values)
        return p

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        p, saved = self._parallel, self._saved
        assert saved is not None
        for name, value in saved.items():
            if value is _MISSING:
                p._scoped.pop(name, None)
            else:
                p._scoped[name] = value
        p._sync(saved)


# One read-through property per live name, derived from the Topology fields.
for _name in topology.LIVE_NAMES:
    setattr(ParallelContext, _name, _live(_name))


class UnpublishedParallelContext(ParallelContext):
    """What ``get_parallel()`` answers before publish: ranks and groups still read
    through (and a stamp answers); an unstamped leaf read fails closed, naming the
    namespace."""

    def __init__(self, leaf_names: Collection[str]) -> None:
        super().__init__({})
        object.__setattr__(self, "_names", frozenset(leaf_names))

    def __getattr__(self, name: str) -> Any:
        # Only reached for a name that is not an attribute: an unpublished leaf, or a typo.
        if name in object.__getattribute__(self, "_names"):
            raise ConfigNotPublishedError("parallel")
        raise AttributeError(f"get_parallel() has no {name!r}")
