"""Reading files as Python does, whatever they hold: deep but valid code, code
that crashes a parser, encodings, the target grammar, CPython's error
positions, odd file names, and pool workers that die (issue 11: D2-D7, D9,
D12, D19)."""

from __future__ import annotations

import faulthandler
import json
import os
import signal
import subprocess
import sys
import threading
import time
from importlib.util import find_spec
from pathlib import Path

import pytest
from conftest import run_cli
from helpers import cli, run_engine, write

from ctxlint.core import pysource
from ctxlint.facts import extract

SEED = "from specrt.context import get_server_args\n"
READ = "Z = get_server_args().tp_size\n"  # a CTX101 finding, on the line it is put
BASE = 'runtime-module = "specrt.context"\nrecord-class = "specrt.record.ServerArgs"\n'


def _set_table(project: Path, extra: str) -> None:
    (project / "pyproject.toml").write_text("[tool.ctxlint]\n" + BASE + extra)


def _findings(out: object) -> list[tuple[str, int]]:
    return [(f.path, f.span.line) for f in out.findings if f.rule == "CTX101"]  # type: ignore[attr-defined]


def _errors(out: object) -> dict[str, str]:
    return {e.path: e.message for e in out.errors}  # type: ignore[attr-defined]


# -- D2: deep but valid code -----------------------------------------------------
DEEP = {
    "app/concat.py": "X = (" + " ".join(['"a"'] * 1000) + ")\n",
    "app/andops.py": "X = " + " and ".join(["a"] * 1000) + "\n",
    "app/many_ands.py": "X = " + " or ".join(["a"] * 20_000) + "\n",  # LibCST's parser: 8 MiB
    "app/elifs.py": "if a:\n    pass\n"
    + "".join(f"elif a == {i}:\n    pass\n" for i in range(1000)),
    "app/attrs.py": "X = a" + ".b" * 1000 + "\n",
    "app/calls.py": "X = f" + "()" * 480 + "\n",
}


@pytest.mark.parametrize("jobs", [1, 2])
def test_deep_valid_code_is_checked_through_and_through(project: Path, jobs: int) -> None:
    """Each deep file is walked to its end: the read after the deep part is a
    finding on its line, in every file, and nothing is an error."""
    files = {path: SEED + body + READ for path, body in DEEP.items()}
    write(project, files)
    out = run_engine(project, jobs=jobs, select={"CTX101"})
    assert _errors(out) == {}
    expected = sorted((path, text.count("\n")) for path, text in files.items())
    assert sorted(_findings(out)) == expected
    # the deep thread is stopped with its batch: nothing is running when a pool forks
    assert [t.name for t in threading.enumerate() if t.name == "ctxlint-deep"] == []


