"""The runtime context: one process singleton owning process-static runtime state,
and the module-level accessors every reader goes through.

Tiers: the raw seed (``get_server_args()``, for dumps and provenance only), the
resolved config bags (``get_<ns>()``, the single source of truth), runtime flags,
resources, per-forward state and the parallel view. ``publish`` at each process entry
projects the bags; they fail closed before it; re-publishing is last-publish-wins.
This is the one module that reads the seed's slot."""

from __future__ import annotations

import dataclasses
import sys
import time
import warnings
from collections.abc import Callable
from types import TracebackType
from typing import Any

from ctxrt.bag import ConfigBag, retire, revive
from ctxrt.errors import ConfigNotPublishedError, PublishAssertionError, UnknownLeafError
from ctxrt.fields.layout import TOP_NAMESPACES
from ctxrt.flags import Flags
from ctxrt.forward import ForwardState
from ctxrt.frozen import check_type, freeze
from ctxrt.parallel import ParallelContext, UnpublishedParallelContext
from ctxrt.record import LAYOUT, ServerArgs, derive_leaves
from ctxrt.resolution import RESOLVED_SLOT, mark_published, resolved_values
from ctxrt.resources import Resources
from ctxrt.roles import ROLE_NAMESPACE_SETS, RoleAudit

_PARALLEL_LEAVES = frozenset(n for n, p in LAYOUT.leaf_paths.items() if p == "parallel")

# The accessors' fast path: namespace -> bag, for reads that need no more than a
# lookup. Refilled whenever the published state changes: every bag when no role
# audit runs; with one, each namespace once the audit has seen (and allowed) an
# eager read of it, so each (role, namespace) pair is still observed, a refused
# namespace keeps raising, and later reads cost what unaudited ones do.
_FAST: dict[str, ConfigBag] = {}


@dataclasses.dataclass(frozen=True)
class OverrideEntry:
    """Provenance of one post-publish change to one leaf."""

    source: str
    field: str
    namespace: str
    old: Any
    new: Any
    at: float


def _is_compiling() -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and torch.compiler.is_compiling()


def _project(record: ServerArgs) -> tuple[dict[str, ConfigBag], ParallelContext]:
    """Bags from the declarations over the record's raw fields, plus Derived leaves."""
    values = resolved_values(record)
    values.update(derive_leaves(values))
    by_path: dict[str, dict[str, Any]] = {path: {} for path in LAYOUT.paths}
    for name, path in LAYOUT.leaf_paths.items():
        by_path[path][name] = values[name]

    def build(path: str) -> ConfigBag:
        children = {
            child.rsplit(".", 1)[1]: build(child)
            for child in LAYOUT.paths
            if child.rsplit(".", 1)[0] == path and "." in child
        }
        leaves = by_path.get(path, {})
        return ConfigBag(path, leaves, children, types=_types_of(leaves))

    bags = {ns: build(ns) for ns in TOP_NAMESPACES if ns != "parallel"}
    return bags, ParallelContext(by_path["parallel"], types=_types_of(by_path["parallel"]))


def _types_of(leaves: dict[str, Any]) -> dict[str, tuple[type, ...]]:
    return {name: LAYOUT.leaf_types[name] for name in leaves}


