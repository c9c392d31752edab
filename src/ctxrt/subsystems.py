"""Subsystem init: materialise the runtime-flag groups and the live topology from the
published bags. Each reads bags only (never a record), so it runs after ``publish``.

The public accessors below are thin shims over the flags with lazy defaults."""

from __future__ import annotations

import logging

from ctxrt import topology
from ctxrt.context import get_exec, get_flags, get_parallel, get_spec
from ctxrt.scoped import ScopedAssign

logger = logging.getLogger(__name__)


def initialize_moe_config() -> None:
    """Scheduler init: the ACTIVE MoE backends start as the configured ones
    (``speculative_moe_backend_context`` swaps the runner backend around drafts)."""
    moe = get_exec().moe
    flags = get_flags().moe
    flags.runner_backend = moe.moe_runner_backend
    # The draft's kernel: configured, or the target's.
    flags.speculative_runner_backend = (
        get_spec().speculative_moe_runner_backend or moe.moe_runner_backend
    )
    flags.a2a_backend = moe.moe_a2a_backend if moe.moe_uses_a2a else "none"
    # A speculative draft shares the target's experts only when the target is unfused.
    flags.shared_experts_fusion_disabled = get_spec().speculative_algorithm is not None
    flags.initialized = True


def initialize_dp_attention(attn_dp_rank: int) -> None:
    """After ``initialize_model_parallel`` (which gives this rank's
    ``attn_dp_rank``): the one init that materialises every DP flag. The parallel
    stage owns ``enabled`` (``is_dp_attention_enabled()`` is its shim); the widths
    stay on ``get_parallel()``, their one spelling."""
    flags = get_flags().dp
    flags.enabled = get_parallel().enable_dp_attention
    flags.attn_dp_rank = attn_dp_rank
    flags.initialized = True


def initialize_model_parallel() -> topology.Topology:
    """Build the live groups at the published widths (torch.distributed must be up)."""
    parallel = get_parallel()
    return topology.initialize_model_parallel(
        topology.Widths(
            tp_size=parallel.tp_size,
            pp_size=parallel.pp_size,
            attn_tp_size=parallel.attn_tp_size,
            attn_cp_size=parallel.attn_cp_size,
            attn_dp_size=parallel.attn_dp_size,
            moe_ep_size=parallel.moe_ep_size,
            moe_dp_size=parallel.moe_dp_size,
            dcp_size=parallel.dcp_size,
        )
    )


def get_moe_cp_size() -> int:
    """The MoE communicator's width: ``moe_dp_size``, or ``attn_cp_size`` when the
    MoE-DP group is the attention-CP group (``attn_cp_size > moe_dp_size``)."""
    import torch.distributed as dist

    return dist.get_world_size(get_parallel().moe_dp_group)


def get_moe_runner_backend() -> str:
    return get_flags().moe.runner_backend


def is_dp_attention_enabled() -> bool:
    return get_flags().dp.enabled


def get_speculative_moe_runner_backend() -> str:
    """The draft's MoE kernel; before ``initialize_moe_config``, ``"auto"`` (a lazy
    default, not written: the flag's owner is the init)."""
    backend = get_flags().moe.speculative_runner_backend
    if backend is None:
        logger.warning("the speculative MoE runner backend is not initialised; using auto")
        return "auto"
    return backend


def speculative_moe_backend_context() -> ScopedAssign:
    """``with speculative_moe_backend_context():`` around a draft model's build or
    forward: the ACTIVE MoE runner backend is the draft's for the block, and the
    target's again on exit (and on exception)."""
    return get_flags().moe.override(runner_backend=get_speculative_moe_runner_backend())
