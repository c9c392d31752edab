"""The per-rank entry of the multi-rank topology test (importable by name in a
spawned child): one real gloo world, every layout built and torn down in turn."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch.distributed as dist

from ctxrt.context import get_forward, get_parallel, publish, reset_context
from ctxrt.errors import GroupWidthError, ParallelTopologyError
from ctxrt.parallel_state import ParallelState, patch_tensor_parallel_group
from ctxrt.record import ServerArgs
from ctxrt.subsystems import initialize_model_parallel
from ctxrt.topology import LIVE_NAMES, check_group_width, destroy_model_parallel

GROUPS = tuple(name for name in LIVE_NAMES if name.endswith("_group"))


def _members(group: Any) -> list[int] | None:
    """Who is really in ``group``: every member reports its world rank over it."""
    if group is None:
        return None
    out: list[Any] = [None] * dist.get_world_size(group)
    dist.all_gather_object(out, dist.get_rank(), group=group)
    return sorted(out)


def _tp_mlp_error(alone: Any) -> float:
    """TinyLM's forward with its MLP split over the live TP group (partial sums
    all-reduced) against the same weights computed unsplit on this rank, inside a
    draft scope over ``alone``, this rank's one-rank group."""
    import torch

    from ctxrt.hf_configs import load_hf_config
    from examples.serving_app.model import TinyLM

    torch.manual_seed(0)  # the same weights on every rank
    model = TinyLM(load_hf_config("tiny-lm"), "sdpa").eval()
    ids = torch.tensor([256, 72, 105, 33])
    with torch.inference_mode(), get_forward().scoped(is_extend_in_batch=True):
        split = model(ids)
        with patch_tensor_parallel_group(alone, owns_attention=True):
            whole = model(ids)
    return float((split - whole).abs().max())


def rank_main(
    rank: int,
    world: int,
    store: str,
    out_dir: str,
    layouts: dict[str, dict[str, Any]],
    mlp: bool,
) -> None:
    """``mlp``: also run the example's TP-split MLP against the whole one (the slow
    test; the default suite's 2-rank test checks the topology alone)."""
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=world)
    report: dict[str, Any] = {}
    try:
        # new_group is collective: every rank creates every one-rank group.
        alone = [dist.new_group([r]) for r in range(world)][rank] if mlp else None
        for name, fields in layouts.items():
            publish(ServerArgs(model_path="tiny-lm", **fields), role="scheduler")
            initialize_model_parallel()
            parallel = get_parallel()
            ps = ParallelState.capture()
            report[name] = {
                "state": {k: v for k, v in vars(ps).items()},
                "members": {g: _members(getattr(parallel, g)) for g in GROUPS},
            }
            if mlp:
                report[name]["tp_mlp_max_error"] = _tp_mlp_error(alone)
            try:  # the view refuses a real group wider than its configured size
                with parallel.override(moe_tp_group=parallel.tp_group):
                    report[name]["view_check"] = "accepted"
            except ParallelTopologyError as exc:
                report[name]["view_check"] = str(exc)
            try:  # the install-time width check refuses a group of the wrong width
                check_group_width("tp", parallel.tp_group, parallel.tp_size + 1)
            except GroupWidthError as exc:
                report[name]["width_check"] = str(exc)
            destroy_model_parallel()
            reset_context()
            dist.barrier()
    finally:
        dist.destroy_process_group()
    Path(out_dir, f"rank{rank}.json").write_text(json.dumps(report))
