"""Each rule's derived sets and findings are remembered by the facts they read
(engine.check_memo), positions kept: a resident front end's run derives again
only the rules whose facts changed. That is only sound if a rule's outcome
depends on nothing else, which the first test checks rule by rule; the others
check what an edit derives again, and that the findings are a no-cache run's."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from test_rounds import _copy  # an example beside ctxrt, with its config

from ctxlint import session
from ctxlint.config.settings import Config, load_config
from ctxlint.engine.check_memo import check_reads, replayable
from ctxlint.engine.registry import load_rules
from ctxlint.engine.run import Engine, RunOutput
from ctxlint.program.core import Program
from ctxlint.program.rule import Rule

LEGACY = "examples/legacy_app"


def _config(root: Path, rules: list[Rule]) -> Config:
    found = root / LEGACY / "ctxlint.toml"
    return load_config(
        found if found.exists() else root / "pyproject.toml",
        rule_ids=[r.id for r in rules],
        rule_options={k: v for r in rules for k, v in r.options.items()},
    )


def _only(program: Program, keys: tuple[str, ...] | None) -> Program:
    """A fresh program (no sets, no built parts) with every file's facts cut
    down to `keys` (None: all of them)."""
    files = {
        path: {
            **entry,
            "facts": {k: v for k, v in entry["facts"].items() if keys is None or k in keys},
        }
        for path, entry in program.files.items()
    }
    return Program(program.config, program.vocab, files, pinned=program.pinned, paths=program.paths)


class _Watched(dict[str, Any]):
    """A file's facts, noting every key asked for (`*`: all of them, iterated)."""

    asked: set[str]

    def __getitem__(self, key: str) -> Any:
        self.asked.add(key)
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:
        self.asked.add(key)
        return super().get(key, default)

    def __contains__(self, key: object) -> bool:
        self.asked.add(str(key))
        return super().__contains__(key)

    def __iter__(self) -> Any:
        self.asked.add("*")
        return super().__iter__()

    def keys(self) -> Any:
        self.asked.add("*")
        return super().keys()

    def items(self) -> Any:
        self.asked.add("*")
        return super().items()

    def values(self) -> Any:
        self.asked.add("*")
        return super().values()


def _asked(program: Program, rule: Rule) -> set[str]:
    """The facts keys a rule's derivation, check and pins ask any file for."""
    asked: set[str] = set()
    files = {}
    for path, entry in program.files.items():
        facts = _Watched(entry["facts"])
        facts.asked = asked
        files[path] = {**entry, "facts": facts}
    watched = Program(
        program.config, program.vocab, files, pinned=program.pinned, paths=program.paths
    )
    _outcome(watched, rule)
    return asked


def _outcome(program: Program, rule: Rule) -> tuple[Any, ...]:
    """What the memo keeps of a rule: its sets, its raw findings, its pins."""
    program.sets[rule.id] = rule.derive(program)
    found = [
        (f.path, f.scope, f.snippet, f.span, f.message, f.details) for f in rule.check(program)
    ]
    return program.sets[rule.id], found, rule.pins(program)


@pytest.mark.parametrize("example", ["legacy_app", "serving_app"])
def test_every_rule_checks_from_the_facts_it_declares(example: str, tmp_path: Path) -> None:
    root = _copy(example, tmp_path)
    rules = load_rules()
    program = Engine(_config(root, rules), rules, jobs=1, memo=False).run().program
    found = 0
    for rule in rules:
        if rule.disabled_because(program.vocab) is not None or not replayable(rule):
            continue
        full = _outcome(_only(program, None), rule)
        # no other rule's sets, no part built from facts the rule does not read
        assert _outcome(_only(program, check_reads(rule)), rule) == full, rule.id
        assert _asked(program, rule) <= set(check_reads(rule)), rule.id
        found += len(full[1])
    if example == "legacy_app":
        assert found >= 40  # the outcomes compared hold findings


def _session(root: Path) -> session.Setup:
    """The server's setup: every rule, its runs started where the last ended."""
    rules = load_rules()
    request = session.Request(
        run=session.RunOptions(jobs=1, use_cache=True, resident=session.Resident(True))
    )
    return session.Setup(_config(root, rules), [], rules, rules, request=request)


_WARM: dict[str, Path] = {}  # per test process (each xdist worker its own)


def _warm_copy(name: str, tmp_path: Path) -> Path:
    """_copy with its fact cache already filled by a first check of the unedited
    example: the copy a front end opens after an earlier run. The example is
    checked once per test process, into a folder of its own (tempfile, removed at
    exit) that every caller copies and none writes; the cache's keys are relative
    to the project, so each copy hits it."""
    if name not in _WARM:
        base = Path(tempfile.mkdtemp(prefix=f"ctxlint-warm-{name}-"))
        atexit.register(shutil.rmtree, base, True)
        pristine = _copy(name, base)
        assert not session.check(_session(pristine)).out.errors
        _WARM[name] = pristine
    return Path(shutil.copytree(_WARM[name], tmp_path / "repo", symlinks=True))


