"""The non-config tiers: runtime flags, resources, per-forward state."""

from __future__ import annotations

import threading

import pytest
import torch
from rt_fixtures import fresh_context  # noqa: F401 - autouse: empty context per test

from ctxrt.context import (
    get_buffer,
    get_context,
    get_flags,
    get_forward,
    get_resources,
    get_stream,
    publish,
    reset_context,
    set_stream,
)
from ctxrt.errors import CaptureViolationError
from ctxrt.record import ServerArgs
from ctxrt.subsystems import (
    get_moe_runner_backend,
    initialize_dp_attention,
    initialize_moe_config,
    is_dp_attention_enabled,
)

# ---------------------------------------------------------------------- flags


def test_flag_writes_are_typo_and_type_safe() -> None:
    moe = get_flags().moe
    with pytest.raises(AttributeError, match="typo"):
        moe.runner_bakend = "triton"  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        moe.initialized = "yes"  # type: ignore[assignment]
    with pytest.raises(TypeError):
        get_flags().dp.attn_dp_rank = True  # a bool is not a rank
    moe.runner_backend = "triton"
    assert get_moe_runner_backend() == "triton"


def test_flag_override_is_transactional_and_restores_on_exception() -> None:
    dp = get_flags().dp
    with pytest.raises(AttributeError):
        dp.override(enabled=True, attn_dp_rnak=4)
    assert dp.enabled is False  # the good name was not written either
    with pytest.raises(RuntimeError, match="inside"), dp.override(enabled=True, attn_dp_rank=4):
        assert is_dp_attention_enabled() and dp.attn_dp_rank == 4
        raise RuntimeError("inside")
    assert (dp.enabled, dp.attn_dp_rank) == (False, 0)


def test_flags_are_materialised_from_the_bags_at_subsystem_init() -> None:
    assert get_flags().moe.initialized is False and get_moe_runner_backend() == "auto"
    publish(
        ServerArgs(
            model_path="dummy",
            tp_size=4,
            dp_size=2,
            ep_size=2,
            enable_dp_attention=True,
            moe_a2a_backend="deepep",
            speculative_algorithm="ngram",
        ),
        role="scheduler",
    )
    get_context().override("test", moe_runner_backend="flashinfer")
    initialize_moe_config()
    initialize_dp_attention(attn_dp_rank=1)
    moe, dp = get_flags().moe, get_flags().dp
    assert (moe.runner_backend, moe.a2a_backend) == ("flashinfer", "deepep")
    assert moe.shared_experts_fusion_disabled and moe.initialized
    assert (dp.enabled, dp.attn_dp_rank) == (True, 1)
    assert not hasattr(dp, "attn_tp_size")  # the widths' one spelling is get_parallel()


# ------------------------------------------------------------------ resources


def test_streams_are_leased_by_name_and_real_torch_objects() -> None:
    alt = get_stream("alt")
    expected = torch.cuda.Stream if torch.cuda.is_available() else torch.cpu.Stream
    assert isinstance(alt, expected)
    assert get_stream("alt") is alt and get_stream("offload") is not alt
    mine = expected()
    set_stream("lora_side", mine)
    assert get_stream("lora_side") is mine
    reset_context()
    assert get_stream("alt") is not alt  # resources are dropped with the context


def test_buffers_are_created_once_by_their_factory() -> None:
    calls: list[int] = []

    def factory() -> torch.Tensor:
        calls.append(1)
        return torch.zeros(4)

    buf = get_buffer("workspace", factory)
    assert get_buffer("workspace", factory) is buf and len(calls) == 1
    assert get_resources().buffers["workspace"] is buf


def test_creating_a_stream_or_buffer_during_capture_raises() -> None:
    warm = get_stream("alt")
    with get_flags().capture.override(capturing=True):
        assert get_stream("alt") is warm  # a lookup is no driver call
        with pytest.raises(CaptureViolationError, match="'dp_tbo_comm'"):
            get_stream("dp_tbo_comm")
        with pytest.raises(CaptureViolationError):
            get_buffer("moe_out", lambda: torch.empty(8))
    assert "dp_tbo_comm" not in get_resources().streams
    assert get_buffer("moe_out", lambda: torch.empty(8)).shape == (8,)


# ---------------------------------------------------------------- per-forward


def test_scoped_forward_flags_restore_on_exit_and_exception() -> None:
    fwd = get_forward()
    assert fwd.enable_multi_stream is False
    with fwd.scoped(enable_multi_stream=True, is_extend_in_batch=True):
        assert fwd.enable_multi_stream and fwd.is_extend_in_batch
    assert not fwd.enable_multi_stream and not fwd.is_extend_in_batch
    with pytest.raises(ValueError), fwd.scoped(attn_tp_input_scattered=True):
        raise ValueError
    assert fwd.attn_tp_input_scattered is False
    with pytest.raises(AttributeError):
        fwd.scoped(enable_multistream=True)
    fwd.set("is_extend_in_batch", True)  # the legacy sticky setter
    assert fwd.is_extend_in_batch is True


def test_per_forward_state_is_isolated_per_thread() -> None:
    fwd = get_forward()
    seen: dict[str, object] = {}
    in_scope, release = threading.Event(), threading.Event()

    def worker() -> None:
        seen["at_start"] = fwd.enable_multi_stream
        with fwd.scoped(moe_output_buffer="worker-buffer"):
            in_scope.set()
            release.wait(5)
        seen["after"] = fwd.moe_output_buffer

    with fwd.scoped(enable_multi_stream=True):
        thread = threading.Thread(target=worker)
        thread.start()
        assert in_scope.wait(5)
        assert fwd.moe_output_buffer is None  # the worker's scope does not leak here
        release.set()
        thread.join(5)
        assert fwd.enable_multi_stream is True
    assert seen == {"at_start": False, "after": None}  # the new thread saw defaults


def test_graph_visible_flags_are_process_wide() -> None:
    """The plain-slot flags are one value per process (their readers run on the
    forward's thread): a thread sees the value set before it started."""
    fwd = get_forward()
    seen: list[object] = []
    with fwd.scoped(is_extend_in_batch=True):
        thread = threading.Thread(target=lambda: seen.append(fwd.is_extend_in_batch))
        thread.start()
        thread.join(5)
    assert seen == [True] and fwd.is_extend_in_batch is False
