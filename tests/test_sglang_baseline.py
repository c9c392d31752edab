"""The sglang 0.5.23 wheel against its pinned baseline (slow: the first, cold run
parses ~2000 files; the wheel is fetched once, as test_audit's slow test does).

The baseline holds every finding the triage in docs/sglang-0.5.23-triage.md
judged real; a strict check must find exactly those, nothing new and nothing
stale, and the derived vocabulary must name the runtime's own accessors.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, run_cli
from wheels import sglang_tree, shared_fact_cache

from ctxlint.engine.registry import load_rules

# after the model-invariance test of 0.5.23, on the worker that runs it (its cache)
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("sglang-0.5.23")]

BASELINE = REPO / "baselines" / "sglang-0.5.23.json"
RULES = tuple(r.id for r in load_rules())
# the fact cache the model-invariance test fills: every run here is warm after it
CACHE = ("--cache-dir", str(shared_fact_cache()))


@pytest.fixture(scope="module")
def tree() -> Path:
    return sglang_tree()


@pytest.fixture(scope="module")
def strict_check(tree: Path) -> dict[str, Any]:
    """One strict check of the wheel against the baseline, shared by the tests,
    on the fact cache the model-invariance test filled (warm after it in a whole
    run; it warms the cache for the tests after it)."""
    res = run_cli(
        "check", "--strict", "--profile", "sglang", str(tree),
        "--baseline", str(BASELINE), "--format", "json",
        *CACHE,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr or res.stdout[-2000:]
    return json.loads(res.stdout)


def test_the_wheel_matches_its_baseline_exactly(strict_check: dict[str, Any]) -> None:
    entries = json.loads(BASELINE.read_text())["entries"]
    pinned = Counter(e["rule"] for e in entries)
    assert sum(pinned.values()) > 0
    assert strict_check["errors"] == []
    assert strict_check["stale"] == []
    summary = strict_check["summary"]
    assert set(summary) == set(RULES)
    for rule in RULES:
        s = summary[rule]
        assert s["new"] == 0, rule
        assert s["stale"] == 0, rule
        assert s["found"] == s["baselined"] == pinned.get(rule, 0), (rule, s)
    assert all(f["status"] == "baselined" for f in strict_check["findings"])
    assert len(strict_check["findings"]) == len(entries)
    # paths are relative to the wheel root
    assert all(e["path"].startswith("sglang/") for e in entries)


def test_sets_derive_the_runtime_accessors(tree: Path, strict_check: dict[str, Any]) -> None:
    res = run_cli("sets", "--profile", "sglang", str(tree), "--format", "json", *CACHE)
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    vocab = data["vocabulary"]
    # sglang/srt/runtime_context.py: the eleven namespace bags, and get_parallel
    assert set(vocab["bag accessors"]) == {
        "get_device",
        "get_disagg",
        "get_exec",
        "get_lora",
        "get_memory",
        "get_mm",
        "get_model",
        "get_observability",
        "get_schedule",
        "get_serving",
        "get_spec",
        "get_parallel",
    }
    assert vocab["seed accessors"] == ["get_server_args"]
    # exact for this immutable wheel: a derivation that drifts or finds nothing fails
    # sglang/test is checked (SGLang's mutation ratchet covers its kits), and a
    # publish through another module's helper makes a publisher: 69 of the 83
    # entries publish, 46 of them through a helper (31 in another module)
    entries = data["CTX301"]["process entries"]
    assert len(entries) == 83
    assert sum("(publishes" in e for e in entries) == 69
    assert sum("(publishes through" in e for e in entries) == 46
    assert (
        "sglang.test.kits.unified_radix_cache.mixins.UnifiedRadixCacheFixtures._init_hicache "
        "(publishes through sglang.srt.server_args.set_global_server_args_for_scheduler)"
    ) in entries
    assert len(data["CTX301"]["process starts"]) == 29
    assert data["CTX301"]["publishers reaching no bag read"] == [
        "sglang.srt.server_args.set_global_server_args_for_scheduler",
        "sglang.srt.server_args.set_global_server_args_for_tokenizer",
        # after its publish it only calls get_parallel().override_permanently(...):
        # no leaf read (issue 36)
        "sglang.test.test_utils.publish_build_topology",
        "sglang.test.test_utils.published_topology",
        "sglang.test.unified_allocator_fixtures.setup_allocator_context",
    ]
    assert data["CTX201"]["resolution entries"] == [
        "resolve_once (sets _input_frozen, _resolution_finished)"
    ]
    # 201: EagleDraftWorkerBase's `def draft():` (no self) is no hook (issue 36)
    assert len(data["CTX501"]["plugin bases"]) == 201
    # arg_groups/fields/: every namespace class is assembled, and every namespace
    # has its accessor (CTX601 finds nothing to report on this wheel)
    classes = data["CTX601"]["namespace classes"]
    assert len(classes) == 21
    assert not [c for c in classes if c.endswith("not assembled")]
    assert len(data["CTX601"]["namespaces and their accessors"]) == 12
    assert not [n for n in data["CTX601"]["namespaces and their accessors"] if "(none)" in n]


def test_sets_derive_the_test_doubles_and_import_time_inputs(
    tree: Path, strict_check: dict[str, Any]
) -> None:
    """CTX402 and CTX602's derived sets on 0.5.23 (docs/sglang-0.5.23-triage.md, issue 15)."""
    res = run_cli("sets", "--profile", "sglang", str(tree), "--format", "json", *CACHE)
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    doubles = data["CTX402"]
    assert doubles["test roots (configured)"] == ["sglang/test"]
    # pytest's conventions plus sglang/test, over every checked file (discovery's
    # list): the set no longer follows what other rules' prefilter tokens parse
    # (it was 495, then 498 when CTX502 and CTX703 joined, with no finding changed)
    tests = doubles["test files (pytest's conventions and the test roots)"]
    assert len(tests) == 663
    # the model's accessors (issue 36): 11 bags, get_parallel, the seed and the
    # flags/forward/resources/context tiers; no other zero-argument function
    # (`publish_role`, `mamba_cache_chunk_size`, ... were counted before: 37)
    assert len(doubles["runtime accessors"]) == 17
    assert "sglang.srt.runtime_context.publish_role" not in doubles["runtime accessors"]
    assert doubles["runtime reset"] == ["reset_context"]
    assert {"get_context", "get_flags", "get_forward", "get_parallel", "get_resources"} <= {
        a.rpartition(".")[2] for a in doubles["runtime accessors"]
    }
    assert doubles["runtime functions taking a record"] == [
        "sglang.srt.runtime_context.assert_published",
        "sglang.srt.runtime_context.create_context",
        "sglang.srt.runtime_context.publish",
        "sglang.srt.runtime_context.spawn_world_rank",
    ]
    assert doubles["record parameter names"] == ["server_args"]
    assert doubles["record parameter names meaning a rival record class"] == [
        "server_args in sglang.multimodal_gen"
    ]
    frozen = data["CTX602"]
    assert len(frozen["config accessors"]) == 13
    # nothing the runtime module names is marked deprecated (parallel_state's
    # deprecated getters are wrapped by a loop over a name table, elsewhere)
    assert frozen["legacy accessors"] == []


