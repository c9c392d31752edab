"""CTX103 resolution-view, on the reference runtime: resolution writes nothing
onto the record, so mid-resolution a field read answers with the operator's raw
input while the live view answers what the pipeline decided; and no bag exists
before publish, so a bag read inside the pipeline fails closed."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ctxrt import resolution
from ctxrt.context import get_exec, reset_context
from ctxrt.errors import ConfigNotPublishedError
from ctxrt.record import ServerArgs
from ctxrt.resolution import declare_resolution, resolved_view, resolving_view


@pytest.fixture(autouse=True)
def _fresh_context() -> Iterator[None]:
    reset_context()
    yield
    reset_context()


def test_a_field_read_answers_the_raw_input_and_the_view_the_decision() -> None:
    record = ServerArgs(model_path="tiny-lm")
    assert record.attention_backend is None  # the operator's input, untouched
    assert resolving_view(record).attention_backend == "torch_native"  # the decision
    assert resolved_view(record).kv_cache_dtype == "float32"


def test_the_live_view_sees_a_later_declaration_the_snapshot_does_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: dict[str, object] = {}

    def handler(record: ServerArgs) -> None:
        live, snapshot = resolving_view(record), resolved_view(record)
        before = live.chunked_prefill_size  # the capacity default (or a model override)
        declare_resolution(record, "test", chunked_prefill_size=before + 64)
        seen.update(
            raw=record.chunked_prefill_size,
            live=live.chunked_prefill_size - before,
            snapshot=snapshot.chunked_prefill_size - before,
        )

    monkeypatch.setattr(resolution, "_resolve_lora", handler)  # the last slot
    ServerArgs(model_path="tiny-lm")
    assert seen == {"raw": None, "live": 64, "snapshot": 0}


def test_a_bag_read_inside_the_pipeline_fails_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(resolution, "_resolve_lora", lambda record: get_exec())
    with pytest.raises(ConfigNotPublishedError):
        ServerArgs(model_path="tiny-lm")


def test_a_foreign_resolver_reads_the_view_and_its_assignments_are_declared() -> None:
    record = ServerArgs(model_path="tiny-lm")

    def plugin_defaults(args: object) -> str:  # an out-of-tree resolver: it assigns
        args.moe_runner_backend = f"{args.attention_backend}-moe"  # type: ignore[attr-defined]
        return "done"

    assert resolution.record_foreign_defaults(record, "plugin", plugin_defaults) == "done"
    assert resolving_view(record).moe_runner_backend == "torch_native-moe"  # read the decision
    assert record.moe_runner_backend == "auto"  # the record was never written
