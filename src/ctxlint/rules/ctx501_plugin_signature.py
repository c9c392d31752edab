"""CTX501 plugin-signature: plugin hooks, their dispatch sites and implementations agree.

Plugin bases are derived, not listed: a class in the tree that defines abstract
methods (`@abstractmethod`) or methods whose body only raises
`NotImplementedError` (unless that method overrides one of an ancestor: then it
is an implementation declining a hook, not a new one), plus the classes named
in `plugin-bases`. Their hooks are those methods (every public method, for a
configured base). Each hook's signature is pinned in the baseline; every call
of a hook on an object of a base is checked against the base signature, and
every in-tree implementation (transitively, across modules) must accept what
the base and its dispatch sites pass.

The bases, hooks, implementations and dispatch sites are the program model's
(program/plugin_dispatch.py, over the class index: C3 MRO, through re-exports),
which also says which dispatches and overrides do not fit (program/signatures.py);
this rule's facts are the method calls on receivers whose class can be told
(program.bindings: `self`, `super()`, annotated parameters/locals/attributes,
objects constructed in the scope, isinstance-narrowed names).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, ClassVar

from ctxlint.facts.vocab import Vocabulary
from ctxlint.program.bindings import KEY as BINDINGS
from ctxlint.program.classes import KEY as CLASSES
from ctxlint.program.core import Program
from ctxlint.program.plugin_dispatch import PLUGIN_BASES, Graph, PluginVisitor, plugin_graph
from ctxlint.program.rule import PinSite, RawFinding, Rule, pin_findings
from ctxlint.program.signatures import sig_text

ID = "CTX501"


class PluginSignature(Rule):
    id = ID
    name = "plugin-signature"
    summary = (
        "A plugin hook called, or implemented, with a signature the plugin base does not "
        "declare; hook signatures are pinned in the baseline"
    )
    visitor = PluginVisitor
    requires = (BINDINGS, CLASSES)
    options: ClassVar[dict[str, Any]] = {PLUGIN_BASES: []}

    def tokens(self, vocab: Vocabulary) -> set[str]:
        return {"NotImplementedError", "abstractmethod"}

    def more_tokens(self, program: Program) -> set[str]:
        """Names of bases and their subclasses so far: implementations and
        dispatch sites in other files mention one of them."""
        graph = plugin_graph(program)
        names = {c.rpartition(".")[2] for c in graph.configured}
        names |= {b.rpartition(".")[2] for b in graph.bases}
        names |= {i.rpartition(".")[2] for i in graph.implementations()}
        return names

    def derive(self, program: Program) -> dict[str, Any]:
        graph = plugin_graph(program)
        return {
            "plugin bases": {
                base: {h: sig_text(m.params) for h, m in sorted(hooks.items())}
                for base, hooks in sorted(graph.bases.items())
            },
            "configured plugin bases not found": graph.configured_missing(),
            "implementations": {
                impl: sorted(bases) for impl, bases in sorted(graph.implementations().items())
            },
            "other interfaces of a hook's name": graph.other_interfaces(),
            "dispatch sites": sorted(
                f"{path}:{call.site.span[0]} {call.site.snippet[:80]} -> {base}.{call.method}"
                for path, call, base, _, _ in graph.dispatches()
            ),
        }

    def pins(self, program: Program) -> dict[str, Any]:
        return {
            f"{base}.{hook}": sig_text(m.params)
            for base, hook, m in plugin_graph(program).interface_hooks()
        }

    def check(self, program: Program) -> Iterable[RawFinding]:
        graph = plugin_graph(program)
        return [
            *self._dispatch_findings(graph),
            *self._implementation_findings(graph),
            *self._pin_findings(program, graph),
        ]

    def _dispatch_findings(self, graph: Graph) -> Iterable[RawFinding]:
        """Dispatch sites against the signature that binds them."""
        for path, call, base, definer, problems in graph.misfit_dispatches():
            whose, result, tree = f"{_short(base)} hook override", "this call raises TypeError", []
            if definer == base:
                whose, (result, tree) = "plugin hook", graph.raising_here(path, call, base)
            hook_name = f"{_short(definer)}.{call.method}"
            hook = graph.methods[definer][call.method]
            yield RawFinding(
                ID,
                path,
                call.site.scope,
                call.site.snippet,
                call.site.span,
                f"call of {whose} `{hook_name}` does not fit its signature "
                f"({_first(problems)}): {result}",
                _details([f"hook: {hook_name}{sig_text(hook.params)}", *tree], problems),
            )

    def _implementation_findings(self, graph: Graph) -> Iterable[RawFinding]:
        """Implementations against the base contract and what its dispatch passes."""
        for o in graph.overrides():
            problems = o.problems()
            if not problems:
                continue
            path, qual = graph.where[o.impl]
            impl, base, name = _short(o.impl), _short(o.base), o.name
            yield RawFinding(
                ID,
                path,
                f"{qual}.{name}",
                f"def {name}{sig_text(o.method.params)}",
                o.method.span,
                f"`{impl}.{name}` does not accept what the plugin base "
                f"`{base}.{name}` is called with ({_first(problems)})",
                _details(
                    [
                        f"override: {impl}.{name}{sig_text(o.method.params)}",
                        f"base: {base}.{name}{sig_text(o.hook.params)}",
                    ],
                    problems,
                ),
            )

    def _pin_findings(self, program: Program, graph: Graph) -> list[RawFinding]:
        """Pins are enforced once the baseline records CTX501 pins at all: a run
        with no baseline (spec examples, a first look at a tree) has nowhere to
        record them, and `baseline update` writes the section."""
        if ID not in program.pinned:
            return []
        sites: dict[str, PinSite] = {}
        for base, hook, m in graph.interface_hooks():
            path, qual = graph.where[base]
            sites[f"{base}.{hook}"] = PinSite(path, f"{qual}.{hook}", f"def {hook}", m.span)
        return pin_findings(ID, program, self.pins(program), sites)


# "... at the dispatch path/to/file.py:92": where, which the details keep
_AT_DISPATCH = re.compile(r" at the dispatch \S+:\d+")


def _first(problems: list[str]) -> str:
    """The first problem without its dispatch's place, and how many more: a
    message stays one short sentence (SGLang's reached 1,911 characters); the
    rest is in the details."""
    more = len(problems) - 1
    first = _AT_DISPATCH.sub("", problems[0])
    return first + (f", and {more} more problem{'s' if more > 1 else ''}" if more else "")


def _details(signatures: list[str], problems: list[str]) -> str:
    """The signatures compared and every problem, one a line (`--show-details`)."""
    return "\n".join([*signatures, "problems:", *(f"  - {p}" for p in problems)])


def _short(qual: str) -> str:
    return qual.rpartition(".")[2]


RULE = PluginSignature()
