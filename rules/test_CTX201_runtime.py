"""CTX201 record-mutation, on the reference runtime: the strict mutation guard makes
a field assignment after resolution raise; the spellings that bypass ``__setattr__``
do not raise, and silently desync the record from the bags, which is why the rule
finds writes statically rather than trusting the guard alone."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ctxrt.context import get_parallel, publish, reset_context
from ctxrt.errors import RecordMutationError
from ctxrt.record import ServerArgs


@pytest.fixture(autouse=True)
def _fresh_context() -> Iterator[None]:
    reset_context()
    yield
    reset_context()


def test_a_field_write_after_resolution_raises() -> None:
    server_args = ServerArgs(model_path="dummy", tp_size=2)
    with pytest.raises(RecordMutationError, match=r"get_context\(\)\.override"):
        server_args.tp_size = 4
    with pytest.raises(RecordMutationError):
        setattr(server_args, "tp_size", 4)  # noqa: B010 - the dynamic spelling
    assert server_args.tp_size == 2


def test_a_write_around_the_guard_desyncs_record_and_bags() -> None:
    server_args = ServerArgs(model_path="dummy", tp_size=2)
    publish(server_args, role="scheduler")
    object.__setattr__(server_args, "tp_size", 4)  # no error at run time ...
    assert server_args.tp_size == 4
    assert get_parallel().tp_size == 2  # ... and the bag never hears of it
