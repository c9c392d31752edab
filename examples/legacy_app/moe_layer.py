"""The MoE layer's token exchange: every MoE-DP rank's tokens gathered for the
experts and scattered back, with the buffers sized by the configured MoE-DP width."""

from __future__ import annotations

import torch

from ctxrt.context import get_parallel


def gather_for_experts(hidden: torch.Tensor) -> torch.Tensor:
    out = hidden.new_empty((hidden.shape[0] * get_parallel().moe_dp_size, *hidden.shape[1:]))
    get_parallel().moe_dp_group.all_gather_into_tensor(out, hidden)
    return out


def scatter_from_experts(expert_out: torch.Tensor) -> torch.Tensor:
    out = expert_out.new_empty(
        (expert_out.shape[0] // get_parallel().moe_dp_size, *expert_out.shape[1:])
    )
    get_parallel().moe_dp_group.reduce_scatter_tensor(out, expert_out)
    return out
