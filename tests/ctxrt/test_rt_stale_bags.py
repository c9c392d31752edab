"""A bag handle cannot go stale: held across the replacement of the config it was
projected from, it raises instead of answering with the old values; a handle of the
config that comes back (leaving an ``override_server_args`` scope) answers again."""

from __future__ import annotations

import pytest
from rt_fixtures import fresh_context  # noqa: F401 - autouse: empty context per test

from ctxrt.context import get_context, get_exec, get_parallel, publish, reset_context
from ctxrt.errors import StaleBagError
from ctxrt.record import ServerArgs


def test_a_handle_held_across_a_republish_raises() -> None:
    publish(ServerArgs(model_path="tiny-lm", tp_size=2), role="scheduler")
    exec_bag, moe, parallel = get_exec(), get_exec().moe, get_parallel()
    assert (moe.moe_runner_backend, parallel.tp_size) == ("torch", 2)
    publish(
        ServerArgs(model_path="tiny-lm", tp_size=4, moe_runner_backend="triton"), role="scheduler"
    )
    for read in (
        lambda: moe.moe_runner_backend,
        lambda: exec_bag.moe,
        lambda: exec_bag.override(enable_torch_compile=True),
        lambda: parallel.tp_size,
        lambda: getattr(moe, "moe_runner_backend", "default"),  # no silent default
    ):
        with pytest.raises(StaleBagError, match="retired"):
            read()
    assert "retired" in repr(moe)
    assert (get_exec().moe.moe_runner_backend, get_parallel().tp_size) == ("triton", 4)


def test_reset_retires_and_a_scope_revives_on_exit() -> None:
    publish(ServerArgs(model_path="tiny-lm"), role="scheduler")
    moe = get_exec().moe
    with get_context().override_server_args(moe_runner_backend="triton"):
        with pytest.raises(StaleBagError):
            _ = moe.moe_runner_backend
        inner = get_exec().moe
        assert inner.moe_runner_backend == "triton"
    assert moe.moe_runner_backend == "torch"  # the outer config is current again
    with pytest.raises(StaleBagError):
        _ = inner.moe_runner_backend
    reset_context()
    with pytest.raises(StaleBagError):
        _ = moe.moe_runner_backend


def test_a_held_handle_still_sees_overrides_within_its_publish() -> None:
    """Holding a bag inside one publish is the taught loop idiom: it stays live."""
    publish(ServerArgs(model_path="tiny-lm"), role="scheduler")
    moe = get_exec().moe
    get_context().override("test", moe_runner_backend="triton")
    assert moe.moe_runner_backend == "triton"
    with get_exec().moe.override(moe_runner_backend="flashinfer"):
        assert moe.moe_runner_backend == "flashinfer"
    assert moe.moe_runner_backend == "triton"


def test_a_scope_open_across_a_republish_still_closes() -> None:
    publish(ServerArgs(model_path="tiny-lm", tp_size=2), role="scheduler")
    with get_parallel().override(ep_size=2), get_exec().moe.override(moe_runner_backend="x"):
        publish(ServerArgs(model_path="tiny-lm", tp_size=4), role="scheduler")
    assert (get_parallel().tp_size, get_parallel().ep_size) == (4, 1)
    assert get_exec().moe.moe_runner_backend == "torch"  # the new config: untouched
