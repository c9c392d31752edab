"""Bag and parallel leaves are plain attributes: a compiled forward reads them with
no graph break (fullgraph=True fails on one), and dynamo's guards follow overrides.
Role auditing does not see reads inside traced code (audit with compilation off)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from rt_fixtures import fresh_context  # noqa: F401 - autouse: empty context per test

from ctxrt.context import get_context, get_exec, get_memory, get_model, get_parallel, publish
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
