"""``ParallelState``: the frozen per-process snapshot of the topology, built once
(in the example, by ``Scheduler.__init__``) from the configured sizes and this
process's live ranks, and handed down to runners (draft runners included). It is a
constructor argument, not a global accessor: an object that was handed one reads it.

``patch_tensor_parallel_group`` is the draft worker's scope: it runs a block under a
different TP group by overriding the parallel view for the block's duration."""

from __future__ import annotations

import dataclasses
from types import TracebackType
from typing import Any

from ctxrt.context import get_parallel
from ctxrt.parallel import ParallelContext, ParallelScope, group_rank, group_width
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
    moe_tp_rank: int
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


def patch_tensor_parallel_group(tp_group: Any, *, owns_attention: bool) -> TensorParallelPatch:
    """``with patch_tensor_parallel_group(draft_tp_group, owns_attention=...):`` runs
    a block (a draft worker's build or forward) under ``tp_group``: ``tp_size``,
    ``tp_rank`` and ``tp_group`` answer for it, and readers inside need no other
    spelling. With ``owns_attention`` the draft's attention and MoE run on that group
    alone: attention TP is the group, attention DP/CP and MoE EP/DP are one wide, MoE
    TP is the group. Without it the target's attention topology stays, so the group
    must be as wide as the target's TP (the scope is validated like any override).
    Not nestable; restores on exit and on exception."""
    return TensorParallelPatch(tp_group, owns_attention=owns_attention)


class TensorParallelPatch:
    """The scope ``patch_tensor_parallel_group`` returns; ``names`` is what it sets."""

    _active = False  # one patch at a time per process, as SGLang asserts

    def __init__(self, tp_group: Any, *, owns_attention: bool) -> None:
        width, rank = group_width(tp_group), group_rank(tp_group)
        if width is None or rank is None or not 0 <= rank < width:
            raise ValueError(
                f"patch_tensor_parallel_group takes a process group this rank is in, "
                f"got {tp_group!r}"
            )
        names: dict[str, Any] = {"tp_size": width, "tp_rank": rank, "tp_group": tp_group}
        if owns_attention:
            names.update(
                attn_tp_size=width,
                attn_tp_rank=rank,
                attn_tp_group=tp_group,
                attn_dp_size=1,
                attn_dp_rank=0,
                attn_cp_size=1,
                attn_cp_rank=0,
                attn_cp_group=None,
                moe_ep_size=1,
                moe_ep_rank=0,
                moe_ep_group=None,
                moe_dp_size=1,
                moe_dp_rank=0,
                moe_dp_group=None,
                moe_tp_size=width,
                moe_tp_rank=rank,
                moe_tp_group=tp_group,
            )
        self.names = names
        self._scope: ParallelScope | None = None

    def __enter__(self) -> ParallelContext:
        if TensorParallelPatch._active:
            raise RuntimeError("patch_tensor_parallel_group is already active")
        self._scope = get_parallel().override(**self.names)
        parallel = self._scope.__enter__()
        TensorParallelPatch._active = True
        return parallel

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        TensorParallelPatch._active = False
        assert self._scope is not None
        self._scope.__exit__(exc_type, exc, tb)
