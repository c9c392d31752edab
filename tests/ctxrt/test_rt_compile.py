"""Bag and parallel leaves are plain attributes: a compiled forward reads them with
no graph break (fullgraph=True fails on one), and dynamo's guards follow overrides.
Enforce refuses a wrong-role read while tracing; record mode does not see reads
inside traced code (audit with compilation off)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from rt_fixtures import fresh_context  # noqa: F401 - autouse: empty context per test
from torch._dynamo.testing import CompileCounter
from torch._dynamo.utils import counters

from ctxrt.context import (
    get_context,
    get_exec,
    get_forward,
    get_memory,
    get_model,
    get_parallel,
    get_schedule,
    get_serving,
    publish,
)
from ctxrt.errors import RoleNamespaceError
from ctxrt.record import ServerArgs
from ctxrt.roles import MODE_ENV, OUT_ENV, read_role_audit


def _forward(x: torch.Tensor) -> torch.Tensor:
    moe = get_exec().moe
    y = x * get_parallel().moe_tp_size + get_parallel().tp_size
    if moe.moe_runner_backend == "torch":
        y = y + 1
    if get_model().is_random_weights and not get_exec().kernel.kv_cache_dtype == "fp8":
        y = y * get_model().context_length
    return y


def test_bag_and_parallel_reads_compile_without_graph_breaks() -> None:
    publish(ServerArgs(model_path="tiny-lm", tp_size=4, ep_size=2), role="scheduler")
    get_context().override("test", moe_runner_backend="torch")
    compiled = torch.compile(_forward, fullgraph=True, backend="eager")
    x = torch.ones(3)
    assert torch.equal(compiled(x), _forward(x))
    assert compiled(x)[0].item() == (1 * 2 + 4 + 1) * 128
    get_context().override("test", moe_runner_backend="triton", context_length=64)
    assert compiled(x)[0].item() == (1 * 2 + 4) * 64  # guards saw the override
    torch._dynamo.reset()


def test_reads_inside_compiled_code_are_not_role_audited(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    audit = tmp_path / "roles.tsv"
    monkeypatch.setenv(MODE_ENV, "record")
    monkeypatch.setenv(OUT_ENV, str(audit))
    publish(ServerArgs(model_path="dummy"), role="scheduler")

    def scaled(x: torch.Tensor) -> torch.Tensor:
        return x * get_memory().page_size

    compiled = torch.compile(scaled, fullgraph=True, backend="eager")
    assert compiled(torch.ones(1)).item() == 1.0
    assert not audit.exists()  # the traced read was not observed ...
    scaled(torch.ones(1))
    assert read_role_audit(audit) == {"scheduler": {"memory"}}  # ... the eager one was
    torch._dynamo.reset()


def test_enforce_refuses_a_read_inside_compiled_code_at_trace_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A detokenizer may not read ``schedule``: under enforce the refused read raises
    while dynamo traces (fullgraph: dynamo's Unsupported naming the RoleNamespaceError;
    without fullgraph the error itself), and no graph is ever handed to the backend.
    An allowed namespace still traces into one graph with no break."""
    monkeypatch.setenv(MODE_ENV, "enforce")
    publish(ServerArgs(model_path="dummy"), role="detokenizer")

    def refused(x: torch.Tensor) -> torch.Tensor:
        return x * get_schedule().max_running_requests

    def refused_parallel(x: torch.Tensor) -> torch.Tensor:
        return x * get_parallel().tp_size

    def allowed(x: torch.Tensor) -> torch.Tensor:
        return x * get_serving().port

    for fn in (refused, refused_parallel):
        counter = CompileCounter()
        with pytest.raises(torch._dynamo.exc.Unsupported, match="RoleNamespaceError"):
            torch.compile(fn, backend=counter, fullgraph=True)(torch.ones(1))
        assert counter.frame_count == 0
        torch._dynamo.reset()
    with pytest.raises(RoleNamespaceError, match="'detokenizer' read namespace 'schedule'"):
        torch.compile(refused, backend="eager")(torch.ones(1))
    counter = CompileCounter()
    assert torch.compile(allowed, backend=counter, fullgraph=True)(torch.ones(1)).item() == 30000
    assert counter.frame_count == 1
    torch._dynamo.reset()


