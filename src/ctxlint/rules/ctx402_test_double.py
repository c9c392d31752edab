"""CTX402 test-double: test doubles publish, they do not inject.

In test code (pytest's conventions: `test_*.py`, `*_test.py`, `conftest.py`;
plus the configured `test-roots`), reported:

- an accessor binding replaced: `mod.get_exec = ...`, `setattr`/
  `monkeypatch.setattr(mod, "get_exec", ...)`, `monkeypatch.setattr("a.b.get_exec",
  ...)`, `mock.patch("a.b.get_exec")` (call or decorator), `patch.object(mod,
  "get_exec")`, for every accessor of the runtime (the vocabulary's seed, bag
  and legacy accessors, and the flags, forward, resources and context
  accessors the program model names, where the runtime module defines them)
  bound in the runtime module or imported from it by the patched module; a
  replacement that only raises is a tripwire, and its hint is the runtime's
  reset, not a publish;
- a config stand-in: a `SimpleNamespace`, a `Mock`/`MagicMock` without the
  record class as its spec, or a dict, handed where a record is taken: to a
  runtime function with a record parameter (`publish`), as a keyword or
  attribute named like a record parameter (the codebase's convention), or bound
  to a name of that convention;
- a record built by hand and handed to such a runtime function
  (`publish(ServerArgs(...))`) instead of the runtime's publishing test
  override (`get_context().override_server_args(...)`), unless that function
  is a test kit's publishing seam: it resets the context in a `finally` after
  it, or it builds the record from its own `**` parameter and passes what the
  override cannot carry (`ranks=`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

from ctxlint.facts.vocab import Vocabulary
from ctxlint.program.core import Program
from ctxlint.program.rule import RawFinding, Rule
from ctxlint.program.test_code import OPTION, is_test_file, test_roots
from ctxlint.program.test_doubles import Doubles, DoubleVisitor

ID = "CTX402"


class TestDouble(Rule):
    id = ID
    name = "test-double"
    summary = (
        "Tests publish config through the runtime's test override: no replaced accessor "
        "binding, no config stand-in, no hand-published record"
    )
    visitor = DoubleVisitor
    options: ClassVar[dict[str, Any]] = {OPTION: []}

    def tokens(self, vocab: Vocabulary) -> set[str]:
        names = {*vocab.seed_accessors, *vocab.bag_accessors}
        return {
            f"module:{vocab.runtime_module}",
            "setattr",
            "patch",
            "SimpleNamespace",
            "Mock",
            "MagicMock",
            "publish",
            *(f".{n} =" for n in names),
        }

    def more_tokens(self, program: Program) -> set[str]:
        """The other accessors' replaced bindings, the record parameter names, and
        the modules a patch replaces an accessor-named binding in (their imports
        tell whether the name is the runtime's)."""
        d = Doubles(program, ID, test_roots(program))
        return {f".{n} =" for n in d.accessor_names()} | d.record_names | d.patched_modules()

    def derive(self, program: Program) -> dict[str, Any]:
        d = Doubles(program, ID, test_roots(program))
        return {
            "test files (pytest's conventions and the test roots)": d.test_files,
            "test roots (configured)": test_roots(program),
            "runtime accessors": sorted(d.accessors),
            "runtime reset": [d.reset] if d.reset else [],
            "runtime functions taking a record": sorted(d.record_takers),
            "record parameter names": sorted(d.record_names),
            "record parameter names meaning a rival record class": [
                f"{n} in {p}" for n, places in d.convention.yielded.items() for p, _ in places
            ],
        }

    def check(self, program: Program) -> Iterable[RawFinding]:
        roots = test_roots(program)
        d = Doubles(program, ID, roots)
        record = program.vocab.record_name
        for path, module, facts in d.facts():
            if not is_test_file(path, roots):
                continue
            for p in facts.patches:
                accessor = d.accessor(p.target)
                if accessor is None:
                    continue
                name = accessor.rpartition(".")[2]
                where = f"{p.form} of `{p.target}`"  # the details: a dotted path runs long
                if p.raises:  # a tripwire: the test asserts nothing reads it
                    why = (
                        f"`{name}` is replaced by one that only raises ({p.form}): a tripwire "
                        "sees reads through this binding only; "
                        + (
                            f"call `{d.reset}()` first and drop the stub"
                            if d.reset
                            else "publish nothing instead"
                        )
                    )
                    where += ": with nothing published every accessor fails closed"
                else:
                    why = (
                        f"`{name}` is replaced ({p.form}): a stubbed accessor stops "
                        "intercepting once a reader migrates; publish the cause with "
                        "`get_context().override_server_args(...)`"
                    )
                    where += "; publish the cause with the runtime's scoped overrides"
                site = p.site
                yield RawFinding(ID, path, site.scope, site.snippet, site.span, why, where)
            for s in facts.stand_ins:
                how, _, what = s.slot.partition(" ")
                if how == "call":
                    if what not in d.record_takers:
                        continue
                    where = f"handed to `{what.rpartition('.')[2]}`"
                elif d.convention.holds(what, module):
                    where = f"as {how} `{what}`"
                else:
                    continue
                yield RawFinding(
                    ID,
                    path,
                    s.site.scope,
                    s.site.snippet,
                    s.site.span,
                    f"a `{s.kind}` stands in for the `{record}` record {where}: production "
                    "reads the published bags, not this double; publish it with "
                    "`get_context().override_server_args(...)`",
                )
            for h in facts.by_hand:
                # a test kit's publishing seam (its callers hand it fields, not a record)
                if h.callee not in d.record_takers or d.kit_seam(h):
                    continue
                yield RawFinding(
                    ID,
                    path,
                    h.site.scope,
                    h.site.snippet,
                    h.site.span,
                    f"a `{record}` built by hand is handed to "
                    f"`{h.callee.rpartition('.')[2]}`: use the runtime's publishing test "
                    "override, `get_context().override_server_args(...)` (scoped, restored)",
                )


RULE = TestDouble()