class RuntimeContext:
    """Reached through ``get_context()``. It deliberately has no ``__getattr__`` and no
    member named like a bag accessor: ``ctx.get_exec()`` is an AttributeError."""

    def __init__(self) -> None:
        self._record: ServerArgs | None = None
        self._role: str | None = None
        self._bags: dict[str, ConfigBag] = {}
        self._parallel = UnpublishedParallelContext(_PARALLEL_LEAVES)
        self._leaf_bags: dict[str, ConfigBag] = {}
        self._log: list[OverrideEntry] = []
        self._audit: RoleAudit | None = None
        self._installed: list[ServerArgsOverride] = []  # override_server_args, oldest first
        self.flags = Flags()
        self.resources = Resources(self.flags)
        self.forward = ForwardState()

    # ------------------------------------------------------------------ seed
    @property
    def server_args(self) -> ServerArgs:
        if self._record is None:
            raise ConfigNotPublishedError("server_args")
        return self._record

    @property
    def role(self) -> str | None:
        return self._role

    @property
    def is_published(self) -> bool:
        return self._record is not None

    # ------------------------------------------------------------------ reads
    def config_bag(self, namespace: str) -> ConfigBag:
        try:
            bag = self._bags[namespace]  # a subscript, not .get(): this is the hot path
        except KeyError:
            raise ConfigNotPublishedError(namespace) from None
        if self._audit is not None:
            self._observe(namespace)
        return bag

    def parallel_context(self) -> ParallelContext:
        if self._audit is not None and self._record is not None:
            self._observe("parallel")
        return self._parallel

    def _observe(self, namespace: str) -> None:
        audit = self._audit
        assert audit is not None
        if _is_compiling():
            # Enforce still fails closed while dynamo traces (the raise happens at
            # trace time, before any graph exists); only the record side, a file
            # append, and the fast-path fill are side effects kept out of the trace.
            audit.check(namespace)
            return
        audit.observe(namespace)  # raises on a refused namespace
        if self is not _CONTEXT:
            return
        if namespace in self._bags or namespace == "parallel":
            _FAST[namespace] = self._parallel if namespace == "parallel" else self._bags[namespace]

    def _refill_fast(self) -> None:
        if self is not _CONTEXT:  # the map serves the process singleton's accessors only
            return
        _FAST.clear()
        if self._audit is None:
            _FAST.update(self._bags)
            _FAST["parallel"] = self._parallel

    def config_leaf(self, name: str) -> Any:
        """The read side of ``override`` for code that holds a field *name*."""
        bag = self._leaf_bag(name)
        if self._audit is not None:
            self._observe(LAYOUT.leaf_paths[name].split(".")[0])
        return bag._leaf(name)

    def _leaf_bag(self, name: str) -> ConfigBag:
        if self._record is None:
            path = LAYOUT.leaf_paths.get(name, "config")
            raise ConfigNotPublishedError(path.split(".")[0])
        bag = self._leaf_bags.get(name)
        if bag is None:
            raise UnknownLeafError(f"{name!r} is not a config leaf")
        return bag

    # ------------------------------------------------------------------ writes
    def publish(self, record: ServerArgs, *, role: str) -> None:
        if role not in ROLE_NAMESPACE_SETS:
            raise ValueError(f"unknown role {role!r}; roles: {sorted(ROLE_NAMESPACE_SETS)}")
        if not isinstance(record, ServerArgs) or not record.__dict__.get(RESOLVED_SLOT):
            raise TypeError(f"publish takes a resolved ServerArgs, got {type(record).__name__}")
        audit = RoleAudit.from_env(role)
        bags, parallel = _project(record)
        leaf_bags: dict[str, ConfigBag] = {}
        for name, path in LAYOUT.leaf_paths.items():
            top, *rest = path.split(".")
            bag: ConfigBag = parallel if top == "parallel" else bags[top]
            for part in rest:
                bag = getattr(bag, part)  # not __dict__: that would materialise it
            leaf_bags[name] = bag
        mark_published(record)
        # Last publish wins: the whole config state is replaced in one go, and every
        # handle of the replaced one is retired (it would answer with old values).
        # The parallel stamp is for the process: a re-publish keeps it.
        parallel._adopt_stamp(object.__getattribute__(self._parallel, "_stamp"))
        self._retire_bags()
        self._record, self._role, self._audit = record, role, audit
        self._bags, self._parallel, self._leaf_bags = bags, parallel, leaf_bags
        self._log = []
        self._refill_fast()

    def override(self, source: str, **fields: Any) -> None:
        """The only post-publish config write: bag leaves in place, provenance in the
        log, never the record. Every name is validated before any is written."""
        if self._record is None:
            raise ConfigNotPublishedError("config")
        bad = sorted(n for n in fields if n not in self._leaf_bags)
        if bad:
            raise UnknownLeafError(f"{source}: not config leaves: {bad}")
        for name, value in fields.items():
            check_type(f"{source}: {name}", value, LAYOUT.leaf_types[name])
        now = time.time()
        for name, value in fields.items():
            bag = self._leaf_bags[name]
            old = bag._leaf(name)
            bag._set_logged(name, value)
            new = freeze(value)  # as stored (under a parallel stamp the leaf answers the stamp)
            self._log.append(OverrideEntry(source, name, LAYOUT.leaf_paths[name], old, new, now))

    def overrides_log(self) -> tuple[OverrideEntry, ...]:
        return tuple(self._log)

    def resolved_server_args_dict(self, base: dict[str, Any] | None = None) -> dict[str, Any]:
        """``base`` (default: the published record's ``resolved_dict()``) with this
        process's post-publish overrides on top, in log order: the config in effect
        here. Readbacks and dumps report this; a manager overlays the fields it owns
        (``ctxrt.manager_config``)."""
        resolved = self.server_args.resolved_dict() if base is None else dict(base)
        for entry in self._log:
            resolved[entry.field] = entry.new
        return resolved

    def override_server_args(self, *, role: str = "scheduler", **fields: Any) -> ServerArgsOverride:
        """A publishing override for tests: a fresh record carrying ``fields`` is
        resolved and published when entered / installed, and the previous config
        state comes back on exit / restore. The bare call publishes nothing."""
        return ServerArgsOverride(self, role, fields)

    def _config_state(self) -> tuple[Any, ...]:
        return (
            self._record,
            self._role,
            self._audit,
            self._bags,
            self._parallel,
            self._leaf_bags,
            self._log,
        )

    def _retire_bags(self) -> None:
        for bag in self._bags.values():
            retire(bag)
        retire(self._parallel)

    def _restore_config_state(self, state: tuple[Any, ...]) -> None:
        self._retire_bags()
        (
            self._record,
            self._role,
            self._audit,
            self._bags,
            self._parallel,
            self._leaf_bags,
            self._log,
        ) = state
        for bag in self._bags.values():
            revive(bag)
        revive(self._parallel)
        self._refill_fast()

    def reset(self) -> None:
        """Drop the published config; fresh flags, resources and forward tiers."""
        self._restore_config_state(
            (None, None, None, {}, UnpublishedParallelContext(_PARALLEL_LEAVES), {}, [])
        )
        self._installed = []
        self.flags = Flags()
        self.resources = Resources(self.flags)
        self.forward = ForwardState()


