"""``ParallelState``: the frozen per-process snapshot of the topology, built once
(in the example, by ``Scheduler.__init__``) from the configured sizes and this
process's live ranks, and handed down to runners (draft runners included). It is a
constructor argument, not a global accessor: an object that was handed one reads it."""

from __future__ import annotations

import dataclasses

from ctxrt.context import get_parallel
from ctxrt.subsystems import get_moe_cp_size


@dataclasses.dataclass(frozen=True)
class ParallelState:
    world_rank: int
    world_size: int
    tp_rank: int
    tp_size: int
    pp_rank: int
    pp_size: int
    attn_tp_rank: int
    attn_tp_size: int
    attn_cp_rank: int
    attn_cp_size: int
    attn_dp_rank: int
    attn_dp_size: int
    moe_ep_rank: int
    moe_ep_size: int
    moe_tp_size: int
    moe_dp_rank: int
    moe_dp_size: int
    moe_cp_size: int  # the MoE communicator's width (see get_moe_cp_size)
    dcp_rank: int
    dcp_enabled: bool

    @classmethod
    def capture(cls) -> ParallelState:
        """Snapshot ``get_parallel()`` after ``initialize_model_parallel``: every
        field is read under its own name (sizes from the bag, ranks live)."""
        p = get_parallel()
        values = {
            f.name: getattr(p, f.name) for f in dataclasses.fields(cls) if f.name != "moe_cp_size"
        }
        return cls(**values, moe_cp_size=get_moe_cp_size())
