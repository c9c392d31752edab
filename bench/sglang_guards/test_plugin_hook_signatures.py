# RECONSTRUCTION, not SGLang's file. SGLang's guard tests live in the repository's
# test/ folder, which is in neither the sglang 0.5.23 wheel nor an sdist (PyPI has
# no sdist for 0.5.23). Rebuilt from the design document
# (shared/design/runtime-context-design.md), lines 195-200 ("The other
# implementations of an interface ... `CustomSpecAlgo` is the plugin base for
# speculative algorithms, and the dispatch calls it with the built-in's argument
# list. Nothing in the tree implements it, so only a plugin user hits the
# `TypeError`. Guard: `test_plugin_hook_signatures.py`"), and from the duck-typing
# contract the wheel enforces at registration
# (spec_registry._assert_custom_spec_algo_conforms).
#
# Checks, over the hand-listed plugin base and its built-in twin: every method
# both define takes the same parameters (names and kinds; the dispatch passes the
# built-in's list); every `is_*` / `supports_*` of the built-in exists on the
# base; and every in-tree subclass of the base (found by an `ast` scan of the
# whole package) that overrides a hook still accepts the base's parameters, any
# extra one optional.
#
# Bench adaptation: SGLANG_GUARD_ROOT names the folder that holds `sglang/`.
from __future__ import annotations

import ast
import os
from pathlib import Path

# Hand list: (base file, plugin base, built-in file, built-in it duck-types).
_PLUGIN_BASES = [
    (
        "sglang/srt/speculative/spec_registry.py",
        "CustomSpecAlgo",
        "sglang/srt/speculative/spec_info.py",
        "SpeculativeAlgorithm",
    ),
]


def _root() -> Path:
    root = os.environ.get("SGLANG_GUARD_ROOT")
    return Path(root) if root else Path(__file__).resolve().parents[2] / "python"


def _methods(tree: ast.Module, cls: str) -> dict[str, ast.FunctionDef]:
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == cls:
            return {
                n.name: n
                for n in node.body
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                and not n.name.startswith("_")
            }
    return {}


def _shape(fn: ast.FunctionDef) -> tuple:
    a = fn.args
    positional = [x.arg for x in [*a.posonlyargs, *a.args]][1:]  # drop self / cls
    return tuple(positional), tuple(x.arg for x in a.kwonlyargs)


def _accepts(impl: ast.FunctionDef, base: ast.FunctionDef) -> str | None:
    """Why `impl` cannot take every call `base` accepts, or None."""
    (bpos, bkw), (ipos, ikw) = _shape(base), _shape(impl)
    a = impl.args
    if list(ipos[: len(bpos)]) != list(bpos) and a.vararg is None:
        return f"positional parameters {ipos} do not start with {bpos}"
    missing_kw = [k for k in bkw if k not in ikw and a.kwarg is None]
    if missing_kw:
        return f"keyword-only {missing_kw} not accepted"
    n_defaults = len(a.defaults)
    extra = list(ipos[len(bpos) :])
    required_extra = extra[: max(0, len(extra) - n_defaults)]
    kw_required = [
        x.arg
        for x, d in zip(a.kwonlyargs, a.kw_defaults, strict=True)
        if d is None and x.arg not in bkw
    ]
    if required_extra or kw_required:
        return f"new required parameter(s) {required_extra + kw_required}"
    return None


def scan(root: Path | None = None) -> list[tuple[str, int, str]]:
    root = root or _root()
    hits = []
    for base_file, base, builtin_file, builtin in _PLUGIN_BASES:
        base_m = _methods(ast.parse((root / base_file).read_text(encoding="utf-8")), base)
        builtin_m = _methods(ast.parse((root / builtin_file).read_text(encoding="utf-8")), builtin)
        if not base_m or not builtin_m:
            hits.append((base_file, 0, f"{base} or {builtin} not found"))
            continue
        for name in sorted(builtin_m):
            if name.startswith(("is_", "supports_")) and name not in base_m:
                hits.append((base_file, 0, f"{base} lacks {name}()"))
        for name in sorted(set(base_m) & set(builtin_m)):
            if _shape(base_m[name]) != _shape(builtin_m[name]):
                hits.append(
                    (
                        base_file,
                        base_m[name].lineno,
                        f"{base}.{name}{_shape(base_m[name])} != "
                        f"{builtin}.{name}{_shape(builtin_m[name])}",
                    )
                )
        for path in sorted((root / "sglang").rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            if rel.startswith(("sglang/multimodal_gen/", "sglang/test/")):
                continue
            text = path.read_text(encoding="utf-8")
            if base not in text:
                continue
            for cls in ast.walk(ast.parse(text)):
                if not isinstance(cls, ast.ClassDef) or not any(
                    (isinstance(b, ast.Name) and b.id == base)
                    or (isinstance(b, ast.Attribute) and b.attr == base)
                    for b in cls.bases
                ):
                    continue
                for item in cls.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
                        item.name in base_m
                    ):
                        why = _accepts(item, base_m[item.name])
                        if why:
                            hits.append((rel, item.lineno, f"{cls.name}.{item.name}: {why}"))
    return sorted(set(hits))


def test_plugin_hook_signatures():
    hits = scan()
    assert not hits, "\n".join(f"  {p}:{ln}: {m}" for p, ln, m in hits)
