"""The live topology on 4 real gloo ranks (spawned CPU processes), layout by layout,
against SGLang's rank arithmetic (``rt_sglang_formulas``): each group is who shares
every other coordinate, and each member proves membership by an all_gather over it.
The default suite's 2-rank twin is ``test_rt_topology_2rank.py``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import rt_rank_probe
import torch.multiprocessing as tmp
from rt_sglang_formulas import check_reports

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


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    out = tmp_path_factory.mktemp("ranks")
    tmp.spawn(
        rt_rank_probe.rank_main,
        args=(WORLD, str(out / "store"), str(out), LAYOUTS, True),
        nprocs=WORLD,
        join=True,
    )
    return [json.loads(Path(out, f"rank{r}.json").read_text()) for r in range(WORLD)]


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_ranks_and_groups_follow_sglang_formulas(
    layout: str, reports: list[dict[str, Any]]
) -> None:
    check_reports(WORLD, LAYOUTS, reports, layout)
    for report in reports:
        got = report[layout]
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
    assert groups("ep", "moe_tp_group") == {(0, 1), (2, 3)}  # MoE-TP partners are contiguous
    assert groups("ep_moe_dp", "moe_tp_group") == {(0,), (1,), (2,), (3,)}
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
