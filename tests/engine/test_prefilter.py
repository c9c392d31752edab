"""The prefilter is an optimisation: a file it lets in that no rule asked for
changes no finding.

That is what lets a check start its rounds where an earlier check of the tree
ended (Engine's `start`: a fix's re-check starts where the check of the tree as
it was ended, and scans only the rewritten files again). Derived sets may grow
with the files let in (a process entry in a file no rule needed), so such a
run's outcome is stored apart from a plain check's.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from conftest import REPO
from fixrun import fix_project
from helpers import NO_BYTECODE, in_repository, project_config, run_engine

import ctxlint.engine.rounds as rounds
from ctxlint.engine.run import Engine
from ctxlint.engine.start import Start
from ctxlint.facts.vocab import Vocabulary
from ctxlint.fix_run import FixRun

WHERE = [".", "examples/legacy_app"]


def _every_file(_cache: Any, paths: list[str], *_args: Any) -> set[str]:
    return set(paths)


@pytest.mark.parametrize("where", WHERE)
def test_every_file_let_in_changes_no_finding(where: str) -> None:
    """On the repository's own check (ctxrt, the serving app) and the legacy app."""
    plain = run_engine(REPO / where)
    with mock.patch("ctxlint.engine.run.prefilter", _every_file):
        everything = run_engine(REPO / where)
    assert len(everything.program.files) > len(plain.program.files)  # more files parsed
    assert everything.findings == plain.findings
    assert everything.errors == plain.errors
    assert plain.findings or where == ".", "the legacy app has findings to compare"


class _Rounds:
    """Counts the fixed-point rounds whose answers were worked out (RoundMemo.learn)."""

    def __init__(self) -> None:
        self.count = 0
        learn = rounds.RoundMemo.learn

        def counted(memo: rounds.RoundMemo, *args: Any, **kwargs: Any) -> set[str]:
            self.count += 1
            return learn(memo, *args, **kwargs)

        self.patch = lambda: mock.patch.object(rounds.RoundMemo, "learn", counted)


@pytest.mark.parametrize("where", WHERE)
def test_a_run_started_where_an_earlier_run_ended_needs_one_round(where: str) -> None:
    config, rules = project_config(REPO / where)
    counted = _Rounds()
    with counted.patch():
        plain = Engine(config, rules, jobs=1, use_cache=False).run()
        plain_rounds, counted.count = counted.count, 0
        started = Engine(config, rules, jobs=1, use_cache=False, start=Start(plain.rounds)).run()
    assert plain_rounds == 2 and counted.count == 1
    assert plain.rounds is not None and plain.rounds.tokens and plain.rounds.let_in
    assert started.rounds == plain.rounds
    assert started.findings == plain.findings
    assert started.pins == plain.pins


def _legacy_copy(tmp_path: Path) -> Path:
    """examples/legacy_app with the runtime, laid out as its config expects."""
    for part in ("src/ctxrt", "examples/legacy_app"):  # the config's root is two up
        shutil.copytree(REPO / part, tmp_path / part, ignore=NO_BYTECODE)
    shutil.copy(REPO / "examples" / "__init__.py", tmp_path / "examples")
    in_repository(tmp_path)
    return tmp_path / "examples" / "legacy_app"


def test_a_started_run_scans_the_changed_files_again(tmp_path: Path) -> None:
    """A file the start left out that now reads the record is let in (and
    reported) when named as changed; as the plain check of the edited tree does."""
    rel = "examples/legacy_app/sizes.py"
    config, rules = project_config(_legacy_copy(tmp_path))
    (tmp_path / rel).write_text("def size():\n    return 1\n")
    before = Engine(config, rules, jobs=1, use_cache=False).run()
    assert before.rounds is not None
    assert rel in before.program.paths and rel not in before.rounds.let_in
    (tmp_path / rel).write_text(
        "from ctxrt.context import get_server_args\n\n\n"
        "def size():\n    return get_server_args().tp_size\n"
    )
    plain = Engine(config, rules, jobs=1, use_cache=False).run()
    start = Start(before.rounds, frozenset({rel}))
    started = Engine(config, rules, jobs=1, use_cache=False, start=start).run()
    assert any(f.path == rel for f in plain.findings)
    assert started.findings == plain.findings
    assert started.rounds is not None and rel in started.rounds.let_in


def test_a_started_runs_outcome_is_stored_apart(tmp_path: Path) -> None:
    """A later plain check of the same tree does not replay it (its sets may be larger)."""
    config, rules = project_config(_legacy_copy(tmp_path))
    ended = Engine(config, rules, jobs=1, use_cache=False).run().rounds
    counted = _Rounds()
    with counted.patch():
        started = Engine(config, rules, jobs=1, start=Start(ended)).run()
        counted.count = 0
        plain = Engine(config, rules, jobs=1).run()
        assert counted.count > 0  # worked out, not the started run's outcome
        counted.count = 0
        again = Engine(config, rules, jobs=1).run()
        assert counted.count == 0  # the plain outcome, replayed
    assert started.findings == plain.findings == again.findings


def test_the_fix_re_check_starts_from_the_first_checks_tokens() -> None:
    """And fixes exactly what a re-check from the rules' own tokens fixes."""
    where = REPO / "examples" / "legacy_app"
    select = {"CTX101", "CTX102", "CTX401", "CTX602"}
    counted = _Rounds()
    with counted.patch():
        started = fix_project(where, select, unsafe=True, write=False)
    started_rounds, counted.count = counted.count, 0
    check = FixRun._check

    def unstarted(self: FixRun, texts: dict[str, str], **kwargs: Any) -> Any:
        return check(self, texts, **(kwargs | {"start": None}))

    with counted.patch(), mock.patch.object(FixRun, "_check", unstarted):
        plain = fix_project(where, select, unsafe=True, write=False)
    assert started.checks == plain.checks == 2
    assert (started_rounds, counted.count) == (3, 4)  # the re-check: one round, not two
    assert started.after == plain.after and started.after
    assert [vars(s) for s in started.sites] == [vars(s) for s in plain.sites]
    assert started.output is not None and plain.output is not None
    assert started.output.findings == plain.output.findings


def test_the_fix_re_check_decodes_only_the_rewritten_files() -> None:
    """The facts of every other file are taken as the first check decoded them."""
    where = REPO / "examples" / "legacy_app"
    decoded: list[list[str]] = []
    run, decode = Engine.run, Engine._decoded

    def counting_run(self: Engine) -> Any:
        decoded.append([])
        return run(self)

    def counting_decode(self: Engine, item: tuple[str, str], blob: bytes, *args: Any) -> Any:
        if isinstance(args[-1], Vocabulary):  # a file's rule facts (not its schema or syntax)
            decoded[-1].append(item[0])
        return decode(self, item, blob, *args)

    with (
        mock.patch.object(Engine, "run", counting_run),
        mock.patch.object(Engine, "_decoded", counting_decode),
    ):
        result = fix_project(where, {"CTX101", "CTX401"}, write=False)
    assert result.checks == 2 and len(decoded) == 2
    assert len(decoded[0]) > 20
    assert sorted(decoded[1]) == sorted(result.after)
