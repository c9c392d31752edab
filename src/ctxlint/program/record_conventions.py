"""The codebase's record conventions: which names mean the record, and where.

A record parameter's name is a convention the codebase itself keeps (derived
from its annotations, `record_names`); a rival record class of the same simple
name takes a name over inside its own package (`RecordConvention`). The design
names the one place records are copied and edited (`record-copy-helpers`):
nothing inside it is a record write or copy.
"""

from __future__ import annotations

from typing import Any

from ctxlint.program.core import Program

RECORDS = "records"  # the facts key the conventions are made of (records.KEY)

# Functions the design names as the one place a record is copied and edited
# (SGLang: test doubles use `sglang.test.test_utils.server_args_variant`):
# qualified names; CTX201 and CTX202 report nothing inside them.
COPY_HELPERS = "record-copy-helpers"


def copy_helper_scopes(program: Program) -> set[tuple[str, str]]:
    """(module, qualname) of each configured copy helper (and what it nests)."""
    out = set()
    for q in program.config.options.get(COPY_HELPERS, []):
        module, _, name = q.rpartition(".")
        while module and program.module_path(module) is None and "." in module:
            module, _, head = module.rpartition(".")
            name = f"{head}.{name}"  # a method: `module.Class.method`
        out.add((module, name))
    return out


def in_helper(helpers: set[tuple[str, str]], module: str, scope: str) -> bool:
    return any(m == module and (scope == q or scope.startswith(q + ".")) for m, q in helpers)


def record_names(program: Program) -> set[str]:
    """The codebase's naming convention for a record parameter (once a run)."""
    return program.memo("record names", lambda: _record_names(program), (RECORDS,))


def record_convention(program: Program) -> RecordConvention:
    """Where each record parameter name means the record (once a run)."""
    return program.memo("record convention", lambda: RecordConvention(program), (RECORDS,))


def _record_names(program: Program) -> set[str]:
    """The codebase's naming convention for a record parameter.

    A name qualifies when functions annotate a parameter of that name with the
    record class more than once, and more often than with any other concrete
    type (`Any` does not count against it): one `args: ServerArgs` among many
    `args: dict` is not a convention, and every `args.x = ...` in the tree must
    not become a record write because of it.
    """
    counts: dict[str, int] = {}
    other: dict[str, int] = {}
    for entry in program.files.values():
        facts = entry["facts"].get(RECORDS) or {}
        for name, n in facts.get("record_params", {}).items():
            counts[name] = counts.get(name, 0) + n
        for name, n in facts.get("other_params", {}).items():
            other[name] = other.get(name, 0) + n
    return {name for name, n in counts.items() if n >= 2 and n > other.get(name, 0)}


def _branch(record_module: str, rival: str) -> str | None:
    """The package holding a rival record class, one level below the package its
    module shares with the record's module (`sglang.multimodal_gen` for
    `sglang.multimodal_gen.runtime.server_args.ServerArgs` against
    `sglang.srt.server_args`); None when the rival's module is an ancestor of the
    record's, and no package separates the two."""
    rec = record_module.split(".")
    riv = rival.rpartition(".")[0].split(".")
    k = 0
    while k < min(len(rec), len(riv)) and rec[k] == riv[k]:
        k += 1
    return ".".join(riv[: k + 1]) if k < len(riv) else None


def _under(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


class RecordConvention:
    """Where a name of the convention means the record.

    Another class of the record's simple name (a rival record: SGLang's
    `sglang.multimodal_gen` has its own `ServerArgs`, outside the contract)
    takes a convention name over inside its own package: where that package's
    parameters of the name are annotated with the rival at least twice and
    more often than with the record, an unannotated one means the rival there.
    Explicit annotations, the seed and parked records are decided as before.
    """

    def __init__(self, program: Program) -> None:
        self.names = record_names(program)
        record_module = program.vocab.record_module
        # (name, package) -> (record votes, rival votes, rival classes) in that package
        votes: dict[tuple[str, str], list[Any]] = {}
        per_file: list[tuple[str, dict[str, Any]]] = []
        for entry in program.files.values():
            facts = entry["facts"].get(RECORDS) or {}
            per_file.append((entry["module"], facts))
            for name, rivals in facts.get("rival_params", {}).items():
                if name not in self.names:
                    continue
                for q in rivals:
                    package = _branch(record_module, q)
                    if package is not None:
                        votes.setdefault((name, package), [0, 0, set()])[2].add(q)
        for (name, package), v in votes.items():
            for module, facts in per_file:
                if not _under(module, package):
                    continue
                v[0] += facts.get("record_params", {}).get(name, 0)
                v[1] += sum(facts.get("rival_params", {}).get(name, {}).values())
        self.yielded: dict[str, list[tuple[str, list[str]]]] = {}
        for (name, package), (rec, riv, classes) in sorted(votes.items()):
            if riv >= 2 and riv > rec:
                self.yielded.setdefault(name, []).append((package, sorted(classes)))

    def holds(self, name: str, module: str) -> bool:
        """Whether `name`, unannotated, is a record holder in `module`."""
        if name not in self.names:
            return False
        return not any(_under(module, p) for p, _ in self.yielded.get(name, ()))

    def describe(self) -> list[str]:
        return [
            f"{name} in {package} (its own {', '.join(classes)})"
            for name, places in sorted(self.yielded.items())
            for package, classes in places
        ]
