"""SGLang's rank arithmetic, written down once for the multi-rank topology tests
(``derive_attention_ranks`` / ``derive_spawn_ranks`` in sglang/srt/runtime_context.py
and the group construction in parallel_state.initialize_model_parallel): the ranks a
process should have, and who shares each of its groups."""

from __future__ import annotations

from typing import Any


def sglang_coords(world_rank: int, f: dict[str, Any]) -> dict[str, int]:
    """WORLD = tp_size * pp_rank + tp_rank; attention (dp, cp, tp) and MoE (dp, ep, tp),
    tp fastest."""
    tp = f.get("tp_size", 1)
    attn_dp = f.get("dp_size", 1) if f.get("enable_dp_attention") else 1
    attn_cp, moe_ep, moe_dp = f.get("attn_cp_size", 1), f.get("ep_size", 1), f.get("moe_dp_size", 1)
    dcp = f.get("dcp_size", 1)
    attn_tp = tp // attn_dp // attn_cp
    moe_tp = tp // moe_dp // moe_ep
    tp_rank = world_rank % tp
    return {
        "pp_rank": world_rank // tp,
        "tp_rank": tp_rank,
        "attn_tp_rank": tp_rank % attn_tp,
        "attn_dp_rank": tp_rank // (attn_tp * attn_cp),
        "attn_cp_rank": (tp_rank // attn_tp) % attn_cp,
        "moe_dp_rank": tp_rank // (tp // moe_dp),
        "moe_ep_rank": tp_rank % (tp // moe_dp) // moe_tp,
        "moe_tp_rank": tp_rank % moe_tp,
        "dcp_block": tp_rank // dcp,
        "dcp_rank": tp_rank % dcp if dcp > 1 else 0,
    }


# What each group's members share: the coordinates that stay fixed across it.
FIXED = {
    "tp_group": ("pp_rank",),
    "pp_group": ("tp_rank",),
    "attn_tp_group": ("pp_rank", "attn_dp_rank", "attn_cp_rank"),
    "attn_cp_group": ("pp_rank", "attn_dp_rank", "attn_tp_rank"),
    "moe_ep_group": ("pp_rank", "moe_dp_rank", "moe_tp_rank"),
    "moe_tp_group": ("pp_rank", "moe_dp_rank", "moe_ep_rank"),
    "moe_dp_group": ("pp_rank", "moe_ep_rank", "moe_tp_rank"),
    "dcp_group": ("pp_rank", "dcp_block"),
}
RANKS = (
    "pp_rank",
    "tp_rank",
    "attn_tp_rank",
    "attn_dp_rank",
    "attn_cp_rank",
    "moe_dp_rank",
    "moe_ep_rank",
    "moe_tp_rank",
    "dcp_rank",
)


def moe_dp_aliased(f: dict[str, Any]) -> bool:
    """SGLang: _MOE_DP = _ATTN_CP when attn_cp_size > moe_dp_size."""
    return f.get("attn_cp_size", 1) > f.get("moe_dp_size", 1)


def sglang_ranks(world_rank: int, f: dict[str, Any]) -> dict[str, int]:
    """The ranks ``get_parallel()`` should answer (MoE-DP's follows the alias)."""
    want = sglang_coords(world_rank, f)
    if moe_dp_aliased(f):
        want["moe_dp_rank"] = want["attn_cp_rank"]
    return {name: want[name] for name in RANKS}


def sglang_group(world: int, world_rank: int, f: dict[str, Any], group: str) -> list[int]:
    if group == "moe_dp_group" and moe_dp_aliased(f):
        group = "attn_cp_group"
    mine = sglang_coords(world_rank, f)
    return [r for r in range(world) if all(sglang_coords(r, f)[k] == mine[k] for k in FIXED[group])]


def check_reports(
    world: int, layouts: dict[str, dict[str, Any]], reports: list[dict[str, Any]], layout: str
) -> None:
    """Every rank's ranks and group members in ``layout`` are SGLang's."""
    fields = layouts[layout]
    for world_rank, report in enumerate(reports):
        got = report[layout]
        want = sglang_ranks(world_rank, fields)
        assert {n: got["state"][n] for n in RANKS} == want, (layout, world_rank)
        assert set(got["members"]) == set(FIXED)
        for group, members in got["members"].items():
            if group == "dcp_group" and fields.get("dcp_size", 1) == 1:
                assert members is None  # the one optional group
                continue
            assert members == sglang_group(world, world_rank, fields, group), (
                layout,
                world_rank,
                group,
            )
