"""CTX701 resource-lease: named streams and buffers are leased by literal name
(or prefix), one subsystem per name, and never from inside CUDA graph capture.

Everything comes from the runtime's resources tier. The tier is the class the
runtime module's `get_resources()` is annotated to return; its *registries* are
the attributes its methods (or the runtime module's, through `<x>.resources`)
store into keyed by their first parameter (`self.streams[name] = ...`): those
methods are the *lease methods*, and the runtime module's functions that store
so or hand their first parameter to a lease method (`get_stream(name)`,
`set_stream`, `get_buffer`) are the *lease functions*. A lease call is a call of
a lease function, or of a lease method on a runtime accessor's result
(`get_resources().stream(name)`, `get_context().get_stream(name)`).

A lease's *subsystem* is the package its module belongs to one level below the
root: the runtime module's package for modules inside it (SGLang:
`sglang.srt.models`, `sglang.srt.layers`), else the module's top-level package
(`app.models`; a flat example app is one subsystem). The name -> subsystem
table is pinned in the baseline.

Capture is a `with torch.<device>.graph(...)` block: a lease call in it, or in
a function the call graph reaches from the calls in it, creates a stream or
buffer while the graph records (a driver call).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ctxlint.facts.vocab import BAGS, Vocabulary
from ctxlint.program.callees import chain_text, short
from ctxlint.program.calls import call_graph
from ctxlint.program.core import Program
from ctxlint.program.resource_leases import ACCESSOR, Leases, LeaseSite, LeaseVisitor, leases
from ctxlint.program.rule import PinSite, RawFinding, Rule, pin_findings

ID = "CTX701"


class ResourceLease(Rule):
    id = ID
    name = "resource-lease"
    summary = (
        "Named streams and buffers are leased by a literal name, from one subsystem per "
        "name, and never from inside CUDA graph capture"
    )
    visitor = LeaseVisitor
    needs = (BAGS,)  # the resources tier sits beside the bags on the runtime context
    requires = ("calls",)

    def tokens(self, vocab: Vocabulary) -> set[str]:
        return {ACCESSOR, ".graph(", f"module:{vocab.runtime_module}"}

    def more_tokens(self, program: Program) -> set[str]:
        model = Leases(program, ID)  # not memoised: the facts grow each round
        out = {q.rpartition(".")[2] for q in model.functions}
        if model.tier_class:
            out.add(f"module:{model.tier_class.rpartition('.')[0]}")
        return out | model.capture.wanted_modules(program)

    def derive(self, program: Program) -> dict[str, Any]:
        model = leases(program, ID)
        if not model.has_accessor:
            return {"resources tier": f"(no {ACCESSOR}() in {model.rt})"}
        return {
            "resources tier": model.tier_class or "(not annotated)",
            "lease methods": dict(sorted(model.methods.items())),
            "lease functions": dict(sorted(model.functions.items())),
            "subsystems": sorted(set(model.subsystem.values())),
            "name table": {k: ", ".join(v) for k, v in model.table().items()},
            "lease sites": len(model.sites),
            "capture blocks": sorted(f"{p}:{c.span[0]}" for p, c in model.capture.blocks),
            "reached from capture": len(model.reached_from_capture(program, ID)),
        }

    def partial(self, sets: dict[str, Any]) -> str | None:
        if "lease functions" not in sets:  # disabled, or no resources tier: nothing to lease
            return None
        if not sets["lease functions"]:
            return (
                "no lease functions: no function of the runtime module stores into, or "
                f"delegates to, the resources tier's registries ({sets.get('resources tier')})"
            )
        return None

    def pins(self, program: Program) -> dict[str, Any]:
        return {k: ", ".join(v) for k, v in leases(program, ID).table().items()}

    def check(self, program: Program) -> Iterable[RawFinding]:
        model = leases(program, ID)
        yield from self._names(model)
        reach = model.reached_from_capture(program, ID)
        for s in model.sites:
            if s.call.capture:
                yield _at(
                    s,
                    f"{s.registry} lease `{s.call.snippet[:60]}` inside CUDA graph capture: "
                    "creating a stream or buffer is a driver call; lease it at init/warmup time",
                )
            elif s.call.fn in reach:
                site, chain = reach[s.call.fn]
                yield _at(
                    s,
                    f"{s.registry} lease reachable from inside CUDA graph capture: creating a "
                    "stream or buffer is a driver call; lease it at init/warmup time",
                    f"captured at {site}, via {chain_text(call_graph(program), chain)}",
                )
        if ID in program.pinned:
            sites: dict[str, PinSite] = {}
            for s in model.sites:
                key = f"{s.registry} {s.call.name}"
                if s.call.name is not None and key not in sites:
                    c = s.call
                    sites[key] = PinSite(s.path, short(c.fn, s.module), c.snippet, c.span)
            yield from pin_findings(ID, program, self.pins(program), sites)

    def _names(self, model: Leases) -> Iterable[RawFinding]:
        for s in model.sites:
            why = (
                "neither is nor starts with a literal: no role names it"
                if s.call.name is None
                else "names one entry per device (its factory's `device=`)"
            )
            if s.call.name is None or s.call.per_device:
                yield _at(
                    s,
                    f"{s.registry} lease name `{s.call.arg}` {why}; lease a literal name (or "
                    "prefix) per subsystem role",
                    f"keep per-device/grow-only entries in `{ACCESSOR}().{s.registry}` directly",
                )
        for key, subs in model.shared_names():
            # the subsystem with the most leases keeps the name; each other is reported once
            owner = sorted(subs, key=lambda s: (-len(subs[s]), s))[0]
            for sub in sorted(subs):
                if sub == owner:
                    continue
                first = sorted(subs[sub], key=lambda s: (s.path, s.call.span))[0]
                registry, _, name = key.partition(" ")
                yield _at(
                    first,
                    f"{registry} `{name}` is leased from {len(subs)} subsystems: sharing a name "
                    f"across roles serializes the overlap each expects; lease one for `{sub}`",
                    f"the subsystems leasing it: {', '.join(sorted(subs))}",
                )


def _at(s: LeaseSite, message: str, details: str = "") -> RawFinding:
    c = s.call
    return RawFinding(ID, s.path, short(c.fn, s.module), c.snippet, c.span, message, details)


RULE = ResourceLease()
