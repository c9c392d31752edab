"""CTX102 supplied-exposure, on the reference runtime: a field read off a
ServerArgs the code was handed answers with the operator's raw input, so it
misses what resolution decided and a post-publish override, which the bag
follows (and which `ctxlint fix --unsafe` switches the read to)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ctxrt.context import get_context, get_exec, publish, reset_context
from ctxrt.record import ServerArgs


@pytest.fixture(autouse=True)
def _fresh_context() -> Iterator[None]:
    reset_context()
    yield
    reset_context()


class Runner:
    """Business code handed the record (the exposure CTX102 reports)."""

    def __init__(self, server_args: ServerArgs) -> None:
        self.server_args = server_args

    def backend(self) -> str | None:
        return self.server_args.attention_backend  # what CTX102 reports


def test_a_handed_record_misses_what_resolution_decided() -> None:
    args = ServerArgs(model_path="tiny-lm")
    publish(args, role="scheduler")
    runner = Runner(args)

    assert get_exec().kernel.attention_backend is not None  # resolution picked one
    assert runner.backend() is None  # the handed instance never learns it


def test_a_handed_record_misses_an_override_the_bag_follows() -> None:
    args = ServerArgs(model_path="tiny-lm", attention_backend="torch_native")
    publish(args, role="scheduler")
    runner = Runner(args)
    get_context().override("test", attention_backend="sdpa")

    assert get_exec().kernel.attention_backend == "sdpa"  # the decision in force
    assert runner.backend() == "torch_native"  # stale: what was typed
