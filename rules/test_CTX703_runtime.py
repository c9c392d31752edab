"""CTX703 flags-owner, on the reference runtime: a helper that assigns a flags leaf
outside the owning init passes its own test, then leaks its value into every later
reader of the process, and is silently undone by the next init; the group's
``override`` (what the rule accepts) restores on exit."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ctxrt.context import get_context, get_flags, publish, reset_context
from ctxrt.record import ServerArgs
from ctxrt.subsystems import get_moe_runner_backend, initialize_moe_config


@pytest.fixture(autouse=True)
def _scheduler() -> Iterator[None]:
    reset_context()
    publish(ServerArgs(model_path="dummy"), role="scheduler")
    get_context().override("test", moe_runner_backend="flashinfer")
    initialize_moe_config()
    yield
    reset_context()


def use_triton_for_draft() -> str:
    """The helper: 'just set it' for its own path (a write outside the owner)."""
    get_flags().moe.runner_backend = "triton"
    return get_moe_runner_backend()


def test_a_leaf_written_outside_the_owner_leaks_and_is_undone_by_the_next_init() -> None:
    assert use_triton_for_draft() == "triton"  # the helper's own test passes
    # ... and every later forward of the process runs the draft's backend
    assert get_moe_runner_backend() == "triton"
    # a sequential rebuild re-runs the owner: the helper's decision is gone, silently
    initialize_moe_config()
    assert get_moe_runner_backend() == "flashinfer"


def test_the_groups_override_restores_on_exit() -> None:
    with get_flags().moe.override(runner_backend="triton"):
        assert get_moe_runner_backend() == "triton"
    assert get_moe_runner_backend() == "flashinfer"
