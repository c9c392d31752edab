# RECONSTRUCTION, not SGLang's file. SGLang's guard tests live in the repository's
# test/ folder, which is in neither the sglang 0.5.23 wheel nor an sdist (PyPI has
# no sdist for 0.5.23). This file is rebuilt from the design document
# (shared/design/runtime-context-design.md) only, in the style SGLang's guards use:
# an `ast` re-parse of the whole package, hand lists, an exact pin.
#
# The doc never names the read ratchet's file; the name here is invented. It
# follows the doc's lines 18 ("Business code does not read fields off it: the read
# ratchet pins that at zero ... which forms the ratchet sees, and what is outside
# it by construction (a runtime-computed name; a whole-object hand-off)"), 262-266
# ("`get_server_args().tp_size`, or an alias of it, is a read-ratchet failure")
# and 291-293 ("`get_server_args().field` in business code is a ratchet failure").
# Forms seen: `get_server_args().f` (any spelling whose callee is named
# `get_server_args`), literal `getattr(get_server_args(), "f"[, d])`, and a local
# alias `x = get_server_args()` read as `x.f` in the same function. Method calls
# and hand-offs are not field reads. Choices the doc leaves open (walrus, renamed
# imports, an alias parked on `self`) are not handled: a per-function alias map
# over `ast.Assign` is what "an alias of it" describes.
#
# Bench adaptation: SGLANG_GUARD_ROOT names the folder that holds `sglang/`.
from __future__ import annotations

import ast
import os
from pathlib import Path

SEED = "get_server_args"
# Hand list: the one module allowed to read the slot, and the resolution pipeline.
_EXEMPT = (
    "sglang/srt/runtime_context.py",
    "sglang/srt/server_args.py",
    "sglang/srt/arg_groups/",
    "sglang/multimodal_gen/",
    "sglang/test/",
)
_PINNED = 0  # exact pin: never raise it


def _root() -> Path:
    root = os.environ.get("SGLANG_GUARD_ROOT")
    return Path(root) if root else Path(__file__).resolve().parents[2] / "python"


def _files(root: Path):
    for path in sorted((root / "sglang").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if not rel.startswith(_EXEMPT):
            yield rel, path


def _is_seed_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call) or node.args or node.keywords:
        return False
    func = node.func
    return (isinstance(func, ast.Name) and func.id == SEED) or (
        isinstance(func, ast.Attribute) and func.attr == SEED
    )


def _scopes(tree: ast.Module):
    yield tree
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


def _own_nodes(scope: ast.AST):
    """Nodes of one scope, not descending into nested functions."""
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(node))


def scan(root: Path | None = None) -> list[tuple[str, int, str]]:
    root = root or _root()
    hits = []
    for rel, path in _files(root):
        text = path.read_text(encoding="utf-8")
        if SEED not in text:
            continue
        tree = ast.parse(text, filename=rel)
        for scope in _scopes(tree):
            nodes = list(_own_nodes(scope))
            aliases = {
                t.id
                for n in nodes
                if isinstance(n, ast.Assign) and _is_seed_call(n.value)
                for t in n.targets
                if isinstance(t, ast.Name)
            }
            called = {id(n.func) for n in nodes if isinstance(n, ast.Call)}
            for n in nodes:
                if isinstance(n, ast.Attribute) and id(n) not in called:
                    base = n.value
                    if _is_seed_call(base) or (isinstance(base, ast.Name) and base.id in aliases):
                        hits.append((rel, n.lineno, f"seed read .{n.attr}"))
                elif (
                    isinstance(n, ast.Call)
                    and isinstance(n.func, ast.Name)
                    and n.func.id == "getattr"
                    and len(n.args) >= 2
                    and isinstance(n.args[1], ast.Constant)
                    and isinstance(n.args[1].value, str)
                    and (
                        _is_seed_call(n.args[0])
                        or (isinstance(n.args[0], ast.Name) and n.args[0].id in aliases)
                    )
                ):
                    hits.append((rel, n.lineno, f"seed read getattr {n.args[1].value!r}"))
    return sorted(set(hits))


def test_no_field_reads_off_the_seed():
    hits = scan()
    assert len(hits) <= _PINNED, (
        f"{len(hits)} field read(s) off get_server_args() (pinned at {_PINNED}); read the "
        "resolved leaf from its namespace bag instead:\n"
        + "\n".join(f"  {p}:{ln}: {m}" for p, ln, m in hits)
    )
