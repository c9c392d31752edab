"""CTX701 resource-lease and CTX702 forward-state, on the reference runtime (real
torch, real threads).

CTX701: creating a stream or buffer is a driver call, so ctxrt refuses it while a
graph capture is in progress (its capture flag is the hook: CPU torch has no CUDA
graphs, so capture is emulated by setting the flag the graph runner sets, and the
stream is a real `torch.cpu.Stream`); a lease made at init is reused inside capture.
One name leased by two roles is one stream: the overlap each role expects is gone.

CTX702: per-forward flags are contextvars, so a thread started with
`threading.Thread(target=f)` or `executor.submit(f)` sees the defaults, not the
scope its caller set; `contextvars.copy_context().run` carries the scope."""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
import torch

from ctxrt.context import get_buffer, get_flags, get_forward, get_stream, reset_context
from ctxrt.errors import CaptureViolationError


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    reset_context()
    yield
    reset_context()


def test_a_lease_inside_capture_is_refused_and_one_made_at_init_is_reused() -> None:
    warm = get_stream("alt")  # init/warmup: the lease point
    assert isinstance(warm, (torch.cpu.Stream, torch.cuda.Stream))
    with get_flags().capture.override(capturing=True):
        assert get_stream("alt") is warm  # already leased: no driver call
        with pytest.raises(CaptureViolationError, match="stream 'late'"):
            get_stream("late")
        with pytest.raises(CaptureViolationError, match="buffer 'workspace'"):
            get_buffer("workspace", lambda: torch.zeros(4))
    assert get_buffer("workspace", lambda: torch.zeros(4)).shape == (4,)


def test_one_name_leased_by_two_roles_is_one_stream() -> None:
    model_alt = get_stream("alt")  # the model's alternate stream
    comm = get_stream("alt")  # a comm helper that borrowed the model's name
    assert comm is model_alt  # its work now queues behind the model's
    assert get_stream("dp_tbo_comm") is not model_alt  # its own role, its own stream


def _read_in(start: str) -> bool:
    seen: list[bool] = []

    def reader() -> None:
        seen.append(get_forward().enable_multi_stream)

    with get_forward().scoped(enable_multi_stream=True):
        assert get_forward().enable_multi_stream  # the caller sees its scope
        if start == "thread":
            t = threading.Thread(target=reader)
            t.start()
            t.join()
        elif start == "executor":
            with ThreadPoolExecutor(1) as ex:
                ex.submit(reader).result()
        else:
            t = threading.Thread(target=contextvars.copy_context().run, args=(reader,))
            t.start()
            t.join()
    return seen[0]


def test_a_thread_sees_the_default_forward_flags() -> None:
    assert _read_in("thread") is False
    assert _read_in("executor") is False


def test_a_thread_started_in_the_callers_context_sees_its_scope() -> None:
    assert _read_in("copied") is True
    assert get_forward().enable_multi_stream is False  # and the scope restored on exit