def _derived(out: RunOutput) -> set[str]:
    """The rules the run derived (the timings it records per rule)."""
    return {k.split()[1] for k in out.timings if k.startswith("rule ") and k.endswith(" derive")}


def _no_cache(root: Path) -> RunOutput:
    rules = load_rules()
    return Engine(_config(root, rules), rules, jobs=1, use_cache=False, memo=False).run()


def _shown(out: RunOutput) -> list[tuple[str, str, int, str, str]]:
    return [(f.rule, f.path, f.line, f.fingerprint, f.message) for f in out.findings]


def _always() -> set[str]:
    return {r.id for r in load_rules() if not replayable(r)}  # CTX401: it runs ruff


def test_an_edit_of_one_rules_facts_derives_only_that_rule(tmp_path: Path) -> None:
    root = _copy("legacy_app", tmp_path)
    setup = _session(root)
    first = session.check(setup).out
    assert len(_derived(first)) == len(first.program.sets) > 20  # every rule, at first
    # one more factor in an expression: only CTX501's facts of the file change
    target = root / LEGACY / "moe_layer.py"
    text = target.read_text()
    edited = text.replace("get_parallel().moe_dp_size, ", "get_parallel().moe_dp_size * 1, ", 1)
    assert edited != text
    rel = f"{LEGACY}/moe_layer.py"
    after = session.check(setup, texts={rel: edited}).out
    assert _derived(after) == {"CTX501"} | _always()
    assert setup.request.run.resident.checks.derived == tuple(sorted(_derived(after)))
    assert "calls" not in after.program._memo  # no rule that needs the call graph ran
    target.write_text(edited)
    assert _shown(after) == _shown(_no_cache(root))
    again = session.check(setup, texts={rel: edited}).out  # nothing changed: all replayed
    assert _derived(again) == _always()
    assert _shown(again) == _shown(after)
    assert again.program.sets == after.program.sets


def test_removing_a_publish_changes_findings_in_other_files(tmp_path: Path) -> None:
    """An edit in one file changes what a rule reads for another: the reads the
    scheduler's process reaches elsewhere become CTX301 findings there."""
    root = _copy("legacy_app", tmp_path)
    setup = _session(root)
    before = session.check(setup).out
    rel = f"{LEGACY}/scheduler.py"
    text = (root / rel).read_text()
    edited = text.replace('publish(server_args, role="scheduler")', "pass  # not published", 1)
    assert edited != text
    after = session.check(setup, texts={rel: edited}).out
    assert "CTX301" in _derived(after)
    assert len(_derived(after)) < len(after.program.sets)  # not every rule
    new = {(f.rule, f.path) for f in after.findings} - {(f.rule, f.path) for f in before.findings}
    assert any(r == "CTX301" and p != rel for r, p in new), new
    (root / rel).write_text(edited)
    assert _shown(after) == _shown(_no_cache(root))
    restored = session.check(setup, texts={rel: text}).out  # the publish back
    (root / rel).write_text(text)
    assert _shown(restored) == _shown(before) == _shown(_no_cache(root))


def test_new_pins_rerun_the_checks(tmp_path: Path) -> None:
    """The baseline's pins are in every key: after a `baseline update` the
    checks that compare with them run again, not replayed."""
    root = _copy("legacy_app", tmp_path)
    setup = _session(root)
    pins = session.check(setup).out.pins
    assert "CTX702" in pins
    moved = {k: v for k, v in pins.items() if k != "CTX702"}  # a pin dropped
    dropped = session.check(replace(setup, pins=moved)).out
    assert any(f.rule == "CTX702" and f.kind == "pin" for f in dropped.findings)
    assert "CTX702" in _derived(dropped)
    updated = session.check(replace(setup, pins=pins)).out  # and recorded again
    assert not any(f.kind == "pin" for f in updated.findings)
    rules = load_rules()
    fresh = Engine(_config(root, rules), rules, jobs=1, use_cache=False, pinned=pins).run()
    assert _shown(updated) == _shown(fresh)


