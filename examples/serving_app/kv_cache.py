"""The KV cache of one runner: preallocated, one slot per running request, written
in place.

``k`` and ``v`` are [slots + 1, layers, max_len + 1, heads, head_dim], allocated
once.
A request holds one slot from admission to retirement; ``lens[slot]`` is how many
of its tokens have keys and values there (positions ``0 .. lens[slot] - 1``). A
forward writes the keys and values of the tokens it is fed at the next positions
of each row's slot and attends over the slot up to each token's own position, so
nothing already cached is copied or rebuilt. Rolling back a rejected draft is
``truncate``: the positions past the new length are stale and never read (a
later forward overwrites them). The extra position ``max_len`` and the extra slot
``slots`` are scratch: the padding of a right-padded batch (its columns, and the
dummy row a lone row gets) is written there, and no real token reads it."""

from __future__ import annotations

import torch


class SlotKVCache:
    def __init__(
        self,
        *,
        slots: int,
        layers: int,
        max_len: int,
        heads: int,
        head_dim: int,
        dtype: torch.dtype,
        device: torch.device,
    ) -> None:
        shape = (slots + 1, layers, max_len + 1, heads, head_dim)
        self.k = torch.zeros(shape, dtype=dtype, device=device)
        self.v = torch.zeros(shape, dtype=dtype, device=device)
        self.max_len = max_len
        self.lens = [0] * slots

    @property
    def scratch(self) -> int:
        """The position padding is written to (never read: no length reaches it)."""
        return self.max_len

    @property
    def scratch_slot(self) -> int:
        """The slot a dummy row runs in (no request holds it)."""
        return len(self.lens)

    def check_room(self, start: int, fed: int, slot: int) -> None:
        if start + fed > self.max_len:
            raise ValueError(
                f"slot {slot}: {fed} tokens from position {start} exceed its "
                f"{self.max_len} positions"
            )

    def truncate(self, slot: int, length: int) -> None:
        """Keep at most the first ``length`` cached tokens of ``slot``."""
        self.lens[slot] = min(self.lens[slot], length)

    def release(self, slot: int) -> None:
        """The slot's request left: its next owner starts from an empty slot."""
        self.lens[slot] = 0
