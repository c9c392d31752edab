"""Field-declaration helpers shared by the namespace classes.

``arg`` declares an input field of the record (a dataclass field whose metadata says
whether resolution may decide it); ``Derived`` declares a bag-only leaf that
``publish`` computes from the resolved leaves and stores as an ordinary attribute.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

_NO_DEFAULT: Any = dataclasses.MISSING


def arg(
    default: Any = _NO_DEFAULT,
    *,
    resolvable: bool = False,
    help: str = "",
) -> Any:
    """An input field. ``resolvable=True`` puts it on the declaration whitelist."""
    metadata = {"resolvable": resolvable, "help": help}
    if isinstance(default, list | dict | set):
        snapshot = default
        return dataclasses.field(
            default_factory=lambda: type(snapshot)(snapshot), metadata=metadata
        )
    return dataclasses.field(default=default, metadata=metadata)


@dataclasses.dataclass(frozen=True)
class Derived:
    """A leaf computed once at publish from the resolved leaves (``fn(cfg)``, where
    ``cfg`` exposes every resolved input leaf as an attribute). It lives in the bag of
    the class that declares it, not in the namespaces ``fn`` happens to read."""

    fn: Callable[[Any], Any]
    help: str = ""
