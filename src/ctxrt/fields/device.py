"""The ``device`` namespace: where the process computes."""

from __future__ import annotations

from ctxrt.fields.base import arg


class Device:
    _NS_PATH = "device"

    device: str = arg("auto", resolvable=True, help="'auto' picks cuda when present.")
    base_gpu_id: int = arg(0, help="First device index of this server.")
