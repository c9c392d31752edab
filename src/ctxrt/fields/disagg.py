"""The ``disagg`` namespace: prefill/decode disaggregation."""

from __future__ import annotations

from ctxrt.fields.base import arg


class Disagg:
    _NS_PATH = "disagg"

    disaggregation_mode: str = arg("null", help="'null', 'prefill' or 'decode'.")
    disaggregation_transfer_backend: str = arg("mooncake", help="KV transfer engine.")
