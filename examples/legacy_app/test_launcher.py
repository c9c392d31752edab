"""The launcher's defaults, tested before the migration: the record is built and
the resolved values are read straight off it."""

from __future__ import annotations

from ctxrt.record import ServerArgs


def test_served_model_name_defaults_to_model_path() -> None:
    server_args = ServerArgs(model_path="tiny-lm")
    assert server_args.served_model_name == "tiny-lm"


def test_draft_model_loads_like_the_target() -> None:
    server_args = ServerArgs(
        model_path="tiny-lm",
        speculative_algorithm="standalone",
        speculative_draft_model_path="tiny-lm-draft",
    )
    assert server_args.speculative_draft_load_format == server_args.load_format
