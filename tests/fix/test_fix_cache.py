"""The fix run's plan cache (fix.plan_cache) and its "named elsewhere" answers
(fix.elsewhere), on a copy of examples/legacy_app: a fix with nothing new to
do plans no file and searches no file, and a warm run gives what a --no-cache
run gives after an edit, a new file, a rename, a deletion and a copy of the
tree. (Its model_runner.py imports `get_model` from model_loader: CTX401
renames it there unless another file may import it from model_runner.)"""

from __future__ import annotations

import re
import shutil
from dataclasses import astuple
from pathlib import Path
from typing import Any

import pytest
from helpers import in_repository, project_config
from test_fix import APP, CONFIG, copy_tree

from ctxlint.fix import plan_cache
from ctxlint.fix.elsewhere import NamedElsewhere
from ctxlint.fix.plan import Site
from ctxlint.fix_run import FixResult, FixRun
from ctxlint.session import Request, RunOptions, Setup

FIXING = {"CTX101", "CTX102", "CTX401", "CTX602"}
RUNNER = f"{APP}/model_runner.py"
RENAMED = "get_model as model_loader_get_model"


def setup(root: Path, *, use_cache: bool, jobs: int = 1) -> Setup:
    """The example app's setup (its config, every rule selected)."""
    config, rules = project_config(root, root / CONFIG)
    request = Request(run=RunOptions(jobs=jobs, use_cache=use_cache))
    return Setup(config, [], rules, rules, request=request)


def fix(root: Path, *, use_cache: bool, unsafe: bool = False, jobs: int = 1) -> tuple[Any, ...]:
    """What a fix run says and would write, and how it got there (planned,
    replayed, searches of the tree)."""
    run = FixRun(setup(root, use_cache=use_cache, jobs=jobs), select=FIXING, unsafe=unsafe)
    result = run.run()
    return outcome(result), (result.planned, result.replayed, run.elsewhere.searches)


def outcome(result: FixResult) -> tuple[Any, ...]:
    assert result.output is not None
    sites = [astuple(s) for s in result.sites]
    findings = sorted((f.path, f.line, f.rule, f.message) for f in result.output.findings)
    return sites, dict(result.after), findings, result.checks


def renamed(said: tuple[Any, ...]) -> bool:
    return any(s[1] == RUNNER and s[9] == RENAMED for s in said[0])


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return in_repository(copy_tree(tmp_path / "repo"))


def test_a_fix_run_again_plans_no_file_and_searches_none(tree: Path) -> None:
    cold, (planned, replayed, _) = fix(tree, use_cache=True, jobs=2)  # traces from the pool
    assert planned > 0 and replayed == 0
    warm, (planned, replayed, searches) = fix(tree, use_cache=True)
    assert warm == cold
    assert (planned, searches) == (0, 0) and replayed == len({s[1] for s in cold[0]})
    assert renamed(warm)


def test_a_fix_with_nothing_to_do_after_a_fix_plans_no_file(tree: Path) -> None:
    run = FixRun(setup(tree, use_cache=True), select=FIXING)
    run.write(run.run())
    first, (planned, _, _) = fix(tree, use_cache=True)  # the rewritten file is planned
    assert not first[1] and planned == 1
    again, (planned, replayed, searches) = fix(tree, use_cache=True)
    assert again == first == fix(tree, use_cache=False)[0]
    assert (planned, searches) == (0, 0) and replayed > 0


def test_warm_is_no_cache_after_an_edit_a_new_file_a_rename_and_a_deletion(tree: Path) -> None:
    fix(tree, use_cache=True)  # the cache holds the tree as copied

    def same() -> tuple[Any, ...]:
        warm = fix(tree, use_cache=True)[0]
        assert warm == fix(tree, use_cache=False)[0]
        return warm

    other = tree / APP / "uses_runner.py"
    other.write_text("from examples.legacy_app.model_runner import get_model\n")
    assert not renamed(same())  # another file imports it from there: left
    moved = other.with_name("uses_runner_too.py")
    other.rename(moved)
    assert not renamed(same())
    moved.unlink()
    assert renamed(same())
    runner = tree / RUNNER
    runner.write_text("# edited\n" + runner.read_text())
    assert renamed(same())


def test_warm_is_no_cache_with_unsafe_fixes_and_their_guards(tree: Path) -> None:
    cold = fix(tree, use_cache=True, unsafe=True)[0]
    warm, (planned, replayed, _) = fix(tree, use_cache=True, unsafe=True)
    assert warm == cold == fix(tree, use_cache=False, unsafe=True)[0]
    assert planned == 0 and replayed > 0
    # the safe run's outcomes are its own: none is taken for the unsafe one's
    assert fix(tree, use_cache=True)[1][1] == 0


def test_a_copy_of_the_tree_with_its_cache_replays_what_holds_there(tree: Path) -> None:
    fix(tree, use_cache=True)
    copy = in_repository(tree.parent / "copy")
    shutil.copytree(tree, copy, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".git"))
    warm, (planned, replayed, _) = fix(copy, use_cache=True)
    assert planned == 0 and replayed > 0
    assert warm == fix(copy, use_cache=False)[0]