class ServerArgsOverride:
    """``with get_context().override_server_args(tp_size=2): ...`` or
    ``o.install()`` ... ``o.restore()`` for fixture lifetimes."""

    def __init__(self, context: RuntimeContext, role: str, fields: dict[str, Any]) -> None:
        self._context = context
        self._role = role
        self._fields = {"model_path": "dummy", **fields}
        self._saved: tuple[Any, ...] | None = None
        self.server_args: ServerArgs | None = None

    def install(self) -> ServerArgs:
        if self._saved is not None:
            raise RuntimeError("override_server_args is already installed")
        record = ServerArgs(**self._fields)
        saved = self._context._config_state()
        self._context.publish(record, role=self._role)
        self._saved, self.server_args = saved, record
        self._context._installed.append(self)
        return record

    def restore(self) -> None:
        """Undo this install. Out of order (another override was installed over this
        one and is still in force), that one stays published and inherits what this
        one found, so restoring both in any order ends at the state before either."""
        if self._saved is None:
            raise RuntimeError("override_server_args was not installed")
        stack = self._context._installed
        at = next((i for i, o in enumerate(stack) if o is self), None)
        if at is None or at == len(stack) - 1:
            self._context._restore_config_state(self._saved)
        else:
            stack[at + 1]._saved = self._saved
        if at is not None:
            del stack[at]
        self._saved = None

    def __enter__(self) -> ServerArgs:
        return self.install()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.restore()


