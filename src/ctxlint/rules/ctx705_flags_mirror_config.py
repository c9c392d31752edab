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

from ctxlint.facts.vocab import BAGS, Vocabulary
from ctxlint.program.core import Program
from ctxlint.program.flags_copies import REQUIRES, MirrorVisitor, flags_copies, wanted_modules
from ctxlint.program.flags_tier import ACCESSOR, missing_groups, no_tier
from ctxlint.program.rule import RawFinding, Rule, field_data
from ctxlint.program.test_code import OPTION

ID = "CTX705"


class FlagsMirrorConfig(Rule):
    id = ID
    name = "flags-mirror-config"
    summary = (
        "A runtime-flags leaf assigned straight from a config-bag leaf, with no "
        "derivation, is a config mirror: read the bag leaf"
    )
    visitor = MirrorVisitor
    requires = REQUIRES  # what names hold a flags or bag path
    needs = (BAGS,)
    options: ClassVar[dict[str, Any]] = {OPTION: []}

    def tokens(self, vocab: Vocabulary) -> set[str]:
        return {ACCESSOR, f"module:{vocab.runtime_module}"}

    def more_tokens(self, program: Program) -> set[str]:
        return wanted_modules(program)

    def derive(self, program: Program) -> dict[str, Any]:
        m = flags_copies(program)
        if not m.tier.defined:
            return no_tier(program.vocab.runtime_module)
        return {
            "flags root": m.tier.root or "(not found)",
            "groups": {g: sorted(ls) for g, ls in sorted(m.groups.items())},
            "leaves written with several values": sorted(f"{g}.{leaf}" for g, leaf in m.swapped),
            "copied from the parallel tier (its stage's flags)": m.stage_owned(),
        }

    def partial(self, sets: dict[str, Any]) -> str | None:
        why = missing_groups(sets)
        return f"{why}: nothing is checked" if why else None

    def check(self, program: Program) -> Iterable[RawFinding]:
        m = flags_copies(program)
        for path, _, f in m.files:
            for w in f.writes:
                if not m.mirror(w) or (src := w.source) is None:
                    continue
                bag = f"{src[0]}().{'.'.join(src[1:])}"
                flag = f"{ACCESSOR}().{w.group}.{w.leaf}"
                yield RawFinding(
                    ID,
                    path,
                    w.site.scope,
                    w.site.snippet,
                    w.site.span,
                    f"`{flag}` mirrors the bag leaf `{bag}` with no derivation: read the leaf "
                    "instead, and drop the flag",
                    f"every write of `{w.group}.{w.leaf}` copies `{bag}`: "
                    + "; ".join(m.sites[(w.group, w.leaf)]),
                    data=field_data(program.vocab, src[-1]),
                )


RULE = FlagsMirrorConfig()
