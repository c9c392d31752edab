"""CTX702 forward-state: per-forward flags are read on the thread that set them,
and written through `scoped(...)`.

The tier is the runtime module's `get_forward()` (its return annotation names
the class). A *read* is an attribute of a `get_forward()` call, or of a local
bound to one, other than its writers `set`/`scoped`. A *thread start* runs a
target without the caller's context (the model's part "threads",
program.call_starts: `threading.Thread(target=f)`, a thread pool's `submit`/`map`,
`run_in_executor`; not `<copy_context()>.run` nor `asyncio.to_thread`). The call
graph resolves each target and follows its calls: a read it reaches sees the
default flags.

A *sticky* write is `get_forward().set(name, value)`: the names the code sets so
are pinned in the baseline (the legacy sticky setters); a `set` of any other name
is a finding (new writes use `scoped(...)`, which restores on exit).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ctxlint.core.findings import PIN, VIOLATION
from ctxlint.facts.vocab import BAGS, Vocabulary
from ctxlint.program.bindings import KEY as BINDINGS
from ctxlint.program.call_starts import THREAD_TOKENS, THREADS
from ctxlint.program.callees import chain_text, short
from ctxlint.program.calls import call_graph
from ctxlint.program.core import Program
from ctxlint.program.forward_flags import (
    ACCESSOR,
    ForwardFlags,
    ForwardVisitor,
    thread_reach,
    unparsed_modules,
)
from ctxlint.program.rule import RawFinding, Rule, pin_findings

ID = "CTX702"


class ForwardState(Rule):
    id = ID
    name = "forward-state"
    summary = (
        "Per-forward flags are not read from a thread started without the caller's "
        "context, and are written with scoped(...) outside the pinned sticky setters"
    )
    visitor = ForwardVisitor
    needs = (BAGS,)
    requires = ("calls", THREADS, BINDINGS)

    def tokens(self, vocab: Vocabulary) -> set[str]:
        return {ACCESSOR, *THREAD_TOKENS, f"module:{vocab.runtime_module}"}

    def more_tokens(self, program: Program) -> set[str]:
        return unparsed_modules(program)

    def _model(self, program: Program) -> ForwardFlags:
        return program.memo(f"{ID}:model", lambda: ForwardFlags(program))

    def _reach(self, program: Program, model: ForwardFlags) -> dict[str, tuple[str, list[str]]]:
        return program.memo(f"{ID}:reach", lambda: thread_reach(program, model.starts))

    def derive(self, program: Program) -> dict[str, Any]:
        model = self._model(program)
        if not model.tier:
            return {"forward tier": f"(no {ACCESSOR}() in {program.vocab.runtime_module})"}
        reach = self._reach(program, model)
        return {
            "forward tier": f"{program.vocab.runtime_module}.{ACCESSOR}",
            "thread starts": sorted(f"{s.path}:{s.span[0]} {s.kind}" for s in model.starts),
            "reached from threads": len(reach),
            "forward reads": sum(len(v) for v in model.reads.values()),
            "sticky names": model.sticky(),
        }

    def pins(self, program: Program) -> dict[str, Any]:
        return {f"sticky {k}": ", ".join(v) for k, v in self._model(program).sticky().items()}

    def check(self, program: Program) -> Iterable[RawFinding]:
        model = self._model(program)
        if not model.tier:
            return
        reach = self._reach(program, model)
        for fn, path, module, r, start, chain in model.threaded_reads(reach):
            yield RawFinding(
                ID,
                path,
                short(fn, module),
                r.snippet,
                r.span,
                f"per-forward flag `{r.flag}` is read in a thread started without the "
                "caller's context: the thread sees the default flags; start it with "
                "`contextvars.copy_context().run` or hand it the value",
                f"the thread: {start}, via {chain_text(call_graph(program), chain)}",
            )
        pinned = program.pinned.get(ID, {})
        for path, module, s in model.sets:
            name = s.name
            if name is not None and f"sticky {name}" in pinned:
                continue
            what = f"`{name}`" if name is not None else "a computed name"
            yield RawFinding(
                ID,
                path,
                short(s.fn, module),
                s.snippet,
                s.span,
                f"sticky per-forward write of {what}, outside the pinned sticky setters: "
                "write it with `get_forward().scoped(...)`, which restores on exit",
                "a legacy setter that must stay sticky is recorded with `ctxlint baseline update`"
                if name is not None
                else "",
                # a literal name is a pin to record (or a write to rewrite); a computed one can't be
                kind=PIN if name is not None else VIOLATION,
                # each site of one setter is listed; the pin it records is one key
                data={"key": f"sticky {name}"} if name is not None else {},
            )
        if pinned:  # a pinned name's setters changed, or it is gone
            current = {k: v for k, v in self.pins(program).items() if k in pinned}
            yield from pin_findings(ID, program, current, model.pin_sites())


RULE = ForwardState()
