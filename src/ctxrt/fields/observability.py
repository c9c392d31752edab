"""The ``observability`` namespace: logging and metrics."""

from __future__ import annotations

from ctxrt.fields.base import arg


class Observability:
    _NS_PATH = "observability"

    log_level: str = arg("info", help="Root log level.")
    enable_metrics: bool = arg(False, help="Export counters.")
