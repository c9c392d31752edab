"""The live process topology: ranks and process groups, built over an initialised
``torch.distributed`` default group at the configured widths.

The rank layout is SGLang's (``parallel_state.initialize_model_parallel``): WORLD is
``tp_size * pp_size`` ranks, TP groups are contiguous blocks, PP lanes are strided by
``tp_size``, and inside a TP block the attention ranks are laid out (dp, cp, tp) with
tp fastest and the MoE ranks (dp, ep, tp) with tp fastest (MoE-TP groups are
contiguous, MoE-EP partners ``moe_tp_size`` apart). Every group is checked against its
configured width as it is installed.

``get_parallel()`` reads ranks and groups through here; before
``initialize_model_parallel`` they raise instead of answering with a guess."""

from __future__ import annotations

import dataclasses
from typing import Any

from ctxrt.errors import GroupWidthError, TopologyNotInitializedError


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
    attn_cp_rank: int
    attn_cp_group: Any
    attn_dp_rank: int
    moe_ep_rank: int
    moe_ep_group: Any
    moe_tp_rank: int
    moe_tp_group: Any  # the TP group itself when moe_tp_size == tp_size
    moe_dp_rank: int
    moe_dp_group: Any  # _ATTN_CP itself when attn_cp_size > moe_dp_size
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


@dataclasses.dataclass(frozen=True)
class Widths:
    """The configured widths the groups are built at (read from ``get_parallel()``)."""

    tp_size: int
    pp_size: int
    attn_tp_size: int
    attn_cp_size: int
    attn_dp_size: int
    moe_ep_size: int
    moe_dp_size: int
    dcp_size: int

    @property
    def moe_tp_size(self) -> int:
        return self.tp_size // self.moe_ep_size // self.moe_dp_size


Partition = list[tuple[int, ...]]


def _per_tp_block(world_size: int, tp_size: int, build: Any) -> Partition:
    """``build(base)`` gives the groups inside the TP block starting at ``base``."""
    return [tuple(g) for base in range(0, world_size, tp_size) for g in build(base)]


def partitions(world_size: int, w: Widths) -> dict[str, Partition]:
    """Every group's rank sets, SGLang's formulas. ``moe_dp`` is absent when it is
    aliased to ``attn_cp`` and ``dcp`` when DCP is off."""
    tp, atp, acp, moe_ep, moe_tp = (
        w.tp_size,
        w.attn_tp_size,
        w.attn_cp_size,
        w.moe_ep_size,
        w.moe_tp_size,
    )
    parts: dict[str, Partition] = {
        "tp": _per_tp_block(world_size, tp, lambda b: [range(b, b + tp)]),
        "pp": [tuple(range(lane, world_size, tp)) for lane in range(tp)],
        "attn_tp": _per_tp_block(
            world_size, tp, lambda b: [range(s, s + atp) for s in range(b, b + tp, atp)]
        ),
        # (dp, cp, tp) with tp fastest: CP partners are attn_tp apart inside a DP replica.
        "attn_cp": _per_tp_block(
            world_size,
            tp,
            lambda b: [
                range(b + dp * atp * acp + t, b + (dp + 1) * atp * acp + t, atp)
                for dp in range(w.attn_dp_size)
                for t in range(atp)
            ],
        ),
        # (dp, ep, tp) with tp fastest: EP partners are moe_tp apart.
        "moe_ep": _per_tp_block(
            world_size,
            tp,
            lambda b: [
                range(s, s + moe_ep * moe_tp, moe_tp)
                for dp in range(w.moe_dp_size)
                for s in range(b + dp * moe_ep * moe_tp, b + dp * moe_ep * moe_tp + moe_tp)
            ],
        ),
        # (dp, ep, tp) with tp fastest: MoE-TP partners are contiguous.
        "moe_tp": _per_tp_block(
            world_size,
            tp,
            lambda b: [range(s, s + moe_tp) for s in range(b, b + tp, moe_tp)],
        ),
    }
    if acp <= w.moe_dp_size:
        stride = moe_tp * moe_ep
        parts["moe_dp"] = _per_tp_block(
            world_size, tp, lambda b: [range(b + i, b + tp, stride) for i in range(stride)]
        )
    if w.dcp_size > 1:
        parts["dcp"] = _per_tp_block(
            world_size,
            tp,
            lambda b: [range(s, s + w.dcp_size) for s in range(b, b + tp, w.dcp_size)],
        )
    return parts


def check_group_width(name: str, group: Any, width: int) -> None:
    """The install-time check: a group is exactly as wide as configured."""
    import torch.distributed as dist

    actual = dist.get_world_size(group)
    if actual != width:
        raise GroupWidthError(f"the {name} group has {actual} ranks; configured width {width}")


def _join(partition: Partition, rank: int, cache: dict[tuple[int, ...], Any]) -> tuple[int, Any]:
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


def initialize_model_parallel(widths: Widths) -> Topology:
    """Build the groups at the configured widths. The caller passes the widths it read
    from ``get_parallel()``, so groups and bag agree by construction, and each group is
    checked against its width as it is installed."""
    import torch.distributed as dist

    global _TOPOLOGY
    if not dist.is_initialized():
        raise TopologyNotInitializedError("torch.distributed is not initialised")
    world_size, rank = dist.get_world_size(), dist.get_rank()
    if world_size != widths.tp_size * widths.pp_size:
        raise ValueError(
            f"world size {world_size} != tp_size {widths.tp_size} * pp_size {widths.pp_size}"
        )
    cache: dict[tuple[int, ...], Any] = {}
    joined: dict[str, tuple[int, Any]] = {}
    expected = {
        "tp": widths.tp_size,
        "pp": widths.pp_size,
        "attn_tp": widths.attn_tp_size,
        "attn_cp": widths.attn_cp_size,
        "moe_ep": widths.moe_ep_size,
        "moe_tp": widths.moe_tp_size,
        "moe_dp": widths.moe_dp_size,
        "dcp": widths.dcp_size,
    }
    for name, partition in partitions(world_size, widths).items():
        joined[name] = _join(partition, rank, cache)
        check_group_width(name, joined[name][1], expected[name])
    if "moe_dp" not in joined:
        # CP ranks share tokens before MoE: the MoE-DP communicator is the CP group,
        # as wide as attn_cp_size (read it with get_moe_cp_size()).
        joined["moe_dp"] = joined["attn_cp"]
    dcp_rank, dcp_group = joined.get("dcp", (0, None))
    tp_rank = joined["tp"][0]
    _TOPOLOGY = Topology(
        world_rank=rank,
        world_size=world_size,
        tp_rank=tp_rank,
        tp_group=joined["tp"][1],
        pp_rank=joined["pp"][0],
        pp_group=joined["pp"][1],
        attn_tp_rank=joined["attn_tp"][0],
        attn_tp_group=joined["attn_tp"][1],
        attn_cp_rank=joined["attn_cp"][0],
        attn_cp_group=joined["attn_cp"][1],
        attn_dp_rank=tp_rank // (widths.attn_tp_size * widths.attn_cp_size),
        moe_ep_rank=joined["moe_ep"][0],
        moe_ep_group=joined["moe_ep"][1],
        moe_tp_rank=joined["moe_tp"][0],
        moe_tp_group=joined["moe_tp"][1],
        moe_dp_rank=joined["moe_dp"][0],
        moe_dp_group=joined["moe_dp"][1],
        dcp_rank=dcp_rank,
        dcp_group=dcp_group,
    )
    return _TOPOLOGY


def destroy_model_parallel() -> None:
    global _TOPOLOGY
    _TOPOLOGY = None
