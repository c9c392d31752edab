"""One transactional scope primitive shared by every ``override(**kw)`` in the runtime:
validate first, write all, restore on exit and on exception (in reverse order)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Any


class ScopedAssign:
    """Context manager applying ``values`` through ``write(name, value)``.

    ``read`` captures the previous values on entry; they are written back on exit.
    Validation is the caller's job and happens before this object exists, so a bad
    name never leaves a half-applied scope behind. ``stamp(name)``, when given, marks
    writes that must outlive the scope (a logged ``override`` made inside it): a leaf
    whose stamp moved while the scope was open keeps that write on exit."""

    __slots__ = ("_read", "_saved", "_stamp", "_stamps", "_values", "_write")

    def __init__(
        self,
        values: Mapping[str, Any],
        read: Callable[[str], Any],
        write: Callable[[str, Any], None],
        stamp: Callable[[str], Any] | None = None,
    ) -> None:
        self._values = dict(values)
        self._read = read
        self._write = write
        self._stamp = stamp
        self._stamps: dict[str, Any] = {}
        self._saved: list[tuple[str, Any]] | None = None

    def __enter__(self) -> ScopedAssign:
        if self._saved is not None:
            raise RuntimeError("a scoped override is entered once")
        self._saved = [(name, self._read(name)) for name in self._values]
        for name, value in self._values.items():
            self._write(name, value)
        if self._stamp is not None:
            self._stamps = {name: self._stamp(name) for name in self._values}
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._saved is not None
        for name, value in reversed(self._saved):
            if self._stamp is None or self._stamp(name) == self._stamps[name]:
                self._write(name, value)
