"""CTX704 moe-communicator-width: a configured parallel size used where the live
communicator's width is meant, and a size test where the enabled leaf is meant.

The process groups are the program model's (program.process_groups: the groups
the code aliases to another, their handles, width functions and collectives), and
so are the size reads and tests it asks about (program.parallel_sizes).

A read of `<parallel>.<key>_size` in a function that runs a collective on that
group is reported: the width of the communicator is the width function's
answer. Separately, `<parallel>.<size> > 1` where the runtime module defines a
leaf as exactly that test (`dcp_enabled=cfg.dcp_size > 1`, or a property named
so whose body makes it) is reported with the leaf to read instead.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ctxlint.facts.vocab import BAGS, Vocabulary
from ctxlint.program.bindings import KEY as BINDINGS
from ctxlint.program.core import Program
from ctxlint.program.parallel_sizes import ParallelSizes, SizesVisitor
from ctxlint.program.process_groups import PARALLEL, WIDTH_ATTR
from ctxlint.program.rule import RawFinding, Rule

ID = "CTX704"
NOTE_GROUPS = "no aliased process group derived (no `_G = _OTHER` in a function with `global _G`)"
NOTE_WIDTH = "no width function derived (a function of no parameters returning a group's "


class MoeCommunicatorWidth(Rule):
    id = ID
    name = "moe-communicator-width"
    summary = (
        "A configured parallel size read to size a collective on a group the code can "
        "alias to another (the MoE communicator), and a `size > 1` test where the runtime "
        "defines an enabled leaf"
    )
    visitor = SizesVisitor
    needs = (BAGS,)
    requires = (BINDINGS,)  # the names bound to the parallel bag

    def tokens(self, vocab: Vocabulary) -> set[str]:
        parallel = {a for a, ns in vocab.bag_accessors.items() if ns == PARALLEL}
        # a group table's entry named for a parallel size (`joined["moe_dp"]`); `_size > 1`:
        # a test, or the runtime binding a leaf to one
        keys = [
            f[: -len("_size")]
            for f, ns in vocab.fields.items()
            if ns == PARALLEL and f.endswith("_size")
        ]
        entries = {f"{q}{k}{q}]" for k in keys for q in "'\""}
        return (
            parallel
            | entries
            | {WIDTH_ATTR, "global", "_size > 1", f"module:{vocab.runtime_module}"}
        )

    def _model(self, program: Program) -> ParallelSizes:
        return program.memo(f"{ID}:model", lambda: ParallelSizes(program))

    def derive(self, program: Program) -> dict[str, Any]:
        m = self._model(program)
        return {
            "aliased groups": dict(sorted(m.aliased.items())),
            "group functions": dict(sorted(m.group_fns.items())),
            "width functions": {k: sorted(v) for k, v in sorted(m.widths.items())},
            # an aliased group with no width function to name: its size reads are not checked
            "unchecked groups": sorted(set(m.aliased) - set(m.widths)),
            "collective functions": {k: len(v) for k, v in sorted(m.wrappers.items())},
            "enabled leaves": dict(sorted(m.enabled.items())),
        } | (
            # no group the code aliases: no hazard here (said in the sets, not on every run)
            {} if m.aliased else {"note": f"{NOTE_GROUPS}: no size read is checked"}
        )

    def partial(self, sets: dict[str, Any]) -> str | None:
        if not sets or not sets.get("aliased groups"):
            return None  # disabled (said apart), or nothing aliased (the sets' note)
        if not sets.get("width functions"):
            return f"{NOTE_WIDTH}.world_size) for an aliased group: nothing is checked"
        return None

    def check(self, program: Program) -> Iterable[RawFinding]:
        m = self._model(program)
        for path, s, key in m.width_reads():
            width = sorted(m.widths[key])[0]
            wmod, _, wname = width.rpartition(".")
            yield RawFinding(
                ID,
                path,
                s.site.scope,
                s.site.snippet,
                s.site.span,
                f"`{s.site.snippet}` is the configured size, not the width of the "
                f"`{key}` communicator this function runs a collective on; ask `{wname}()`",
                f"the group can be another's alias; `{wname}` is in {wmod}\n"
                f"aliased at: {m.aliased[key]}\nwidth functions: "
                + ", ".join(sorted(m.widths[key])),
                data={"leaf": s.leaf},
            )
        for path, t, leaf in m.leaf_tests():
            yield RawFinding(
                ID,
                path,
                t.site.scope,
                t.site.snippet,
                t.site.span,
                f"`{t.site.snippet}` spells what the leaf `{leaf}` answers: read "
                f"`{t.receiver}.{leaf}`",
                f"beside {program.vocab.runtime_module}, `{leaf}` is bound to `{t.leaf} > 1`",
                data={"leaf": t.leaf},
            )


RULE = MoeCommunicatorWidth()