def test_sets_derive_readback_surfaces_and_flags_owners(
    tree: Path, strict_check: dict[str, Any]
) -> None:
    """Issue 16's derived sets, exact for this wheel (docs/sglang-0.5.23-triage.md)."""
    res = run_cli("sets", "--profile", "sglang", str(tree), "--format", "json", *CACHE)
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    readback = data["CTX502"]
    assert readback["whole-object readback"] == ["resolved_dict"]
    assert readback["name-driven leaf reads"] == ["config_leaf"]
    assert readback["readback primitives"] == [
        "_dump_config_snapshot",
        "_launch_server_info",
        "_server_args_for_dump",
        "_server_args_for_logging",
        "build_server_info",
        "config_leaf",
        "config_value",
        "get_server_info",
        "resolved_config_dict",
        "resolved_dict",
        "resolved_server_args_dict",
        "server_info",
    ]
    assert readback["parts"] == ["sglang.srt.utils.common.build_server_info"]
    groups = readback["groups"]
    assert {g: sorted(s) for g, s in groups.items()} == {
        "hicache_storage_backend_status": [
            "sglang.srt.entrypoints.http_server.hicache_storage_backend_status"
        ],
        "launch_server_info": ["sglang.srt.rust_server.config._launch_server_info"],
        "model_info": [
            "sglang.srt.entrypoints.engine.Engine.get_model_info",
            "sglang.srt.entrypoints.grpc_bridge.RuntimeHandle.get_model_info",
            "sglang.srt.entrypoints.http_server.model_info",
        ],
        "server_info": [
            "sglang.srt.entrypoints.engine.Engine.get_server_info",
            "sglang.srt.entrypoints.grpc_bridge.RuntimeHandle.get_server_info",
            "sglang.srt.entrypoints.http_server.server_info",
        ],
    }
    assert len(groups["model_info"]["sglang.srt.entrypoints.http_server.model_info"]) == 15
    flags = data["CTX703"]
    assert flags["flags root"] == "sglang.srt.runtime_context.Flags"
    assert {g: len(leaves) for g, leaves in flags["groups"].items()} == {
        "capture": 2,
        "dp": 11,
        "moe": 13,
        "sp": 1,
    }
    # capture: the publish-time seeding owns it, the warmup's reset is a clear;
    # dp: no one init, its module writes every leaf (issue 36)
    assert flags["owners"] == {
        "capture": ["sglang.srt.runtime_context.RuntimeContext.set_server_args"],
        "dp": [],
        "moe": ["sglang.srt.layers.moe.utils.initialize_moe_config"],
        "sp": ["sglang.srt.layers.layernorm_sp.initialize_layernorm_sp"],
    }
    assert {g: len(leaves) for g, leaves in flags["materialised leaves"].items()} == {
        "capture": 1,
        "dp": 9,
        "moe": 11,
        "sp": 1,
    }
    assert flags["owning modules"] == {"dp": "sglang.srt.layers.dp_attention"}
    assert len(flags["clear writes"]) == 1
    assert len(flags["lazy default writes"]) == 9
    assert len(flags["scoped writes"]) == 17


