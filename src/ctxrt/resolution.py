"""Resolution: deciding configuration without writing the record.

Handlers read through a view (``resolving_view`` is live over the stash,
``resolved_view`` a snapshot) and declare with ``declare_resolution``; the record's
fields keep the operator's input, and the stash on the record travels with it into
every process it is handed to, where ``publish`` projects the bags from it."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from ctxrt.errors import DeclarationError, SealedError, UnknownLeafError
from ctxrt.hf_configs import load_hf_config

logger = logging.getLogger(__name__)

# Bookkeeping slots on the record (written with object.__setattr__, never via fields).
STASH_SLOT = "_ctx_declarations"
RESOLVED_SLOT = "_ctx_resolved"
PUBLISHED_SLOT = "_ctx_published"  # see mark_published


@dataclasses.dataclass(frozen=True)
class Declaration:
    """One resolution decision: who decided (``source``) and what."""

    source: str
    fields: Mapping[str, Any]

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", MappingProxyType(dict(self.fields)))

    def __reduce__(self) -> tuple[Any, ...]:
        # Declarations travel inside the record to spawned processes.
        return (Declaration, (self.source, dict(self.fields)))


def _input_fields(record: Any) -> dict[str, bool]:
    """Input field name -> resolvable, for the record's class (bookkeeping fields,
    named with a leading underscore, are not input)."""
    return {
        f.name: bool(f.metadata.get("resolvable"))
        for f in dataclasses.fields(record)
        if not f.name.startswith("_")
    }


def declarations(record: Any) -> tuple[Declaration, ...]:
    """Every declaration on the record, oldest first (provenance)."""
    return tuple(record.__dict__[STASH_SLOT])


def is_published(record: Any) -> bool:
    return bool(record.__dict__.get(PUBLISHED_SLOT, False))


def mark_published(record: Any) -> None:
    # A bookkeeping slot, not a field: spelled literally so that is visible here.
    object.__setattr__(record, "_ctx_published", True)


def declare_resolution(record: Any, source: str, **fields: Any) -> None:
    """Append a declaration to the record's stash. The only writer of the stash.

    Refuses a published record (the stash is projected at publish and never again, so
    a later declaration would be a silent no-op) and any field that is not on the
    ``resolvable=True`` whitelist; validates every name before appending anything."""
    if not fields:
        return
    if is_published(record):
        raise DeclarationError(
            f"{source}: record already published; declare before publish, or change the "
            "live value with get_context().override"
        )
    known = _input_fields(record)
    unknown = sorted(n for n in fields if n not in known)
    if unknown:
        raise DeclarationError(f"{source}: not record fields: {unknown}")
    fixed = sorted(n for n in fields if not known[n])
    if fixed:
        raise DeclarationError(f"{source}: fields not resolvable=True: {fixed}")
    record.__dict__[STASH_SLOT].append(Declaration(source, fields))


def resolution_result(record: Any, field: str) -> Any:
    """What resolution decided for ``field``: the latest declaration, else the input."""
    for decl in reversed(record.__dict__[STASH_SLOT]):
        if field in decl.fields:
            return decl.fields[field]
    if field not in _input_fields(record):
        raise UnknownLeafError(f"{field!r} is not a record field")
    return record.__dict__[field]


def resolved_values(record: Any) -> dict[str, Any]:
    """Every input field at its resolved value."""
    values = {name: record.__dict__[name] for name in _input_fields(record)}
    for decl in record.__dict__[STASH_SLOT]:
        values.update(decl.fields)
    return values


class _ReadOnlyView:
    __slots__ = ()

    def __setattr__(self, name: str, value: Any) -> None:
        raise SealedError(f"views are read-only; declare {name!r} with declare_resolution")

    def __delattr__(self, name: str) -> None:
        raise SealedError("views are read-only")


class ResolvingView(_ReadOnlyView):
    """Live view: every read walks the stash, so it sees declarations made since."""

    __slots__ = ("_record",)

    def __init__(self, record: Any) -> None:
        object.__setattr__(self, "_record", record)

    def __getattr__(self, name: str) -> Any:
        try:
            return resolution_result(self._record, name)
        except UnknownLeafError:
            raise AttributeError(name) from None


class ResolvedView(_ReadOnlyView):
    """Snapshot view over a dict of values, taken when built."""

    __slots__ = ("_values",)

    def __init__(self, values: Mapping[str, Any]) -> None:
        object.__setattr__(self, "_values", dict(values))

    def __getattr__(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(name) from None


def resolving_view(record: Any) -> ResolvingView:
    return ResolvingView(record)


def resolved_view(record: Any) -> ResolvedView:
    return ResolvedView(resolved_values(record))


def run_post_process_pass(
    record: Any, source: str, pass_fn: Callable[[ResolvedView], Mapping[str, Any]]
) -> None:
    """Run a pass over the state at its slot; an empty result is a validation and
    stays legal on a published record."""
    result = pass_fn(resolved_view(record))
    if not isinstance(result, Mapping):
        raise DeclarationError(f"{source}: a pass returns a mapping, got {type(result).__name__}")
    declare_resolution(record, source, **result)


class _ForeignDefaults:
    """What a foreign resolver is handed: its reads fall through to the live view,
    its assignments are collected (the record itself is never written)."""

    __slots__ = ("_view", "_written")

    def __init__(self, record: Any) -> None:
        object.__setattr__(self, "_view", resolving_view(record))
        object.__setattr__(self, "_written", {})

    def __getattr__(self, name: str) -> Any:
        written = object.__getattribute__(self, "_written")
        if name in written:
            return written[name]
        return getattr(object.__getattribute__(self, "_view"), name)

    def __setattr__(self, name: str, value: Any) -> None:
        object.__getattribute__(self, "_written")[name] = value


def record_foreign_defaults(record: Any, source: str, resolve: Callable[[Any], Any]) -> Any:
    """Run a resolver this tree does not own (an out-of-tree plugin whose interface
    is to *assign* fields) against a stand-in, and declare what it assigned."""
    stand_in = _ForeignDefaults(record)
    result = resolve(stand_in)
    declare_resolution(record, source, **object.__getattribute__(stand_in, "_written"))
    return result


# ---------------------------------------------------------------- model overrides

ModelOverrideFn = Callable[[ResolvedView, Mapping[str, Any]], Mapping[str, Any]]

MODEL_OVERRIDES: dict[str, Mapping[str, Any]] = {}
_MODEL_OVERRIDE_FNS: dict[str, ModelOverrideFn] = {}


def register_model_override(arch: str) -> Callable[[ModelOverrideFn], ModelOverrideFn]:
    """Register ``fn(cfg, hf_config) -> dict`` for an architecture. ``cfg`` is a
    read-only snapshot; the returned dict is declared, never written."""

    def register(fn: ModelOverrideFn) -> ModelOverrideFn:
        _MODEL_OVERRIDE_FNS[arch] = fn
        return fn

    return register


def _apply_model_overrides(record: Any) -> None:
    hf_config = load_hf_config(resolution_result(record, "model_path"))
    for arch in hf_config["architectures"]:
        declare_resolution(record, f"MODEL_OVERRIDES[{arch}]", **MODEL_OVERRIDES.get(arch, {}))
        fn = _MODEL_OVERRIDE_FNS.get(arch)
        if fn is not None:
            run_post_process_pass(
                record, f"register_model_override({arch})", lambda cfg, fn=fn: fn(cfg, hf_config)
            )


# ---------------------------------------------------------------- the pipeline


def _cuda_available() -> bool:
    import torch  # resolution is the launcher's job; the light child processes skip it

    return torch.cuda.is_available()


def _resolve_device(record: Any) -> None:
    cfg = resolving_view(record)
    if cfg.device == "auto":
        declare_resolution(record, "device", device="cuda" if _cuda_available() else "cpu")


def _resolve_model(record: Any) -> None:
    cfg = resolving_view(record)
    hf_config = load_hf_config(cfg.model_path)
    on_cuda = cfg.device == "cuda"
    decided: dict[str, Any] = {}
    if cfg.served_model_name is None:
        decided["served_model_name"] = cfg.model_path
    if cfg.context_length is None:
        decided["context_length"] = hf_config["max_position_embeddings"]
    if cfg.load_format == "auto":
        decided["load_format"] = "dummy"  # built-in models have no checkpoint on disk
    if cfg.dtype == "auto":
        decided["dtype"] = "bfloat16" if on_cuda else "float32"
    declare_resolution(record, "model", **decided)


def _resolve_kernels(record: Any) -> None:
    cfg = resolving_view(record)
    on_cuda = cfg.device == "cuda"
    decided: dict[str, Any] = {}
    if cfg.attention_backend is None:
        decided["attention_backend"] = "sdpa" if on_cuda else "torch_native"
    if cfg.kv_cache_dtype == "auto":
        decided["kv_cache_dtype"] = cfg.dtype
    if cfg.moe_runner_backend == "auto":
        decided["moe_runner_backend"] = "triton" if on_cuda else "torch"
    if not on_cuda and not cfg.disable_cuda_graph:
        decided["disable_cuda_graph"] = True
    declare_resolution(record, "kernels", **decided)


def _resolve_capacity(record: Any) -> None:
    cfg = resolving_view(record)
    on_cuda = cfg.device == "cuda"
    decided: dict[str, Any] = {}
    if cfg.mem_fraction_static is None:
        decided["mem_fraction_static"] = 0.85 if on_cuda else 0.5
    if cfg.max_running_requests is None:
        decided["max_running_requests"] = 256 if on_cuda else 8
    if cfg.chunked_prefill_size is None:
        decided["chunked_prefill_size"] = 8192 if on_cuda else 2048
    declare_resolution(record, "capacity", **decided)
    cfg = resolving_view(record)
    if not cfg.disable_cuda_graph and cfg.cuda_graph_max_bs is None:
        declare_resolution(record, "capacity", cuda_graph_max_bs=min(cfg.max_running_requests, 160))


def _check_parallel(cfg: ResolvedView) -> Mapping[str, Any]:
    sizes = ("tp_size", "pp_size", "dp_size", "ep_size", "attn_cp_size", "moe_dp_size", "dcp_size")
    bad = [name for name in sizes if getattr(cfg, name) < 1]
    if bad:
        raise ValueError(f"parallel sizes must be >= 1: {bad}")
    decided: dict[str, Any] = {}
    dp_attention = cfg.enable_dp_attention
    if dp_attention and cfg.dp_size == 1:
        decided["enable_dp_attention"] = dp_attention = False
    attn_dp = cfg.dp_size if dp_attention else 1
    if cfg.tp_size % (attn_dp * cfg.attn_cp_size):
        raise ValueError("tp_size must be divisible by attention dp_size * attn_cp_size")
    if cfg.tp_size % (cfg.ep_size * cfg.moe_dp_size):
        raise ValueError("tp_size must be divisible by ep_size * moe_dp_size")
    if (cfg.tp_size // attn_dp // cfg.attn_cp_size) % cfg.dcp_size:
        raise ValueError("dcp_size must divide the attention TP width")
    return decided


def _split_chunk_for_dp_attention(cfg: ResolvedView) -> Mapping[str, Any]:
    # Reads the state at its slot: the DP decision above and the capacity default.
    if cfg.enable_dp_attention and cfg.chunked_prefill_size > 0:
        return {"chunked_prefill_size": max(cfg.chunked_prefill_size // cfg.dp_size, 1)}
    return {}


def _resolve_spec(record: Any) -> None:
    cfg = resolving_view(record)
    if cfg.speculative_algorithm is None:
        return
    decided: dict[str, Any] = {}
    if cfg.speculative_num_draft_tokens is None:
        decided["speculative_num_draft_tokens"] = 4
    if cfg.speculative_draft_model_path is None:
        decided["speculative_draft_model_path"] = cfg.model_path
    if cfg.speculative_draft_load_format is None:
        decided["speculative_draft_load_format"] = cfg.load_format
    if cfg.speculative_attention_backend is None:
        decided["speculative_attention_backend"] = cfg.attention_backend
    declare_resolution(record, "spec", **decided)
    load_hf_config(resolution_result(record, "speculative_draft_model_path"))


def _resolve_lora(record: Any) -> None:
    cfg = resolving_view(record)
    if cfg.enable_lora is None:
        declare_resolution(record, "lora", enable_lora=bool(cfg.lora_paths))


DUMMY_MODEL_PATHS = ("none", "dummy")


def is_dummy_model(model_path: str) -> bool:
    """``model_path="dummy"`` (or ``"none"``): a config with no model behind it."""
    return model_path.lower() in DUMMY_MODEL_PATHS


def resolve_once(record: Any) -> None:
    """The whole pipeline, in slot order. Called from ``ServerArgs.__post_init__``.

    The model-independent steps (the device, the parallel sizes) run first; then a
    dummy model path returns early, as SGLang's pipeline does: no HF config is
    loaded and nothing model-, kernel-, capacity- or spec-dependent is decided, so
    those leaves keep the raw input (``"auto"``, ``None``). It is the lightweight
    fixture: a test that needs a resolved default states it or publishes a model."""
    _resolve_device(record)
    run_post_process_pass(record, "parallel", _check_parallel)
    if is_dummy_model(resolving_view(record).model_path):
        logger.debug("dummy model: resolution returns early")
        return
    _resolve_model(record)
    _apply_model_overrides(record)
    _resolve_kernels(record)
    _resolve_capacity(record)
    run_post_process_pass(record, "dp_attention_chunking", _split_chunk_for_dp_attention)
    _resolve_spec(record)
    _resolve_lora(record)
    logger.debug("resolved with %d declarations", len(declarations(record)))