def test_an_outcome_naming_its_own_path_is_not_kept() -> None:
    trace = plan_cache.Trace("pkg/mod.py")
    site = Site("CTX401", "pkg/mod.py", 1, 1, "x", "<module>", reason="see pkg/mod.py")
    assert plan_cache.outcome(trace, [site], None) is None
    site.reason = "elsewhere"
    kept = plan_cache.outcome(trace, [site], None)
    assert kept is not None and "pkg/mod.py" not in plan_cache.encode(kept).decode()
    trace.other_path = True  # a question about another file's path
    assert plan_cache.outcome(trace, [site], None) is None


def test_an_entry_of_another_shape_is_a_miss() -> None:
    assert plan_cache.decode(b"not json") is None
    assert plan_cache.decode(b'{"asked": [], "sites": [{"rule": 1}], "after": null}') is None
    assert plan_cache.decode(b'{"asked": [["who", "x"]], "sites": [], "after": null}') is None
    assert plan_cache.decode(b'{"asked": [], "sites": [], "after": null}') is not None


def test_named_elsewhere_answers_as_a_search_of_each_file_would() -> None:
    files = {
        "a.py": b"from pkg.runner import get_model\n",
        "b.py": b"x = runner.get_model  # \xe4\xb8\xad\n",
        "c.py": b"bad \xff utf-8: runner\0 get_model_two\n",
        "d.py": "ünïcode_name = 1\n".encode(),
        "e.py": b"",
    }
    paths = sorted(files)
    search = NamedElsewhere(paths, files.__getitem__)

    def naive(patterns: list[str], path: str) -> bool:
        return any(
            rel != path
            and all(re.search(p, files[rel].decode("utf-8", "replace")) for p in patterns)
            for rel in paths
        )

    questions = [
        [r"\brunner\b", r"\bget_model\b"],
        [r"\.get_model\b"],
        [r"\bget_model_two\b"],
        [r"\bünïcode_name\b"],
        [r"\bnowhere\b"],
    ]
    for patterns in questions:
        for path in [*paths, "elsewhere.py"]:
            assert search(patterns, path) == naive(patterns, path), (patterns, path)
    assert search.searches == len(questions) * (len(paths) + 1)


def test_a_rewrite_of_a_file_that_names_its_own_path_is_kept_unless_the_fix_wrote_it() -> None:
    trace = plan_cache.Trace("pkg/mod.py")
    before = "# pkg/mod.py: the module\nx = 1\n"
    assert plan_cache.outcome(trace, [], before + "y = 2\n", before) is not None
    assert plan_cache.outcome(trace, [], "x = 1  # pkg/mod.py\n", "x = 1\n") is None


def test_an_unsaved_buffer_is_planned_and_kept_by_its_own_text(tree: Path) -> None:
    """The language server's buffers stand in for the disk: a plan is made of
    the buffer's text and kept under its content, not the file's."""
    text = "# edited\n" + (tree / RUNNER).read_text()

    def buffered(use_cache: bool) -> tuple[tuple[Any, ...], tuple[int, int]]:
        run = FixRun(setup(tree, use_cache=use_cache), select=FIXING, texts={RUNNER: text})
        result = run.run()
        return outcome(result), (result.planned, result.replayed)

    cold, (planned, _) = buffered(True)
    assert cold[1][RUNNER].startswith("# edited\n") and renamed(cold) and planned > 0
    warm, (planned, replayed) = buffered(True)
    assert warm == cold == buffered(False)[0] and planned == 0 and replayed > 0
    disk, (planned, _, _) = fix(tree, use_cache=True)  # the file as saved: its own plan
    assert not disk[1][RUNNER].startswith("# edited\n") and planned > 0


def test_an_unsafe_fix_again_builds_no_program_for_its_guards(tree: Path) -> None:
    """CTX102's unsafe fix reads CTX301's guard (a read moved before publish is a
    finding): a run whose check replays the stored outcome takes the guard
    stored beside it, instead of building the whole program again to ask it."""

    def unsafe_fix() -> tuple[Any, int]:
        run = FixRun(setup(tree, use_cache=True), select=FIXING, unsafe=True)
        result = run.run()
        return outcome(result), run.guards_built

    cold, _ = unsafe_fix()  # the program is built: its guards are asked and kept
    assert any(s[0] == "CTX102" for s in cold[0])
    warm, built = unsafe_fix()
    assert warm == cold and built == 0
    # an edit moves the check's key: the guard is asked of the new program
    runner = tree / RUNNER
    runner.write_text(runner.read_text() + "\n_EDITED = 1\n")
    edited, _ = unsafe_fix()
    again, built = unsafe_fix()
    assert again == edited and built == 0
    assert edited[0] == fix(tree, use_cache=False, unsafe=True)[0][0]
