"""The example server: end to end over HTTP in real spawned processes, and its
pieces in-process (continuous batching, batched and speculative decoding are
exact, per-runner values are constructor arguments, the plugin hooks keep the base
signatures, the readback reports overrides)."""

from __future__ import annotations

import asyncio
import inspect
import logging
import queue
import time
from pathlib import Path

import httpx
import pytest
from rt_fixtures import fresh_context  # noqa: F401 - autouse: empty context per test

from ctxrt.context import get_context, get_device, get_model, publish
from ctxrt.errors import PublishAssertionError
from ctxrt.record import ServerArgs
from ctxrt.resolution import resolution_result
from ctxrt.roles import MODE_ENV, OUT_ENV, ROLE_NAMESPACE_SETS, read_role_audit
from examples.serving_app import launcher, model_overrides  # registers the TinyLM override
from examples.serving_app.client import Server, alive, stream_generate
from examples.serving_app.control_plane import apply_config_update
from examples.serving_app.draft_worker import DraftWorker
from examples.serving_app.http_server import server_info
from examples.serving_app.logs import configure_logging
from examples.serving_app.messages import BatchTokenOut, TokenizedRequest
from examples.serving_app.model_runner import ModelRunner
from examples.serving_app.scheduler import Scheduler
from examples.serving_app.speculative import (
    SPEC_ALGORITHMS,
    SpecAlgorithm,
    create_spec_algorithm,
    speculative_generate,
    speculative_step,
)

SIGTERM_DEADLINE_S = 5.0


def test_the_server_serves_over_http_and_stops_on_sigterm(tmp_path: Path) -> None:
    """The whole server as an operator starts it: it listens where it says, streams,
    records a control-plane change in every process, reads back what is in force,
    and on SIGTERM every process is gone within the deadline."""
    audit = tmp_path / "roles.tsv"
    server = Server([], tmp_path, env={MODE_ENV: "record", OUT_ENV: str(audit)})
    try:
        server.wait_ready()
        children = server.children()
        assert len(children) >= 2  # scheduler, detokenizer (and multiprocessing's tracker)
        chunks = asyncio.run(_stream(server.url, "Hello, world", 12))
        assert chunks[-1]["meta_info"]["completion_tokens"] == 12
        assert len(chunks[-1]["text"]) == 12
        once = httpx.post(
            f"{server.url}/generate",
            json={"text": "Hello, world", "sampling_params": {"max_new_tokens": 12}},
        ).json()
        assert once["text"] == chunks[-1]["text"]  # greedy: streamed or not, the same
        assert httpx.post(f"{server.url}/configure_logging", json={"log_level": "debug"}).is_success
        info = httpx.get(f"{server.url}/server_info").json()
        model = httpx.get(f"{server.url}/model_info").json()
    finally:
        started = time.monotonic()
        code = server.terminate()
        stopped = time.monotonic() - started
        while any(alive(pid) for pid in children) and time.monotonic() - started < 10:
            time.sleep(0.05)
        gone = time.monotonic() - started
    assert code == 0, server.stderr()
    assert stopped < SIGTERM_DEADLINE_S and gone < SIGTERM_DEADLINE_S, (stopped, gone)
    assert not [pid for pid in children if alive(pid)]  # no orphans
    lines = server.stdout().splitlines()
    port = server.port
    assert lines[0].startswith(f"[launcher] serving tiny-lm on 127.0.0.1:{port} ")
    assert f"[launcher] listening on http://127.0.0.1:{port}" in lines
    assert info["role"] == "tokenizer"
    assert info["resolved_config"]["context_length"] == 128
    assert info["resolved_config"]["port"] == port
    assert isinstance(info["resolved_config"]["nccl_port"], int)  # the launcher's declaration
    assert [{k: e[k] for k in ("source", "field", "old", "new")} for e in info["overrides"]] == [
        {
            "source": "http:/configure_logging",
            "field": "log_level",
            "old": "warning",
            "new": "debug",
        }
    ]
    assert info["effective_overridden"] == {"log_level": "debug"}
    assert model == {
        "model_path": "tiny-lm",
        "served_model_name": "tiny-lm",
        "context_length": 128,
        "dtype": "float32",
    }
    # The change was applied in every process, each logger really at DEBUG after it.
    for role in ("tokenizer", "scheduler", "detokenizer"):
        assert f"[{role}] DEBUG examples.serving_app.control_plane: applied" in server.stderr()
    # The model forward ran compiled, whole, every graph traced before the server
    # took a request (the warm-up); the shared-weights draft was accepted.
    assert any(
        line.startswith("[scheduler] torch.compile(fullgraph=True): ")
        and line.endswith(", all before serving, 0 graph breaks")
        for line in lines
    ), lines
    accepted = next(x for x in lines if x.startswith("[scheduler] speculative (layer_skip)"))
    assert " accepted 0 of" not in accepted
    assert "[launcher] shutdown: exit codes {'scheduler': 0, 'detokenizer': 0}" in lines
    # Every process audited its reads; each restricted role stayed inside its set.
    read = read_role_audit(audit)
    assert set(read) == {"tokenizer", "scheduler", "detokenizer"}
    assert {"exec", "model", "parallel", "spec"} <= read["scheduler"]
    for role, namespaces in read.items():
        allowed = ROLE_NAMESPACE_SETS[role]
        assert allowed is None or namespaces <= allowed, (role, namespaces)


