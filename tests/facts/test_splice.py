"""A kept module with one statement parsed again (facts.splice, engine.kept_tree)
must give exactly a whole parse's facts and code digest: random single-block
edits over the examples' files and a piece of sglang's scheduler.py, chained
as an editor makes them, each held to a whole parse of the same text."""

from __future__ import annotations

import ast
import json
import random
from collections import Counter
from pathlib import Path

import libcst as cst
import pytest
from conftest import REPO
from helpers import project_config

from ctxlint.engine.kept_tree import KeptTree
from ctxlint.engine.registry import file_visitors
from ctxlint.engine.run import Engine
from ctxlint.facts.code_digest import code_digest
from ctxlint.facts.extract import extract_file, parse
from ctxlint.facts.splice import Kept

SCHEDULER = "sglang/srt/managers/scheduler.py"


def _valid(text: str) -> bool:
    try:
        compile(text, "m.py", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


def _edit(text: str, rng: random.Random, n: int) -> str:
    """One block of lines changed: a statement, comment or blank line added at
    a line's indentation, a line deleted or duplicated, a name or number
    changed on a line, or a few lines replaced by lines from elsewhere."""
    rows = text.splitlines(keepends=True)
    i = rng.randrange(len(rows))
    row = rows[i]
    indent = row[: len(row) - len(row.lstrip(" "))]
    kind = rng.randrange(7)
    if kind == 0:
        new = [f"{indent}_edit_{n} = {n}\n"]
    elif kind == 1:
        new = [f"{indent}# note {n}\n", row]
    elif kind == 2:
        new = ["\n", row]
    elif kind == 3:
        new = []
    elif kind == 4:
        new = [row, row]
    elif kind == 5:
        new = [row.replace("1", "2", 1).replace("self", "this", 1)]
    else:
        j = rng.randrange(len(rows))
        new = rows[j : j + rng.randrange(1, 4)]
        return "".join([*rows[:i], *new, *rows[i + rng.randrange(0, 3) :]])
    return "".join([*rows[:i], *new, *rows[i + 1 :]])


def _facts(path: str, module: str, source: bytes, vocab: str, visitors: list, parser=None) -> str:
    return json.dumps(extract_file(path, module, source, vocab, visitors, parser=parser))


def _walk(files: list[tuple[str, str, str]], vocab: str, visitors: list, edits: int) -> Counter:
    """Each file edited `edits` times in a row (an edit that does not compile
    is skipped, as the server's buffer keeps its last good text): the kept
    tree's facts and digest against a whole parse's. The counts of splices,
    of walks taken up at a statement (facts.resume) and of positions found
    with no codegen of the whole module (facts.placed)."""
    rng = random.Random(45)
    seen: Counter = Counter()
    for path, module, text in files:
        tree = KeptTree()
        parser = tree.parser(path, parse)
        assert tree.digest(path, text.encode()) == code_digest(text.encode())
        _facts(path, module, text.encode(), vocab, visitors, parser)  # the buffer opened
        for n in range(edits):
            edited = _edit(text, rng, n)
            if edited == text or not _valid(edited):
                continue
            source = edited.encode()
            assert tree.digest(path, source) == code_digest(source), (path, n)
            before = tree.spliced
            kept = _facts(path, module, source, vocab, visitors, parser)
            assert kept == _facts(path, module, source, vocab, visitors), (path, n)
            if tree.spliced > before:
                assert tree.kept is not None and tree.kept.module.code == edited, (path, n)
                seen["spliced"] += 1
                seen["resumed"] += tree.kept.walked_from > 0
                seen["placed"] += tree.kept.generated != "module"
            text = edited
    return seen


def _project(config_path: Path, root: Path) -> tuple[Engine, str, list]:
    config, rules = project_config(root, config_path)
    engine = Engine(config, rules, jobs=1, use_cache=False)
    files, sources, _ = engine.read_sources()
    return engine, engine.vocabulary(files, sources).to_json(), file_visitors(rules)


@pytest.mark.parametrize("config", ["pyproject.toml", "examples/legacy_app/ctxlint.toml"])
def test_random_edits_of_the_examples_splice_to_a_whole_parses_facts(config: str) -> None:
    engine, vocab, visitors = _project(REPO / config, REPO)
    assert engine.read is not None
    files, sources = engine.read
    chosen = [
        (f.rel, f.module, sources[f.rel].decode())
        for f in files
        if f.rel.startswith("examples/") and len(sources[f.rel]) > 800
    ]
    assert len(chosen) >= 5, [f.rel for f in files]
    # a third of the edits at least are spliced (the rest: a whole parse), a
    # fifth walked from the edited statement on, with its positions
    seen = _walk(chosen, vocab, visitors, edits=12)
    assert seen["spliced"] >= len(chosen) * 12 // 4, seen
    assert seen["resumed"] >= len(chosen) * 12 // 8 and seen["placed"] >= seen["resumed"], seen


def _scheduler_piece() -> str | None:
    """The imports and the last top-level statements (run_scheduler_process
    among them) of sglang 0.5.23's scheduler.py, when the wheel is here."""
    tree = Path.home() / ".cache/ctxlint/wheels/sglang-0.5.23"
    path = tree / SCHEDULER
    if not path.is_file():
        return None
    text = path.read_text(encoding="utf-8")
    body = ast.parse(text).body
    rows = text.splitlines(keepends=True)
    head = max(s.end_lineno or 0 for s in body if isinstance(s, ast.Import | ast.ImportFrom))
    tail = body[-4].lineno - 1
    while tail > 0 and rows[tail - 1].strip().startswith(("@", "#")):
        tail -= 1
    return "".join([*rows[:head], "\n\n", *rows[tail:]])


def test_random_edits_of_sglangs_scheduler_splice_to_a_whole_parses_facts() -> None:
    piece = _scheduler_piece()
    if piece is None:
        pytest.skip("the sglang 0.5.23 wheel is not unpacked here")
    assert _valid(piece)
    _, vocab, visitors = _project(REPO / "pyproject.toml", REPO)
    seen = _walk([(SCHEDULER, "sglang.srt.managers.scheduler", piece)], vocab, visitors, 30)
    assert seen["spliced"] >= 8 and seen["resumed"] >= 3, seen


def test_a_splice_is_refused_where_a_whole_parse_could_differ() -> None:
    text = "import os\n\n\ndef f():\n    x = 1\n    return x\n\n\nclass A:\n    y = 2\n"
    kept = Kept.of(text, cst.parse_module(text))
    inside = text.replace("    x = 1\n", "    x = 1\n    z = 3\n")
    got = kept.splice(inside)
    assert got is not None and got[0].module.code == inside and got[1].index == 1
    refused = {
        "two statements": text.replace("x = 1", "x = 9").replace("y = 2", "y = 9"),
        "a comment above a statement": text.replace("\n\nclass A", "\n    # owned?\nclass A"),
        "a new statement at the end": text + "z = 1\n",
        "no newline at the end": text + "z = 1",
        "a statement split in two": text.replace("    y = 2\n", "    y = 2\nw = 1\n"),
        "the piece ends on a comment": text.replace("    y = 2\n", "    y = 2\n    # c\n"),
        "a comment after a block": text.replace("return x\n", "return x\n    # c\n"),
        "a piece that does not parse": text.replace("x = 1", "x = = 1"),
        "another indentation": text.replace("    y = 2\n", "    y = 2\n      z = 1\n"),
    }
    for why, new in refused.items():
        assert kept.splice(new) is None, why
