"""CTX202 record-copy, on the reference runtime: a copy of a record is a new record
that resolves afresh from the raw fields, so the declarations made on the original
(here the launcher's ``nccl_port``) are gone, and ``assert_published`` in a
constructor handed the copy rejects it. ctxrt refuses the library spellings
(``dataclasses.replace``, ``copy.copy``); the hand-rolled one cannot be refused."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterator

import pytest

from ctxrt.context import assert_published, publish, reset_context
from ctxrt.errors import PublishAssertionError
from ctxrt.record import LAYOUT, ServerArgs
from ctxrt.resolution import declare_resolution, resolution_result


@pytest.fixture(autouse=True)
def _fresh_context() -> Iterator[None]:
    reset_context()
    yield
    reset_context()


def test_a_copy_drops_the_declarations_and_is_not_the_published_record() -> None:
    original = ServerArgs(model_path="dummy", max_running_requests=4)
    declare_resolution(original, "launcher", nccl_port=29511)
    publish(original, role="scheduler")

    # What dataclasses.replace does: every input field into a fresh constructor.
    fields = {name: getattr(original, name) for name in LAYOUT.input_fields}
    replica = ServerArgs(**{**fields, "max_running_requests": 8})

    assert resolution_result(original, "nccl_port") == 29511
    assert resolution_result(replica, "nccl_port") is None  # the declaration is gone
    assert_published(original, role="scheduler")
    with pytest.raises(PublishAssertionError, match="other than"):
        assert_published(replica, role="scheduler")  # a constructor handed the copy


def test_the_library_copy_spellings_are_refused() -> None:
    record = ServerArgs(model_path="dummy")
    with pytest.raises(TypeError, match="not copied"):
        dataclasses.replace(record, max_running_requests=8)
    with pytest.raises(TypeError, match="not copied"):
        copy.copy(record)
    with pytest.raises(TypeError, match="not copied"):
        copy.deepcopy(record)
