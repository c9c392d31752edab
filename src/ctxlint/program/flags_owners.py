"""Who owns each runtime-flags group: every write through the flags classified
(a lazy default, a clear, a scoped write, or plain), and the owner each group's
plain writes give it (the init assigning the group, the one function writing
every leaf, or else the one module that does). CTX703's visitor gathers the
writes (kept under its id); its check reports the writes outside the owner.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ctxlint.facts.typed import Span
from ctxlint.program.core import Program
from ctxlint.program.flags_tier import TierFacts, flags_tier

KEY = "CTX703"  # the rule whose facts these are


@dataclass(frozen=True, slots=True)
class ClassSite:
    scope: str
    span: Span
    defaults: dict[str, str] = field(default_factory=dict)  # leaf -> its default's source


@dataclass(frozen=True, slots=True)
class FlagWrite:
    """An assignment through the flags: `chain` is the path below the root."""

    fn: str
    chain: list[str]  # [group] or [group, leaf, ...]
    lazy: bool  # under `if <the same path> is None:`
    in_finally: bool
    restore: bool  # puts back the value its class saved from that leaf
    snippet: str
    span: Span
    # under `if <the same leaf>:`, the value written (a clear when it is the default)
    cleared_to: str | None = None


@dataclass(frozen=True, slots=True)
class FlagsFacts(TierFacts):
    sites: dict[str, ClassSite]  # tier class -> where it is
    writes: list[FlagWrite]


class FlagsOwners:
    """The groups, every write classified, and each group's owners."""

    def __init__(self, program: Program) -> None:
        self.classes: dict[str, tuple[str, ClassSite]] = {}  # tier class -> (path, where)
        self.writes: list[tuple[str, str, FlagWrite]] = []  # (path, module, write)
        files = list(program.typed_facts(KEY, FlagsFacts))
        self.tier = flags_tier(files, program.vocab.runtime_module)
        self.groups = self.tier.groups  # group -> its class
        for path, module, facts in files:
            self.classes.update((qual, (path, facts.sites[qual])) for qual in facts.classes)
            self.writes += [(path, module, w) for w in facts.writes]
        # a leaf also written in a `finally:` of the same function is a scoped write
        restored = {(module, w.fn, tuple(w.chain)) for _, module, w in self.writes if w.in_finally}
        self.kind: list[str] = []
        for _, module, w in self.writes:
            if w.lazy:
                self.kind.append("lazy default")
            elif self._clear(w):
                self.kind.append("clear")
            elif w.restore or (module, w.fn, tuple(w.chain)) in restored:
                self.kind.append("scoped")
            else:
                self.kind.append("plain")
        self.owners: dict[str, list[str]] = {}
        self.owning_module: dict[str, str] = {}  # group -> the module owning it, no init does
        self.contenders: dict[str, list[str]] = {}
        self.materialised: dict[str, list[str]] = {}
        for group in self.groups:
            declared = set(self.tier.leaves(group))
            whole: set[str] = set()
            per_fn: dict[str, set[str]] = {}
            per_module: dict[str, set[str]] = {}
            for (_, module, w), kind in zip(self.writes, self.kind, strict=True):
                if w.chain[0] != group or kind != "plain":
                    continue
                fn = f"{module}.{w.fn}"
                if len(w.chain) == 1:
                    whole.add(fn)
                elif w.chain[1] in declared:  # an undeclared name raises: no leaf
                    per_fn.setdefault(fn, set()).add(w.chain[1])
                    per_module.setdefault(module, set()).add(w.chain[1])
            leaves = set().union(*per_fn.values()) if per_fn else set()
            self.materialised[group] = sorted(leaves)
            if whole:
                self.owners[group] = sorted(whole)
            elif leaves:
                covering = sorted(f for f, ls in per_fn.items() if ls >= leaves)
                modules = [m for m, ls in per_module.items() if ls >= leaves]
                if len(covering) == 1:
                    self.owners[group] = covering
                elif len(modules) == 1:
                    # no one init, but one module writes every leaf: the subsystem
                    # owns the group there, its init and its lifecycle updates
                    self.owning_module[group] = modules[0]
                else:  # none, or several each writing all: no one owner either way
                    self.contenders[group] = covering

    def _clear(self, w: FlagWrite) -> bool:
        """`if <leaf>: <leaf> = <its declared default>`: the write only takes back
        what was set, to the pre-init value the design gives every default."""
        chain = w.chain
        if w.cleared_to is None or len(chain) != 2 or chain[0] not in self.groups:
            return False
        defaults = self.classes[self.groups[chain[0]]][1].defaults
        return defaults.get(chain[1]) == w.cleared_to
