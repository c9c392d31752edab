"""CPython's verdict of an edited text from its changed piece alone
(core.pysource._spliced, docs/server.md "h37w"): on random edits of a module
that holds every kind of top-level cut, the verdict and its message equal a
whole compile's, and every cut kept for the next edit is one."""

from __future__ import annotations

import dataclasses
import random

import pytest

from ctxlint.core import pysource

BASE = '''"""The module's docstring."""
from __future__ import annotations

import os  # a comment

X = 1; Y = 2
Z = (1,
     2)
S = """a
multi-line string"""
T = 1 + \\
    2


@decorator
@other(1)
def f(a, b=2):
    # a comment inside
    if a:
        return b
    else:
        return a


class C:
    x: int = 1

    def m(self):
        nonlocal_free = 1
        return nonlocal_free
# a comment at column 0

if os.name == "nt":
    W = 1
elif os.name == "posix":
    W = 2
else:
    W = 3
try:
    import json
except ImportError:
    json = None
finally:
    pass
async def g():
    await h()
    async for x in y:
        yield x
'''

# Lines an edit puts in: valid pieces, pieces the parser refuses, and pieces
# the compiler (not the parser) would refuse, which the verdict accepts.
SNIPPETS = [
    "V = 3",
    "def k():",
    "    return 1",
    "        pass",
    "return 1",
    "nonlocal x",
    "await x",
    "yield",
    "from __future__ import annotations",
    "from __future__ import barry_as_FLUFL",
    "1 <> 2",
    "else:",
    "elif a:",
    "except ValueError:",
    "@decorator",
    "x = (",
    ")",
    '"""',
    "T = 1 + \\",
    "# a comment \\",
    "",
    "# a comment",
    "    # an indented comment",
    "A = 1; B = 2",
    "class D: pass",
    "def f(:",
    "match x:",
    "    case 1: pass",
    "lambda: (yield)",
    "x := 1",
    "print(*a, **k)",
    "f(**k, *a)",
    "del f()",
    "\x00",
    "\tx = 1",
    "x = 1\r",
]

PLAIN = ["V = 3", "", "# a comment", "A = 1; B = 2", "class D: pass", "print(*a, **k)"]


def verdict(text: str, target: str = "py310") -> str | None:
    try:
        pysource.check(text, target)
    except pysource.SourceError as exc:
        return str(exc)
    return None


def whole(text: str, target: str = "py310") -> str | None:
    pysource._ACCEPTED.clear()
    return verdict(text, target)


def edit(rng: random.Random, text: str) -> str:
    lines = text.split("\n")
    at = rng.randrange(len(lines))
    gone = rng.choice([0, 0, 1, 1, 2, 3])
    pool = PLAIN if rng.random() < 0.6 else SNIPPETS
    put = [rng.choice(pool) for _ in range(rng.choice([0, 1, 1, 2, 3]))]
    return "\n".join([*lines[:at], *put, *lines[at + gone :]])


def cut_holds(text: str, cut: int) -> bool:
    lines = text.split("\n")
    head = "".join(line + "\n" for line in lines[:cut])
    return whole(head) is None and whole("\n".join(lines[cut:])) is None


@pytest.mark.parametrize("seed", range(6))
def test_a_spliced_verdict_is_the_whole_texts(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    assert whole(BASE) is None
    rng = random.Random(seed)
    wholes = 0
    real_accept = pysource._accept

    def counted(text: str, target: str) -> list[int]:
        nonlocal wholes
        wholes += 1
        return real_accept(text, target)

    base = _state()
    text, state, spliced, refused = BASE, base, 0, 0
    for _ in range(200):
        new = edit(rng, text)
        if new == text:
            continue
        pysource._ACCEPTED[:] = [_state(state)]
        before = wholes
        monkeypatch.setattr(pysource, "_accept", counted)
        got = verdict(new)
        monkeypatch.setattr(pysource, "_accept", real_accept)
        by_piece = wholes == before
        after = _state() if got is None else None
        expected = whole(new)
        assert got == expected, (text, new)
        if after is None:
            refused += 1
            continue
        spliced += by_piece
        if by_piece:  # the cuts kept for the next edit are cuts
            for cut in rng.sample(after.cuts, min(3, len(after.cuts))):
                assert cut_holds(new, cut), (new, cut)
        text, state = (new, after) if rng.random() < 0.7 else (BASE, base)
    # both sides were asked: edits the piece answered, and refused ones
    assert spliced > 30 and refused > 20, (spliced, refused)


def _state(of: pysource._Accepted | None = None) -> pysource._Accepted:
    """A copy of `of` (else of the state the last check left)."""
    got = of or pysource._ACCEPTED[0]
    return dataclasses.replace(got, cuts=list(got.cuts))


def test_an_edit_inside_one_function_compiles_only_that_function(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert whole(BASE) is None
    asked: list[str] = []
    real = pysource._parse
    monkeypatch.setattr(pysource, "_parse", lambda t, g: asked.append(t) or real(t, g))
    assert verdict(BASE.replace("        return b\n", "        return b + 1\n")) is None
    assert len(asked) == 1 and asked[0].startswith("@decorator\n") and "class C" not in asked[0]
    asked.clear()
    assert verdict(BASE.replace("    x: int = 1\n", "    x: int = (\n")) is not None
    assert len(asked) == 2  # the piece refused: the whole text says where
