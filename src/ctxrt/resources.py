"""Process-level handles (``get_resources()``): named side streams, named persistent
buffers, and free slots for manager-style singletons. Lazy, and dropped by
``reset_context()``.

Creating a stream or buffer is a driver call, so it is refused while a graph capture
is in progress; lease streams and buffers at init/warmup time."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ctxrt.errors import CaptureViolationError
from ctxrt.flags import Flags


def new_stream() -> Any:
    """A real side stream: CUDA where CUDA exists, the CPU stand-in otherwise."""
    import torch

    if torch.cuda.is_available():
        return torch.cuda.Stream()
    return torch.cpu.Stream()


class Resources:
    def __init__(self, flags: Flags) -> None:
        self._flags = flags  # consulted per creation: capture state changes at runtime
        self.streams: dict[str, Any] = {}
        self.buffers: dict[str, Any] = {}
        self.slots: dict[str, Any] = {}

    def _refuse_during_capture(self, what: str) -> None:
        if self._flags.capture.capturing:
            raise CaptureViolationError(
                f"creating {what} during graph capture; lease it at init/warmup time"
            )

    def stream(self, name: str) -> Any:
        """Get-or-create the stream leased to subsystem role ``name`` ('alt',
        'offload', 'dp_tbo_comm', 'lora_side', ...)."""
        stream = self.streams.get(name)
        if stream is None:
            self._refuse_during_capture(f"stream {name!r}")
            stream = self.streams[name] = new_stream()
        return stream

    def set_stream(self, name: str, stream: Any) -> None:
        self.streams[name] = stream

    def buffer(self, name: str, factory: Callable[[], Any]) -> Any:
        """Get-or-create a named persistent buffer; ``factory`` runs at most once."""
        buffer = self.buffers.get(name)
        if buffer is None:
            self._refuse_during_capture(f"buffer {name!r}")
            buffer = self.buffers[name] = factory()
        return buffer
