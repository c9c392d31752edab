"""CTX105, CTX203, CTX204 and CTX603 on the reference runtime: what each rule
reports is what ctxrt refuses or answers at run time, only later.

- CTX105: `declare_resolution` refuses a name that is not a field, and a field
  not declared `resolvable=True`, at its call;
- CTX203: the record has no room for a public non-field slot (the write is
  refused), so bookkeeping goes through `_private` slots the runtime writes;
- CTX204: a removed copy-and-edit shape is an AttributeError when called;
- CTX603: `config_leaf("x")` answers exactly what the bag leaf answers, raises
  where the accessor raises (before publish), and raises on a name that is no leaf.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ctxrt.context import get_context, get_parallel, get_schedule, publish, reset_context
from ctxrt.errors import (
    ConfigNotPublishedError,
    DeclarationError,
    RecordMutationError,
    UnknownLeafError,
)
from ctxrt.record import ServerArgs
from ctxrt.resolution import declare_resolution, resolution_result


@pytest.fixture(autouse=True)
def _fresh_context() -> Iterator[None]:
    reset_context()
    yield
    reset_context()


def test_ctx105_declarations_outside_the_whitelist_are_refused_at_their_call() -> None:
    record = ServerArgs(model_path="dummy")
    with pytest.raises(DeclarationError, match="not record fields"):
        declare_resolution(record, "launcher", tp_sise=2)
    with pytest.raises(DeclarationError, match="not resolvable"):
        declare_resolution(record, "launcher", tp_size=2)  # a field, not resolvable
    declare_resolution(record, "launcher", nccl_port=29511)  # on the whitelist
    assert resolution_result(record, "nccl_port") == 29511


def test_ctx203_no_public_slot_can_be_added() -> None:
    record = ServerArgs(model_path="dummy")
    with pytest.raises(RecordMutationError):
        record.model_config = object()  # type: ignore[attr-defined]


def test_ctx204_a_removed_member_fails_only_when_called() -> None:
    record = ServerArgs(model_path="dummy")
    with pytest.raises(AttributeError):
        record.derive(tp_size=2)  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        record.override(tp_size=2)  # type: ignore[attr-defined]


def test_ctx603_a_literal_leaf_read_is_the_bag_leaf() -> None:
    record = ServerArgs(model_path="dummy", tp_size=2, max_running_requests=4)
    with pytest.raises(ConfigNotPublishedError):
        get_context().config_leaf("tp_size")
    with pytest.raises(ConfigNotPublishedError):
        get_parallel().tp_size  # noqa: B018 (the hint raises where the name-driven read does)
    publish(record, role="scheduler")
    ctx = get_context()
    assert ctx.config_leaf("tp_size") == get_parallel().tp_size == 2
    assert ctx.config_leaf("max_running_requests") == get_schedule().max_running_requests
    with pytest.raises(UnknownLeafError):
        ctx.config_leaf("tp_sise")
