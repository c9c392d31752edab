"""CTX602 import-time-config: config read or frozen where no publish can have
happened, or where an override can no longer reach it.

Reported, over the vocabulary's accessors (seed and bags, the parallel one
included) and its legacy accessors (functions of the runtime module, or of the
record's module, or re-exported by the runtime module, that the code marks
deprecated):

- an accessor read at import time: at module level, in a class body, in a
  default argument value or a decorator of a function defined at import time
  (not inside a function or a lambda, not under `if __name__ == "__main__":`,
  which is a process entry and CTX301's business);
- a module global that caches a config value: `global _X` then `_X = ...` over
  an accessor read in the same function;
- an accessor read inside a function memoised process-wide (`functools.cache`,
  `functools.lru_cache`): the first answer (or the object it builds) outlives
  every later override;
- a call of a legacy accessor (outside the module that defines it);
- the removed `.config` hop on a bag accessor (`get_parallel().config.tp_size`):
  a `config` that is neither a field nor a sub-namespace of that bag.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from typing import Any

from ctxlint.facts.vocab import BAGS, Vocabulary
from ctxlint.program import import_time_reads as at_import
from ctxlint.program.bindings import KEY as BINDINGS
from ctxlint.program.core import Program
from ctxlint.program.import_time_reads import MEMO_DECORATORS, ImportTimeRead, ImportTimeVisitor
from ctxlint.program.reads import config_accessors
from ctxlint.program.rule import RawFinding, Rule

ID = "CTX602"


@dataclass(frozen=True, slots=True)
class FindingData:
    """What a finding tells its fixer (the finding's data): its kind, and for a
    removed `.config` hop the namespace of the bag it hangs off."""

    kind: str
    namespace: str = ""

    def to_data(self) -> dict[str, str]:
        return asdict(self) if self.kind == "hop" else {"kind": self.kind}

    @classmethod
    def of(cls, data: dict[str, Any]) -> FindingData:
        return cls(**{k: str(v) for k, v in data.items() if k in ("kind", "namespace")})


_MESSAGES = {
    "import": "`{call}` read at import time ({where}): no publish can have happened yet, and "
    "no override reaches a value read once; read it where it is used, inside a function",
    "global": "`{call}` cached in the module global `{where}`: later overrides and re-publishes "
    "are missed; read the accessor where the value is used",
    "paired": "`{call}` and a parameter of its filler backfill the module global `{where}`: "
    "a per-runner value is threaded to its users as arguments, never kept on a shared object",
    "memo": "`{call}` read inside `{where}`, memoised process-wide: the first answer outlives "
    "every override and re-publish; read the accessor outside the memo, or drop the memo",
    # the memoised function does more than read: dropping the memo would run it again
    "effects": "`{call}` read inside `{where}`, memoised process-wide: the first answer "
    "outlives every override and re-publish; pass the value in as an argument (the memo's key)",
    "built": "`{call}` read inside `{where}`, memoised process-wide, which builds `{built}`: it "
    "keeps the first publish's values past every override and re-publish",
    # the memo builds a handle and the runtime's reset clears the resources tier, not it
    "handle": "`reset_context()` does not clear the `functools` memo `{where}`: after a reset "
    "and re-publish it hands back the `{built}` built from the old `{call}` values",
    "legacy": "`{call}` is a legacy accessor, marked deprecated in `{where}`: read what "
    "replaces it (the deprecation names it)",
    "hop": "`{call}.config` is the removed `.config` hop: `{ns}` has no `config` leaf; read "
    "the name off the bag directly",
}


class ImportTimeConfig(Rule):
    id = ID
    name = "import-time-config"
    summary = (
        "Config read at import time, cached in a global or a process-wide memo, read "
        "through a legacy accessor or the removed `.config` hop"
    )
    visitor = ImportTimeVisitor
    requires = (BINDINGS, "classes")  # names a function declared global; what a memo builds
    needs = (BAGS,)
    fixes = ("safe",)  # the `.config` hop only (docs/fix.md)

    def fixers(self) -> tuple[Callable[..., None], ...]:
        from ctxlint.rules.ctx602_import_time_config.fix import fix_config_hops

        return (fix_config_hops,)

    def tokens(self, vocab: Vocabulary) -> set[str]:
        return {q.rpartition(".")[2] for q in (*config_accessors(vocab), *vocab.legacy_accessors)}

    def more_tokens(self, program: Program) -> set[str]:
        return at_import.memo_modules(program, ID)  # what memos build: in the class index

    def derive(self, program: Program) -> dict[str, Any]:
        vocab = program.vocab
        return {
            "config accessors": sorted(config_accessors(vocab)),
            "legacy accessors": [
                f"{q}: {vocab.provenance.get(f'legacy accessor {q}', '?')}"
                for q in vocab.legacy_accessors
            ],
            "memo decorators": list(MEMO_DECORATORS),
        }

    def check(self, program: Program) -> Iterable[RawFinding]:
        for path, module, found in program.typed_facts(ID, tuple[ImportTimeRead, ...]):
            for f in (f for f in found if f.kind != "reset"):
                call = f"{f.name.rpartition('.')[2]}()"
                kind, built, details = at_import.kind_of(program, module, f, ID)
                message = _MESSAGES[kind].format(call=call, where=f.where, ns=f.where, built=built)
                data = FindingData(f.kind, f.where if f.kind == "hop" else "").to_data()
                at = f.site
                yield RawFinding(
                    ID, path, at.scope, at.snippet, at.span, message, details or "", data
                )


RULE = ImportTimeConfig()
