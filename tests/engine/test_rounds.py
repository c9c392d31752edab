"""Each rule's round answer (`more_tokens`) is remembered by the facts it reads
(engine.rounds): its own and those of the parts it requires. That is only sound
if the answer depends on nothing else, which these tests check rule by rule, and
it pays when an edit leaves those facts as they were."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import NO_BYTECODE, in_repository, project_config, run_engine

from ctxlint.config.settings import Config, load_config
from ctxlint.engine.part_digests import positionless
from ctxlint.engine.registry import load_rules
from ctxlint.engine.rounds import reads
from ctxlint.engine.run import Engine, RunOutput
from ctxlint.program.core import Program
from ctxlint.program.rule import Rule

REPO = Path(__file__).resolve().parents[2]


def _copy(name: str, tmp_path: Path) -> Path:
    """An example beside ctxrt, with its config at the root (serving_app: the
    repository's; legacy_app: its own)."""
    root = tmp_path / "repo"
    config = "pyproject.toml" if name == "serving_app" else f"examples/{name}/ctxlint.toml"
    for rel in ("src/ctxrt", f"examples/{name}", "examples/__init__.py", config):
        if (REPO / rel).is_dir():
            shutil.copytree(REPO / rel, root / rel, ignore=NO_BYTECODE)
        else:
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(REPO / rel, root / rel)
    return in_repository(root)


def _program(root: Path) -> tuple[Program, list[Rule]]:
    """A no-cache run's program, with the example's own config."""
    rules = load_rules()
    found = root / "examples" / "legacy_app" / "ctxlint.toml"
    config = load_config(
        found if found.exists() else root / "pyproject.toml",
        rule_ids=[r.id for r in rules],
        rule_options={k: v for r in rules for k, v in r.options.items()},
    )
    return Engine(config, rules, jobs=1, memo=False).run().program, rules


def _only(program: Program, keys: tuple[str, ...]) -> Program:
    """The program with every file's facts cut down to `keys`."""
    files = {
        path: {**entry, "facts": {k: v for k, v in entry["facts"].items() if k in keys}}
        for path, entry in program.files.items()
    }
    return Program(program.config, program.vocab, files, pinned=program.pinned, paths=program.paths)


def _nowhere(program: Program) -> Program:
    """The program with every span in its facts zeroed."""
    files = {
        path: {**entry, "facts": positionless(entry["facts"])}
        for path, entry in program.files.items()
    }
    return Program(program.config, program.vocab, files, pinned=program.pinned, paths=program.paths)


@pytest.mark.parametrize("example", ["legacy_app", "serving_app"])
def test_every_rule_answers_from_the_facts_it_declares(example: str, tmp_path: Path) -> None:
    program, rules = _program(_copy(example, tmp_path))
    answered = 0
    for rule in rules:
        if rule.disabled_because(program.vocab) is not None:
            continue
        full = rule.more_tokens(program)
        assert rule.more_tokens(_only(program, reads(rule))) == full, rule.id
        assert rule.more_tokens(_nowhere(program)) == full, rule.id  # positions aside
        answered += bool(full)
    assert answered >= 3  # the check compares answers, not empty sets


def _counting(monkeypatch: pytest.MonkeyPatch, rules: list[Rule]) -> dict[str, int]:
    calls: dict[str, int] = {}
    for rule in rules:
        original = type(rule).more_tokens

        def counted(self: Rule, program: Program, original=original) -> set[str]:
            calls[self.id] = calls.get(self.id, 0) + 1
            return original(self, program)

        monkeypatch.setattr(type(rule), "more_tokens", counted)
    return calls


def test_an_edit_outside_every_rules_facts_replays_every_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _copy("serving_app", tmp_path)
    run_engine(root, use_cache=True)
    _, rules = project_config(root)
    calls = _counting(monkeypatch, rules)
    # a suppression comment changes the file's entry (its suppressions) and no
    # rule's facts: the rounds' whole keys miss, every rule's own key hits
    server = _publisher(root)
    server.write_text(server.read_text() + "\nx = 1  # ctxlint: ignore[CTX101] a reason\n")
    warm = run_engine(root, use_cache=True)
    assert calls == {}
    assert warm.files_parsed == 1  # the edited file was extracted again
    reference = run_engine(root)  # --no-cache
    assert [f.fingerprint for f in warm.findings] == [f.fingerprint for f in reference.findings]
    assert warm.program.sets == reference.program.sets


def _publisher(root: Path) -> Path:
    return next(p for p in sorted((root / "examples").rglob("*.py")) if "publish(" in p.read_text())


def test_an_edit_on_the_call_graph_makes_the_call_rule_answer_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _copy("serving_app", tmp_path)
    run_engine(root, use_cache=True)
    _, rules = project_config(root)
    calls = _counting(monkeypatch, rules)
    server = next(
        p for p in sorted((root / "examples").rglob("*.py")) if "publish(" in p.read_text()
    )
    server.write_text(server.read_text() + "\n\ndef added():\n    return added()\n")
    warm = run_engine(root, use_cache=True)
    assert calls.get("CTX301", 0) >= 1
    reference = run_engine(root)
    assert [f.fingerprint for f in warm.findings] == [f.fingerprint for f in reference.findings]


def test_a_line_inserted_above_moves_spans_and_replays_every_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _copy("serving_app", tmp_path)
    run_engine(root, use_cache=True)
    _, rules = project_config(root)
    calls = _counting(monkeypatch, rules)
    server = _publisher(root)
    server.write_text("# a new first line: every span below moves\n" + server.read_text())
    warm = run_engine(root, use_cache=True)
    assert calls == {}
    reference = run_engine(root)
    assert [(f.fingerprint, f.line) for f in warm.findings] == [
        (f.fingerprint, f.line) for f in reference.findings
    ]
    assert warm.program.sets == reference.program.sets


def test_the_workers_digest_the_facts_the_rounds_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker digests each part of the facts it made (engine.part_digests),
    as the parent would from the entry; a cold run's rounds take those and
    never decode an entry for them, and store them for the next run."""
    from ctxlint.engine import part_digests, rounds, workers

    root = _copy("serving_app", tmp_path)
    made: dict[str, tuple[bytes, object]] = {}
    real_encode = workers._encode

    def recording(path: str, facts: dict, clock: dict, syntax_only: bool):  # type: ignore[no-untyped-def]
        out = real_encode(path, facts, clock, syntax_only)
        made[path] = (out[1], out[3])
        return out

    def refused(blob: bytes) -> None:
        raise AssertionError("a cold run's round decoded an entry for its digests")

    monkeypatch.setattr(workers, "_encode", recording)
    monkeypatch.setattr(rounds, "of_blob", refused)
    run_engine(root, jobs=1, use_cache=True)
    facts = {p: (blob, parts) for p, (blob, parts) in made.items() if parts is not None}
    assert len(facts) > 3
    for blob, parts in facts.values():
        assert parts == part_digests.of_blob(blob)
    monkeypatch.undo()  # a warm run after an edit reads the stored digests
    target = next(iter(sorted(facts)))
    (root / target).write_text((root / target).read_text() + "\n_EDIT = 1\n")
    monkeypatch.setattr(rounds, "of_blob", refused)
    assert run_engine(root, jobs=1, use_cache=True).files_parsed == 1


def _spy_on_rounds(rules: list[Rule], monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The rules whose round answer (`more_tokens`) is computed, not replayed."""
    answered: list[str] = []
    for rule in rules:
        original = rule.more_tokens

        def spy(program: Program, rule_id: str = rule.id, original=original) -> set[str]:
            answered.append(rule_id)
            return original(program)

        monkeypatch.setattr(rule, "more_tokens", spy)
    return answered


def _legacy_config(root: Path, cache: Path, rules: list[Rule]) -> Config:
    return load_config(
        root / "examples" / "legacy_app" / "ctxlint.toml",
        rule_ids=[r.id for r in rules],
        rule_options={k: v for r in rules for k, v in r.options.items()},
        cache_dir=cache,
    )


def _shown(out: RunOutput) -> list[tuple[str, str, int, str]]:
    return sorted((f.rule, f.path, f.line, f.message) for f in out.findings)


def test_new_pins_rerun_the_checks_not_the_rounds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A `baseline update` changes the pins, which only the checks read: the next
    check replays every round answer (the fixed point that costs most of a run)
    and its findings are a no-cache run's."""
    root = _copy("legacy_app", tmp_path)
    rules = load_rules()
    config = _legacy_config(root, tmp_path / "cache", rules)
    pins = json.loads((REPO / "baselines" / "legacy_app.json").read_text())["pins"]
    assert "CTX702" in pins
    moved = {k: v for k, v in pins.items() if k != "CTX702"}  # an update that drops a pin
    before = Engine(config, rules, jobs=1, pinned=pins).run()

    answered = _spy_on_rounds(rules, monkeypatch)
    after = Engine(config, rules, jobs=1, pinned=moved).run()
    assert answered == []  # every round replayed
    monkeypatch.undo()

    fresh = Engine(config, load_rules(), jobs=1, pinned=moved, use_cache=False).run()
    assert _shown(after) == _shown(fresh)
    assert _shown(after) != _shown(before)  # the pins reached the checks
    assert any(f.rule == "CTX702" for f in after.findings if f not in before.findings)


def test_another_ruff_reruns_the_checks_not_the_rounds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same ctxlint installed elsewhere (a pre-commit hook's venv) has its own
    ruff, which CTX401's check runs: its environment differs, the rounds do not."""
    root = _copy("legacy_app", tmp_path)
    rules = load_rules()
    config = _legacy_config(root, tmp_path / "cache", rules)
    Engine(config, rules, jobs=1).run()
    (ctx401,) = (r for r in rules if r.id == "CTX401")
    monkeypatch.setattr(ctx401, "environment", lambda: "ruff: /elsewhere/bin/ruff 1 2")
    answered = _spy_on_rounds(rules, monkeypatch)
    elsewhere = Engine(config, rules, jobs=1).run()
    assert answered == []
    fresh = Engine(config, load_rules(), jobs=1, use_cache=False).run()
    assert _shown(elsewhere) == _shown(fresh)


def test_the_keys_kept_from_run_to_run_are_those_made_afresh() -> None:
    """A resident RoundMemo keeps each rule's shares and keys between learns
    (RoundCache.joined): over random edits (a part's digest changed, a
    position-only change that leaves every share, a module), each key is the
    one a RoundMemo with nothing kept makes, and a key is hashed again only
    when a share of the rule changed."""
    import random

    from ctxlint.engine.rounds import RoundCache, RoundMemo

    rng = random.Random(11)
    rules = load_rules()[:6]
    keys = sorted({k for r in rules for k in reads(r)} | {"other"})
    paths = [f"p{i:02}.py" for i in range(20)]
    modules = {p: p[:-3] for p in paths}
    parts: dict[str, dict[str, str]] = {}
    digests: dict[str, str] = {}

    def put(path: str, like: dict[str, str] | None = None) -> None:
        d = f"{rng.getrandbits(64):016x}"
        parts[d] = dict(like) if like is not None else {k: str(rng.randrange(3)) for k in keys}
        digests[path] = d

    def memo(kept: RoundCache, head: str) -> RoundMemo:
        made = RoundMemo(None, head, kept=kept)  # type: ignore[arg-type]
        made._parts.update(parts)
        made._order_files(modules, digests)
        return made

    for p in paths:
        put(p)
    kept = RoundCache()
    hashed = 0
    for step in range(40):
        path = rng.choice(paths)
        if step % 3 == 0:
            put(path, parts[digests[path]])  # a new entry, every share as it was
        elif step % 7 == 0:
            modules[path] = f"m{rng.randrange(4)}"
        else:
            put(path)
        head, tokens = f"head{step // 20}", "\0".join(sorted({"a", str(step % 5 == 4)}))
        resident, fresh = memo(kept, head), memo(RoundCache(), head)
        for rule in rules:
            before = dict(kept.joined.get(rule.id, ((), [], {}))[2])
            got = resident._key(rule, modules, digests, tokens)
            assert got == fresh._key(rule, modules, digests, tokens)
            hashed += (head, tokens) not in before or before[(head, tokens)] != got
    assert 0 < hashed < 40 * len(rules)  # (some keys were kept, some made again)
