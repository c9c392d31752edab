"""The bench's `fix --diff` rows (issue 17: at most the cold check plus 20%):
judged on wall and CPU time both, since the pool can hide CPU from the wall."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from test_bench_smoke import _bench


def _judged(fix_wall: float, fix_cpu: float) -> tuple[str, dict]:
    bench = _bench()
    b = bench.Bench(meta={})
    b.rows = [
        bench.Row("ctxlint cold", 100.0, cpu=180.0),
        bench.Row(bench.FIX_COLD, fix_wall, cpu=fix_cpu),
        bench.Row(bench.FIX_WARM, 12.0, cpu=12.0),
        bench.Row(bench.FLOOR, 80.0, cpu=150.0),
        bench.Row("libcst.parse_module serial", 200.0, cpu=200.0),
    ]
    bench.judge(b)
    row = b.row(bench.FIX_COLD)
    assert row.target == "<= 1.2x cold, wall and cpu"
    assert b.row(bench.FIX_WARM).verdict == ""  # measured, no target
    return row.verdict, b.meta


@pytest.mark.parametrize(
    ("wall", "cpu", "verdict"),
    [(120.0, 216.0, "PASS"), (110.0, 217.0, "FAIL"), (121.0, 190.0, "FAIL")],
)
def test_fix_cold_is_judged_against_the_cold_check(wall: float, cpu: float, verdict: str) -> None:
    got, meta = _judged(wall, cpu)
    assert got == verdict
    assert meta["fix_cold_over_cold"] == round(wall / 100.0, 3)
    assert meta["fix_cold_cpu_over_cold_cpu"] == round(cpu / 180.0, 3)
    assert meta["failed"] == ([] if verdict == "PASS" else [_bench().FIX_COLD])


def test_fix_cmd_is_fix_diff_of_every_fixable_rule(tmp_path: Path) -> None:
    cmd = _bench().fix_cmd(tmp_path / "sglang.toml", tmp_path / "tree", 2)
    assert cmd[:2] == [sys.executable, "-m"]
    assert cmd[2:] == [
        "ctxlint.cli",
        "fix",
        "--diff",
        "--unsafe",
        "--config",
        str(tmp_path / "sglang.toml"),
        str(tmp_path / "tree"),
        "--jobs",
        "2",
    ]
