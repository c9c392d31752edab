"""`ctxlint fix` never makes things worse: files it cannot read back are not
touched, a rewrite that adds a finding is rolled back, a name another file
may use is kept, and a write is atomic."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from fixrun import fix_project
from helpers import RECORD_WRITER, cli, write

from ctxlint.fix.plan import FIXED, LEFT, ROLLED_BACK
from ctxlint.fix.reads import IMPORT_TIME, SEED_CHANGE
from ctxlint.rules.ctx101_seed_read import RULE as CTX101

READ = """\
from specrt.context import get_server_args


def limit() -> int:
    return get_server_args().max_running_requests
"""


def test_a_file_that_does_not_parse_is_never_touched(project: Path) -> None:
    broken = "from specrt.context import get_server_args\n\ndef f(:\n    return get_server_args().tp_size\n"
    write(project, {"app/example.py": READ, "app/broken.py": broken})
    result = fix_project(project, {"CTX101"}, unsafe=True)
    assert (project / "app/broken.py").read_text() == broken
    assert [s.status for s in result.sites] == [FIXED]
    assert "get_schedule().max_running_requests" in (project / "app/example.py").read_text()
    assert [e.path for e in result.errors] == ["app/broken.py"]
    out = cli("fix", "--diff", cwd=project)
    assert "not touched: app/broken.py: syntax error at line 3" in out.stderr
    assert out.returncode == 2  # as `check` exits for a file it could not parse


@pytest.mark.parametrize(
    "flags",
    [(), ("--diff",), ("-q",), ("--diff", "-q"), ("--exit-zero",), ("--ignore-errors",)],
)
def test_a_file_that_does_not_parse_fails_the_fix_run(project: Path, flags: tuple) -> None:
    """Even with nothing to fix, and quiet: named on stderr, exit 2 (as `check`),
    unless --ignore-errors; --exit-zero does not hide it."""
    write(project, {"app/broken.py": "def f(:\n    pass\n"})
    out = cli("fix", *flags, cwd=project)
    assert "not touched: app/broken.py: syntax error at line 1" in out.stderr, out.stderr
    assert out.returncode == (0 if "--ignore-errors" in flags else 2), out.stdout + out.stderr
    assert "Traceback" not in out.stderr
    assert cli("check", cwd=project).returncode == 2


def test_a_fixer_that_fails_leaves_its_file_and_says_so(project: Path, monkeypatch) -> None:
    def broken(plan, findings, ctx):
        raise KeyError("boom")

    monkeypatch.setattr(CTX101, "fixers", lambda: (broken,))
    write(project, {"app/example.py": READ})
    result = fix_project(project, {"CTX101"}, unsafe=True)
    assert [(s.status, s.reason) for s in result.sites] == [
        (LEFT, "the fix failed on this file (KeyError: 'boom'); please report it")
    ]
    assert (project / "app/example.py").read_text() == READ


def test_a_file_not_in_utf8_is_left_with_the_reason(project: Path) -> None:
    text = "# -*- coding: latin-1 -*-\n# caf\xe9\n" + READ
    (project / "app" / "old.py").write_bytes(text.encode("latin-1"))
    result = fix_project(project, {"CTX101"}, unsafe=True)
    assert [(s.status, s.reason) for s in result.sites] == [
        (LEFT, "the file is not touched: not UTF-8 (the fix writes UTF-8 only)")
    ]
    assert (project / "app" / "old.py").read_bytes() == text.encode("latin-1")


def test_a_rewrite_that_adds_a_finding_is_rolled_back(project: Path) -> None:
    # the seed read sits above the publish: its bag leaf would be read before it (CTX301)
    entry = """\
from specrt.context import get_server_args, publish


def run_scheduler_process(server_args) -> None:
    limit = get_server_args().max_running_requests
    publish(server_args, role="scheduler")
    print(limit)
"""
    write(project, {"app/entry.py": entry, "app/example.py": READ})
    result = fix_project(project, {"CTX101"}, unsafe=True)
    by_path = {s.path: s for s in result.sites}
    assert by_path["app/entry.py"].status == ROLLED_BACK
    assert "added a CTX301 finding" in by_path["app/entry.py"].reason
    assert (project / "app/entry.py").read_text() == entry  # per file: the other one holds
    assert by_path["app/example.py"].status == FIXED


def test_a_module_alias_another_file_names_is_kept(project: Path) -> None:
    alias = """\
from specrt.context import get_server_args

SEED = get_server_args()


def size() -> int:
    return SEED.tp_size
