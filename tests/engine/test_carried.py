"""A resident's runs keep the model's parts (Program.memo with `reads`: the
class index, the record conventions, the accessor uses) from one program to
the next, each reused while the facts keys it declares reading are the same
(engine.check_memo's columns, positions kept). That is only sound if a part
reads nothing else, which the first test checks part by part; the second that
an edit that leaves them reuses them, one that changes them builds them again,
and the findings are a no-cache run's either way."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from test_check_memo import LEGACY, _config, _no_cache, _session, _shown, _Watched
from test_rounds import _copy

from ctxlint import session
from ctxlint.engine.registry import load_rules
from ctxlint.engine.run import Engine
from ctxlint.program.classes import KEY as CLASSES
from ctxlint.program.core import Program

T = TypeVar("T")


@pytest.mark.parametrize("example", ["legacy_app", "serving_app"])
def test_each_carried_part_reads_only_the_facts_it_declares(example: str, tmp_path: Path) -> None:
    root = _copy(example, tmp_path)
    rules = load_rules()
    program = Engine(_config(root, rules), rules, jobs=1, memo=False).run().program
    asked: set[str] = set()
    seen: dict[str, tuple[set[str], tuple[str, ...]]] = {}

    class Watching(Program):
        def memo(self, key: str, build: Callable[[], T], reads: tuple[str, ...] | None = None) -> T:
            if reads is None or self.built(key):
                return super().memo(key, build, reads)
            before = set(asked)
            asked.clear()
            try:
                return super().memo(key, build, reads)
            finally:
                seen[key] = (set(asked), reads)
                asked.update(before)

    files = {}
    for path, entry in program.files.items():
        facts = _Watched(entry["facts"])
        facts.asked = asked
        files[path] = {**entry, "facts": facts}
    watched = Watching(
        program.config, program.vocab, files, pinned=program.pinned, paths=program.paths
    )
    for rule in rules:
        if rule.disabled_because(watched.vocab) is None:
            watched.sets[rule.id] = rule.derive(watched)
            list(rule.check(watched))
    names = {key.partition(":")[0] for key in seen}
    assert {CLASSES, "record names", "record convention", "accessor uses"} <= names, names
    for key, (read, declared) in seen.items():
        assert read <= set(declared), key


def _class_index(program: Program) -> Any:
    return program._memo[f"{CLASSES}:{len(program.files)}"][1]


def test_an_edit_that_changes_no_class_keeps_the_class_index(tmp_path: Path) -> None:
    root = _copy("legacy_app", tmp_path)
    setup = _session(root)
    first = session.check(setup).out
    index, uses = _class_index(first.program), first.program._memo["accessor uses"][1]
    rel = f"{LEGACY}/scheduler.py"
    text = (root / rel).read_text()
    # a statement inside a function: no class, record or accessor fact changes
    body = "    scheduler = Scheduler(server_args)\n"
    assert body in text
    edited = text.replace(body, "    _carried = 1\n" + body, 1)
    after = session.check(setup, texts={rel: edited}).out
    assert _class_index(after.program) is index
    # (CTX401, its one reader, is replayed: its facts and ruff's texts are as they were)
    assert "accessor uses" not in after.program._memo
    (root / rel).write_text(edited)
    assert _shown(after) == _shown(_no_cache(root))
    # a class added: the index (and what is built on it) is built again
    more = edited + "\n\nclass CarriedAway:\n    def get_exec(self):\n        return 1\n"
    added = session.check(setup, texts={rel: more}).out
    assert _class_index(added.program) is not index
    assert "CarriedAway" in str(sorted(_class_index(added.program).classes))
    assert added.program._memo["accessor uses"][1] is not uses
    (root / rel).write_text(more)
    assert _shown(added) == _shown(_no_cache(root))


def test_a_resident_sees_syntax_errors_come_and_go_in_files_no_rule_gathers(
    tmp_path: Path,
) -> None:
    """The syntax verdicts of the files no rule gathers are kept by content
    (engine.run.TreeMemo): a file broken on disk, and mended, is each time
    what a no-cache run reports."""
    root = _copy("legacy_app", tmp_path)
    setup = _session(root)
    notes = root / LEGACY / "notes.py"
    notes.write_text("NOTES = 1\n")
    first = session.check(setup).out
    tree = setup.request.run.resident.tree
    assert tree.verdicts and not first.errors  # (the files no rule gathers: some)
    for text in ("NOTES = (\n", "NOTES = 2\n", "def broken(:\n"):
        notes.write_text(text)
        out = session.check(setup).out
        want = _no_cache(root)
        assert [(e.path, e.message) for e in out.errors] == [
            (e.path, e.message) for e in want.errors
        ]
        assert bool(out.errors) == ("(" in text)


def test_a_disk_edit_whose_facts_are_cached_is_moved_too(tmp_path: Path) -> None:
    """A resident's run keeps the text of a file changed on disk since its last
    run (engine.run.Engine._edited_texts), so the file's next edit moves the
    outcomes of the rules that read it though no parse kept its module (its
    facts came from the cache: another run extracted that text); the
    findings are a no-cache run's."""
    from test_check_memo import _always

    root = _copy("legacy_app", tmp_path)
    setup = _session(root)
    session.check(setup)
    rel = f"{LEGACY}/scheduler.py"
    target = root / rel
    text = target.read_text()
    body = "    scheduler = Scheduler(server_args)\n"
    edits = [text.replace(body, "    _moved = 1\n" * n + body, 1) for n in (1, 2)]
    rules = load_rules()
    for edited in edits:  # each text's facts in the cache, from a run of its own
        target.write_text(edited)
        Engine(_config(root, rules), rules, jobs=1, memo=False).run()
    memo = setup.request.run.resident.checks
    target.write_text(edits[0])
    session.check(setup)  # (the file's first edit since: derived)
    target.write_text(edits[1])
    out = session.check(setup).out
    assert len(memo.moved) > 10 and _always() <= set(memo.derived)  # (most moved)
    assert _shown(out) == _shown(_no_cache(root))
