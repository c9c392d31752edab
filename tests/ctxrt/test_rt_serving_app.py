"""The example server: end to end in real spawned processes, and its pieces in-process
(speculative decoding is exact, per-runner values are constructor arguments, the
plugin hooks keep the base signatures, the readback reports overrides)."""

from __future__ import annotations

import inspect
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rt_fixtures import fresh_context  # noqa: F401 - autouse: empty context per test

from ctxrt.context import get_context, get_device, get_model, publish
from ctxrt.errors import PublishAssertionError
from ctxrt.record import ServerArgs
from ctxrt.resolution import resolution_result
from ctxrt.roles import MODE_ENV, OUT_ENV, ROLE_NAMESPACE_SETS, read_role_audit
from examples.serving_app import launcher, model_overrides  # registers the TinyLM override
from examples.serving_app.control_plane import apply_config_update
from examples.serving_app.draft_worker import DraftWorker
from examples.serving_app.logs import configure_logging
from examples.serving_app.model_runner import ModelRunner
from examples.serving_app.speculative import (
    SPEC_ALGORITHMS,
    SpecAlgorithm,
    create_spec_algorithm,
    speculative_generate,
)
from examples.serving_app.tokenizer_manager import server_info

REPO = Path(__file__).resolve().parents[2]


def test_the_server_runs_end_to_end_in_spawned_processes(tmp_path: Path) -> None:
    audit = tmp_path / "roles.tsv"
    env = {**os.environ, MODE_ENV: "record", OUT_ENV: str(audit)}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(REPO / "src"), env.get("PYTHONPATH", "")])
    proc = subprocess.run(
        [sys.executable, "-m", "examples.serving_app", "--num-requests", "3"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    responses = [line for line in lines if line.startswith("[response ")]
    assert len(responses) == 3 and all("(12 tokens" in line for line in responses)
    # the readback's three sibling surfaces (readback.py) answered the same
    assert (
        "[readback] http, rpc, engine agree on 4 keys: "
        "effective_overridden, overrides, resolved_config, role"
    ) in lines
    info = json.loads(next(x for x in lines if x.startswith("[server_info] "))[14:])
    assert info["role"] == "tokenizer"
    assert info["resolved_config"]["context_length"] == 128
    assert info["resolved_config"]["speculative_attention_backend"] == "sdpa"
    assert isinstance(info["resolved_config"]["nccl_port"], int)  # the launcher's declaration
    assert info["overrides"] == [
        {"source": "operator:log_level", "field": "log_level", "old": "warning", "new": "debug"}
    ]
    assert info["effective_overridden"] == {"log_level": "debug"}
    draft = info["resolved_config"]["speculative_draft_model_path"]
    assert draft == "tiny-lm-draft" != info["resolved_config"]["served_model_name"]
    # The override line says what the JSON shows: a bag leaf, the record unchanged.
    explained = [line for line in lines if line.startswith("[override] ")]
    assert explained == [
        "[override] log_level: 'warning' -> 'debug' by 'operator:log_level' (a bag leaf "
        "changed with get_context().override; the record keeps the operator's 'warning'; "
        "in force in the tokenizer process: 'debug')"
    ]
    # The change was applied in every process, each logger really at DEBUG after it.
    for role in ("tokenizer", "scheduler", "detokenizer"):
        assert f"[{role}] DEBUG examples.serving_app.control_plane: applied" in proc.stderr
    # The model forward ran compiled, whole: one graph per runner (target, draft).
    assert "[scheduler] torch.compile(fullgraph=True): 2 graphs, 0 graph breaks" in lines
    assert "'tokenizer': 0, 'scheduler': 0, 'detokenizer': 0" in lines[-1]
    # Every process audited its reads; each restricted role stayed inside its set.
    read = read_role_audit(audit)
    assert set(read) == {"tokenizer", "scheduler", "detokenizer"}
    assert {"exec", "model", "parallel", "spec"} <= read["scheduler"]
    for role, namespaces in read.items():
        allowed = ROLE_NAMESPACE_SETS[role]
        assert allowed is None or namespaces <= allowed, (role, namespaces)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--attention-backend", "flash"], "--attention-backend 'flash' is not one of"),
        (["--speculative-attention-backend", "x"], "--speculative-attention-backend 'x'"),
        (["--speculative-algorithm", "eagle9"], "--speculative-algorithm 'eagle9'"),
        (["--log-level", "loud"], "--log-level 'loud'"),
        (["--model-path", "nope"], "unknown model 'nope'"),
    ],
)
def test_bad_flags_are_rejected_up_front_in_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert launcher.main(argv) == 2  # returns before any process is spawned
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(f"error: {message}") and err.count("\n") == 1, err