async def _stream(url: str, text: str, max_new_tokens: int) -> list[dict]:
    async with httpx.AsyncClient(timeout=60.0) as client:
        return await stream_generate(client, url, text, max_new_tokens)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--attention-backend", "flash"], "--attention-backend 'flash' is not one of"),
        (["--speculative-attention-backend", "x"], "--speculative-attention-backend 'x'"),
        (["--speculative-algorithm", "eagle9"], "--speculative-algorithm 'eagle9'"),
        (["--log-level", "loud"], "--log-level 'loud'"),
        (["--port", "70000"], "--port 70000 is not a TCP port"),
        (["--max-running-requests", "0"], "--max-running-requests 0 is below 1"),
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


@pytest.mark.parametrize(
    ("algorithm", "draft"),
    [("layer_skip", None), ("standalone", "tiny-lm"), ("standalone", "tiny-lm-draft")],
)
def test_speculative_decoding_reproduces_the_target_greedy_output(
    algorithm: str, draft: str | None
) -> None:
    sa = _publish(
        speculative_algorithm=algorithm,
        speculative_draft_model_path=draft,
        speculative_attention_backend="sdpa",
    )
    target = _target(sa)
    created = create_spec_algorithm(sa, target)
    assert created is not None
    spec, num_draft = created
    assert spec.worker.runner.attention_backend == "sdpa"  # its own constructor argument
    assert target.attention_backend == "torch_native"
    prompt = [256, *b"spec"]
    num_tokens = 24 if algorithm == "layer_skip" else 10  # enough to see rejections
    out, stats = speculative_generate(target, spec, num_draft, prompt, num_tokens)
    assert out == target.greedy(prompt, num_tokens)
    assert stats.proposed > 0
    if draft == "tiny-lm":  # the same weights under another kernel agree on every token
        assert stats.accepted == stats.proposed
    if algorithm == "layer_skip":  # half the layers, every tensor the target's own
        assert 0 < stats.accepted < stats.proposed
        drafted = spec.worker.runner.module
        assert len(drafted.blocks) == len(target.module.blocks) // 2
        shared = {p.data_ptr() for p in target.module.parameters()}
        assert {p.data_ptr() for p in drafted.parameters()} <= shared


def test_layer_skip_refuses_a_draft_model_of_its_own() -> None:
    sa = _publish(speculative_algorithm="layer_skip", speculative_draft_model_path="tiny-lm-draft")
    with pytest.raises(ValueError, match="layer_skip drafts from the target itself"):
        create_spec_algorithm(sa, _target(sa))


