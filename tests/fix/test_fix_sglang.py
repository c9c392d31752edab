"""`ctxlint fix --select CTX101` on a copy of the sglang 0.5.17 wheel, the last
release with direct seed reads in srt (slow: two whole-program checks of ~2000
files, cold unless the copied tree carries its .ctxlint_cache).

Every read with a leaf or an accessor is rewritten; the rest is left with a
reason; every changed file compiles; a second run changes nothing."""

from __future__ import annotations

import importlib.util
import json
import os
import py_compile
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest
from conftest import REPO, run_cli
from wheels import sglang_tree

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> dict:
    # $CTXLINT_SGLANG_0517_TREE, else the wheel, downloaded and unpacked once
    # (a CI machine starts without it: a skip there would hide the sweep)
    given = os.environ.get("CTXLINT_SGLANG_0517_TREE")
    source = Path(given) if given else sglang_tree("0.5.17")
    assert (source / "sglang" / "srt").is_dir(), f"no sglang 0.5.17 tree at {source}"
    root = tmp_path_factory.mktemp("sg517") / "tree"
    shutil.copytree(source, root, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    before = {p: p.read_bytes() for p in root.rglob("*.py")}
    # --unsafe: a seed read that becomes a bag leaf changes value where resolution decides it
    args = ("--profile", "sglang", str(root), "--select", "CTX101", "--unsafe", "--jobs", "2")
    done = run_cli("fix", *args)
    changed = sorted(p for p, data in before.items() if p.read_bytes() != data)
    return {"root": root, "args": args, "fix": done, "changed": changed, "before": before}


def test_every_read_with_a_target_is_rewritten_and_the_rest_says_why(swept: dict) -> None:
    out = swept["fix"].stdout
    assert swept["fix"].returncode == 1, swept["fix"].stderr  # some are left, by design
    sites = re.findall(r"^(\S+):\d+:\d+: CTX101 (fixed|left|rolled back)", out, re.M)
    status = Counter(s for _, s in sites)
    assert status == Counter({"fixed": 23, "left": 28})
    files = {p for p, s in sites if s == "fixed"}
    assert len(files) == len(swept["changed"]) == 11
    left = Counter(m for m in re.findall(r"^  (\d+) x CTX101 left: (.*)$", out, re.M))
    reasons = {reason: int(n) for n, reason in left}
    # left: a computed member the runtime has no accessor for (0.5.17 predates
    # them), an alias that is not only a seed read, or a parameter defaulting
    # to the seed that a call may pass
    assert sum(reasons.values()) == 28
    # each names what the record's code for the member reads: the accessor to add
    assert (
        reasons[
            "the record computes it and sglang.srt.runtime_context has no "
            "`mamba_cache_chunk_size()` accessor: add an accessor deriving "
            "mamba_cache_chunk_size from get_model_config(), mamba_chunk_size and page_size "
            "(what the record's `mamba_cache_chunk_size` reads)"
        ]
        == 11
    )
    assert (
        sum(
            n
            for r, n in reasons.items()
            if r.startswith(
                "the record computes it and sglang.srt.runtime_context has no "
                "`max_speculative_num_draft_tokens()` accessor: add an accessor deriving "
                "max_speculative_num_draft_tokens from speculative_num_draft_tokens"
            )
        )
        == 3
    )
    for reason in reasons:
        assert reason.startswith(
            (
                "the record computes it",
                "the alias",
                "`self._server_args`",
                # a parameter defaulting to the seed that a call may hand a record to
                "`get_alloc_len_per_decode` is named other than as a call with no arguments",
                "`_can_dual_stream_graph` is a method",
            )
        ), reason


def test_every_changed_file_compiles(swept: dict) -> None:
    for path in swept["changed"]:
        py_compile.compile(str(path), doraise=True, cfile=str(path) + "c.tmp")


def test_what_is_left_is_exactly_what_the_fix_left(swept: dict) -> None:
    res = run_cli("check", *swept["args"], "--format", "json", "--exit-zero")
    report = json.loads(res.stdout)
    left = [f for f in report["findings"] if f["rule"] == "CTX101"]
    assert len(left) == 28
    assert report["errors"] == []


def test_a_second_run_changes_nothing(swept: dict) -> None:
    again = run_cli("fix", "--diff", *swept["args"])
    assert again.returncode == 0, again.stdout[-2000:]
    assert again.stdout == ""
    assert "Would fix 0 sites in 0 files; 28 left:" in again.stderr


def _sweep_bench():
    spec = importlib.util.spec_from_file_location(
        "sglang_sweep", REPO / "bench" / "sglang_sweep.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_fix_beside_sglangs_own_sweep(swept: dict) -> None:
    """tests/data/sglang_sweep_0517_0519.json (bench/sglang_sweep.py) holds the
    51 reads and what SGLang 0.5.19 has in each one's place: the fix writes
    SGLang's own text where it rewrites, bar the four below."""
    bench = _sweep_bench()
    rows = json.loads((REPO / "tests" / "data" / "sglang_sweep_0517_0519.json").read_text())
    compared = bench.agreement(rows["reads"], swept["fix"].stdout)
    verdicts = Counter(r["verdict"] for r in compared)
    assert verdicts == Counter({bench.EXACT: 19, bench.DIFFERENT: 4, bench.LEFT: 28})
    different = {
        (r["path"].rpartition("/")[2], r["fix"], r["sglang"])
        for r in compared
        if r["verdict"] == bench.DIFFERENT
    }
    assert different == {
        # the launch's request; 0.5.17's dcp_enabled is the effective topology
        # (False with no group), not `dcp_size > 1` (the design's DCP paragraph)
        ("allocation.py", "get_parallel().dcp_size", "get_parallel().dcp_enabled"),
        # SGLang made these the backend serving this forward, an accessor 0.5.17 lacks
        ("attn.py", "get_exec().kernel.attention_backend", "attention_backend"),
        # SGLang removed the function
        ("cuda_ipc_transport_utils.py", "get_parallel().tp_size", None),
    }
