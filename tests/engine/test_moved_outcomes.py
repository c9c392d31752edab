"""A resident run replays a rule whose facts are its last ones with an edited
buffer's lines moved, its outcome moved (engine.moved_outcomes): the findings,
sets and pins must be a derivation's on the edited text, for every edit."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from test_check_memo import LEGACY, _derived, _no_cache, _session, _shown, _warm_copy

from ctxlint import session
from ctxlint.core.moved_text import Unplaced
from ctxlint.engine.check_memo import check_reads
from ctxlint.engine.moved_outcomes import LineMap, Move, moved_back
from ctxlint.engine.registry import load_rules
from ctxlint.program.rule import RawFinding


def test_a_line_map_moves_the_lines_past_the_window() -> None:
    old = "a\nb\nc\nd\n"
    lines = LineMap.of(old, "a\nb\nnew\nnewer\nc\nd\n")
    assert [lines.line(n) for n in range(1, 6)] == [1, 2, 5, 6, 5]  # (5: past the end, kept)
    assert [lines.back(n) for n in range(1, 7)] == [1, 2, None, None, 3, 4]
    changed = LineMap.of(old, "a\nB\nc\nd\n")  # a line replaced: it has no image
    assert [changed.line(n) for n in range(1, 5)] == [1, None, 3, 4]
    assert moved_back({"s": [[5, 4, 6, 1]], "n": 3}, lines) == {"s": [[3, 4, 4, 1]], "n": 3}
    with pytest.raises(Unplaced):
        moved_back([3, 0, 5, 1], lines)  # a span starting on an added line


def test_a_moved_outcome_moves_the_files_places_and_refuses_a_bare_moved_line() -> None:
    move = Move("pkg/mod.py", LineMap.of("a\nb\n", "new\na\nb\n"))

    def raw(path: str, message: str) -> RawFinding:
        return RawFinding("CTX301", path, "f", "x", [2, 0, 2, 3], message)

    sets = {"entries": ["pkg.mod.f (pkg/mod.py:2)", "other.g (other.py:2)"], "count": 2}
    found = (raw("pkg/mod.py", "read"), raw("other.py", "via pkg/mod.py:1"))
    moved = move.outcome(sets, found, None)
    assert moved is not None
    assert moved[0] == {"entries": ["pkg.mod.f (pkg/mod.py:3)", "other.g (other.py:2)"], "count": 2}
    assert [f.span for f in moved[1]] == [[3, 0, 3, 3], [2, 0, 2, 3]]
    assert moved[1][1].message == "via pkg/mod.py:2"
    # a bare number in the file's own finding may be a line: not moved, derived
    assert move.outcome({}, (raw("pkg/mod.py", "before publish at line 2"),), None) is None
    assert move.outcome({}, (), {"k": "pkg.mod publishes at 2"}) is None


def _body_starts(text: str) -> list[tuple[int, int]]:
    """(line, indent) of each function's first statement, past its docstring."""
    out = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                if len(node.body) == 1:
                    continue
                first = node.body[1]
            out.append((first.lineno, first.col_offset))
    return sorted(out)


def _with_statement(text: str, line: int, indent: int, lines: int = 1) -> str:
    rows = text.splitlines(keepends=True)
    new = f"{' ' * indent}_ctxlint_moved = 1\n" * lines
    return "".join([*rows[: line - 1], new, *rows[line - 1 :]])


