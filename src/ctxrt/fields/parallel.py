"""The ``parallel`` namespace: configured widths and the quotients derived from them.

The quotients are ``Derived`` leaves: computed once at publish, so overriding a size
afterwards does not move them (state a topology by publishing it, or by naming the
width in the override)."""

from __future__ import annotations

from typing import Any

from ctxrt.fields.base import Derived, arg


def _attn_dp_size(cfg: Any) -> int:
    return cfg.dp_size if cfg.enable_dp_attention else 1


def _attn_tp_size(cfg: Any) -> int:
    return cfg.tp_size // _attn_dp_size(cfg) // cfg.attn_cp_size


class Parallel:
    _NS_PATH = "parallel"

    tp_size: int = arg(1, help="Tensor-parallel width.")
    pp_size: int = arg(1, help="Pipeline stages.")
    dp_size: int = arg(1, help="Data-parallel replicas.")
    ep_size: int = arg(1, help="Expert-parallel width.")
    attn_cp_size: int = arg(1, help="Attention context-parallel width.")
    moe_dp_size: int = arg(1, help="MoE data-parallel width.")
    dcp_size: int = arg(1, help="Decode context-parallel width requested at launch.")
    nccl_port: int | None = arg(None, resolvable=True, help="Picked by the launcher.")
    enable_dp_attention: bool = arg(False, resolvable=True, help="Needs dp_size > 1.")

    attn_dp_size: int = Derived(fn=_attn_dp_size, help="DP width of attention.")
    attn_tp_size: int = Derived(fn=_attn_tp_size, help="TP width of attention.")
    attn_dcp_size: int = Derived(fn=lambda cfg: cfg.dcp_size, help="DCP width configured.")
    dcp_enabled: bool = Derived(fn=lambda cfg: cfg.dcp_size > 1, help="DCP configured.")
    moe_ep_size: int = Derived(fn=lambda cfg: cfg.ep_size, help="Expert-parallel width.")
    moe_tp_size: int = Derived(
        fn=lambda cfg: cfg.tp_size // cfg.ep_size // cfg.moe_dp_size, help="Expert TP width."
    )