def test_the_runner_puts_the_model_where_resolution_says() -> None:
    sa = _publish()
    assert _target(sa).device.type == get_device().device == resolution_result(sa, "device")
    with get_device().override(device="meta"):
        runner = _target(sa)
    assert {p.device.type for p in runner.model.parameters()} == {"meta"}
    assert runner.allowed.device.type == "meta"


def _publish(**fields: object) -> ServerArgs:
    sa = ServerArgs(model_path="tiny-lm", **fields)  # type: ignore[arg-type]
    publish(sa, role="scheduler")
    return sa


def _target(sa: ServerArgs) -> ModelRunner:
    model = get_model()
    return ModelRunner(
        sa,
        model_path=model.model_path,
        context_length=model.context_length,
        attention_backend="torch_native",
        load_format=model.load_format,
    )


@pytest.mark.parametrize("draft", ["tiny-lm", "tiny-lm-draft"])
def test_speculative_decoding_reproduces_the_target_greedy_output(draft: str) -> None:
    sa = _publish(
        speculative_algorithm="standalone",
        speculative_draft_model_path=draft,
        speculative_attention_backend="sdpa",
    )
    target = _target(sa)
    created = create_spec_algorithm(sa, target)
    assert created is not None
    algorithm, num_draft = created
    assert algorithm.worker.runner.attention_backend == "sdpa"  # its own constructor argument
    assert target.attention_backend == "torch_native"
    prompt = [256, *b"spec"]
    out, stats = speculative_generate(target, algorithm, num_draft, prompt, 10)
    assert out == target.greedy(prompt, 10)
    assert stats.proposed > 0
    if draft == "tiny-lm":  # the same weights under another kernel agree on every token
        assert stats.accepted == stats.proposed


def test_draft_load_format_is_scoped_to_the_draft_build() -> None:
    sa = _publish()
    with pytest.raises(ValueError, match="'bogus'"):
        DraftWorker(
            sa,
            model_path="tiny-lm",
            context_length=64,
            attention_backend="sdpa",
            load_format="bogus",
        )
    assert get_model().load_format == "dummy"  # the scope restored on the exception


def test_runners_fail_loudly_when_the_entry_did_not_publish() -> None:
    sa = ServerArgs(model_path="tiny-lm")
    with pytest.raises(PublishAssertionError):
        ModelRunner(
            sa,
            model_path="tiny-lm",
            context_length=8,
            attention_backend="sdpa",
            load_format="dummy",
        )


def test_plugin_hooks_keep_the_base_signatures() -> None:
    hooks = sorted(SpecAlgorithm.__abstractmethods__)  # derived, not hand-kept
    assert hooks and SPEC_ALGORITHMS
    for cls in SPEC_ALGORITHMS.values():
        for hook in hooks:
            base = inspect.signature(getattr(SpecAlgorithm, hook))
            assert inspect.signature(getattr(cls, hook)) == base, (cls.__name__, hook)
        assert not inspect.isabstract(cls)


def test_model_override_declares_for_the_example_model() -> None:
    assert model_overrides.tiny_lm_overrides is not None
    sa = ServerArgs(model_path="tiny-lm")
    assert sa.chunked_prefill_size is None
    assert resolution_result(sa, "chunked_prefill_size") == 128


def test_server_info_reports_resolution_and_overrides() -> None:
    sa = _publish()
    get_context().override("weight_update", load_format="dummy", context_length=64)
    info = server_info()
    assert info["resolved_config"] == sa.resolved_dict()
    assert info["resolved_config"]["context_length"] == 128
    assert [e["field"] for e in info["overrides"]] == ["load_format", "context_length"]
    assert info["effective_overridden"] == {"load_format": "dummy", "context_length": 64}


def test_the_readback_reports_what_is_in_force_where_it_answers() -> None:
    """Recording ``log_level`` changes the bag, not the logger configured from it at
    startup: the readback says what the logger does, and only the control plane
    (which re-applies the leaf) makes the change real."""
    root = logging.getLogger()
    saved = (root.level, list(root.handlers))
    try:
        publish(ServerArgs(model_path="tiny-lm", log_level="warning"), role="tokenizer")
        configure_logging("tokenizer")
        get_context().override("bare", log_level="debug")
        assert get_context().config_leaf("log_level") == "debug"
        assert server_info()["effective_overridden"] == {"log_level": "warning"}  # the truth
        apply_config_update("operator", {"log_level": "error"})
        assert server_info()["effective_overridden"] == {"log_level": "error"}
        assert root.getEffectiveLevel() == logging.ERROR
    finally:
        root.setLevel(saved[0])
        root.handlers[:] = saved[1]
