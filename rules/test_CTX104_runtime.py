"""CTX104 declaration-writer, on the reference runtime: the declaration function
refuses a published record (a later declaration would be a silent no-op), a
value appended to the stash past it never reaches the published bags, and a
pass that assigns its view raises where returning the dict declares it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ctxrt.context import get_context, get_schedule, publish, reset_context
from ctxrt.errors import DeclarationError, SealedError
from ctxrt.record import ServerArgs
from ctxrt.resolution import (
    STASH_SLOT,
    Declaration,
    declare_resolution,
    resolution_result,
    run_post_process_pass,
)


@pytest.fixture(autouse=True)
def _fresh_context() -> Iterator[None]:
    reset_context()
    yield
    reset_context()


def test_a_declaration_after_publish_is_refused() -> None:
    record = ServerArgs(model_path="tiny-lm")
    publish(record, role="scheduler")
    with pytest.raises(DeclarationError, match="already published"):
        declare_resolution(record, "late", chunked_prefill_size=64)


def test_a_stash_write_past_the_declaration_function_never_reaches_the_bags() -> None:
    record = ServerArgs(model_path="tiny-lm")
    publish(record, role="scheduler")
    published = get_schedule().chunked_prefill_size
    record.__dict__[STASH_SLOT].append(Declaration("late", {"chunked_prefill_size": 64}))
    assert resolution_result(record, "chunked_prefill_size") == 64  # the stash says so...
    assert get_schedule().chunked_prefill_size == published != 64  # ...the bags never hear
    get_context().override("test", chunked_prefill_size=64)  # the door after publish
    assert get_schedule().chunked_prefill_size == 64


def test_a_pass_returns_its_declaration_and_cannot_assign_its_view() -> None:
    record = ServerArgs(model_path="tiny-lm")

    def assigning(cfg: object) -> dict[str, object]:
        cfg.chunked_prefill_size = 64  # type: ignore[attr-defined]
        return {}

    with pytest.raises(SealedError):
        run_post_process_pass(record, "assigning", assigning)
    run_post_process_pass(record, "returning", lambda cfg: {"chunked_prefill_size": 64})
    assert resolution_result(record, "chunked_prefill_size") == 64