def test_sets_derive_the_role_table_entries_and_reach(
    tree: Path, strict_check: dict[str, Any]
) -> None:
    """CTX302's derived sets, exact for this wheel (docs/sglang-0.5.23-triage.md): the
    one restricted role, dp_controller, reaches exactly its set, and no finding."""
    res = run_cli("sets", "--profile", "sglang", str(tree), "--format", "json", *CACHE)
    assert res.returncode == 0, res.stderr
    roles = json.loads(res.stdout)["CTX302"]
    full = "(full tree)"
    dp_set = ["device", "disagg", "exec", "observability", "parallel", "serving"]
    assert roles["role table"] == {
        "detokenizer": full,
        "diffusion_gpu_worker": full,
        "dp_controller": dp_set,
        "encoder": full,
        "expert_backup": full,
        "scheduler": full,
        "test": full,
        "tokenizer": full,
        "weight_cache_daemon": full,
    }
    assert roles["role table source"] == (
        "sglang.srt.runtime_context.ROLE_NAMESPACE_SETS (sglang/srt/runtime_context.py:1371)"
    )
    assert roles["restricted roles"] == ["dp_controller"]
    assert roles["roles without an entry"] == []
    assert roles["publishes with a non-literal role"] == [
        "sglang.test.parallel_groups.publish (sglang/test/parallel_groups.py:35)",
        "sglang.test.test_utils.published_topology (sglang/test/test_utils.py:2094)",
    ]
    per_role = Counter(e.partition(":")[0] for e in roles["role entries"])
    assert per_role == {
        "detokenizer": 1,
        "diffusion_gpu_worker": 5,
        "dp_controller": 1,
        "encoder": 6,
        "expert_backup": 1,
        "scheduler": 33,
        "test": 2,
        "tokenizer": 19,
        "weight_cache_daemon": 2,
    }
    assert (
        "dp_controller: sglang.srt.managers.data_parallel_controller."
        "run_data_parallel_controller_process (sglang/srt/managers/data_parallel_controller.py:962)"
    ) in roles["role entries"]
    assert roles["reach"] == {
        "detokenizer": ["device", "model", "observability", "serving"],
        "diffusion_gpu_worker": ["exec", "parallel"],
        "dp_controller": dp_set,
        "encoder": [
            "device",
            "disagg",
            "exec",
            "mm",
            "model",
            "observability",
            "parallel",
            "serving",
        ],
        "expert_backup": ["disagg", "exec", "model", "parallel"],
        "scheduler": [
            "device",
            "disagg",
            "exec",
            "lora",
            "memory",
            "mm",
            "model",
            "observability",
            "parallel",
            "schedule",
            "serving",
            "spec",
        ],
        "test": ["exec", "parallel"],
        "tokenizer": ["device", "disagg", "exec", "model", "observability", "parallel", "serving"],
        "weight_cache_daemon": ["device", "exec", "parallel"],
    }
    assert len(roles["reach paths"]) == 48
    dpc = "sglang/srt/managers/data_parallel_controller.py"
    entry = "run_data_parallel_controller_process"
    assert {k: v for k, v in roles["reach paths"].items() if k.startswith("dp_controller")} == {
        "dp_controller device": f"{entry} -> DataParallelController.__init__ -> get_device() "
        f"({dpc}:261)",
        "dp_controller disagg": f"{entry} -> get_disagg() ({dpc}:971)",
        "dp_controller exec": f"{entry} -> get_exec() ({dpc}:999)",
        "dp_controller observability": f"{entry} -> get_observability() ({dpc}:964)",
        "dp_controller parallel": f"{entry} -> get_parallel() ({dpc}:999)",
        "dp_controller serving": f"{entry} -> get_serving() ({dpc}:991)",
    }
    assert strict_check["summary"]["CTX302"]["found"] == 0


