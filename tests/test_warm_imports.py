"""A warm run parses nothing, so it must not pay for importing LibCST (about a
third of a second, more than the rest of a warm run on a large tree): every rule
module, and what it imports at module level, stays free of LibCST until a file
is walked."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from test_rounds import _copy

_RUN = """
import sys
from ctxlint.cli.main import main
code = main(sys.argv[1:])
print("libcst" in sys.modules, "multiprocessing" in sys.modules, code)
"""


def _check(project: Path, *options: str) -> tuple[bool, bool, int]:
    out = subprocess.run(
        [sys.executable, "-c", _RUN, "check", "--quiet", "--jobs", "2", *options, str(project)],
        cwd=project,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return out[-3] == "True", out[-2] == "True", int(out[-1])


@pytest.fixture(scope="module")
def cold(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, tuple[bool, bool, int]]:
    """The serving app (with its config and the runtime: a real run) after its cold
    check, and what that check imported: one cold run for the module's warm runs,
    each of which asks the cache only."""
    project = _copy("serving_app", tmp_path_factory.mktemp("warm"))
    return project, _check(project)  # (the cold run's parsing: in its workers)


def test_a_warm_run_imports_no_libcst(cold: tuple[Path, tuple[bool, bool, int]]) -> None:
    project, (_, pooled, cold_code) = cold
    assert pooled and cold_code == 0  # a clean check that parsed its files on the pool
    # a warm run starts no pool either: multiprocessing is imported only to start one
    assert _check(project) == (False, False, cold_code)


def test_a_run_that_derives_again_from_cached_facts_imports_no_libcst(
    cold: tuple[Path, tuple[bool, bool, int]],
) -> None:
    """Another selection: no outcome or round to replay, but every file's facts
    are cached, so the program is derived again without LibCST."""
    project, _ = cold
    libcst, pooled, _ = _check(project, "--select", "CTX1")
    assert (libcst, pooled) == (False, False)


def test_no_rule_module_imports_libcst_at_import_time() -> None:
    probe = (
        "import sys\n"
        "from ctxlint.engine.registry import load_rules\n"
        "rules = load_rules()\n"
        "print(len(rules), 'libcst' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.split()
    assert int(out[0]) > 0 and out[1] == "False"
