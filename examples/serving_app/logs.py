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
