# RECONSTRUCTION, not SGLang's file. SGLang's guard tests live in the repository's
# test/ folder, which is in neither the sglang 0.5.23 wheel nor an sdist (PyPI has
# no sdist for 0.5.23). Rebuilt from the design document
# (shared/design/runtime-context-design.md), lines 19 (the eleven bag accessors,
# each "a module function of no arguments"), 35-48 (the roles are the keys of
# `ROLE_NAMESPACE_SETS`, whose values name namespaces) and 55-60 ("Bag membership
# is where the field is declared: one class per namespace under
# `arg_groups/fields/`, each carrying the `_NS_PATH` it stands for, and
# `ServerArgs` is assembled from them (`collect_input_fields`) ... Coverage is
# linted two-way (`test_server_args_namespaces.py`,
# `test_runtime_context_config_bags.py`)"). This one file stands for both.
#
# Two-way checks, all by `ast` (nothing is imported): every `_NS_PATH` class is
# in server_args.py's `_INPUT_NAMESPACES` and every entry there has one; no field
# is declared by two namespace classes; every top-level namespace but `parallel`
# has its accessor in `_BAG_ACCESSORS` and each accessor names a namespace and is
# a no-argument module function of runtime_context.py; `ROLE_NAMESPACE_SETS`
# names only namespaces that exist.
#
# Bench adaptation: SGLANG_GUARD_ROOT names the folder that holds `sglang/`.
from __future__ import annotations

import ast
import os
from pathlib import Path

# Hand list: the accessors of the design's tier table.
_BAG_ACCESSORS = (
    "get_exec",
    "get_memory",
    "get_schedule",
    "get_model",
    "get_spec",
    "get_serving",
    "get_observability",
    "get_disagg",
    "get_lora",
    "get_mm",
    "get_device",
)
_FIELDS = "sglang/srt/arg_groups/fields"
_RECORD = "sglang/srt/server_args.py"
_RUNTIME = "sglang/srt/runtime_context.py"


def _root() -> Path:
    root = os.environ.get("SGLANG_GUARD_ROOT")
    return Path(root) if root else Path(__file__).resolve().parents[2] / "python"


def _namespace_classes(root: Path):
    for path in sorted((root / _FIELDS).glob("*.py")):
        rel = path.relative_to(root).as_posix()
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if not isinstance(node, ast.ClassDef):
                continue
            ns, fields = None, []
            for item in node.body:
                if (
                    isinstance(item, ast.Assign)
                    and any(isinstance(t, ast.Name) and t.id == "_NS_PATH" for t in item.targets)
                    and isinstance(item.value, ast.Constant)
                ):
                    ns = item.value.value
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    if "ClassVar" not in ast.unparse(item.annotation):
                        fields.append((item.target.id, item.lineno))
            if ns is not None:
                yield rel, node, ns, fields


def _module_list(tree: ast.Module, name: str) -> list[str] | None:
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
            and isinstance(node.value, (ast.List, ast.Tuple))
        ):
            return [e.id for e in node.value.elts if isinstance(e, ast.Name)]
    return None


def scan(root: Path | None = None) -> list[tuple[str, int, str]]:
    root = root or _root()
    hits = []
    classes = list(_namespace_classes(root))
    record = ast.parse((root / _RECORD).read_text(encoding="utf-8"))
    listed = _module_list(record, "_INPUT_NAMESPACES") or []
    declared = {node.name for _, node, _, _ in classes}
    for rel, node, ns, _ in classes:
        if node.name not in listed:
            hits.append((rel, node.lineno, f"{node.name} ({ns}) is not in _INPUT_NAMESPACES"))
    for name in listed:
        if name not in declared:
            hits.append((_RECORD, 0, f"_INPUT_NAMESPACES entry {name} has no _NS_PATH class"))
    owner: dict[str, str] = {}
    for rel, _, ns, fields in classes:
        for field, lineno in fields:
            if field in owner and owner[field] != ns:
                hits.append((rel, lineno, f"{field} declared by {owner[field]} and {ns}"))
            owner.setdefault(field, ns)
    tops = {ns.split(".")[0] for _, _, ns, _ in classes}
    accessors = {a[len("get_") :] for a in _BAG_ACCESSORS}
    for ns in sorted(tops - accessors - {"parallel"}):
        hits.append((_RUNTIME, 0, f"namespace {ns} has no accessor in _BAG_ACCESSORS"))
    for ns in sorted(accessors - tops):
        hits.append((_RUNTIME, 0, f"get_{ns} names no namespace"))
    runtime = ast.parse((root / _RUNTIME).read_text(encoding="utf-8"))
    defs = {n.name: n for n in runtime.body if isinstance(n, ast.FunctionDef)}
    for acc in _BAG_ACCESSORS:
        fn = defs.get(acc)
        if fn is None:
            hits.append((_RUNTIME, 0, f"{acc} is not a module function"))
        elif fn.args.args or fn.args.kwonlyargs or fn.args.vararg or fn.args.kwarg:
            hits.append((_RUNTIME, fn.lineno, f"{acc} takes arguments"))
    for node in runtime.body:
        target = node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(target, ast.Name) and target.id == "ROLE_NAMESPACE_SETS" and node.value:
            for sub in ast.walk(node.value):
                if isinstance(sub, ast.Set):
                    for e in sub.elts:
                        if isinstance(e, ast.Constant) and e.value not in tops | {"parallel"}:
                            hits.append((_RUNTIME, e.lineno, f"role set names {e.value!r}"))
    return sorted(set(hits))


def test_config_bags_cover_the_record_two_way():
    hits = scan()
    assert not hits, "\n".join(f"  {p}:{ln}: {m}" for p, ln, m in hits)
