"""Fast checks of the bench's plumbing and the CI workflow (no download, no sglang)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
from helpers import project_config

REPO = Path(__file__).resolve().parents[1]


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "bench_sglang", REPO / "bench" / "bench_sglang.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve annotations through it
    spec.loader.exec_module(module)
    return module


def test_config_is_valid_and_cache_dir_is_redirected(tmp_path: Path) -> None:
    bench = _bench()
    path = bench.bench_config(REPO / "bench" / "sglang.toml", tmp_path)
    config, _ = project_config(tmp_path, path)
    assert config.cache_dir == tmp_path / "ctxlint_cache"
    assert config.runtime_module == "sglang.srt.runtime_context"
    assert config.record_class == "sglang.srt.server_args.ServerArgs"
    assert {"sglang/test/**", "sglang/multimodal_gen/**"} <= set(config.exclude)
    for rule in ("CTX101", "CTX201"):
        assert set(config.per_rule_exclude[rule]) == {
            "sglang/srt/server_args.py",
            "sglang/srt/arg_groups/**",
        }


def test_timed_run_reports_wall_cpu_and_memory(tmp_path: Path) -> None:
    bench = _bench()
    m = bench.timed_run([sys.executable, "-c", "x = bytearray(50 * 2**20)"], cwd=tmp_path)
    assert m.exit_code == 0 and m.wall > 0
    assert m.cpu is not None and m.cpu >= 0
    assert m.peak_rss is not None and m.peak_rss >= 50 * 2**20


def test_judge_marks_targets_and_renders() -> None:
    """Issue 14's targets: cold against the floor row, the rest in seconds, the
    pool's speedup from the serial cold run, and the process tree's PSS."""
    bench = _bench()
    b = bench.Bench(meta={"sglang": "0.5.23", "files": 3, "bytes": 10, "date": "d"})
    b.meta |= {"machine": "m", "load_average_at_start": [0], "findings": {}}
    b.meta["findings_identical_cold_warm"] = True
    mib = 2**20
    b.rows = [
        bench.Row("ctxlint cold", 10.0, cpu=18.0, peak_rss=300 * mib, peak_tree=500 * mib),
        bench.Row("ctxlint warm", 0.3, cpu=0.3, peak_rss=90 * mib, peak_tree=90 * mib),
        bench.Row("ctxlint one file edited", 0.9, cpu=0.9, peak_tree=90 * mib),
        bench.Row("ctxlint one file edited on a call path", 1.5, cpu=1.5, peak_tree=90 * mib),
        bench.Row("ctxlint one file commented", 0.4, peak_tree=90 * mib),
        bench.Row("ctxlint fresh copy, cache restored", 1.9, peak_tree=90 * mib),
        bench.Row("ctxlint fresh copy, 10 files changed", 3.0, peak_tree=90 * mib),
        bench.Row("ctxlint cold --jobs 1", 17.0, peak_tree=300 * mib),
        bench.Row(bench.FIX_WARM, 5.0, peak_tree=900 * mib),
        bench.Row(bench.FLOOR, 8.5, cpu=16.0),
        bench.Row("ast.parse serial", 3.0),
        bench.Row("libcst.parse_module serial", 60.0, cpu=60.0),
        bench.Row("ruff check --select F811 --no-cache", 0.4),
    ]
    bench.judge(b)
    verdicts = {r.name: r.verdict for r in b.rows if r.verdict}
    assert verdicts == {
        "ctxlint cold": "PASS",  # 10 <= 1.25 * 8.5
        "ctxlint warm": "FAIL",  # over 0.25 s
        "ctxlint one file edited": "PASS",
        "ctxlint one file edited on a call path": "FAIL",  # over 1 s
        "ctxlint one file commented": "PASS",
        "ctxlint fresh copy, cache restored": "PASS",
        "ctxlint fresh copy, 10 files changed": "PASS",
        "ctxlint cold --jobs 1": "FAIL",  # 17 / 10 = 1.7x, under 1.8x
    }
    assert b.meta["jobs_speedup"] == 1.7
    assert b.meta["cold_over_floor"] == pytest.approx(10 / 8.5, abs=1e-3)
    assert b.meta["peak_memory_verdict"] == "PASS"  # 500 MiB <= 600 MiB: the check runs
    assert b.meta["peak_memory_fix_bytes"] == 900 * mib  # reported, not judged
    assert b.meta["failed"] == [
        "ctxlint warm",
        "ctxlint one file edited on a call path",
        "ctxlint cold --jobs 1",
    ]
    assert b.row("ctxlint cold").ratio == pytest.approx(10 / 60)
    text = bench.render(b)
    assert "EXTRAPOLATED" not in text and "FAIL" in text and "500 MiB" in text
    assert "peak memory (ctxlint fix runs)" in text and "900 MiB" in text


def test_ci_workflow_runs_the_suite_and_the_linter() -> None:
    yaml = pytest.importorskip("yaml")
    workflow = yaml.safe_load((REPO / ".github" / "workflows" / "ci.yml").read_text())
    assert {"push", "pull_request"} <= set(workflow[True])  # YAML 1.1 reads `on` as True
    steps = workflow["jobs"]["test"]["steps"]
    runs = [s.get("run", "") for s in steps]
    uses = [s.get("uses", "") for s in steps]
    assert "bash .ci/run" in runs
    assert "ctxlint check --strict" in runs
    assert any("--format sarif --output ctxlint.sarif" in r for r in runs)
    upload = next(
        s for s in steps if s.get("uses", "").startswith("github/codeql-action/upload-sarif")
    )
    assert upload["if"].startswith("always()")
    assert any(u.startswith("actions/setup-python") for u in uses)
    # the travelling cache: saved per commit, restored from the newest of its line,
    # with the key its rows are signed with (kept outside the tree)
    cache = next(
        s for s in steps if ".ctxlint_cache" in str(s.get("with", {}).get("path", "")).split()
    )
    assert "~/.local/state/ctxlint" in cache["with"]["path"].split()
    line = cache["with"]["restore-keys"]
    assert cache["with"]["key"].startswith(line) and "hashFiles('src/ctxlint/**'" in line
    assert steps.index(cache) < runs.index("ctxlint check --strict")
    setup = next(s for s in steps if s.get("uses", "").startswith("actions/setup-python"))
    assert setup["with"]["python-version"] == "3.11"


def test_extract_breakdown_accounts_for_a_workers_time() -> None:
    """bench/extract_breakdown.py: its steps and "rest" add up to the total, every
    step was timed, and the functions it times are put back afterwards."""
    from ctxlint.engine import workers
    from ctxlint.facts import extract

    spec = importlib.util.spec_from_file_location(
        "extract_breakdown", REPO / "bench" / "extract_breakdown.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    before = (extract.parse, extract.walk, extract.pysource.read, workers.of_facts)
    config = REPO / "examples" / "legacy_app" / "ctxlint.toml"
    got = module.breakdown(None, config, 10, "examples/legacy_app/", True)
    assert (extract.parse, extract.walk, extract.pysource.read, workers.of_facts) == before
    assert got["files"] == 10
    steps = ["CPython's verdict", "LibCST parse", "walk and visitors", "span codegen"]
    steps += ["JSON round trip", "part digests"]
    assert all(got[s] > 0 for s in steps)
    assert sum(got[s] for s in steps) + got["rest"] == pytest.approx(got["total"])
    assert got["bare walk"] > 0 and "visitor calls" in got
