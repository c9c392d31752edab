"""A warm run parses nothing, so it must not pay for importing LibCST (about a
third of a second, more than the rest of a warm run on a large tree): every rule
module, and what it imports at module level, stays free of LibCST until a file
is walked."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "serving_app"

_RUN = """
import sys
from ctxlint.cli.main import main
code = main(sys.argv[1:])
print("libcst" in sys.modules, code)
"""


def _check(project: Path) -> tuple[bool, int]:
    out = subprocess.run(
        [sys.executable, "-c", _RUN, "check", "--quiet", str(project)],
        cwd=project,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return out[-2] == "True", int(out[-1])


def test_a_warm_run_imports_no_libcst(tmp_path: Path) -> None:
    project = shutil.copytree(EXAMPLE, tmp_path / "serving_app")
    _, cold_code = _check(project)  # (the cold run's parsing happens in its workers)
    warm_loaded, warm_code = _check(project)
    assert (warm_loaded, warm_code) == (False, cold_code)


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
