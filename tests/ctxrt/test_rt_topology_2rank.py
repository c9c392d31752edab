"""The live topology on 2 real gloo ranks, in the default suite: the MoE-DP -> attn-CP
alias and the rank formulas (attn_dp_rank, attn_cp_rank, moe_ep/tp/dp ranks) against
SGLang's arithmetic (``rt_sglang_formulas``), so breaking either fails a plain pytest.
The slow 4-rank test covers the layouts two ranks cannot state (pp with tp, dcp)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import rt_rank_probe
import torch.multiprocessing as tmp
from rt_sglang_formulas import check_reports

WORLD = 2
LAYOUTS: dict[str, dict[str, Any]] = {
    "tp": {"tp_size": 2},
    "attn_cp": {"tp_size": 2, "attn_cp_size": 2},  # MoE-DP aliased to attn-CP
    "dp_attention": {"tp_size": 2, "dp_size": 2, "enable_dp_attention": True},
    "ep": {"tp_size": 2, "ep_size": 2},
    "moe_dp": {"tp_size": 2, "moe_dp_size": 2},  # its own MoE-DP group
    "pp": {"pp_size": 2},
}


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    out = tmp_path_factory.mktemp("ranks2")
    # fork, not spawn: the children inherit the imported torch instead of paying
    # for its import again (the 4-rank test spawns, as a server's ranks start).
    ranks = tmp.start_processes(
        rt_rank_probe.rank_main,
        args=(WORLD, str(out / "store"), str(out), LAYOUTS, False),
        nprocs=WORLD,
        join=False,
        start_method="fork",
    )
    deadline = time.monotonic() + 120  # a hung rank fails the test, not the suite
    while not ranks.join(timeout=1):
        if time.monotonic() > deadline:
            for process in ranks.processes:
                process.kill()
            pytest.fail("a rank did not finish in 120 s")
    return [json.loads(Path(out, f"rank{r}.json").read_text()) for r in range(WORLD)]


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_two_ranks_follow_sglang_formulas(layout: str, reports: list[dict[str, Any]]) -> None:
    check_reports(WORLD, LAYOUTS, reports, layout)


def test_the_alias_and_the_attention_ranks(reports: list[dict[str, Any]]) -> None:
    def state(layout: str, name: str) -> list[Any]:
        return [r[layout]["state"][name] for r in reports]

    def members(layout: str, group: str) -> list[Any]:
        return [r[layout]["members"][group] for r in reports]

    # attn_cp_size 2 > moe_dp_size 1: the MoE communicator is the attention-CP group.
    assert members("attn_cp", "moe_dp_group") == members("attn_cp", "attn_cp_group") == [[0, 1]] * 2
    assert state("attn_cp", "moe_dp_rank") == state("attn_cp", "attn_cp_rank") == [0, 1]
    assert state("attn_cp", "moe_cp_size") == [2, 2] and state("moe_dp", "moe_cp_size") == [2, 2]
    assert members("tp", "moe_dp_group") == [[0], [1]] and state("tp", "moe_cp_size") == [1, 1]
    assert state("dp_attention", "attn_dp_rank") == [0, 1]  # tp_rank // (attn_tp * attn_cp)
    assert state("dp_attention", "attn_tp_rank") == [0, 0]
    assert state("attn_cp", "attn_dp_rank") == [0, 0]
    assert state("ep", "moe_ep_rank") == [0, 1] and members("ep", "moe_tp_group") == [[0], [1]]
    assert state("pp", "pp_rank") == [0, 1] and members("pp", "tp_group") == [[0], [1]]


def test_the_view_checks_real_group_widths(reports: list[dict[str, Any]]) -> None:
    """Overriding the MoE-TP group with the (2-rank) TP group is accepted where MoE-TP
    is the whole TP width and refused where it is one rank wide."""
    for report in reports:
        assert report["tp"]["view_check"] == "accepted"
        for layout in ("ep", "moe_dp"):
            assert "moe_tp_group has 2 ranks; moe_tp_size=1" in report[layout]["view_check"]
