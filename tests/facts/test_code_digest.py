"""The code digest (facts.code_digest): edits it does not see never change a
file's facts.

A comment edit the digest leaves out lets a run take the earlier content's
facts unparsed (engine.code_alias), so the guarantee is checked where it
matters: every Python file of this repository's checked trees (and, slow, a
sample of the sglang wheel) is edited in each way the digest ignores, and its
LibCST facts must come out byte for byte the same.
"""

from __future__ import annotations

import io
import json
import random
import re
import tokenize
from pathlib import Path

import pytest
from conftest import REPO
from helpers import project_config

from ctxlint.engine.registry import file_visitors
from ctxlint.engine.run import Engine
from ctxlint.facts.code_digest import code_digest, without_end_blanks
from ctxlint.facts.extract import extract_file

CODE = """\
# a module comment
def f(a, b):  # the signature
    x = g(a,  # inside brackets
          b)
    # a comment line
    return x  # after the line
"""


def digest(text: str) -> str | None:
    return code_digest(text.encode())


@pytest.mark.parametrize(
    "edited",
    [
        CODE.replace("# the signature", "# the signature, reworded at length"),
        CODE.replace("    # a comment line", "    # another comment line"),
        CODE.replace("    # a comment line", ""),  # an emptied line keeps the lines below
        CODE.replace("  # after the line", ""),
        CODE.replace("return x", "return x  # a new note"),
        CODE + "# appended\n\n# and more\n\n\n",
        CODE.replace("# a module comment", "#"),
    ],
)
def test_what_the_digest_leaves_out(edited: str) -> None:
    assert edited != CODE
    assert digest(edited) == digest(CODE)


@pytest.mark.parametrize(
    "edited",
    [
        CODE.replace("# inside brackets", "# inside, reworded"),  # a snippet renders it
        "# a new line above everything\n" + CODE,  # the code below moves
        CODE.replace("return x", "return  x"),
        CODE.replace("return x  # after the line", "return x  # ctxlint: ignore[CTX101] why"),
        CODE.replace("# after the line", "# noqa: F811"),  # ruff reads it (CTX401)
        CODE + "# ruff: noqa\n",
        CODE.replace("# a comment line", "# ruff: disable[F811]"),
        CODE.replace("# a module comment", "# -*- coding: latin-1 -*-"),
        CODE.replace("x = g", "y = g"),
        CODE.replace("    # a comment line\n", ""),  # a line fewer
        CODE.rstrip("\n"),  # the last line loses its newline
    ],
)
def test_what_the_digest_sees(edited: str) -> None:
    assert digest(edited) != digest(CODE)


def test_a_file_the_tokenizer_cannot_read_has_no_digest() -> None:
    assert digest("x = (1,\n") is None
    assert code_digest(b"# -*- coding: no-such-codec -*-\nx = 1\n") is None
    assert code_digest("x = 'é'\n".encode("latin-1")) is None
    # what CPython judges otherwise than the tokenizer: none of it takes earlier facts
    assert code_digest(b"x = 1  # a\x00b\n") is None
    assert code_digest(b"x = 1 \\ # c\n") is None
    assert code_digest(b"def f(a):\r    # note\r    a.b += 1\n") is None
    assert code_digest(b"x = 1\r\n# note\r\n") is not None


def test_a_comment_after_a_backslash_stays_in() -> None:
    code = "x = 1 + \\\n  # c\n  2\n"
    assert digest(code) != digest(code.replace("# c", "# d"))


# -- the guarantee: the same facts --------------------------------------------------


def _read(comment: str) -> bool:
    """A comment a tool reads (a suppression, a noqa): the digest keeps it."""
    return "ctxlint" in comment or "noqa" in comment.lower() or "ruff" in comment.lower()


def _comment_variants(text: str, rng: random.Random) -> list[tuple[str, str]]:
    """The ways of editing comments the digest leaves out, each applied all over."""
    lines = io.StringIO(text).readlines()
    depth, comments, line_ends = 0, [], []
    for tok in tokenize.generate_tokens(iter(lines).__next__):
        if tok.type == tokenize.OP and tok.string in "([{":
            depth += 1
        elif tok.type == tokenize.OP and tok.string in ")]}":
            depth -= 1
        elif tok.type == tokenize.COMMENT and depth == 0 and not _read(tok.string):
            comments.append(tok)
        elif tok.type == tokenize.NEWLINE and depth == 0 and tok.string:
            line_ends.append(tok.start)
    reworded = list(lines)
    for tok in comments:
        row, col = tok.start
        line = reworded[row - 1]
        note = "# " + "".join(rng.choice("abc xyz") for _ in range(rng.randrange(0, 40)))
        reworded[row - 1] = line[:col] + note + line[tok.end[1] :]
    trailing = list(lines)
    for row, col in line_ends:
        line = trailing[row - 1]
        if "#" not in line:  # (a note after a noqa would be part of that comment)
            trailing[row - 1] = line[:col] + "  # a note" + line[col:]
    tail = "" if text.endswith("\n") or not text else "\n"
    return [
        ("reworded", "".join(reworded)),
        ("trailing", "".join(trailing)),
        ("appended", text + tail + "\n# appended\n\n"),
    ]


def _facts_unchanged(config_path: Path, root: Path, sample: int | None = None) -> int:
    config, rules = project_config(root, config_path)
    engine = Engine(config, rules, jobs=1, use_cache=False)
    files, sources, _ = engine.read_sources()
    vocab = engine.vocabulary(files, sources).to_json()
    visitors = file_visitors(rules)
    rng = random.Random(7)
    chosen = files if sample is None else rng.sample(files, sample)
    checked = 0
    for f in chosen:
        source = sources[f.rel]
        if not source.strip() or code_digest(source) is None:  # an empty file: no comment edit
            continue
        facts = json.dumps(extract_file(f.rel, f.module, source, vocab, visitors))
        for how, text in _comment_variants(source.decode(), rng):
            edited = text.encode()
            if edited == source:
                continue
            assert code_digest(edited) == code_digest(source), (f.rel, how)
            again = json.dumps(extract_file(f.rel, f.module, edited, vocab, visitors))
            assert again == facts, (f.rel, how)
            checked += 1
    return checked


def test_comment_edits_keep_the_facts_of_the_runtime_and_examples() -> None:
    assert _facts_unchanged(REPO / "pyproject.toml", REPO) > 60
    legacy = REPO / "examples" / "legacy_app" / "ctxlint.toml"
    assert _facts_unchanged(legacy, REPO) > 20


@pytest.mark.slow
def test_comment_edits_keep_the_facts_of_sglang() -> None:
    from wheels import sglang_tree

    tree = sglang_tree()
    profile = REPO / "src" / "ctxlint" / "config" / "profiles" / "sglang.toml"
    assert _facts_unchanged(profile, tree, sample=150) > 300


def test_the_blank_lines_a_file_ends_with_are_cut_as_the_pattern_cut_them() -> None:
    """without_end_blanks finds the cut from the end; it cuts what the pattern
    searched from the start (`(\\r?\\n|\\r)[ \\t\\f\\r\\n]*\\Z`, kept by its first
    line break) cut, line breaks of every kind and blanks before them included."""
    pattern = re.compile(r"(\r?\n|\r)[ \t\f\r\n]*\Z")
    pieces = ["a", "#", " ", "\t", "\f", "\r", "\n", "\r\n"]
    rng = random.Random(37)
    for _ in range(20000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        assert without_end_blanks(text) == pattern.sub(r"\1", text), repr(text)
    assert without_end_blanks("x = 1  \r\n\n \n") == "x = 1  \r\n"
