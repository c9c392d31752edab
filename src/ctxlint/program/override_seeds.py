"""The runtime's test override as a seam for non-field slots: whether
`get_context().override_server_args(**fields)` also seeds names that are no
record field, and which.

SGLang 0.5.23's `_ServerArgsOverride.install` builds a record, declares the
keywords that are fields, and writes the others past the record's guard
(`msgspec.Struct.__setattr__(server_args, name, value)`), refusing a non-field
name that does not start with `_`. A test kit that hand-builds a record and
seeds `_mamba_cache_chunk_size` on it has that call as its remedy; "keep the
value off the record" would break the fixture (the slot backs a property the
dummy model cannot answer). 0.5.17's override writes only a literal name past
the guard: it seeds nothing, and the remedy is not offered there.

Derived from the runtime module alone, per file while CTX201's visitor walks
it: the context class's method `override_server_args` taking `**`, the
module's `get_context` accessor, and a function of the module writing a name
held in a variable past a guard (`X.__setattr__(obj, name, value)`), with the
prefixes it tests names with (`name.startswith("_")`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext, dotted, string_value
from ctxlint.program.manager_owned import CONTEXT
from ctxlint.program.reads import positional
from ctxlint.program.test_doubles import OVERRIDE


@dataclass(frozen=True, slots=True)
class OverrideSeeds:
    """How the runtime's test override is spelled, and the prefixes a non-field
    name it seeds must start with (none: any name)."""

    call: str  # "get_context().override_server_args"
    prefixes: tuple[str, ...] = ()

    def seeds(self, name: str) -> bool:
        return not self.prefixes or name.startswith(self.prefixes)

    def remedy(self, name: str) -> tuple[str, str]:
        """CTX201's why and remedy for a test's write of the slot `name`."""
        return f"a test seeds it on a hand-built record: use {self.call}(...)", (
            f"{self.call}({name}=..., <fields>) builds the record, seeds this slot past "
            "the guard and publishes it, and its restore() (or the `with` block) "
            "reinstates the previous config: it replaces the build, the write and the publish"
        )


class SeedWatch:
    """The runtime module's side, fed by CTX201's visitor (program.record_writes)."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.context = False  # a module-level `get_context()`
        self.takes_fields = False  # the context's `override_server_args(self, **fields)`
        self.seeding: set[str] = set()  # functions writing a run-time name past a guard
        self.prefixes: dict[str, set[str]] = {}  # function -> `name.startswith(...)` literals

    def _function(self) -> str | None:
        return next((s.qualname for s in reversed(self.ctx.scopes) if s.kind == "function"), None)

    def function(self, node: cst.FunctionDef) -> None:
        outer = self.ctx.scopes[-2]
        name = node.name.value
        if outer.kind == "module" and name == CONTEXT:
            self.context = True
        if outer.kind == "class" and name == OVERRIDE:
            self.takes_fields = isinstance(node.params.star_kwarg, cst.Param)

    def call(self, node: cst.Call) -> None:
        func, fn = node.func, self._function()
        if not isinstance(func, cst.Attribute) or fn is None:
            return
        args = positional(node)
        if func.attr.value == "startswith" and len(args) == 1:
            if (prefix := string_value(args[0])) is not None:
                self.prefixes.setdefault(fn, set()).add(prefix)
        elif func.attr.value == "__setattr__" and len(args) >= 3:
            # `msgspec.Struct.__setattr__(obj, name, v)`: a class's, past the object's own
            if dotted(func.value) is not None and string_value(args[1]) is None:
                self.seeding.add(fn)

    def result(self) -> OverrideSeeds | None:
        if not (self.context and self.takes_fields and self.seeding):
            return None
        prefixes = sorted({p for fn in self.seeding for p in self.prefixes.get(fn, ())})
        return OverrideSeeds(f"{CONTEXT}().{OVERRIDE}", tuple(prefixes))
