"""The live topology on 4 real gloo ranks (spawned CPU processes), layout by layout,
against SGLang's rank arithmetic written down here (``derive_attention_ranks`` and
``derive_spawn_ranks`` in sglang/srt/runtime_context.py): each group is who shares
every other coordinate, and each member proves membership by an all_gather over it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import rt_rank_probe
import torch.multiprocessing as tmp

# ~30 s on 2 shared cores (four spawned processes import torch): a slow test.
pytestmark = pytest.mark.slow

WORLD = 4
LAYOUTS: dict[str, dict[str, Any]] = {
    "tp": {"tp_size": 4},
    "ep": {"tp_size": 4, "ep_size": 2},
    "ep_moe_dp": {"tp_size": 4, "ep_size": 2, "moe_dp_size": 2},
    "attn_cp": {"tp_size": 4, "attn_cp_size": 2},
    "dp_attention": {"tp_size": 4, "dp_size": 2, "enable_dp_attention": True},
    "dcp": {"tp_size": 4, "dcp_size": 2},
    "pp": {"tp_size": 2, "pp_size": 2},
}


def sglang_coords(world_rank: int, f: dict[str, Any]) -> dict[str, int]:
    """SGLang's formulas: WORLD = tp_size * pp_rank + tp_rank; attention (dp, cp, tp)
    and MoE (dp, ep, tp), tp fastest."""
    tp = f.get("tp_size", 1)
    attn_dp = f.get("dp_size", 1) if f.get("enable_dp_attention") else 1
    attn_cp, moe_ep, moe_dp = f.get("attn_cp_size", 1), f.get("ep_size", 1), f.get("moe_dp_size", 1)
    dcp = f.get("dcp_size", 1)
    attn_tp = tp // attn_dp // attn_cp
    moe_tp = tp // moe_dp // moe_ep
    tp_rank = world_rank % tp
    c = {
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
    return c


# What each group's members share: the coordinates that stay fixed across it.
FIXED = {
    "tp_group": ("pp_rank",),
    "pp_group": ("tp_rank",),
    "attn_tp_group": ("pp_rank", "attn_dp_rank", "attn_cp_rank"),
    "attn_cp_group": ("pp_rank", "attn_dp_rank", "attn_tp_rank"),
    "moe_ep_group": ("pp_rank", "moe_dp_rank", "moe_tp_rank"),
    "moe_dp_group": ("pp_rank", "moe_ep_rank", "moe_tp_rank"),
    "dcp_group": ("pp_rank", "dcp_block"),
}


def moe_dp_aliased(f: dict[str, Any]) -> bool:
    """SGLang: _MOE_DP = _ATTN_CP when attn_cp_size > moe_dp_size."""
    return f.get("attn_cp_size", 1) > f.get("moe_dp_size", 1)


def sglang_group(world_rank: int, f: dict[str, Any], group: str) -> list[int]:
    if group == "moe_dp_group" and moe_dp_aliased(f):
        group = "attn_cp_group"
    mine = sglang_coords(world_rank, f)
    return [r for r in range(WORLD) if all(sglang_coords(r, f)[k] == mine[k] for k in FIXED[group])]


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    out = tmp_path_factory.mktemp("ranks")
    tmp.spawn(
        rt_rank_probe.rank_main,
        args=(WORLD, str(out / "store"), str(out), LAYOUTS),
        nprocs=WORLD,
        join=True,
    )
    return [json.loads(Path(out, f"rank{r}.json").read_text()) for r in range(WORLD)]


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_ranks_and_groups_follow_sglang_formulas(
    layout: str, reports: list[dict[str, Any]]
) -> None:
    fields = LAYOUTS[layout]
    for world_rank, report in enumerate(reports):
        got = report[layout]
        want = sglang_coords(world_rank, fields)
        state = got["state"]
        if moe_dp_aliased(fields):
            want["moe_dp_rank"] = want["attn_cp_rank"]
        for name in (
            "pp_rank",
            "tp_rank",
            "attn_tp_rank",
            "attn_dp_rank",
            "attn_cp_rank",
            "moe_dp_rank",
            "moe_ep_rank",
            "dcp_rank",
        ):
            assert state[name] == want[name], (layout, world_rank, name)
        assert set(got["members"]) == set(FIXED)
        for group, members in got["members"].items():
            if group == "dcp_group" and fields.get("dcp_size", 1) == 1:
                assert members is None  # the one optional group
                continue
            assert members == sglang_group(world_rank, fields, group), (layout, world_rank, group)
        assert "configured width" in got["width_check"]
        assert got["tp_mlp_max_error"] < 1e-5  # the TP-split MLP equals the whole one


def test_the_layouts_the_issue_names(reports: list[dict[str, Any]]) -> None:
    def groups(layout: str, group: str) -> set[tuple[int, ...]]:
        return {tuple(r[layout]["members"][group]) for r in reports}

    def ranks(layout: str, name: str) -> list[int]:
        return [r[layout]["state"][name] for r in reports]

    assert groups("ep", "moe_ep_group") == {(0, 2), (1, 3)}  # EP partners are moe_tp apart
    assert groups("ep_moe_dp", "moe_ep_group") == {(0, 1), (2, 3)}
    assert groups("ep_moe_dp", "moe_dp_group") == {(0, 2), (1, 3)}
    assert ranks("attn_cp", "attn_dp_rank") == [0, 0, 0, 0]  # tp_rank // (attn_tp * attn_cp)
    assert groups("attn_cp", "attn_cp_group") == {(0, 2), (1, 3)}
    assert groups("attn_cp", "moe_dp_group") == groups("attn_cp", "attn_cp_group")  # aliased
    assert ranks("attn_cp", "moe_cp_size") == [2] * 4  # attn_cp_size > moe_dp_size = 1
    assert ranks("ep", "moe_cp_size") == [1] * 4
    assert ranks("dp_attention", "attn_dp_rank") == [0, 0, 1, 1]
    assert groups("dp_attention", "attn_tp_group") == {(0, 1), (2, 3)}
    assert groups("dcp", "dcp_group") == {(0, 1), (2, 3)}
    assert ranks("dcp", "dcp_enabled") == [True] * 4 and ranks("tp", "dcp_enabled") == [False] * 4
    assert groups("pp", "pp_group") == {(0, 2), (1, 3)} and groups("pp", "tp_group") == {
        (0, 1),
        (2, 3),
    }
