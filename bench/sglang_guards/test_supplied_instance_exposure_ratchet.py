# RECONSTRUCTION, not SGLang's file. SGLang's guard tests live in the repository's
# test/ folder, which is in neither the sglang 0.5.23 wheel nor an sdist (PyPI has
# no sdist for 0.5.23). Rebuilt from the design document
# (shared/design/runtime-context-design.md), lines 76-85 (the ratchet "resolves the
# wrapper", so a field recorded through `record_config_updates` joins the
# post-publish override surface), 167-188 (whole-object passes keep the contract
# unless the field is runtime-mutated or one that resolution fills in; "pins that
# set (empty today) -- three spellings of the read: `server_args.field`,
# literal-name `getattr(server_args, "field", default)`, and the parked form
# (`self.x = server_args` in a method that takes the parameter, read as
# `self.x.field` anywhere in the class) -- and fails on a new one"; the factory
# exemptions) and 335-352 (allow-list `GrammarManager` and `MMEncoder`), plus the
# one comment the wheel keeps about it (sglang/srt/eplb/expert_distribution.py:68:
# it "pins (file, field) pairs where a `server_args` parameter is read for a
# field that resolution fills in, and that surface may only shrink").
#
# The field set is derived the way those lines describe: fields declared
# `resolvable=True` under arg_groups/fields/ (what resolution may fill in), plus
# every literal keyword recorded post-publish through `get_context().override(...)`
# or `record_config_updates(...)`. Parameters are recognised by name
# (`server_args`), as the comment says.
#
# Bench adaptation: SGLANG_GUARD_ROOT names the folder that holds `sglang/`.
from __future__ import annotations

import ast
import os
from pathlib import Path

PARAM = "server_args"
# Hand lists, from the doc.
_ALLOWED_CLASSES = {"GrammarManager", "MMEncoder"}
_FACTORIES = {"create_kt_config_from_server_args", "DllmConfig.from_server_args"}
_EXEMPT = (
    "sglang/srt/server_args.py",  # the resolution pipeline reads its own record
    "sglang/srt/arg_groups/",
    "sglang/multimodal_gen/",
    "sglang/test/",
)
# (file, field) pairs that were dispositioned and kept; may only shrink.
_PINNED: set[tuple[str, str]] = set()


def _root() -> Path:
    root = os.environ.get("SGLANG_GUARD_ROOT")
    return Path(root) if root else Path(__file__).resolve().parents[2] / "python"


def _sources(root: Path):
    for path in sorted((root / "sglang").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(("sglang/multimodal_gen/", "sglang/test/")):
            continue
        yield rel, path.read_text(encoding="utf-8")


def _resolvable(tree: ast.Module) -> set[str]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            for sub in ast.walk(node.annotation):
                if isinstance(sub, ast.Call) and any(
                    k.arg == "resolvable" and isinstance(k.value, ast.Constant) and k.value.value
                    for k in sub.keywords
                ):
                    out.add(node.target.id)
    return out


def _recorded(tree: ast.Module) -> set[str]:
    out = set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        func = node.func
        direct = (
            func.attr == "override"
            and isinstance(func.value, ast.Call)
            and isinstance(func.value.func, ast.Name)
            and func.value.func.id == "get_context"
        )
        if direct or func.attr == "record_config_updates":
            out |= {k.arg for k in node.keywords if k.arg and k.arg != "source"}
    return out


def _takes_param(fn: ast.AST) -> bool:
    a = fn.args
    return any(x.arg == PARAM for x in [*a.posonlyargs, *a.args, *a.kwonlyargs])


def _literal_getattr(node: ast.AST, obj) -> str | None:
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "getattr"
        and len(node.args) >= 2
        and obj(node.args[0])
        and isinstance(node.args[1], ast.Constant)
        and isinstance(node.args[1].value, str)
    ):
        return node.args[1].value
    return None


def _functions(body, cls=None):
    """(function, enclosing class or None) for every def, nested ones included."""
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node, cls
            yield from _functions(node.body, cls)
        elif isinstance(node, ast.ClassDef):
            yield from _functions(node.body, node)
        else:
            for field in ("body", "orelse", "finalbody", "handlers"):
                yield from _functions(getattr(node, field, None) or [], cls)


def scan(root: Path | None = None) -> list[tuple[str, int, str]]:
    root = root or _root()
    fields: set[str] = set()
    readers = []
    for rel, text in _sources(root):
        if rel.startswith("sglang/srt/arg_groups/fields/") and "resolvable" in text:
            fields |= _resolvable(ast.parse(text))
        recorded = "override(" in text or "record_config_updates(" in text
        reads = PARAM in text and not rel.startswith(_EXEMPT)
        if recorded or reads:
            tree = ast.parse(text, filename=rel)
            if recorded:
                fields |= _recorded(tree)
            if reads:
                readers.append((rel, tree))
    hits = []

    def is_param(n: ast.AST) -> bool:
        return isinstance(n, ast.Name) and n.id == PARAM

    for rel, tree in readers:
        parked: dict[int, set[str]] = {}  # class -> attributes the parameter is parked on
        for fn, cls in _functions(tree.body):
            if not _takes_param(fn):
                continue
            qual = f"{cls.name}.{fn.name}" if cls else fn.name
            if (
                (cls and cls.name in _ALLOWED_CLASSES)
                or fn.name in _FACTORIES
                or qual in _FACTORIES
            ):
                continue
            for n in ast.walk(fn):
                if isinstance(n, ast.Attribute) and is_param(n.value) and n.attr in fields:
                    hits.append((rel, n.lineno, f"{n.attr}: server_args.{n.attr}"))
                elif isinstance(n, ast.Call):
                    name = _literal_getattr(n, is_param)
                    if name in fields:
                        hits.append((rel, n.lineno, f"{name}: getattr(server_args, {name!r})"))
                elif cls is not None and isinstance(n, ast.Assign) and is_param(n.value):
                    for t in n.targets:
                        if (
                            isinstance(t, ast.Attribute)
                            and isinstance(t.value, ast.Name)
                            and t.value.id == "self"
                        ):
                            parked.setdefault(id(cls), set()).add(t.attr)
        if not parked:
            continue
        for cls in ast.walk(tree):  # the parked form, read anywhere in the class
            attrs = parked.get(id(cls))
            if not attrs:
                continue
            for n in ast.walk(cls):
                if (
                    isinstance(n, ast.Attribute)
                    and n.attr in fields
                    and isinstance(n.value, ast.Attribute)
                    and n.value.attr in attrs
                    and isinstance(n.value.value, ast.Name)
                    and n.value.value.id == "self"
                ):
                    hits.append((rel, n.lineno, f"{n.attr}: self.{n.value.attr}.{n.attr}"))
    return sorted(set(hits))


def test_supplied_instance_exposure_ratchet():
    hits = scan()
    found = {(p, m.split(":")[0]) for p, _, m in hits}
    new = found - _PINNED
    stale = _PINNED - found
    assert not new, (
        "new read(s) of a field resolution fills in (or a post-publish override moves) off "
        "a supplied ServerArgs; pick where the value comes from (bag, runner stamp, "
        "constructor argument):\n"
        + "\n".join(f"  {p}:{ln}: {m}" for p, ln, m in hits if (p, m.split(":")[0]) in new)
    )
    assert not stale, f"pinned pair(s) no longer read, drop them from _PINNED: {sorted(stale)}"
