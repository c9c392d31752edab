"""Post-startup config changes, applied in each process that reads them.

Bags do not cross a process boundary: an ``override`` recorded in the tokenizer
changes the tokenizer's bag only. A change therefore travels down the pipeline
(tokenizer -> scheduler -> detokenizer) and each process records it in its own
context; a leaf whose effect was materialised at startup (the logger's level) is
re-applied. The readback reports what is effective in the process that answers."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from ctxrt.context import get_context
from examples.serving_app.logs import configure_logging, effective_log_level

logger = logging.getLogger(__name__)

# Leaves materialised outside the bag at startup: re-applied on change, and read
# back from where they take effect rather than from the bag.
REAPPLY: dict[str, Callable[[], None]] = {
    "log_level": lambda: configure_logging(get_context().role or "?"),
}
EFFECTIVE: dict[str, Callable[[], Any]] = {"log_level": effective_log_level}


def apply_config_update(source: str, fields: dict[str, Any]) -> None:
    """Record ``fields`` in this process's context and re-apply what needs it."""
    get_context().override(source, **fields)
    for name in sorted(fields.keys() & REAPPLY.keys()):
        REAPPLY[name]()
    logger.debug("applied %s from %s", sorted(fields), source)


def effective_value(name: str) -> Any:
    """What ``name`` is in force in this process: where it takes effect, else the bag."""
    reader = EFFECTIVE.get(name)
    return reader() if reader is not None else get_context().config_leaf(name)