@pytest.mark.parametrize(
    ("example", "rel"),
    [
        ("legacy_app", f"{LEGACY}/scheduler.py"),
        ("legacy_app", f"{LEGACY}/launcher.py"),
        ("legacy_app", f"{LEGACY}/model_runner.py"),
        ("serving_app", "examples/serving_app/scheduler.py"),
    ],
)
def test_a_statement_added_in_a_function_moves_outcomes_as_a_derivation_would(
    example: str, rel: str, tmp_path: Path
) -> None:
    """A new statement at the top of functions spread over a file (one, or
    two), each from the buffer as opened and back: the moved rules' findings,
    sets and pins are a no-cache run's."""
    root = _warm_copy(example, tmp_path)
    setup = _session(root)
    text = (root / rel).read_text()
    session.check(setup, texts={rel: text})  # the buffer opened
    memo = setup.request.run.resident.checks
    unedited = _no_cache(root)
    moved_any: set[str] = set()
    places = _body_starts(text)
    assert places, rel
    places = places[:: max(1, len(places) // 3)][:3]  # three, spread over the file
    for n, (line, indent) in enumerate(places):
        edited = _with_statement(text, line, indent, 1 + n % 2)
        after = session.check(setup, texts={rel: edited}).out
        moved_now = set(memo.moved)
        assert not moved_now & _derived(after)
        (root / rel).write_text(edited)
        fresh = _no_cache(root)
        (root / rel).write_text(text)
        back = session.check(setup, texts={rel: text}).out
        for out, want, moved in ((after, fresh, moved_now), (back, unedited, set(memo.moved))):
            moved_any |= moved
            assert _shown(out) == _shown(want), (rel, line)
            assert [(f.span, f.details) for f in out.findings] == [
                (f.span, f.details) for f in want.findings
            ]
            for rid in moved:
                assert out.program.sets[rid] == want.program.sets[rid], (rid, rel, line)
            assert out.pins == want.pins
    # the edits move every call-graph fact below them: rules reading them moved
    graph = {r.id for r in load_rules() if "calls" in check_reads(r)}
    assert moved_any & graph, moved_any


def test_the_moved_back_digests_are_the_old_ones_only_where_moved_back_is() -> None:
    """back_digests pairs the spans of a part's old and new JSON instead of
    moving the new facts back: over random facts holding spans, lists of four
    that are not spans (bools, floats, five items) and strings that quote a
    span's text, a part it gives the old digest is one whose new facts
    `moved_back` makes the old ones; and most such parts get it."""
    import json
    import random

    from ctxlint.engine.moved_outcomes import back_digests
    from ctxlint.engine.part_digests import digest, positionless

    rng = random.Random(5)
    old_text = "".join(f"{i}\n" for i in range(40))
    new_text = "".join(f"{i}\n" if i != 20 else "new\nnewer\n" for i in range(40))
    lines = LineMap.of(old_text, new_text)

    def leaf() -> object:
        n = rng.randrange(40) + 1
        return rng.choice(
            [
                [n, 2, n + rng.randrange(3), 7],
                [-1, 0, -1, 0],
                [True, n, n, 1],
                [1.5, n, n, 1],
                [n, 0, n, 0, 1],
                f'x = [{n}, 0, {n}, 0] "[{n},0,{n},0]" \\ é',
                n,
                None,
            ]
        )

    def value(depth: int = 0) -> object:
        if depth > 3 or rng.random() < 0.3:
            return leaf()
        if rng.random() < 0.5:
            return [value(depth + 1) for _ in range(rng.randrange(5))]
        return {f'k{rng.randrange(9)}"': value(depth + 1) for _ in range(rng.randrange(4))}

    def forward(v: object) -> object:  # each span moved to the new lines, where it has one
        if isinstance(v, list):
            if len(v) == 4 and all(type(x) is int for x in v):
                a, b = lines.line(v[0]), lines.line(v[2])  # type: ignore[arg-type]
                return [a if a is not None else v[0], v[1], b if b is not None else v[2], v[3]]
            return [forward(x) for x in v]
        if isinstance(v, dict):
            return {k: forward(x) for k, x in v.items()}
        return v

    given = kept = 0
    for _ in range(300):
        old = {f"p{i}": value() for i in range(3)}
        new = {k: forward(v) if rng.random() < 0.8 else value() for k, v in old.items()}
        blob = {
            name: json.dumps({"facts": facts}, sort_keys=True, separators=(",", ":")).encode()
            for name, facts in (("old", old), ("new", new))
        }
        same = {k for k in old if digest(positionless(old[k])) == digest(positionless(new[k]))}
        digests = {k: digest(v) for k, v in old.items()}
        now = {k: digest(v) for k, v in new.items()}
        got = back_digests(blob["old"], blob["new"], same | {"gone"}, digests, now, lines)
        for key in old:
            try:
                truly = digest(moved_back(new[key], lines)) == digests[key]
            except Unplaced:
                truly = False
            if key in got:
                assert truly and got[key] == digests[key]
                given += 1
            kept += truly
    # (the rest: a string quoting a span past the edit, unmoved, says no)
    assert given > 300 and given >= 0.75 * kept
