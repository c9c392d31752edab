"""The ``serving`` namespace: the front door."""

from __future__ import annotations

from ctxrt.fields.base import arg


class Serving:
    _NS_PATH = "serving"

    host: str = arg("127.0.0.1", help="Bind address.")
    port: int = arg(30000, help="Bind port.")
    skip_tokenizer_init: bool = arg(False, help="Requests carry token ids, responses too.")