def test_sets_derive_resource_leases_and_forward_state(
    tree: Path, strict_check: dict[str, Any]
) -> None:
    """CTX701 and CTX702's derived sets, exact for this wheel (issue 16,
    docs/sglang-0.5.23-triage.md)."""
    res = run_cli("sets", "--profile", "sglang", str(tree), "--format", "json", *CACHE)
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    leases = data["CTX701"]
    rt = "sglang.srt.runtime_context"
    assert leases["resources tier"] == f"{rt}.Resources"
    assert leases["lease methods"] == {
        f"{rt}.RuntimeContext.get_buffer": "buffers",
        f"{rt}.RuntimeContext.get_stream": "streams",
        f"{rt}.RuntimeContext.set_stream": "streams",
    }
    assert leases["lease functions"] == {
        f"{rt}.get_buffer": "buffers",
        f"{rt}.get_stream": "streams",
        f"{rt}.set_stream": "streams",
    }
    assert leases["subsystems"] == [
        "sglang.srt.hardware_backend",
        "sglang.srt.layers",
        "sglang.srt.model_executor",
        "sglang.srt.models",
        "sglang.srt.utils",
    ]
    table = leases["name table"]
    assert len(table) == 18  # 16 literal names, and the prefixes trtllm_mha_nvfp4_output_, k3_symm:
    assert table["buffers k3_symm:{…}"] == "sglang.srt.layers"
    assert table["streams alt"] == "sglang.srt.models"
    assert table["streams cuda_graph_capture"] == "sglang.srt.model_executor"  # a module constant
    assert all(", " not in subs for subs in table.values())  # no name from two subsystems
    assert leases["lease sites"] == 49
    assert len(leases["capture blocks"]) == 21
    assert leases["reached from capture"] == 26
    forward = data["CTX702"]
    assert forward["forward tier"] == f"{rt}.get_forward"
    assert len(forward["thread starts"]) == 228
    assert (
        forward["reached from threads"] == 1030
    )  # 1029 before methods of inline-made instances were followed
    assert forward["forward reads"] == 34
    assert {k: len(v) for k, v in forward["sticky names"].items()} == {
        "attn_inputs": 3,
        "is_extend_in_batch": 1,
        "lora_batch_layout": 3,
        "multi_stream": 1,
        "sp_active": 4,
    }


def test_sets_derive_the_resolution_pipeline_and_its_one_writer(
    tree: Path, strict_check: dict[str, Any]
) -> None:
    """CTX103 and CTX104's derived sets on 0.5.23 (docs/sglang-0.5.23-triage.md, issue 15)."""
    res = run_cli("sets", "--profile", "sglang", str(tree), "--format", "json", *CACHE)
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    view = data["CTX103"]
    # __post_init__ is empty in 0.5.23: launchers and publishers call resolve_once,
    # and check_server_args re-runs the validation passes
    assert view["pipeline entries (the record's __post_init__ and methods reaching the declaration)"] == [
        "sglang.srt.server_args.ServerArgs.__post_init__",
        "sglang.srt.server_args.ServerArgs.check_server_args",
        "sglang.srt.server_args.ServerArgs.resolve_once",
    ]  # fmt: skip
    assert view["declaration function"] == ["sglang.srt.arg_groups.overrides.declare_resolution"]
    assert view["view functions"] == [
        "sglang.srt.arg_groups.model_override_base.resolved_view",
        "sglang.srt.arg_groups.model_override_base.resolving_view",
    ]
    assert sorted(view["view bindings (name: view functions)"]) == [
        "cfg", "resolved", "resolving", "sa", "server_cfg", "view",
    ]  # fmt: skip
    assert len(view["resolution modules"]) == 34
    assert len(view["registered callables"]) == 78
    assert len(view["passes handed to a pass runner"]) == 41
    # the platform hook is a method of an object (`current_platform`): not named
    assert view["foreign-default resolvers"] == []
    assert view["pipeline functions"] == 612
    writer = data["CTX104"]
    assert writer["stash slots"] == ["_resolved_overrides"]
    assert writer["stash appenders (through a parameter)"] == [
        "sglang.srt.arg_groups.model_hook.handle_model_specific_adjustments",
        "sglang.srt.arg_groups.overrides.declare_resolution",
    ]
    assert writer["pass runners"] == ["sglang.srt.arg_groups.overrides.run_post_process_pass"]
    assert writer["foreign-default wrappers"] == [
        "sglang.srt.arg_groups.overrides.record_foreign_defaults"
    ]
    assert writer["functions reaching the declaration (not through a pass runner)"] == 133
