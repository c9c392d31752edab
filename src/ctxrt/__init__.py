"""ctxrt: the reference runtime of the runtime-context design.

Config lives in one process singleton (``get_context()``): ``publish`` the resolved
``ServerArgs`` at each process entry, then read namespace bags (``get_exec()``, ...).
The accessors are defined in ``ctxrt.context``; import them from there in code the
linter checks."""

from ctxrt.bag import ConfigBag
from ctxrt.context import (
    OverrideEntry,
    RuntimeContext,
    ServerArgsOverride,
    assert_published,
    get_buffer,
    get_context,
    get_device,
    get_disagg,
    get_exec,
    get_flags,
    get_forward,
    get_lora,
    get_memory,
    get_mm,
    get_model,
    get_observability,
    get_parallel,
    get_resources,
    get_schedule,
    get_server_args,
    get_serving,
    get_spec,
    get_stream,
    publish,
    reset_context,
    set_stream,
)
from ctxrt.errors import (
    BagSealedError,
    CaptureViolationError,
    ConfigNotPublishedError,
    DeclarationError,
    PublishAssertionError,
    RecordMutationError,
    RoleNamespaceError,
    SealedError,
    TopologyNotInitializedError,
    UnknownLeafError,
)
from ctxrt.fields.base import Derived, arg
from ctxrt.flags import CaptureFlags, DpFlags, Flags, MoeFlags
from ctxrt.forward import ForwardFlags, ForwardState
from ctxrt.parallel import ParallelContext
from ctxrt.record import ServerArgs
from ctxrt.resolution import (
    MODEL_OVERRIDES,
    declare_resolution,
    register_model_override,
    resolution_result,
    resolved_view,
    resolving_view,
)
from ctxrt.resources import Resources
from ctxrt.roles import ROLE_NAMESPACE_SETS, read_role_audit

__all__ = [
    "MODEL_OVERRIDES",
    "ROLE_NAMESPACE_SETS",
    "BagSealedError",
    "CaptureFlags",
    "CaptureViolationError",
    "ConfigBag",
    "ConfigNotPublishedError",
    "DeclarationError",
    "Derived",
    "DpFlags",
    "Flags",
    "ForwardFlags",
    "ForwardState",
    "MoeFlags",
    "OverrideEntry",
    "ParallelContext",
    "PublishAssertionError",
    "RecordMutationError",
    "Resources",
    "RoleNamespaceError",
    "RuntimeContext",
    "SealedError",
    "ServerArgs",
    "ServerArgsOverride",
    "TopologyNotInitializedError",
    "UnknownLeafError",
    "arg",
    "assert_published",
    "declare_resolution",
    "get_buffer",
    "get_context",
    "get_device",
    "get_disagg",
    "get_exec",
    "get_flags",
    "get_forward",
    "get_lora",
    "get_memory",
    "get_mm",
    "get_model",
    "get_observability",
    "get_parallel",
    "get_resources",
    "get_schedule",
    "get_server_args",
    "get_serving",
    "get_spec",
    "get_stream",
    "publish",
    "read_role_audit",
    "register_model_override",
    "reset_context",
    "resolution_result",
    "resolved_view",
    "resolving_view",
    "set_stream",
]
