"""Which files are test code: pytest's file conventions plus the configured
`test-roots` (asked by CTX402, CTX403 and CTX705)."""

from __future__ import annotations

import fnmatch
import posixpath

from ctxlint.program.core import Program

TEST_FILES = ("test_*.py", "*_test.py", "conftest.py")
OPTION = "test-roots"


def is_test_file(path: str, roots: list[str]) -> bool:
    name = posixpath.basename(path)
    if any(fnmatch.fnmatchcase(name, p) for p in TEST_FILES):
        return True
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def test_roots(program: Program) -> list[str]:
    return [str(r) for r in program.config.options.get(OPTION, [])]