def test_record_mode_stays_off_inside_compiled_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Record never refuses and never writes while tracing, even for a namespace the
    role may not read: the traced read compiles, and only the eager read is recorded."""
    audit = tmp_path / "roles.tsv"
    monkeypatch.setenv(MODE_ENV, "record")
    monkeypatch.setenv(OUT_ENV, str(audit))
    publish(ServerArgs(model_path="tiny-lm"), role="detokenizer")

    def reads_schedule(x: torch.Tensor) -> torch.Tensor:
        return x * get_schedule().max_running_requests

    compiled = torch.compile(reads_schedule, fullgraph=True, backend="eager")
    traced = compiled(torch.ones(1)).item()
    assert not audit.exists()  # the refused-under-enforce read traced, unobserved
    assert traced == get_schedule().max_running_requests
    assert read_role_audit(audit) == {"detokenizer": {"schedule"}}  # the eager read
    torch._dynamo.reset()


def _graph_ops(fn: Callable[[torch.Tensor], torch.Tensor]) -> list[object]:
    """The ops dynamo captures for ``fn`` (fullgraph: one graph or an error)."""
    graphs: list[torch.fx.GraphModule] = []

    def capture(gm: torch.fx.GraphModule, _inputs: list[torch.Tensor]) -> Callable[..., object]:
        graphs.append(gm)
        return gm.forward

    torch.compile(fn, backend=capture, fullgraph=True)(torch.ones(2))
    assert len(graphs) == 1
    return [n.target for n in graphs[0].graph.nodes if n.op not in ("placeholder", "output")]


def test_leaf_reads_cost_nothing_inside_compiled_code(monkeypatch: pytest.MonkeyPatch) -> None:
    """The accessor calls and leaf loads run once, while tracing: the captured graph
    equals the one for the same function written with literals, role audit on or off."""
    publish(ServerArgs(model_path="tiny-lm", tp_size=2), role="scheduler")

    def with_reads(x: torch.Tensor) -> torch.Tensor:
        y = x * get_parallel().tp_size
        return y + 1 if get_exec().moe.moe_runner_backend == "torch" else y

    def with_literals(x: torch.Tensor) -> torch.Tensor:
        return x * 2 + 1

    assert get_exec().moe.moe_runner_backend == "torch"
    assert _graph_ops(with_reads) == _graph_ops(with_literals)
    monkeypatch.setenv(MODE_ENV, "enforce")
    publish(ServerArgs(model_path="tiny-lm", tp_size=2), role="scheduler")
    assert _graph_ops(with_reads) == _graph_ops(with_literals)
    torch._dynamo.reset()


def test_an_int_leaf_read_in_compiled_code_recompiles_per_value() -> None:
    """Why overriding a leaf read inside compiled code recompiles: dynamo bakes the
    value in and guards on it. Each distinct value is one graph (cached: a value seen
    before reuses its graph; the 9th distinct value hits the recompile limit of 8). A
    value that really varies per call is passed as an argument: dynamo makes it
    symbolic after the second value."""
    publish(ServerArgs(model_path="tiny-lm"), role="scheduler")
    counter = CompileCounter()
    compiled = torch.compile(
        lambda x: x * get_model().context_length, backend=counter, fullgraph=True
    )
    for value in (64, 32, 16, 64, 32):
        get_context().override("test", context_length=value)
        assert compiled(torch.ones(1)).item() == value
    assert counter.frame_count == 3
    as_argument = CompileCounter()
    passed = torch.compile(lambda x, n: x * n, backend=as_argument, fullgraph=True)
    for value in (64, 32, 16, 8):
        assert passed(torch.ones(1), value).item() == value
    assert as_argument.frame_count == 2
    torch._dynamo.reset()


def test_a_contextvar_forward_flag_does_not_trace() -> None:
    """An eager-only flag lives in a contextvar, which dynamo cannot trace: compiled
    code takes it (or the whole ``snapshot()``) as an argument."""

    def reads_contextvar(x: torch.Tensor) -> torch.Tensor:
        return x + 1 if get_forward().enable_multi_stream else x

    with pytest.raises(torch._dynamo.exc.Unsupported, match="ContextVar"):
        torch.compile(reads_contextvar, backend="eager", fullgraph=True)(torch.ones(1))
    counter = CompileCounter()
    takes_snapshot = torch.compile(
        lambda x, flags: x + 1 if flags.enable_multi_stream else x, backend=counter, fullgraph=True
    )
    for multi in (False, True, False, True):
        with get_forward().scoped(enable_multi_stream=multi):
            out = takes_snapshot(torch.ones(1), get_forward().snapshot())
        assert out.item() == (2.0 if multi else 1.0)
    assert counter.frame_count == 2  # one graph per flag value, then cache hits
    torch._dynamo.reset()


def test_the_example_model_forward_compiles_whole() -> None:
    """TinyLM's forward reads a bag leaf (kv_cache_dtype), parallel leaves (tp_size)
    and a graph-visible per-forward flag (get_forward().is_extend_in_batch): compiled
    with fullgraph=True it matches eager, and recompiles exactly where documented."""
    from examples.serving_app.model_runner import ModelRunner

    torch._dynamo.reset()
    counters.clear()
    sa = ServerArgs(model_path="tiny-lm", enable_torch_compile=True)
    publish(sa, role="scheduler")
    model = get_model()
    runner = ModelRunner(
        sa,
        model_path=model.model_path,
        context_length=model.context_length,
        attention_backend="sdpa",
        load_format=model.load_format,
    )
    eager = runner.model._orig_mod  # type: ignore[union-attr]

    def graphs() -> int:
        return counters["stats"]["unique_graphs"]

    def check(ids: list[int], rows: int) -> torch.Tensor:
        out = runner.logits(ids)
        with torch.inference_mode():
            ref = eager(torch.tensor(ids))
        assert out.shape == (rows, 260)
        assert torch.allclose(out, ref.float().masked_fill(~runner.allowed, float("-inf")))
        return out

    decode = check([256, 72, 105], 1)
    check([256, 72, 105, 33, 33], 1)  # another length: the same (dynamic) graph
    assert graphs() == 1
    with get_forward().scoped(is_extend_in_batch=True):
        check([256, 72, 105], 3)  # the flag read in the graph: a second graph
    check([256, 72], 1)
    assert graphs() == 2
    get_context().override("test", kv_cache_dtype="fp8_e4m3")
    assert not torch.equal(check([256, 72, 105], 1), decode)  # K/V through 8 bits
    assert graphs() == 3
    get_context().override("test", kv_cache_dtype="float32")
    assert torch.equal(check([256, 72, 105], 1), decode)
    assert graphs() == 3  # a value seen before: its cached graph
    assert sum(counters["graph_break"].values()) == 0
    torch._dynamo.reset()