def test_a_batch_decodes_every_row_as_if_it_ran_alone() -> None:
    """Rows of different lengths share one padded forward; none sees another's
    padding, so each row gets the tokens it gets alone (plain and speculative)."""
    sa = _publish(speculative_algorithm="layer_skip")
    target = _target(sa)
    spec, num_draft = create_spec_algorithm(sa, target)  # type: ignore[misc]
    rows = [[256, *b"a"], [256, *b"a longer prompt"], [256, *b"mid size"]]
    assert target.decode([0, 1, 2], rows) == [target.greedy(row, 1)[0] for row in rows]
    budgets = [1, 3, 8]
    for (new, stats), row, budget in zip(
        speculative_step(target, spec, num_draft, [3, 4, 5], rows, budgets),
        rows,
        budgets,
        strict=True,
    ):
        assert 1 <= len(new) <= budget and new == target.greedy(row, len(new))
        assert stats.proposed == min(num_draft, budget - 1)


def test_slots_follow_requests_as_the_batch_changes() -> None:
    """Between two steps a row leaves (its slot is released and taken by a new one)
    and the others change places in the batch (as in a continuous batch): each row
    still gets the tokens it gets alone, so a slot only ever serves its request."""
    sa = _publish(speculative_algorithm="layer_skip")
    target = _target(sa)
    spec, num_draft = create_spec_algorithm(sa, target)  # type: ignore[misc]
    a, b, c = [256, *b"first row"], [256, *b"second"], [256, *b"third, longest"]
    for row, token in zip((a, b, c), target.decode([0, 1, 2], [a, b, c]), strict=True):
        row.append(token)
    target.release(1)  # b left; d takes its slot
    d = [256, *b"new"]
    churned = [c, d, a]  # a and c moved
    assert target.decode([2, 1, 0], churned) == [target.greedy(row, 1)[0] for row in churned]
    results = speculative_step(target, spec, num_draft, [0, 2], [a, c], [6, 6])
    for (new, _), row in zip(results, [a, c], strict=True):
        assert new == target.greedy(row, len(new))


def test_the_scheduler_batches_continuously() -> None:
    """A request that arrives while others run joins the running batch at the next
    step; one beyond max_running_requests waits for a slot; finished ones leave."""
    argv = ["--no-torch-compile", "--speculative-algorithm", "none", "--max-running-requests", "2"]
    sa = launcher.build_server_args(launcher.parse_args(argv))
    publish(sa, role="scheduler")
    scheduler = Scheduler(sa)
    outbox: queue.Queue[object] = queue.Queue()
    try:
        scheduler.handle(TokenizedRequest("a", [256, *b"hi"], 3), outbox)
        turns = [scheduler.run_batch()]
        scheduler.handle(TokenizedRequest("b", [256, *b"later"], 40), outbox)
        scheduler.handle(TokenizedRequest("c", [256, *b"last"], 2), outbox)
        turns += [scheduler.run_batch() for _ in range(5)]
        steps = [(t.rids, t.finished) for t in turns if isinstance(t, BatchTokenOut)]
        assert steps == [
            (["a"], [False]),
            (["a", "b"], [False, False]),  # b joined between two steps; c waits
            (["a", "b"], [True, False]),  # a has its 3 tokens and leaves
            (["b", "c"], [False, False]),  # c takes the freed slot
            (["b", "c"], [False, True]),
            (["b"], [False]),
        ]
        assert all(len(t.new_ids[0]) == 1 for t in turns if isinstance(t, BatchTokenOut))
        assert outbox.empty()  # requests are not echoed; only control messages are
    finally:
        scheduler.close()


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
    info = asyncio.run(server_info())
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
        assert asyncio.run(server_info())["effective_overridden"] == {"log_level": "warning"}
        apply_config_update("operator", {"log_level": "error"})
        assert asyncio.run(server_info())["effective_overridden"] == {"log_level": "error"}
        assert root.getEffectiveLevel() == logging.ERROR
    finally:
        root.setLevel(saved[0])
        root.handlers[:] = saved[1]
