"""The live process topology: ranks and process groups, built over an initialised
``torch.distributed`` default group at the configured widths.

``get_parallel()`` reads ranks and groups through here; before
``initialize_model_parallel`` they raise instead of answering with a guess."""

from __future__ import annotations

import dataclasses
from typing import Any

from ctxrt.errors import TopologyNotInitializedError


@dataclasses.dataclass(frozen=True)
class Topology:
    world_rank: int
    world_size: int
    tp_rank: int
    tp_group: Any
    pp_rank: int
    pp_group: Any
    attn_tp_rank: int
    attn_tp_group: Any
    attn_dp_rank: int
    moe_ep_rank: int
    moe_ep_group: Any
    dcp_rank: int
    dcp_group: Any  # None unless dcp_size > 1: the one optional group


_TOPOLOGY: Topology | None = None

# Names ParallelContext answers from the live topology (everything else is a leaf).
LIVE_NAMES: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(Topology))


def live_topology() -> Topology:
    if _TOPOLOGY is None:
        raise TopologyNotInitializedError(
            "ranks and groups are read after initialize_model_parallel(); "
            "sizes are bag leaves and answer after publish"
        )
    return _TOPOLOGY


def _blocks(world_size: int, block: int, width: int) -> list[tuple[int, ...]]:
    """Each consecutive ``block`` of ranks split into groups of ``width``."""
    return [
        tuple(range(sub, sub + width))
        for start in range(0, world_size, block)
        for sub in range(start, start + block, width)
    ]


def _join(
    partition: list[tuple[int, ...]], rank: int, cache: dict[tuple[int, ...], Any]
) -> tuple[int, Any]:
    """Create every group of ``partition`` (all ranks call new_group in the same order)
    and return this rank's position and group."""
    import torch.distributed as dist

    mine: tuple[int, Any] | None = None
    for ranks in partition:
        if ranks not in cache:
            cache[ranks] = dist.new_group(list(ranks))
        if rank in ranks:
            mine = (ranks.index(rank), cache[ranks])
    assert mine is not None, f"rank {rank} is in no group of {partition}"
    return mine


def initialize_model_parallel(
    *, tp_size: int, pp_size: int, attn_tp_size: int, moe_ep_size: int, dcp_size: int
) -> Topology:
    """Build the groups at the configured widths. The caller passes the widths it read
    from ``get_parallel()``, so groups and bag agree by construction."""
    import torch.distributed as dist

    global _TOPOLOGY
    if not dist.is_initialized():
        raise TopologyNotInitializedError("torch.distributed is not initialised")
    world_size, rank = dist.get_world_size(), dist.get_rank()
    if world_size != tp_size * pp_size:
        raise ValueError(f"world size {world_size} != tp_size {tp_size} * pp_size {pp_size}")
    groups: dict[tuple[int, ...], Any] = {}
    tp_rank, tp_group = _join(_blocks(world_size, tp_size, tp_size), rank, groups)
    pp_lanes = [tuple(range(lane, world_size, tp_size)) for lane in range(tp_size)]
    pp_rank, pp_group = _join(pp_lanes, rank, groups)
    attn_tp_rank, attn_tp_group = _join(_blocks(world_size, tp_size, attn_tp_size), rank, groups)
    moe_ep_rank, moe_ep_group = _join(_blocks(world_size, tp_size, moe_ep_size), rank, groups)
    dcp_rank, dcp_group = 0, None
    if dcp_size > 1:
        dcp_rank, dcp_group = _join(_blocks(world_size, attn_tp_size, dcp_size), rank, groups)
    _TOPOLOGY = Topology(
        world_rank=rank,
        world_size=world_size,
        tp_rank=tp_rank,
        tp_group=tp_group,
        pp_rank=pp_rank,
        pp_group=pp_group,
        attn_tp_rank=attn_tp_rank,
        attn_tp_group=attn_tp_group,
        attn_dp_rank=tp_rank // attn_tp_size,
        moe_ep_rank=moe_ep_rank,
        moe_ep_group=moe_ep_group,
        dcp_rank=dcp_rank,
        dcp_group=dcp_group,
    )
    return _TOPOLOGY


def destroy_model_parallel() -> None:
    global _TOPOLOGY
    _TOPOLOGY = None
