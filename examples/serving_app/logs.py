"""Logging from the observability bag (read after the process published)."""

from __future__ import annotations

import logging

from ctxrt.context import get_observability


def configure_logging(process_name: str) -> None:
    logging.basicConfig(
        level=get_observability().log_level.upper(),
        format=f"[{process_name}] %(levelname)s %(name)s: %(message)s",
        force=True,
    )


def effective_log_level() -> str:
    """The root logger's level as the ``log_level`` leaf spells it."""
    return logging.getLevelName(logging.getLogger().getEffectiveLevel()).lower()
