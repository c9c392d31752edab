"""The accessors a fix adds to the runtime module, for computed record members.

A seed read of a member the record computes (`server_args.mamba_cache_chunk_size`)
has no bag leaf; its home past publish is the runtime module's same-named
accessor, as SGLang added them between 0.5.17 and 0.5.19. Where the runtime has
none, `ctxlint fix --unsafe` adds it, and the sites call it:

    def mamba_cache_chunk_size() -> int:
        \"\"\"The published record's `mamba_cache_chunk_size` (added by ctxlint fix).\"\"\"
        return get_server_args().mamba_cache_chunk_size

It reads the same member of the same object the seed read did (the seed
accessor returns the published record), so the value is unchanged; it is an
unsafe fix because it writes the runtime module. The return annotation is the
record's own where every name in it is bound in the runtime module (or a
builtin), else left out. The definitions go at the end of the module, in name
order, so a second run adds nothing.
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass, field

from ctxlint.fix.plan import FIXED
from ctxlint.fix.result import FixResult


def added(text: str, names: list[str], getter: str, annotations: dict[str, str]) -> str:
    """`text` (the runtime module) with an accessor for each of `names` appended."""
    out = text if text.endswith("\n") or not text else text + "\n"
    for name in sorted(set(names)):
        returns = annotations.get(name)
        head = f"def {name}()" + (f" -> {returns}" if returns else "") + ":"
        out += (
            f"\n\n{head}\n"
            f'    """The published record\'s `{name}` (added by ctxlint fix)."""\n'
            f"    return {getter}().{name}\n"
        )
    return out


def annotations(record_source: bytes, class_name: str, runtime_text: str) -> dict[str, str]:
    """Each member of `class_name` (in the record's source) -> its return
    annotation, where the runtime module can spell it: every name in it is a
    builtin or bound at the runtime module's top level (under `if` too when the
    module defers its annotations: `from __future__ import annotations`)."""
    try:
        record, runtime = ast.parse(record_source), ast.parse(runtime_text)
    except (SyntaxError, ValueError):
        return {}
    bound = _top_level_names(runtime, conditional=_defers(runtime))
    out: dict[str, str] = {}
    for node in record.body:
        if not (isinstance(node, ast.ClassDef) and node.name == class_name):
            continue
        for member in node.body:
            if isinstance(member, ast.FunctionDef) and member.returns is not None:
                used = {n.id for n in ast.walk(member.returns) if isinstance(n, ast.Name)}
                strings = [
                    n
                    for n in ast.walk(member.returns)
                    if isinstance(n, ast.Constant) and isinstance(n.value, str)
                ]
                if not strings and all(u in bound or hasattr(builtins, u) for u in used):
                    out[member.name] = ast.unparse(member.returns)
    return out


def _defers(module: ast.Module) -> bool:
    """`from __future__ import annotations`: annotations are never evaluated."""
    return any(
        isinstance(s, ast.ImportFrom)
        and s.module == "__future__"
        and any(a.name == "annotations" for a in s.names)
        for s in module.body
    )


def _top_level_names(module: ast.Module, *, conditional: bool) -> set[str]:
    """The names the module's top level binds: in `if` and `try` blocks too
    with `conditional` (they may be unbound when it runs)."""
    out: set[str] = set()

    def bind(stmts: list[ast.stmt]) -> None:
        for s in stmts:
            if isinstance(s, (ast.Import, ast.ImportFrom)):
                out.update((a.asname or a.name).partition(".")[0] for a in s.names)
            elif isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out.add(s.name)
            elif isinstance(s, (ast.Assign, ast.AnnAssign)):
                targets = s.targets if isinstance(s, ast.Assign) else [s.target]
                out.update(t.id for t in targets if isinstance(t, ast.Name))
            elif isinstance(s, ast.If) and conditional:
                bind(s.body)
                bind(s.orelse)
            elif isinstance(s, ast.Try) and conditional:
                bind(s.body)
                for h in s.handlers:
                    bind(h.body)

    bind(module.body)
    return out


def bound_at_top(runtime_text: str, name: str) -> bool:
    """`name` is already bound at the runtime module's top level (on some path)."""
    try:
        return name in _top_level_names(ast.parse(runtime_text), conditional=True)
    except (SyntaxError, ValueError):
        return True


@dataclass
class Additions:
    """The runtime module's file as the fix leaves it: its own plan's text, and
    the accessors the fixed sites still call appended (kept in step as sites
    are rolled back: an accessor no site calls is not added)."""

    path: str  # the runtime module's file
    before: str  # its text as checked
    planned: str | None  # its text after its own sites' rewrites (None: none)
    getter: str  # the seed accessor the added ones read the record through
    annotations: dict[str, str] = field(default_factory=dict)
    refused: str = ""  # why nothing can be added (the module's rewrite did not hold)

    def sync(self, result: FixResult) -> dict[str, str]:
        """Write the module's text into `result` for the sites fixed now; the
        files whose sites call an accessor that cannot be added (path -> why)."""
        calls: dict[str, set[str]] = {}
        for s in result.sites:
            if s.status == FIXED and s.adds:
                calls.setdefault(s.adds, set()).add(s.path)
        base = self.planned if self.planned is not None else self.before
        bad: dict[str, str] = {}
        for name, paths in calls.items():
            why = self.refused or (
                f"`{name}` is already bound in the runtime module"
                if bound_at_top(base, name)
                else ""
            )
            for p in paths if why else ():
                bad.setdefault(p, f"the accessor `{name}()` cannot be added: {why}")
        names = sorted(n for n in calls if not any(p in bad for p in calls[n]))
        if names and not self.refused:
            result.before[self.path] = self.before
            result.after[self.path] = added(base, names, self.getter, self.annotations)
        elif self.planned is not None and not self.refused:
            result.before[self.path], result.after[self.path] = self.before, self.planned
        else:
            result.before.pop(self.path, None)
            result.after.pop(self.path, None)
        result.added = {self.path: names} if names and not self.refused else {}
        return bad
