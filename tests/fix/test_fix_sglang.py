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
    assert status == Counter({"fixed": 45, "left": 6})
    files = {Path(p) for p, s in sites if s == "fixed"}
    srt = swept["root"] / "sglang" / "srt"
    runtime = srt / "runtime_context.py"
    # the files with a fixed site, the runtime module the accessors are added to, and
    # the caller whose argument to the dropped parameter goes (it has no finding)
    pool = srt / "model_executor" / "pool_configurator.py"
    assert set(swept["changed"]) == files | {runtime, pool} and len(files) == 25
    # 0.5.17 predates the computed members' accessors: --unsafe adds the two the
    # sites read (SGLang added both by 0.5.19), each returning the record's member
    assert (
        "  adds `mamba_cache_chunk_size()`, `max_speculative_num_draft_tokens()` to "
        f"{runtime}, for the sites that read the record's own member"
    ) in out
    added = runtime.read_text()[len(swept["before"][runtime].decode()) :]
    assert added == (
        "\n\ndef mamba_cache_chunk_size() -> int:\n"
        '    """The published record\'s `mamba_cache_chunk_size` (added by ctxlint fix)."""\n'
        "    return get_server_args().mamba_cache_chunk_size\n"
        "\n\ndef max_speculative_num_draft_tokens():\n"
        '    """The published record\'s `max_speculative_num_draft_tokens` (added by ctxlint '
        'fix)."""\n'
        "    return get_server_args().max_speculative_num_draft_tokens\n"
    )
    left = Counter(m for m in re.findall(r"^  (\d+) x CTX101 left: (.*)$", out, re.M))
    reasons = {reason: int(n) for n, reason in left}
    # left: an alias parked on self and cached lazily, one assigned in a `try`
    assert reasons == {
        "`self._server_args` is also used other than as a reported field read (line 612)": 5,
        "the alias is assigned inside a `try` (its failure is handled there)": 1,
    }
    # SGLang 0.5.19's chain: the parameter goes from get_alloc_len_per_decode and from
    # get_alloc_reserve_per_decode, which only hands it on, and the argument at each
    # call; get_req_to_token_extra_context_len reads its own parameter (it stays)
    sizing = (srt / "mem_cache" / "allocation_sizing.py").read_text()
    assert "def get_alloc_len_per_decode() -> int:" in sizing
    assert "def get_alloc_reserve_per_decode() -> int:" in sizing
    assert "    return 2 * get_alloc_len_per_decode()\n" in sizing
    assert "get_alloc_reserve_per_decode() + server_args.page_size - 1" in sizing
    assert "def get_req_to_token_extra_context_len(server_args: ServerArgs) -> int:" in sizing
    before = swept["before"][pool].decode()
    assert pool.read_text() == before.replace(
        "2 * get_alloc_len_per_decode(sa)", "2 * get_alloc_len_per_decode()"
    )
    # the method's one call, in its class, handed a local bound to the seed: both go
    model = (srt / "models" / "deepseek_v2.py").read_text()
    assert "self, hidden_states: torch.Tensor\n    ) -> bool:" in model
    assert "            if self._can_dual_stream_graph(hidden_states):\n" in model


def test_every_changed_file_compiles(swept: dict) -> None:
    for path in swept["changed"]:
        py_compile.compile(str(path), doraise=True, cfile=str(path) + "c.tmp")


def test_what_is_left_is_exactly_what_the_fix_left(swept: dict) -> None:
    res = run_cli("check", *swept["args"], "--format", "json", "--exit-zero")
    report = json.loads(res.stdout)
    left = [f for f in report["findings"] if f["rule"] == "CTX101"]
    assert len(left) == 6
    assert report["errors"] == []


def test_a_second_run_changes_nothing(swept: dict) -> None:
    again = run_cli("fix", "--diff", *swept["args"])
    assert again.returncode == 0, again.stdout[-2000:]
    assert again.stdout == ""
    assert "Would fix 0 sites in 0 files; 6 left:" in again.stderr


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
    SGLang's own text where it rewrites, bar the ones below."""
    bench = _sweep_bench()
    rows = json.loads((REPO / "tests" / "data" / "sglang_sweep_0517_0519.json").read_text())
    compared = bench.agreement(rows["reads"], swept["fix"].stdout)
    verdicts = Counter(r["verdict"] for r in compared)
    assert verdicts == Counter({bench.EXACT: 34, bench.DIFFERENT: 11, bench.LEFT: 6})
    different = {
        (r["path"].rpartition("/")[2], r["line"], r["fix"], r["sglang"])
        for r in compared
        if r["verdict"] == bench.DIFFERENT
    }
    chunk = "runtime_context.mamba_cache_chunk_size()"
    assert different == {
        # the launch's request; 0.5.17's dcp_enabled is the effective topology
        # (False with no group), not `dcp_size > 1` (the design's DCP paragraph)
        ("allocation.py", 298, "get_parallel().dcp_size", "get_parallel().dcp_enabled"),
        # SGLang's allocation page: the schedule's page times the DCP size
        ("allocation_sizing.py", 20, "get_schedule().page_size", "get_alloc_page_size()"),
        # SGLang made these the backend serving this forward, an accessor 0.5.17 lacks
        ("attn.py", 730, "get_exec().kernel.attention_backend", "attention_backend"),
        ("attn.py", 734, "get_exec().kernel.attention_backend", "attention_backend"),
        # SGLang removed the function, or the read
        ("cuda_ipc_transport_utils.py", 133, "get_parallel().tp_size", None),
        ("base.py", 237, "get_parallel().enable_prefill_cp", None),
        ("hi_mamba_radix_cache.py", 1046, chunk, None),
        # a local holds the accessor's name: SGLang renamed the local (`chunk_size`),
        # the fix calls the accessor through its module; once the model's own size
        ("hybrid_linear_attn_backend.py", 300, chunk, "mamba_cache_chunk_size()"),
        ("hybrid_linear_attn_backend.py", 319, chunk, "self.mamba_chunk_size"),
        ("lightning_backend.py", 302, chunk, "mamba_cache_chunk_size()"),
        ("schedule_batch.py", 2559, chunk, "mamba_cache_chunk_size()"),
    }