def test_without_room_for_a_deep_stack_files_are_still_checked(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the 512 MiB thread cannot start (strict overcommit, ulimit -v), the
    work runs on the caller's thread, as before, instead of failing every file."""

    def no_room(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", no_room)
    write(project, {"app/reader.py": SEED + READ})
    out = run_engine(project, select={"CTX101"})
    assert (_errors(out), _findings(out)) == ({}, [("app/reader.py", 2)])
    assert sys.getrecursionlimit() == 1000


def test_cpythons_own_pydoc_topics_is_checked(project: Path) -> None:
    """Lib/pydoc_data/topics.py (one dict of long concatenated strings) used to
    end the whole run with RecursionError."""
    spec = find_spec("pydoc_data.topics")
    assert spec is not None and spec.origin is not None
    topics = Path(spec.origin).read_text(encoding="utf-8")
    write(project, {"app/topics.py": SEED + topics + READ})
    out = run_engine(project, select={"CTX101"})
    assert _errors(out) == {}
    assert _findings(out) == [("app/topics.py", 2 + topics.count("\n"))]


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_file_that_breaks_the_extractor_is_an_error_naming_it(
    project: Path, monkeypatch: pytest.MonkeyPatch, jobs: int
) -> None:
    """Any failure inside one file's extraction is that file's error; the run
    goes on and every other file is checked (the pool's workers are forked, so
    they inherit the patched dispatcher)."""
    real = extract.Dispatcher.on_visit

    def failing(self: extract.Dispatcher, node: object) -> bool:
        if self.ctx.path == "app/bad.py":
            raise RecursionError("maximum recursion depth exceeded")
        return real(self, node)  # type: ignore[arg-type]

    monkeypatch.setattr(extract.Dispatcher, "on_visit", failing)
    write(project, {f"app/ok{i}.py": SEED + READ for i in range(3)} | {"app/bad.py": SEED + READ})
    out = run_engine(project, jobs=jobs, select={"CTX101"})
    assert _errors(out) == {
        "app/bad.py": "cannot check: RecursionError: maximum recursion depth exceeded"
    }
    assert _findings(out) == [(f"app/ok{i}.py", 2) for i in range(3)]


# -- D3: code that crashes LibCST's native parser --------------------------------
NESTED = "X = " + "(" * 2000 + ")" * 2000 + "\n"


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_brackets_nested_too_deep_are_cpythons_syntax_error(project: Path, jobs: str) -> None:
    """2,000 nested brackets segfaulted LibCST (exit 139, no output; on the pool
    BrokenProcessPool). CPython refuses them, and so does the check now, before
    LibCST sees them; the other file is still checked."""
    write(project, {"app/nested.py": SEED + NESTED, "app/reader.py": SEED + READ})
    res = run_cli("check", "--no-cache", "--jobs", jobs, "--format", "json", cwd=project)
    assert res.returncode == 2, res.stderr
    doc = json.loads(res.stdout)
    assert doc["errors"] == [
        {
            "path": "app/nested.py",
            "message": "syntax error at line 2, column 205: too many nested parentheses",
        }
    ]
    assert [(f["path"], f["line"]) for f in doc["findings"] if f["rule"] == "CTX101"] == [
        ("app/reader.py", 2)
    ]


def test_a_worker_killed_mid_file_is_that_files_error(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker that dies (here: a real SIGSEGV raised while parsing one file)
    broke the pool and the run. Now the file it was on is reported and every
    other file is checked."""
    real = extract.parse

    def crashing(text: str) -> object:
        if "CRASH_HERE" in text:
            faulthandler.disable()  # pytest's, inherited: no dump of the expected crash
            os.kill(os.getpid(), signal.SIGSEGV)
        return real(text)

    monkeypatch.setattr(extract, "parse", crashing)
    files = {f"app/ok{i:02d}.py": SEED + READ for i in range(12)}
    files["app/crash.py"] = SEED + "CRASH_HERE = 1\n" + READ
    write(project, files)
    out = run_engine(project, jobs=2, select={"CTX101"}, use_cache=True)
    assert _errors(out) == {"app/crash.py": "checking it killed the worker (SIGSEGV)"}
    assert _findings(out) == [(f"app/ok{i:02d}.py", 2) for i in range(12)]
    # A death may be transient (the OOM killer): nothing of it is cached.
    monkeypatch.setattr(extract, "parse", real)
    again = run_engine(project, jobs=2, select={"CTX101"}, use_cache=True)
    assert _errors(again) == {}
    assert _findings(again) == sorted([*_findings(out), ("app/crash.py", 3)])


# -- D19: valid Python that LibCST cannot read -----------------------------------
def test_valid_python_libcst_rejects_is_not_a_syntax_error(project: Path) -> None:
    """`(pars): bool = True` is valid (CPython's test_grammar.py:410)."""
    write(project, {"app/pars.py": SEED + "(pars): bool = True\n"})
    message = _errors(run_engine(project))["app/pars.py"]
    assert message.startswith("not supported by the parser (LibCST) at line 2, column ")
    assert "syntax error" not in message


# -- D4, D5: encodings as Python reads them ---------------------------------------
LATIN1 = "# -*- coding: latin-1 -*-\n" + SEED + "NAME = 'été'\n" + READ
BOM_READER = "\ufeff" + SEED + READ


@pytest.mark.parametrize("token", [True, False])
def test_a_pep263_coding_declaration_is_honoured(project: Path, token: bool) -> None:
    body = LATIN1 if token else "# -*- coding: latin-1 -*-\nNAME = 'été'\n"
    (project / "app" / "latin1.py").write_bytes(body.encode("latin-1"))
    out = run_engine(project, select={"CTX101"})
    assert _errors(out) == {}
    assert _findings(out) == ([("app/latin1.py", 4)] if token else [])


def test_bytes_that_are_not_the_declared_or_default_encoding_are_errors(project: Path) -> None:
    (project / "app" / "utf8.py").write_bytes(b"# get_server_args\nNAME = '\xe9t\xe9'\n")
    (project / "app" / "cookie.py").write_bytes(b"# coding: klingon\nX = 1\n")
    assert _errors(run_engine(project)) == {
        "app/utf8.py": "not valid UTF-8 at line 2, column 9 (byte 26)",
        "app/cookie.py": "bad encoding declaration: unknown encoding: klingon",
    }


def test_a_utf8_bom_is_read_as_python_does(project: Path) -> None:
    """A BOM file no rule needs failed through the ast path on U+FEFF; one a
    rule reads keeps CPython's columns."""
    (project / "app" / "plain.py").write_bytes("\ufeffX = 1\n".encode())
    (project / "app" / "reader.py").write_bytes(BOM_READER.encode())
    out = run_engine(project, select={"CTX101"})
    assert _errors(out) == {}
    finding = next(f for f in out.findings if f.rule == "CTX101")
    assert (finding.path, finding.span.line, finding.span.column) == ("app/reader.py", 2, 5)


# -- D6: one verdict per file, for the configured target version -------------------
PY312 = "type X = int\n"
EXCEPT_STAR = "try:\n    pass\nexcept* ValueError:\n    pass\n"


def test_one_verdict_whether_or_not_a_rule_needs_the_file(project: Path) -> None:
    """3.12 syntax passed through LibCST (the file holds a rule token) and failed
    through ast (it does not): now both are CPython's syntax error."""
    write(project, {"app/needed.py": SEED + PY312, "app/unneeded.py": "\n" + PY312})
    errors = _errors(run_engine(project))
    assert sorted(errors) == ["app/needed.py", "app/unneeded.py"]
    assert errors["app/needed.py"] == errors["app/unneeded.py"]
    # CPython's position and message, then the version the syntax needs
    assert errors["app/needed.py"].startswith("syntax error at line 2, column 6: ")
    assert "needs Python 3.12, target-version is py310 (" in errors["app/needed.py"]


@pytest.mark.parametrize(("target", "accepted"), [("py310", False), ("py311", True)])
def test_target_version_decides_the_grammar(project: Path, target: str, accepted: bool) -> None:
    """`except*` is 3.11 grammar: an error for py310 (the default), valid for
    py311, in both the LibCST and the ast path."""
    _set_table(project, f'target-version = "{target}"\n')
    write(project, {"app/needed.py": SEED + EXCEPT_STAR, "app/unneeded.py": "\n" + EXCEPT_STAR})
    errors = _errors(run_engine(project))
    message = (
        "syntax error at line 5, column 9: "
        "Exception groups are only supported in Python 3.11 and greater; needs Python 3.11, "
        'target-version is py310 (use --target-version py311 or target-version = "py311" if '
        "the code requires it)"
    )
    expected = {} if accepted else {"app/needed.py": message, "app/unneeded.py": message}
    assert errors == expected


def test_the_default_target_is_py310(project: Path) -> None:
    write(project, {"app/star.py": EXCEPT_STAR})
    assert list(_errors(run_engine(project))) == ["app/star.py"]


@pytest.mark.parametrize(
    ("table", "shown"), [("", "py310"), ('target-version = "py311"\n', "py311")]
)
def test_show_settings_names_the_target_version(project: Path, table: str, shown: str) -> None:
    _set_table(project, table)
    res = cli("show-settings", "--format", "json", cwd=project)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["target-version"] == shown


NEWER = [name for name, v in pysource.TARGET_VERSIONS.items() if v > sys.version_info[:2]]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ('"py39"', "target-version must be one of py310, py311, py312, py313, got 'py39'"),
        ("310", "config key 'target-version' must be a string"),
        *[
            (f'"{name}"', f"target-version '{name}' needs ctxlint to run on Python 3.")
            for name in NEWER[:1]
        ],
    ],
)
def test_a_bad_target_version_is_a_config_error(project: Path, value: str, message: str) -> None:
    _set_table(project, f"target-version = {value}\n")
    res = run_cli("check", "--no-cache", cwd=project)
    assert res.returncode == 2
    assert res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], res.stderr


# -- D7: CPython's error position -------------------------------------------------
BROKEN = [
    "def broken(:\n    pass\n",
    "x = 1\n  y = 2\n",
    "X = (1,\nY = 2\n",
    "class C:\nreturn\n",
    "f(**a, *b)\n",
    "x = [i for i in]\n",
    "if x\n    pass\n",
    "print 'hello'\n",
    "a = 1 +\n",
    "lambda: (yield)\n\ndef f(:\n",
]


@pytest.mark.parametrize("jobs", [1, 2])
def test_syntax_errors_carry_cpythons_line_and_column(project: Path, jobs: int) -> None:
    """Needed or not (LibCST path or ast path), a broken file's message is
    CPython's line, column and reason, one position only."""
    files = {}
    for i, body in enumerate(BROKEN):
        files[f"app/needed{i}.py"] = SEED + body
        files[f"app/unneeded{i}.py"] = "\n" + body
    write(project, files)
    errors = _errors(run_engine(project, jobs=jobs))
    expected = {}
    for path, text in files.items():
        try:
            compile(text, path, "exec", flags=0x400, dont_inherit=True)  # PyCF_ONLY_AST
        except SyntaxError as exc:
            expected[path] = f"syntax error at line {exc.lineno}, column {exc.offset}: {exc.msg}"
    assert len(expected) == len(files)
    assert errors == expected


# -- D12: a file name that is not UTF-8 -----------------------------------------
@pytest.mark.skipif(sys.platform != "linux", reason="needs a filesystem of raw byte names")
@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github", "junit"])
def test_a_non_utf8_file_name_holding_a_rule_token_is_checked(project: Path, fmt: str) -> None:
    """It aborted the run (UnicodeEncodeError in the cache keys and SARIF's URIs);
    the text formats print the name's own bytes, as ls does."""
    (project / "app").joinpath(os.fsdecode(b"bad\xffname.py")).write_text(SEED + READ)
    res = subprocess.run(  # with the cache: its keys hold the name too
        [sys.executable, "-m", "ctxlint.cli", "check", "--format", fmt],
        cwd=project,
        capture_output=True,
        check=False,
    )
    assert (res.returncode, res.stderr) == (1, b"")
    if fmt == "json":
        doc = json.loads(res.stdout)
        paths = [f["path"] for f in doc["findings"] if f["rule"] == "CTX101"]
        assert paths == ["app/bad\udcffname.py"]
    elif fmt == "sarif":
        doc = json.loads(res.stdout)
        uris = {
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in doc["runs"][0]["results"]
        }
        assert uris == {"app/bad%FFname.py"}
    elif fmt == "junit":  # XML cannot carry the byte: U+FFFD stands in
        assert "app/bad\ufffdname.py:2:5".encode() in res.stdout
    else:
        assert b"app/bad\xffname.py" in res.stdout


# -- D9: workers die with the parent ---------------------------------------------
def _children(pid: int) -> list[int]:
    """Live processes whose parent is `pid`."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rpartition(")")[2].split()
        if int(fields[1]) == pid and fields[0] != "Z":
            out.append(int(entry.name))
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_pool_workers_die_with_a_killed_run(project: Path, sig: signal.Signals) -> None:
    """A real run, killed while its pool works: no worker outlives it (they
    lived on for a minute and more, blocked on the task queue)."""
    body = SEED + "".join(f"def f{i}(a, b):\n    return a.x + b.y[{i}]\n\n\n" for i in range(150))
    write(project, {f"app/m{i:03d}.py": body + READ for i in range(400)})
    proc = subprocess.Popen(
        [sys.executable, "-m", "ctxlint.cli", "check", "--no-cache", "--jobs", "2"],
        cwd=project,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline and len(workers) < 2:
            workers = _children(proc.pid)
            time.sleep(0.01)
        assert proc.poll() is None and len(workers) == 2, "the run ended before its pool started"
        os.kill(proc.pid, sig)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 10
        while any(_alive(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [w for w in workers if _alive(w)] == []
    finally:
        if proc.poll() is None:
            proc.kill()
        for w in workers:
            if _alive(w):
                os.kill(w, signal.SIGKILL)
