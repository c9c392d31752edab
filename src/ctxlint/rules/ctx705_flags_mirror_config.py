"""CTX705 flags-mirror-config: a runtime-flags leaf assigned straight from a config-bag
leaf, with no derivation, is a config mirror: read the bag leaf.

The flags groups and their leaves are derived from the runtime's flags tier
(program.flags_tier: the accessor's annotated class, its group classes). A
write `<flags>.<group>.<leaf> = <value>` is a mirror when `<value>` is a bag
leaf itself: a bag accessor call (`get_exec()`) or a local bound to one or to a
path below one, followed by attributes ending at a record field (a leaf the
vocabulary derives). Anything computed from it (`MoeA2ABackend(x)`, `x or ""`,
`bool(x)`) is a derivation and is left alone.

A leaf some other write sets to another value (a swap around a draft forward, a
restore, a group's `override(leaf=...)` outside test code) is state the code
changes, not a mirror (the same bag leaf copied by two inits is one mirror):
those leaves are shown in the derived sets and not reported. A test's `override(...)` is a scope for the test, not a writer; a lazy
default in a shim (`if <leaf> is None: <leaf> = False`) is the value before init.

A leaf copied from the parallel tier (`get_parallel()`) is the parallel stage's
flag, as the design's `flags.dp.enabled` under `is_dp_attention_enabled()` is:
listed in the derived sets, not reported.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext
from ctxlint.facts.vocab import BAGS, Vocabulary
from ctxlint.program.core import Program
from ctxlint.program.flags_tier import (
    ACCESSOR,
    Env,
    FlagsTierVisitor,
    IsNoneBranches,
    flags_groups,
    tier_modules,
)
from ctxlint.program.rule import RawFinding, Rule, field_data
from ctxlint.program.test_code import OPTION, is_test_file, test_roots

ID = "CTX705"
_MODULE = "<module>"
OVERRIDE = "override"  # the design's scoped write on a flags group
TOPOLOGY = "parallel"  # the design's parallel tier: its stage materialises the DP flags


class MirrorVisitor(FlagsTierVisitor, IsNoneBranches):
    """The tier's declarations, and every assignment to a flags leaf."""

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.envs: dict[str, Env] = {}
        self.writes: list[dict[str, Any]] = []

    def _env(self) -> Env:
        return self.envs.setdefault(self.ctx.qualname, {})

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self._assign(t.target, node, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._assign(node.target, node, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._assign(node.target, node, None)

    def _assign(
        self, target: cst.BaseExpression, node: cst.CSTNode, value: cst.BaseExpression | None
    ) -> None:
        env = self._env()
        if isinstance(target, cst.Name):
            found = self.path(value, env) if value is not None else None
            if found is not None:
                env[target.value] = found
            else:
                env.pop(target.value, None)
            return
        if isinstance(target, (cst.Tuple, cst.List)):
            for e in target.elements:
                self._assign(e.value, node, None)
            return
        if not isinstance(target, cst.Attribute):
            return
        chain = self.path(target, env)
        if not chain or chain[0] != "flags" or len(chain) != 3:
            return
        source = self.path(value, env) if value is not None else None
        scope = self.ctx.scope
        # a lazy default in a shim (`if <leaf> is None: <leaf> = ...`) is not a swap
        lazy = self.lazy(chain)
        self.writes.append(
            self.ctx.site(
                node,
                fn=scope.qualname if scope.kind != "module" else _MODULE,
                group=chain[1],
                leaf=chain[2],
                source=source if source and source[0] != "flags" else None,
                lazy=lazy,
                override=False,
            )
        )

    def visit_Call(self, node: cst.Call) -> None:
        """`<flags>.<group>.override(leaf=...)`: a write of each named leaf."""
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == OVERRIDE):
            return
        chain = self.path(func.value, self._env())
        if not chain or chain[0] != "flags" or len(chain) != 2:
            return
        scope = self.ctx.scope
        for arg in node.args:
            if arg.keyword is None:
                continue
            self.writes.append(
                self.ctx.site(
                    node,
                    fn=scope.qualname if scope.kind != "module" else _MODULE,
                    group=chain[1],
                    leaf=arg.keyword.value,
                    source=None,
                    lazy=False,
                    override=True,
                )
            )

    def tested_path(self, expr: cst.BaseExpression) -> list[str] | None:
        found = self.path(expr, self._env())
        return found if found and found[0] == "flags" else None

    def finish(self) -> Any:
        facts = {**self.tier_facts(), "writes": self.writes}
        return facts if self.classes or self.accessor or self.writes else None


class Model:
    def __init__(self, program: Program) -> None:
        vocab = program.vocab
        self.files = list(program.facts(ID))
        self.tier, self.root, self.groups = flags_groups(self.files, vocab.runtime_module)
        self.leaves = set(vocab.fields) | set(vocab.derived_leaves)
        self.topology = {a for a, ns in vocab.bag_accessors.items() if ns == TOPOLOGY}
        roots = test_roots(program)
        sites: dict[tuple[str, str], list[str]] = {}  # (group, leaf) -> write sites
        values: dict[tuple[str, str], set[str]] = {}  # what each site writes
        for path, module, f in self.files:
            for w in f["writes"]:
                if w["lazy"]:
                    continue  # the shim's default before init, not a second writer
                if w["override"] and is_test_file(path, roots):
                    continue  # a test's scope, not a writer of the process's state
                site = f"{module}.{w['fn']} ({path}:{w['span'][0]})"
                sites.setdefault((w["group"], w["leaf"]), []).append(site)
                # a copy writes its bag leaf; anything else is its own value
                src = w["source"]
                value = ".".join(src) if src is not None and len(src) > 1 else site
                values.setdefault((w["group"], w["leaf"]), set()).add(value)
        self.sites = sites
        # a leaf the code writes with more than one value is state it changes; the
        # same bag leaf copied at several sites (two inits) is still one mirror
        self.swapped = {k for k, v in values.items() if len(v) > 1}

    def copy(self, w: dict[str, Any]) -> bool:
        """A declared leaf written once, exactly a bag leaf."""
        src = w["source"]
        return (
            src is not None
            and not w["lazy"]
            and len(src) > 1
            and src[-1] in self.leaves
            and w["leaf"] in self.groups.get(w["group"], ())
            and (w["group"], w["leaf"]) not in self.swapped
        )

    def mirror(self, w: dict[str, Any]) -> bool:
        return self.copy(w) and w["source"][0] not in self.topology

    def stage_owned(self) -> list[str]:
        """Leaves copied from the parallel tier: the parallel stage's flags."""
        return sorted(
            {
                f"{w['group']}.{w['leaf']} = {w['source'][0]}().{'.'.join(w['source'][1:])}"
                for _, _, f in self.files
                for w in f["writes"]
                if self.copy(w) and w["source"][0] in self.topology
            }
        )


class FlagsMirrorConfig(Rule):
    id = ID
    name = "flags-mirror-config"
    summary = (
        "A runtime-flags leaf assigned straight from a config-bag leaf, with no "
        "derivation, is a config mirror: read the bag leaf"
    )
    visitor = MirrorVisitor
    needs = (BAGS,)
    options: ClassVar[dict[str, Any]] = {OPTION: []}

    def tokens(self, vocab: Vocabulary) -> set[str]:
        return {ACCESSOR, f"module:{vocab.runtime_module}"}

    def more_tokens(self, program: Program) -> set[str]:
        files = list(program.facts(ID))
        classes = {q: c for _, _, f in files for q, c in f["classes"].items()}
        _, root, _ = flags_groups(files, program.vocab.runtime_module)
        return tier_modules(classes, root)

    def _model(self, program: Program) -> Model:
        return program.memo(f"{ID}:model", lambda: Model(program))

    def derive(self, program: Program) -> dict[str, Any]:
        m = self._model(program)
        if not m.tier:
            return {"flags root": f"(no {ACCESSOR}() in {program.vocab.runtime_module})"}
        return {
            "flags root": m.root or "(not found)",
            "groups": {g: sorted(ls) for g, ls in sorted(m.groups.items())},
            "leaves written with several values": sorted(f"{g}.{leaf}" for g, leaf in m.swapped),
            "copied from the parallel tier (its stage's flags)": m.stage_owned(),
        }

    def partial(self, sets: dict[str, Any]) -> str | None:
        if "groups" in sets and not sets["groups"]:
            return (
                f"no flags groups: the runtime module's {ACCESSOR}() is not annotated with "
                f"a class of groups (flags root: {sets.get('flags root')}): nothing is checked"
            )
        return None

    def check(self, program: Program) -> Iterable[RawFinding]:
        m = self._model(program)
        for path, _, f in m.files:
            for w in f["writes"]:
                if not m.mirror(w):
                    continue
                src = w["source"]
                bag = f"{src[0]}().{'.'.join(src[1:])}"
                flag = f"{ACCESSOR}().{w['group']}.{w['leaf']}"
                yield RawFinding(
                    ID,
                    path,
                    w["scope"],
                    w["snippet"],
                    w["span"],
                    f"`{flag}` mirrors the bag leaf `{bag}` with no derivation: read "
                    f"`{bag}` where the flag is read, and drop the flag",
                    f"every write of `{w['group']}.{w['leaf']}` copies `{bag}`: "
                    + "; ".join(m.sites[(w["group"], w["leaf"])]),
                    data=field_data(program.vocab, src[-1]),
                )


RULE = FlagsMirrorConfig()