_CONTEXT = RuntimeContext()


def get_context() -> RuntimeContext:
    return _CONTEXT


def get_server_args() -> ServerArgs:
    return _CONTEXT.server_args


def get_exec() -> ConfigBag:
    try:
        return _FAST["exec"]
    except KeyError:
        return _CONTEXT.config_bag("exec")


def get_memory() -> ConfigBag:
    try:
        return _FAST["memory"]
    except KeyError:
        return _CONTEXT.config_bag("memory")


def get_schedule() -> ConfigBag:
    try:
        return _FAST["schedule"]
    except KeyError:
        return _CONTEXT.config_bag("schedule")


def get_model() -> ConfigBag:
    try:
        return _FAST["model"]
    except KeyError:
        return _CONTEXT.config_bag("model")


def get_spec() -> ConfigBag:
    try:
        return _FAST["spec"]
    except KeyError:
        return _CONTEXT.config_bag("spec")


def get_serving() -> ConfigBag:
    try:
        return _FAST["serving"]
    except KeyError:
        return _CONTEXT.config_bag("serving")


def get_observability() -> ConfigBag:
    try:
        return _FAST["observability"]
    except KeyError:
        return _CONTEXT.config_bag("observability")


def get_disagg() -> ConfigBag:
    try:
        return _FAST["disagg"]
    except KeyError:
        return _CONTEXT.config_bag("disagg")


def get_lora() -> ConfigBag:
    try:
        return _FAST["lora"]
    except KeyError:
        return _CONTEXT.config_bag("lora")


def get_mm() -> ConfigBag:
    try:
        return _FAST["mm"]
    except KeyError:
        return _CONTEXT.config_bag("mm")


def get_device() -> ConfigBag:
    try:
        return _FAST["device"]
    except KeyError:
        return _CONTEXT.config_bag("device")


def get_parallel() -> ParallelContext:
    try:
        return _FAST["parallel"]  # type: ignore[return-value]
    except KeyError:
        return _CONTEXT.parallel_context()


def get_tensor_model_parallel_world_size() -> int:
    """Legacy spelling of ``get_parallel().tp_size``, kept while callers migrate.
    It answers the same leaf, but a name per size is what the parallel view
    replaced: one accessor, one spelling per name."""
    warnings.warn(
        "get_tensor_model_parallel_world_size() is deprecated; read get_parallel().tp_size",
        DeprecationWarning,
        stacklevel=2,
    )
    return get_parallel().tp_size


def get_flags() -> Flags:
    return _CONTEXT.flags


def get_resources() -> Resources:
    return _CONTEXT.resources


def get_forward() -> ForwardState:
    return _CONTEXT.forward


def publish(server_args: ServerArgs, *, role: str) -> None:
    """Call at the very top of every publishing process entry."""
    _CONTEXT.publish(server_args, role=role)


def assert_published(server_args: ServerArgs, *, role: str | None = None) -> None:
    """For constructors: fail loudly if the process entry forgot to publish the record
    this object was handed (or published a different one, or under another role)."""
    published = _CONTEXT._record
    if published is None:
        raise PublishAssertionError("no publish in this process: publish at the entry")
    if published is not server_args:
        raise PublishAssertionError("handed a record other than the one this process published")
    if role is not None and _CONTEXT.role != role:
        raise PublishAssertionError(f"published as {_CONTEXT.role!r}, expected {role!r}")


def reset_context() -> None:
    _CONTEXT.reset()


def get_stream(name: str) -> Any:
    return _CONTEXT.resources.stream(name)


def set_stream(name: str, stream: Any) -> None:
    _CONTEXT.resources.set_stream(name, stream)


def get_buffer(name: str, factory: Callable[[], Any]) -> Any:
    return _CONTEXT.resources.buffer(name, factory)
