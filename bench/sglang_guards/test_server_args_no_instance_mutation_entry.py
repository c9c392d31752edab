# RECONSTRUCTION, not SGLang's file. SGLang's guard tests live in the repository's
# test/ folder, which is in neither the sglang 0.5.23 wheel nor an sdist (PyPI has
# no sdist for 0.5.23). Rebuilt from the design document
# (shared/design/runtime-context-design.md), lines 582-585 (Guardrail 3): "No-copy
# contract (`test_server_args_no_instance_mutation_entry.py`): neither
# `ServerArgs.override` nor `ServerArgs.derive` exists, and nothing in the package
# calls either form", with lines 64-69 and 110-116 (no write-through, no
# `ServerArgs.derive`).
#
# Two checks: an `ast` look at the `ServerArgs` class body in server_args.py (the
# class is assembled at import time, so the bench does not import it), and a
# regex over the package for the call forms `server_args.override(`,
# `server_args.derive(`, `ServerArgs.override(` / `.derive(` and
# `get_server_args().override(` / `.derive(`.
#
# Bench adaptation: SGLANG_GUARD_ROOT names the folder that holds `sglang/`.
from __future__ import annotations

import ast
import os
import re
from pathlib import Path

_FORBIDDEN = ("override", "derive")  # hand list, from the doc
_CALL = re.compile(r"(?:\bserver_args|\bServerArgs|\bget_server_args\(\))\.(override|derive)\s*\(")
_RECORD_FILE = "sglang/srt/server_args.py"
_EXEMPT = ("sglang/multimodal_gen/", "sglang/test/")


def _root() -> Path:
    root = os.environ.get("SGLANG_GUARD_ROOT")
    return Path(root) if root else Path(__file__).resolve().parents[2] / "python"


def scan(root: Path | None = None) -> list[tuple[str, int, str]]:
    root = root or _root()
    hits = []
    record = root / _RECORD_FILE
    tree = ast.parse(record.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "ServerArgs":
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    if item.name in _FORBIDDEN:
                        hits.append((_RECORD_FILE, item.lineno, f"ServerArgs.{item.name} exists"))
    for path in sorted((root / "sglang").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(_EXEMPT):
            continue
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.lstrip().startswith("#"):
                continue
            for m in _CALL.finditer(line):
                hits.append((rel, lineno, f"call of the removed {m.group(1)}"))
    return hits


def test_server_args_has_no_instance_mutation_entry():
    hits = scan()
    assert not hits, (
        "ServerArgs is never copied-and-edited; declare on the record, or pass a "
        "constructor argument:\n" + "\n".join(f"  {p}:{ln}: {m}" for p, ln, m in hits)
    )
