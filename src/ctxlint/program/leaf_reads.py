"""Which bag accessor calls read a published leaf (what fails closed before publish).

Most bag accessors ask the context for the published bag (`config_bag("exec")`):
the call itself fails before publish, so every call is a leaf read. An accessor
whose whole body hands out a module-level instance the runtime module builds at
import (SGLang's `def get_parallel(): return _PARALLEL`) returns an object that
exists before any publish; what fails closed is reading a published leaf off
it. So a member taken straight off such a call (`get_parallel().world_group`)
is a leaf read only when the namespace declares it as a leaf (a field, a
computed `Derived(fn=...)` leaf or a sub-namespace) and the class does not
define it itself: a method or property the class defines answers from its own
code (the bag's `override(...)`, 0.5.17's live rank/group properties), and a
name the namespace does not declare is no published leaf (0.5.23's ranks and
group handles, `Derived` with no `fn`, filled in by distributed init). A call
whose object goes on (`p = get_parallel()`, an argument) stays a read: what is
read off it later is not followed.

A read in a `try` whose handlers catch every class the accessor raises before
publish (the vocabulary's `unpublished_errors`, derived from the runtime
module; the read's `caught`: program.call_facts) reads a leaf but cannot fail
before publish: `fails_unpublished` leaves it out, for the ordered question
CTX301 asks. A handler naming a class through a re-export
(`from ctxrt import ConfigNotPublishedError`) is followed to the class where the
run parsed the re-exporting package.
"""

from __future__ import annotations

from ctxlint.program.call_model import Event, EventKind
from ctxlint.program.classes import ClassIndex, class_index
from ctxlint.program.core import Program

KEY = "leaf_reads"


class LeafReads:
    """Per bag accessor handing out an import-time object: its class and the
    leaves its namespace publishes."""

    def __init__(self, program: Program, index: ClassIndex) -> None:
        vocab = program.vocab
        self.index = index
        self.errors = vocab.unpublished_errors
        self.live: dict[str, tuple[str, frozenset[str]]] = {}
        for accessor, ns in vocab.bag_accessors.items():
            cls = index.built_at_import(vocab.qualified(accessor))
            if cls is None:
                continue
            leaves = {f for f, path in vocab.fields.items() if path == ns}
            leaves |= {f for f, path in vocab.derived_leaves.items() if path == ns}
            leaves |= {  # `get_exec().moe`: a sub-namespace's bag
                path[len(ns) + 1 :].partition(".")[0]
                for path in vocab.namespaces
                if path.startswith(ns + ".")
            }
            self.live[accessor] = (index.resolve(cls) or cls, frozenset(leaves))

    def reads(self, event: Event) -> bool:
        """The event is a bag read that fails closed before publish."""
        if event.kind is not EventKind.READ:
            return False
        live = self.live.get(event.accessor or "")
        if live is None or event.member is None:
            return True
        cls, leaves = live
        if self.index.definer(cls, event.member) is not None:
            return False
        return event.member in leaves

    def guarded(self, event: Event) -> bool:
        """The read's handlers catch every class its accessor raises before publish
        (each one, or one of its bases); none guard an accessor with no such class."""
        errors = self.errors.get(event.accessor or "")
        if not event.caught or not errors:
            return False
        known = {c for classes in errors for c in classes}
        caught = {self.index.follow(c, known.__contains__) or c for c in event.caught}
        return all(any(c in caught for c in classes) for classes in errors)

    def fails_unpublished(self, event: Event) -> bool:
        """The event is a bag read that raises when it runs before publish."""
        return self.reads(event) and not self.guarded(event)


def leaf_reads(program: Program) -> LeafReads:
    """The run's answer (once per program state, as the class index)."""
    index = class_index(program)
    return program.memo(f"{KEY}:{len(program.files)}", lambda: LeafReads(program, index))
