from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

# PYTHONDONTWRITEBYTECODE (set on some images: these machines' included) makes every
# process of the suite compile what it imports from source again: each worker its
# test modules (pytest's assertion rewriting: half of a collection) and the linter,
# each `ctxlint`, `pytest` or server subprocess the linter or the runtime. The
# bytecode goes to a prefix of its own (as bench/bench_sglang.py's timed runs do),
# never into the tree; set here, before the test modules are imported, and in the
# environment, which the xdist workers and every subprocess inherit. A prefix the
# caller chose is kept.
if os.environ.get("PYTHONDONTWRITEBYTECODE") and not os.environ.get("PYTHONPYCACHEPREFIX"):
    _PYCACHE = str(Path(tempfile.gettempdir()) / "ctxlint-test-pycache")
    del os.environ["PYTHONDONTWRITEBYTECODE"]
    os.environ["PYTHONPYCACHEPREFIX"] = sys.pycache_prefix = _PYCACHE
    sys.dont_write_bytecode = False
    if "PYTEST_XDIST_WORKER" not in os.environ:  # a run starts: its workers start later
        # the bytecode of the trees tests copy into the temp folder is never read
        # again: dropped, so that the prefix does not grow run after run
        _temp = Path(tempfile.gettempdir()).resolve()
        shutil.rmtree(Path(_PYCACHE, *_temp.parts[1:]), ignore_errors=True)

from factmemo import memo_allowed, memo_on

REPO = Path(__file__).resolve().parents[1]
# A pytest-xdist worker starts with COLUMNS=80 and LINES=24 in its environment (a plain
# run has neither, unless the shell exports them): the reports wrap at COLUMNS
# (core.console), and the tests expect the unwrapped text of a run off a terminal. A
# test that wants a width sets it itself.
for _name in ("COLUMNS", "LINES"):
    os.environ.pop(_name, None)
# tests/ mirrors src/ctxlint folder for folder; a test module may import another's
# helpers by name (`from test_audit import make_codebase`), wherever it sits
for _folder in sorted(Path(__file__).resolve().parent.iterdir()):
    if _folder.is_dir() and any(_folder.glob("test_*.py")) and str(_folder) not in sys.path:
        sys.path.append(str(_folder))
FIXTURE = REPO / "tests" / "fixtures" / "specrt"
# the LSP tests' fixtures (root, serve, session): tests/server/lspfixtures.py
pytest_plugins = ["lspfixtures"]


def run_cli(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The real command line, in a subprocess, as a user runs it (`env`: its whole
    environment, default this process's)."""
    return subprocess.run(
        [sys.executable, "-m", "ctxlint.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A small project: the specrt runtime plus an `app` package to fill in."""
    root = tmp_path / "proj"
    shutil.copytree(FIXTURE, root)
    (root / "app").mkdir()
    (root / "app" / "__init__.py").write_text("")
    return root


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under the suite's workers (pytest-xdist, `--dist loadgroup`), the tests that use
    a module- or class-scoped fixture form one group per module: the worker that
    builds the fixture runs them all, so no second worker builds it again. (Marks
    given in the test file win; without xdist the mark is inert.)"""
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        if info is None or any(True for _ in item.iter_markers("xdist_group")):
            continue
        scopes = {d.scope for defs in info.name2fixturedefs.values() for d in defs}
        if scopes & {"module", "class"}:
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> object:
    """The suite's memo of files' facts (tests/factmemo.py) serves the engine runs of
    each test that patches nothing (fixtures of every scope set up for it included)."""
    with memo_on(memo_allowed(item)):
        yield
