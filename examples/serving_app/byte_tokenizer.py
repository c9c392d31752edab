"""A byte-level tokenizer: ids 0-255 are bytes, then the special tokens."""

from __future__ import annotations

BOS_ID = 256
EOS_ID = 257
VOCAB_SIZE = 260
PRINTABLE_IDS = range(32, 127)  # the sampler keeps output to printable ASCII


def encode(text: str) -> list[int]:
    return [BOS_ID, *text.encode("utf-8")]


def decode(ids: list[int]) -> str:
    return bytes(i for i in ids if i < 256).decode("utf-8", errors="replace")
