"""CTX101 seed-read, on the reference runtime: a field read off the seed misses a
post-publish override that the namespace bag follows."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ctxrt.context import get_context, get_exec, get_server_args, publish, reset_context
from ctxrt.record import ServerArgs


@pytest.fixture(autouse=True)
def _fresh_context() -> Iterator[None]:
    reset_context()
    yield
    reset_context()


def test_seed_read_misses_an_override_the_bag_follows() -> None:
    publish(ServerArgs(model_path="tiny-lm", attention_backend="torch_native"), role="scheduler")
    get_context().override("test", attention_backend="sdpa")

    assert get_exec().kernel.attention_backend == "sdpa"  # the decision in force
    assert get_server_args().attention_backend == "torch_native"  # stale: what was typed


def test_seed_read_misses_what_resolution_decided() -> None:
    publish(ServerArgs(model_path="tiny-lm"), role="scheduler")

    assert get_exec().kernel.attention_backend is not None  # resolution picked one
    assert get_server_args().attention_backend is None  # the raw input never learns it
