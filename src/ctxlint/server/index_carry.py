"""What the server carries from one check's navigation index to the next's
(program.config_index.Carry), read off where its resident check ended
(session.Resident): each file's facts entry digest, and the digests of each
entry's parts without their positions (the rounds', engine.rounds).

A statement edit replays the rules that ask the call graph and the resolution
model, their outcomes moved (engine.check_memo), so the new program has built
neither, and the index asks the resolution model's declaration function and
returning functions, the call graph's functions and the record convention:
seconds on sglang 0.5.23. Those answer names, not places, from the facts of
the parts the resolution model is built from (`MODEL_PARTS`); while every
file's digests of those parts, positions left out, are as they were (with the
file list, the modules, the vocabulary and the config), the last index's
answer is the program's, and only the edited files' sites are built again.
"""

from __future__ import annotations

import hashlib

from ctxlint.engine.check_memo import built_from
from ctxlint.engine.part_digests import ERROR
from ctxlint.engine.rounds import file_share
from ctxlint.program.config_index import Carry, vocabulary_key
from ctxlint.program.core import Program
from ctxlint.program.resolution import KEY as RESOLUTION
from ctxlint.session import Resident

# the facts keys the resolution model is built from (the call graph's, theirs),
# as the check memo derives a rule's reads; a file's error too
MODEL_PARTS = (ERROR, *sorted(built_from({RESOLUTION})))
# their Program.memo keys
DIGESTS = "config index carry: digests"
KEY = "config index carry: key"


def carry(resident: Resident) -> Carry:
    """A carry for the programs of `resident`'s checks (the last one's only:
    an older program's entries are not the resident's, and nothing is carried).
    Each answer is worked out once per program (Program.memo)."""
    # (path, module, entry digest) -> that file's share of the key, made once
    # per entry as the rounds make theirs (engine.rounds)
    shares: dict[tuple[str, str, bytes], bytes] = {}

    def digests(program: Program) -> dict[str, bytes] | None:
        return program.memo(DIGESTS, lambda: _digests(program))

    def _digests(program: Program) -> dict[str, bytes] | None:
        decoded = resident.decoded
        out: dict[str, bytes] = {}
        for path, entry in program.files.items():
            got = decoded.get(path)
            if got is None or got[1] is not entry:
                return None
            out[path] = got[0]
        return out

    def key(program: Program) -> str | None:
        return program.memo(KEY, lambda: _key(program))

    # the last key made, and what it was made of: its head (the vocabulary,
    # the config, the file list), each file's (module, entry digest) and share
    last: list[tuple[str, dict[str, tuple[str, bytes]], dict[str, bytes], str]] = []

    def _key(program: Program) -> str | None:
        found = digests(program)
        memo = resident.checks
        if found is None or memo is None:
            return None
        parts = memo.rounds.parts  # entry digest (hex) -> its part digests
        head = f"{vocabulary_key(program)}\0{program.config!r}\0" + "\0".join(program.paths)
        files = program.files
        entries = {path: (files[path]["module"], digest) for path, digest in found.items()}

        def share_of(path: str) -> bytes | None:
            module, digest = entries[path]
            held = parts.get(digest.hex())
            return None if held is None else file_share(path, module, held, MODEL_PARTS)

        if last and last[0][0] == head and last[0][1].keys() == entries.keys():
            # only the files whose entries changed are asked; while each one's
            # share is as it was, so is the key (it is made of the shares)
            was, had, key = last[0][1], last[0][2], last[0][3]
            changed = [p for p, e in entries.items() if was[p] != e]
            now = {p: share_of(p) for p in changed}
            if all(now[p] == had[p] for p in changed):
                last[0] = (head, entries, had, key)
                return key
        h = hashlib.blake2b(digest_size=16)
        h.update(head.encode("utf-8", "surrogateescape"))
        made: dict[str, bytes] = {}
        for path in sorted(entries):
            share = shares.get((path, *entries[path]))
            if share is None:
                share = share_of(path)
                if share is None:
                    return None
            made[path] = share
            h.update(share)
        shares.clear()  # (those of entries gone since go)
        shares.update({(p, *entries[p]): made[p] for p in made})
        last[:] = [(head, entries, made, h.hexdigest())]
        return last[0][3]

    return Carry(digests, key)