"""
    write(project, {"app/example.py": alias, "app/user.py": "from app.example import SEED\n"})
    result = fix_project(project, {"CTX101"}, unsafe=True)
    assert [s.reason for s in result.sites] == [
        "the module-level alias `SEED` is named in another file"
    ]
    assert (project / "app/example.py").read_text() == alias


def test_the_write_is_atomic_and_keeps_the_mode(project: Path) -> None:
    write(project, {"app/example.py": READ})
    path = project / "app/example.py"
    path.chmod(0o640)
    inode = path.stat().st_ino
    fix_project(project, {"CTX101"}, unsafe=True)
    assert path.stat().st_mode & 0o777 == 0o640
    assert path.stat().st_ino != inode  # replaced by a rename, not rewritten in place
    assert sorted(p.name for p in path.parent.iterdir()) == ["__init__.py", "example.py"]


def test_fix_with_a_baseline_leaves_it_and_says_what_is_stale(project: Path) -> None:
    write(project, {"app/example.py": READ})
    (project / "pyproject.toml").write_text(
        (project / "pyproject.toml").read_text() + 'baseline = "ctxlint-baseline.json"\n'
    )
    cli("baseline", "update", "--allow-growth", "--reason", "start", cwd=project)
    pinned = (project / "ctxlint-baseline.json").read_text()
    out = cli("fix", "--unsafe", cwd=project)
    assert out.returncode == 0, out.stderr
    assert "1 entry is now stale" in out.stdout
    assert (project / "ctxlint-baseline.json").read_text() == pinned
    strict = cli("check", "--strict", cwd=project)
    assert strict.returncode == 1 and "stale" in strict.stdout + strict.stderr


def _recording_fixer(monkeypatch, folder: Path) -> None:
    """CTX101's fixer, leaving a file named after the process that ran it."""
    (fixer,) = type(CTX101).fixers(CTX101)

    def recording(plan, findings, ctx):
        (folder / f"{os.getpid()}-{plan.src.path.replace('/', '_')}").touch()
        fixer(plan, findings, ctx)

    monkeypatch.setattr(CTX101, "fixers", lambda: (recording,))


def test_files_are_planned_on_the_pool_with_the_outcome_of_one_process(
    project: Path, monkeypatch, tmp_path: Path
) -> None:
    other = READ.replace("max_running_requests", "tp_size")
    write(project, {"app/a.py": READ, "app/b.py": other, "app/c.py": READ})
    outcomes = {}
    for jobs in (1, 2):
        seen = tmp_path / f"jobs{jobs}"
        seen.mkdir()
        _recording_fixer(monkeypatch, seen)
        result = fix_project(project, {"CTX101"}, unsafe=True, write=False, jobs=jobs)
        pids = {p.name.partition("-")[0] for p in seen.iterdir()}
        assert len(list(seen.iterdir())) == 3
        assert (str(os.getpid()) in pids) == (jobs == 1)  # jobs 2: planned in the workers
        outcomes[jobs] = (result.before, result.after, [vars(s) for s in result.sites])
    assert outcomes[1] == outcomes[2]
    assert sorted(outcomes[2][1]) == ["app/a.py", "app/b.py", "app/c.py"]


def test_a_file_whose_planning_kills_the_worker_is_left_and_says_so(
    project: Path, monkeypatch
) -> None:
    (fixer,) = CTX101.fixers()

    def crashing(plan, findings, ctx):
        if plan.src.path == "app/b.py" and os.getpid() != parent:
            os._exit(9)  # a native crash in a worker, as LibCST's parser can have
        fixer(plan, findings, ctx)

    parent = os.getpid()
    monkeypatch.setattr(CTX101, "fixers", lambda: (crashing,))
    write(project, {"app/a.py": READ, "app/b.py": READ, "app/c.py": READ})
    result = fix_project(project, {"CTX101"}, unsafe=True, jobs=2)
    by_path = {s.path: (s.status, s.reason) for s in result.sites}
    assert by_path == {
        "app/a.py": (FIXED, SEED_CHANGE),
        "app/b.py": (
            LEFT,
            "planning this file killed the worker (exit status 9); please report it",
        ),
        "app/c.py": (FIXED, SEED_CHANGE),
    }
    assert (project / "app/b.py").read_text() == READ
    assert "get_schedule().max_running_requests" in (project / "app/a.py").read_text()


def test_a_read_before_a_publish_through_another_module_is_left_unchecked(
    project: Path,
) -> None:
    """The entry publishes through another module's helper: the walk keeps that
    call's line, so the rewrite above it is left with its reason (CTX301), not
    made, checked again and rolled back."""
    entry = """\
from app.boot import start
from specrt.record import ServerArgs


def run_scheduler_process(server_args: ServerArgs) -> None:
    limit = server_args.max_running_requests
    start(server_args)
    print(limit)
"""
    boot = """\
from specrt.context import publish


def start(server_args) -> None:
    publish(server_args, role="scheduler")
"""
    write(project, {"app/entry.py": entry, "app/boot.py": boot})
    result = fix_project(project, {"CTX102"}, unsafe=True)
    (site,) = [s for s in result.sites if s.path == "app/entry.py"]
    assert site.status == LEFT
    assert "run_scheduler_process runs this line before its record is published" in site.reason
    assert result.checks == 1  # nothing rewritten: no check of a rewritten program
    assert (project / "app/entry.py").read_text() == entry