def test_part_digests_stored_without_positions_are_worked_out_again(tmp_path: Path) -> None:
    """A `parts:` entry an older ctxlint stored holds no digests with positions:
    it is not taken as it is (keys without positions would replay findings at
    lines that moved), but worked out again from the entry and stored."""
    import json

    from ctxlint.cache.store import FactCache
    from ctxlint.engine.blobs import digest_of
    from ctxlint.engine.part_digests import PLACED, complete, of_blob, placed
    from ctxlint.engine.rounds import RoundMemo

    facts = {"module": "m", "facts": {"CTX101": {"reads": [[3, 0, 3, 9]]}}, "suppressions": []}
    blob = json.dumps(facts).encode()
    digest = digest_of(blob).hex()
    full = of_blob(blob)
    assert complete(full) and placed(full)["CTX101"] == full[PLACED + "CTX101"]
    old = {k: v for k, v in full.items() if not k.startswith(PLACED)}
    assert not complete(old)
    cache = FactCache(tmp_path / "cache")
    cache.put_many({f"parts:{digest}": json.dumps(old).encode()})
    found = RoundMemo(cache, "head").digests({"m.py": digest}, {"m.py": blob})
    assert found[digest] == full
    cache.close()
    again = FactCache(tmp_path / "cache")
    assert json.loads(again.get_many([f"parts:{digest}"])[f"parts:{digest}"]) == full
    again.close()


def test_a_resident_run_works_out_only_the_edited_files_share_of_the_rounds(
    tmp_path: Path,
) -> None:
    """The rounds' per-file work (each rule's share of its key, each entry's
    part digests) is kept between a resident's runs: an edit's run formats only
    the edited file's share again, and its findings are still a no-cache run's."""
    root = _copy("legacy_app", tmp_path)
    setup = _session(root)
    session.check(setup)
    kept = setup.request.run.resident.checks.rounds
    before = {rule: dict(shares) for rule, shares in kept.made.items()}
    assert before and all(before.values())
    rel = f"{LEGACY}/scheduler.py"
    text = (root / rel).read_text()
    edited = text.replace('publish(server_args, role="scheduler")', "pass  # not published", 1)
    after = session.check(setup, texts={rel: edited}).out
    for rule, shares in kept.made.items():
        for path, share in shares.items():
            if path == rel:
                assert share[0] != before[rule][path][0]  # the edited entry, worked out again
            elif path in before[rule]:
                assert share is before[rule][path], (rule, path)  # kept as it was
    # no entry digest of the file's earlier content stays held
    assert set(kept.parts) == {s[0] for shares in kept.made.values() for s in shares.values()}
    (root / rel).write_text(edited)
    assert _shown(after) == _shown(_no_cache(root))


@pytest.mark.parametrize("chunk", [3, 64])
def test_the_columns_patched_for_changed_entries_are_those_made_afresh(
    chunk: int, monkeypatch
) -> None:
    """CheckMemo's columns, patched run after run for the files whose entry
    changed (a part's digest changed, added, dropped; an error; a module), are
    the columns made from scratch, with and without some files' digests
    instead; with chunks of 3 lines (a column in many: only the changed ones
    hashed again) as with one chunk a column."""
    import random

    from ctxlint.engine import check_memo
    from ctxlint.engine.check_memo import _Columns

    monkeypatch.setattr(check_memo, "CHUNK", chunk)

    rng = random.Random(7)
    paths = [f"p{i:02}.py" for i in range(30)]
    keys = ["calls", "classes", "records", "CTX101", "error"]

    def entry() -> dict[str, str]:
        return {k: f"{rng.randrange(3)}" for k in keys if rng.random() < 0.6}

    placed: dict[bytes, dict[str, str]] = {}
    digests: dict[str, bytes] = {}
    modules = {p: p[:-3] for p in paths}

    def put(path: str) -> None:
        d = rng.randbytes(8)
        placed[d] = entry()
        digests[path] = d

    for p in paths:
        put(p)
    made = _Columns.of(digests, modules, placed)
    for _ in range(40):
        for p in rng.sample(paths, rng.randrange(1, 4)):
            put(p)
        if rng.random() < 0.2:
            modules[paths[0]] = f"m{rng.randrange(9)}"
        assert made.patch(digests, modules, placed)
        fresh = _Columns.of(digests, modules, placed)
        assert made.files == fresh.files
        assert made.encoded(None) == fresh.encoded(None)
        # (the digests kept from earlier runs: those of the patched columns)
        assert made.digests(None) == fresh.digests(None)
        instead = {rng.choice(paths): entry()}
        picked = set(rng.sample(keys, 3))
        merged = {d: v for d, v in placed.items()}
        swapped = dict(digests)
        for p, parts in instead.items():
            swapped[p] = b"instead"
            merged[b"instead"] = {**placed[digests[p]], **parts}
        want = _Columns.of(swapped, modules, merged).digests(picked)
        assert made.instead(instead, picked) == want
    assert not made.patch({**digests, "new.py": b"x"}, {**modules, "new.py": "new"}, placed)
