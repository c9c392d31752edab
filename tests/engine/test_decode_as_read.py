"""A run that reads every file's entry decodes each file's typed parts as it
reads the entry (program.fact_kinds), so no file's JSON of those parts is
held beside the typed facts (it was most of a run's peak memory: on sglang
0.5.23, 200 MiB of the server's first full check); an edit's few entries are
left to the rules that ask. Decoded texts are shared, one object per text."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from test_check_memo import LEGACY, _no_cache, _session, _warm_copy
from test_moved_outcomes import _body_starts, _with_statement

from ctxlint import session
from ctxlint.engine.registry import load_rules
from ctxlint.facts.typed import Decoded, Site, decode, decoder
from ctxlint.program import core as program_core
from ctxlint.program.call_model import ModuleSummary
from ctxlint.program.classes import ClassFileFacts
from ctxlint.program.core import Program
from ctxlint.program.fact_kinds import fact_decoders, finished_kind
from ctxlint.program.seed_reads import SeedReadFact

REL = f"{LEGACY}/scheduler.py"


def test_each_key_is_decoded_as_its_visitors_finish_is_annotated() -> None:
    rules = tuple(load_rules())
    decoders = fact_decoders(rules)
    assert decoders["classes"] is decoder(ClassFileFacts)
    assert decoders["CTX101"] is decoder(list[SeedReadFact])  # (a list, not a dataclass)
    # plain JSON parts (annotated Any) are read as JSON by what reads them
    assert {"records", "calls", "config_sites", "bindings"}.isdisjoint(decoders)
    typed = {r.id for r in rules if r.visitor is not None and finished_kind(r.visitor)}
    assert typed <= set(decoders) and len(typed) >= 10


def _parts(entry: dict[str, Any], keys: set[str]) -> dict[str, bool]:
    """Each of `keys` the entry has -> whether it is held decoded."""
    facts = entry["facts"]
    return {k: type(facts[k]) is Decoded for k in keys if facts.get(k)}


def test_a_run_that_reads_every_entry_holds_no_json_of_a_typed_part(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _warm_copy("legacy_app", tmp_path)
    keys = set(fact_decoders(tuple(load_rules())))
    asked: list[tuple[str, bool]] = []  # (key, held decoded already) of each rule's ask
    real = program_core._typed

    def typed(facts: dict[str, Any], key: str, found: Any, read: Any) -> Any:
        asked.append((key, type(found) is Decoded))
        return real(facts, key, found, read)

    monkeypatch.setattr(program_core, "_typed", typed)
    out = _no_cache(root)
    assert asked and all(done for _, done in asked), sorted({k for k, d in asked if not d})
    held = {p: _parts(e, keys) for p, e in out.program.files.items()}
    assert sum(len(parts) for parts in held.values()) > 20
    assert all(all(parts.values()) for parts in held.values()), held
    # the call summaries too (read as each entry is, as before)
    assert all(
        isinstance(e["facts"]["calls"], ModuleSummary)
        for e in out.program.files.values()
        if e["facts"].get("calls")
    )


def test_an_edit_leaves_its_files_parts_to_the_rules_that_ask(tmp_path: Path) -> None:
    root = _warm_copy("legacy_app", tmp_path)
    setup = _session(root)
    keys = set(fact_decoders(tuple(setup.rules)))
    original = (root / REL).read_text()
    session.check(setup, texts={REL: original})
    line, indent = _body_starts(original)[-1]
    out = session.check(setup, texts={REL: _with_statement(original, line, indent)}).out
    edited = _parts(out.program.files[REL], keys)
    assert edited and not all(edited.values()), edited  # some never asked: still JSON
    others = [_parts(e, keys) for p, e in out.program.files.items() if p != REL]
    assert all(all(parts.values()) for parts in others)  # (the earlier run's, kept)


def test_a_part_asked_as_another_kind_is_an_error() -> None:
    raw = [{"scope": "f", "snippet": "x", "span": [1, 0, 1, 1]}]
    files = {"a.py": {"module": "a", "facts": {"K": raw}}}
    program = Program(config=None, vocab=None, files=files)  # type: ignore[arg-type]
    assert program.typed_file("a.py", "K", list[Site]) == [Site("f", "x", [1, 0, 1, 1])]
    with pytest.raises(TypeError, match="another kind"):
        program.typed_file("a.py", "K", tuple[Site, ...])


def test_equal_texts_decode_to_one_object() -> None:
    scope = "".join(["Scheduler.", "run"])  # two objects of one text, as json.loads makes
    again = "".join(["Scheduler", ".run"])
    assert scope is not again
    raw = [
        {"scope": scope, "snippet": "a", "span": [1, 0, 1, 1]},
        {"scope": again, "snippet": "b", "span": [2, 0, 2, 1]},
    ]
    one, two = decode(list[Site], raw)
    assert one.scope is two.scope
    names = decode(dict[str, tuple[str, ...]], {"".join(["k", "ey"]): ["".join(["v", "al"])]})
    assert next(iter(names)) is sys.intern("key") and names["key"][0] is sys.intern("val")
