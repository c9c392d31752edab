"""Every way the runtime context fails closed, as its own exception type."""

from __future__ import annotations


class ConfigNotPublishedError(ValueError):
    """A config namespace was read before ``publish`` ran in this process."""

    def __init__(self, namespace: str) -> None:
        super().__init__(
            f"config namespace {namespace!r} not published: call "
            "ctxrt.context.publish(server_args, role=...) at the process entry first"
        )
        self.namespace = namespace


class SealedError(RuntimeError):
    """A write to something that is read-only after resolution / projection."""


class RecordMutationError(SealedError):
    """A field of a resolved ``ServerArgs`` was assigned or deleted."""


class BagSealedError(SealedError):
    """A config bag leaf was assigned directly instead of through ``override``."""


class StaleBagError(RuntimeError):
    """A bag handle was read after the config it was projected from was replaced
    (re-publish, ``reset_context``, an ``override_server_args`` scope): it would
    answer with the old values. Not an AttributeError on purpose: ``hasattr`` and
    ``getattr(bag, name, default)`` must not turn it into a silent default."""


class DeclarationError(ValueError):
    """``declare_resolution`` was refused: unknown or non-resolvable field, or a
    record that is already published."""


class UnknownLeafError(LookupError):
    """A name is not a config leaf (``override`` / ``config_leaf`` / bag override)."""


class RoleNamespaceError(PermissionError):
    """A process read a namespace outside its role's ``ROLE_NAMESPACE_SETS`` entry
    while ``CTXRT_ROLE_NAMESPACES=enforce``."""


class PublishAssertionError(RuntimeError):
    """A constructor found that its process entry did not publish its record."""


class CaptureViolationError(RuntimeError):
    """A stream or buffer was created while a graph capture is in progress."""


class TopologyNotInitializedError(RuntimeError):
    """A rank or group was read before the live topology was initialised."""


class ParallelTopologyError(ValueError):
    """A scoped override or a stamp of ``get_parallel()`` would leave an inconsistent
    topology: a rank outside its size, sizes that do not factor, a ``tp_rank`` its
    attention ranks do not lay out, or a group wider or narrower than configured."""


class GroupWidthError(RuntimeError):
    """A process group came out at a width other than the configured one."""


class ForwardScopeError(RuntimeError):
    """A ``get_forward().scoped`` scope was closed in a thread or task other than the
    one that entered it (its contextvar flags can only be restored there)."""
