"""The example server: end to end in real spawned processes, and its pieces in-process
(speculative decoding is exact, per-runner values are constructor arguments, the
plugin hooks keep the base signatures, the readback reports overrides)."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rt_fixtures import fresh_context  # noqa: F401 - autouse: empty context per test

from ctxrt.context import get_context, get_model, publish
from ctxrt.errors import PublishAssertionError
from ctxrt.record import ServerArgs
from ctxrt.resolution import resolution_result
from ctxrt.roles import MODE_ENV, OUT_ENV, ROLE_NAMESPACE_SETS, read_role_audit
from examples.serving_app import model_overrides  # registers the TinyLM override
from examples.serving_app.draft_worker import DraftWorker
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
    info = json.loads(next(x for x in lines if x.startswith("[server_info] "))[14:])
    assert info["role"] == "tokenizer"
    assert info["resolved_config"]["context_length"] == 128
    assert info["resolved_config"]["speculative_attention_backend"] == "sdpa"
    assert isinstance(info["resolved_config"]["nccl_port"], int)  # the launcher's declaration
    assert info["overrides"] == [
        {"source": "operator:log_level", "field": "log_level", "old": "warning", "new": "debug"}
    ]
    assert info["effective_overridden"] == {"log_level": "debug"}
    assert "'tokenizer': 0, 'scheduler': 0, 'detokenizer': 0" in lines[-1]
    # Every process audited its reads; each restricted role stayed inside its set.
    read = read_role_audit(audit)
    assert set(read) == {"tokenizer", "scheduler", "detokenizer"}
    assert {"exec", "model", "parallel", "spec"} <= read["scheduler"]
    for role, namespaces in read.items():
        allowed = ROLE_NAMESPACE_SETS[role]
        assert allowed is None or namespaces <= allowed, (role, namespaces)


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
