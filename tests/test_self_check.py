"""ctxlint passes on the reference runtime and its example with no allowances."""

from __future__ import annotations

import json

from conftest import REPO
from helpers import cli

# in this process, one job (the facts parsed here, where the suite's memo of facts
# answers a tree another test parsed: tests/factmemo.py); what is asserted is the
# repository's own report, not a process start
ONE_JOB = ("--jobs", "1")


def test_repository_is_clean_under_strict_check_with_no_baselined_findings() -> None:
    baseline = REPO / "baselines" / "ctxrt.json"
    if baseline.exists():
        # pins (derived facts under review) may live there; allowances may not
        assert json.loads(baseline.read_text())["entries"] == []
    result = cli("check", "--strict", "--format", "json", "--no-cache", *ONE_JOB, cwd=REPO)
    report = json.loads(result.stdout)
    assert result.returncode == 0, result.stdout + result.stderr
    assert report["findings"] == [] and report["stale"] == [] and report["errors"] == []
    assert set(report["summary"]) >= {"CTX001", "CTX101", "CTX201"}


def test_derivation_on_ctxrt_finds_every_namespace_accessor() -> None:
    result = cli("sets", "--format", "json", "--no-cache", *ONE_JOB, cwd=REPO)
    assert result.returncode == 0, result.stderr
    vocab = json.loads(result.stdout)["vocabulary"]
    assert vocab["seed accessors"] == ["get_server_args"]
    expected = {
        "get_device", "get_disagg", "get_exec", "get_lora", "get_memory", "get_mm",
        "get_model", "get_observability", "get_parallel", "get_schedule", "get_serving",
        "get_spec",
    }  # fmt: skip
    assert set(vocab["bag accessors"]) == expected
    assert "tp_size" in vocab["record fields by namespace"]["parallel"]
