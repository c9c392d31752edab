"""The per-forward tier as SGLang compiles it: graph-visible flags are plain slots
that compiled code reads and writes with no graph break; the others stay in
contextvars, restored by token, so threads and asyncio tasks each see their own."""

from __future__ import annotations

import asyncio

import pytest
import torch
from rt_fixtures import fresh_context  # noqa: F401 - autouse: empty context per test
from torch._dynamo.testing import CompileCounter

from ctxrt.context import get_forward
from ctxrt.errors import ForwardScopeError
from ctxrt.forward import GRAPH_VISIBLE


def _layer(x: torch.Tensor) -> torch.Tensor:
    """Reads one graph-visible flag, scopes another around the MLP, sets a third."""
    fwd = get_forward()
    y = x + 1 if fwd.is_extend_in_batch else x
    with fwd.scoped(mlp_reduce_scatter=True):
        y = y * 2 if get_forward().mlp_reduce_scatter else y
    fwd.set("attn_tp_input_scattered", True)
    return y


def test_a_compiled_forward_reads_and_sets_graph_visible_flags_without_a_break() -> None:
    assert {"is_extend_in_batch", "mlp_reduce_scatter", "attn_tp_input_scattered"} <= GRAPH_VISIBLE
    explained = torch._dynamo.explain(_layer)(torch.ones(1))
    assert (explained.graph_count, explained.graph_break_count) == (1, 0)
    torch._dynamo.reset()
    get_forward().set("attn_tp_input_scattered", False)
    counter = CompileCounter()
    compiled = torch.compile(_layer, backend=counter, fullgraph=True)
    assert compiled(torch.ones(1)).item() == 2.0
    assert get_forward().attn_tp_input_scattered is True  # the traced write was replayed
    assert get_forward().mlp_reduce_scatter is False  # the traced scope restored
    with get_forward().scoped(is_extend_in_batch=True):
        assert compiled(torch.ones(1)).item() == 4.0  # the guard saw the flag move
    assert compiled(torch.ones(1)).item() == 2.0
    assert counter.frame_count == 2  # one graph per value, then cache hits
    torch._dynamo.reset()


def test_a_scope_closed_from_another_task_raises_instead_of_leaking() -> None:
    fwd = get_forward()
    scope = fwd.scoped(enable_multi_stream=True)

    async def opener() -> bool:
        scope.__enter__()
        return fwd.enable_multi_stream

    async def closer() -> bool:
        with pytest.raises(ForwardScopeError, match="closed in a thread or task other"):
            scope.__exit__(None, None, None)
        return fwd.enable_multi_stream

    async def main() -> tuple[bool, bool]:
        return await asyncio.create_task(opener()), await asyncio.create_task(closer())

    assert asyncio.run(main()) == (True, False)  # the closer's context was not written
    assert fwd.enable_multi_stream is False


def test_asyncio_tasks_each_see_their_own_scope() -> None:
    fwd = get_forward()

    async def request(buffer: str, seen: list[tuple[str, object]]) -> None:
        with fwd.scoped(moe_output_buffer=buffer, enable_multi_stream=buffer == "a"):
            await asyncio.sleep(0)  # the other task runs its scope in between
            seen.append((buffer, fwd.moe_output_buffer))
            await asyncio.sleep(0)
            seen.append((buffer, fwd.enable_multi_stream))
        seen.append((buffer, fwd.moe_output_buffer))

    async def main() -> list[tuple[str, object]]:
        seen: list[tuple[str, object]] = []
        await asyncio.gather(request("a", seen), request("b", seen))
        return seen

    seen = asyncio.run(main())
    assert sorted(seen, key=lambda p: (p[0], str(p[1]))) == [
        ("a", None),
        ("a", True),
        ("a", "a"),
        ("b", False),
        ("b", None),
        ("b", "b"),
    ]


def test_a_sticky_set_inside_a_scope_outlives_it_and_nesting_restores() -> None:
    fwd = get_forward()
    with fwd.scoped(enable_multi_stream=True):
        fwd.set("moe_output_buffer", "sticky")
        with fwd.scoped(enable_multi_stream=False, is_extend_in_batch=True):
            assert (fwd.enable_multi_stream, fwd.is_extend_in_batch) == (False, True)
        assert (fwd.enable_multi_stream, fwd.is_extend_in_batch) == (True, False)
    assert (fwd.enable_multi_stream, fwd.moe_output_buffer) == (False, "sticky")
    with pytest.raises(AttributeError, match="scoped"):
        fwd.is_extend_in_batch = True  # type: ignore[misc]
    with pytest.raises(AttributeError, match="unknown per-forward flags"):
        fwd.scoped(is_extend=True)