def test_a_read_cached_in_a_module_global_is_left_and_the_file_keeps_its_other_fix(
    project: Path,
) -> None:
    """A bag read in the value of `global X; X = ...` would be a CTX602 finding:
    that site is left with its reason, so the file is not rolled back and its
    other site stays fixed, after one check of the rewritten program."""
    code = """\
from specrt.record import ServerArgs

_SIZE = None


def setup(server_args: ServerArgs) -> int:
    global _SIZE
    n = server_args.dp_size
    _SIZE = max(server_args.tp_size, 1)
    return n
"""
    write(project, {"app/cached.py": code})
    result = fix_project(project, {"CTX102"}, unsafe=True)
    by_snippet = {s.snippet: s for s in result.sites}
    kept = by_snippet["server_args.tp_size"]
    assert kept.status == LEFT and "module global `_SIZE`" in kept.reason
    assert by_snippet["server_args.dp_size"].status == FIXED
    assert result.checks == 2  # the first check, and one of the rewritten program
    text = (project / "app/cached.py").read_text()
    assert "n = get_parallel().dp_size" in text and "max(server_args.tp_size, 1)" in text


RESOLVED = """\
from specrt.context import get_server_args


def backend() -> str:
    return getattr(get_server_args(), "attention_backend", None) or "sdpa"
"""


def test_a_seed_read_that_becomes_a_bag_leaf_is_an_unsafe_fix(project: Path) -> None:
    """The seed holds the raw input; the leaf what resolution decided: where
    resolution decides the field the value changes, so it is made only when asked."""
    write(project, {"app/example.py": RESOLVED})
    safe = fix_project(project, {"CTX101"})
    assert [(s.status, s.unsafe) for s in safe.sites] == [(LEFT, True)]
    assert "run with --unsafe" in safe.sites[0].reason
    assert (project / "app/example.py").read_text() == RESOLVED
    done = fix_project(project, {"CTX101"}, unsafe=True)
    assert [(s.status, s.reason) for s in done.sites] == [(FIXED, SEED_CHANGE)]
    assert "get_exec().kernel.attention_backend" in (project / "app/example.py").read_text()


IMPORT_TIME_READ = """\
from specrt.context import get_server_args

DEFAULT_LIMIT = get_server_args().max_running_requests


def limit() -> int:
    return get_server_args().max_running_requests


def with_default(tp=get_server_args().tp_size) -> int:
    return tp
"""


def test_an_import_time_read_is_left_with_its_reason_and_the_others_are_fixed(
    project: Path,
) -> None:
    """A bag read at import time is a CTX602 finding: the site is left up front
    (its own reason), not rewritten and rolled back with the file's other sites."""
    write(project, {"app/example.py": IMPORT_TIME_READ})
    result = fix_project(project, {"CTX101"}, unsafe=True)
    by_line = {s.line: (s.status, s.reason) for s in result.sites}
    assert by_line == {3: (LEFT, IMPORT_TIME), 7: (FIXED, SEED_CHANGE), 10: (LEFT, IMPORT_TIME)}
    text = (project / "app/example.py").read_text()
    assert "    return get_schedule().max_running_requests\n" in text
    assert "DEFAULT_LIMIT = get_server_args().max_running_requests\n" in text


def test_findings_of_rules_with_no_fix_are_said_and_fail_the_run(project: Path) -> None:
    """`fix` does not say "0 left" and exit 0 while `check` still fails (ruff's --fix
    exits 1 over what remains); with no baseline there is nothing to update."""
    write(project, {"app/example.py": READ, "app/writer.py": RECORD_WRITER.format(n=1)})
    out = cli("fix", "--unsafe", cwd=project)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "Fixed 1 site in 1 file (1 unsafe); 0 left." in out.stdout
    assert (
        "1 finding of rules with no fix remains (CTX201): `ctxlint check` lists it." in out.stdout
    )
    assert "baseline" not in out.stdout
    assert cli("fix", "--unsafe", "--exit-zero", cwd=project).returncode == 0
    # --diff keeps ruff's --diff exit: only whether there is a diff
    assert cli("fix", "--diff", cwd=project).returncode == 0


MOVES = """\
from specrt.context import get_server_args


def sizes() -> int:
    sa = get_server_args()
    return sa.tp_size + sa.dp_size


def limit() -> int:
    return get_server_args().max_running_requests
"""


def test_fixed_sites_are_shown_at_their_line_in_the_file_as_written(project: Path) -> None:
    """The alias's line goes, so what follows moves up: a fixed site is shown
    where it now is, as a left one is (they read in two numberings before)."""
    write(project, {"app/example.py": MOVES})
    out = cli("fix", "--unsafe", cwd=project)
    assert out.returncode == 0, out.stdout + out.stderr
    written = (project / "app/example.py").read_text().splitlines()
    shown = re.findall(r"^app/example.py:(\d+):\d+: CTX101 fixed `([^`]*)`", out.stdout, re.M)
    assert len(shown) == 3
    for line, snippet in shown:
        field = snippet.rpartition(".")[2]
        assert field in written[int(line) - 1], (line, snippet, written)
    assert ("9", "get_server_args().max_running_requests") in shown  # line 10 before
