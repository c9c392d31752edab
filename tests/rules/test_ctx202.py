"""CTX202 record-copy: every copy form on every kind of record instance, the
entry points on the record (inherited ones too), the derived sets, and the
negatives (context and bag overrides, copies of non-records, another class's
`derive`, a guard on the record that refuses copies)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import run_engine, write
from resolution_rt import RUNTIME, whitelisted
from rulecase import assert_case

RULE = "CTX202"
FIELDS = "from specrt.fields import ExecKernel, ExecMoe, Memory, Model, Parallel, Schedule\n"
BASES = "Parallel, Model, ExecKernel, ExecMoe, Schedule, Memory"

BAD = {
    "instance-kinds": """
        from specrt.context import get_server_args
        from specrt.record import ServerArgs

        SEED = get_server_args()

        def local_alias() -> None:
            sa = get_server_args()
            sa.derive(tp_size=2)  # expect

        def module_alias() -> None:
            SEED.override(tp_size=2)  # expect

        def annotated_local() -> None:
            cfg: ServerArgs = make()
            cfg.replace_resolved(tp_size=2)  # expect

        class Holder:
            cfg: ServerArgs

            def __init__(self) -> None:
                self._sa = get_server_args()

            def go(self) -> None:
                self._sa.derive(dp_size=2)  # expect
                self.cfg.override(dp_size=2)  # expect
        """,
    "import-spellings": """
        import copy as cp
        import dataclasses as dc
        import msgspec.structs
        from copy import copy
        from copy import replace as copy_replace
        from dataclasses import replace as dreplace
        from msgspec.structs import replace as sreplace

        from specrt.record import ServerArgs

        def f(sa: ServerArgs) -> list:
            return [
                cp.deepcopy(sa),  # expect
                dc.replace(sa, tp_size=1),  # expect
                msgspec.structs.replace(sa, tp_size=1),  # expect
                copy(sa),  # expect
                copy_replace(sa, tp_size=1),  # expect
                dreplace(sa, tp_size=1),  # expect
                sreplace(sa, tp_size=1),  # expect
            ]
        """,
    "derived-record-parameter-names": """
        import copy

        from specrt.record import ServerArgs

        def a(server_args: ServerArgs) -> None: ...
        def b(server_args: ServerArgs) -> None: ...

        def c(server_args) -> None:
            copy.deepcopy(server_args)  # expect
            server_args.derive(tp_size=1)  # expect

        class Worker:
            def __init__(self, server_args) -> None:
                self.server_args = server_args

            def draft(self) -> None:
                self.server_args.replace_resolved(tp_size=1)  # expect
        """,
    "new-records-and-copies-of-records": """
        import copy
        import dataclasses

        from specrt.context import get_server_args
        from specrt.record import ServerArgs

        def f() -> None:
            dataclasses.replace(ServerArgs(), tp_size=2)  # expect
            args = ServerArgs()
            args.derive(tp_size=2)  # expect
            dup = copy.deepcopy(get_server_args())  # expect
            dup.override(tp_size=2)  # expect
        """,
    "unbound-class-call": """
        from specrt import record
        from specrt.record import ServerArgs

        def f(sa: ServerArgs) -> None:
            ServerArgs.derive(sa, tp_size=1)  # expect
            record.ServerArgs.override(sa, tp_size=1)  # expect
        """,
    "local-import-spelling": """
        from specrt.record import ServerArgs

        def f(sa: ServerArgs) -> None:
            from dataclasses import replace

            replace(sa, tp_size=1)  # expect
        """,
}

GOOD = {
    "overrides-that-are-not-on-a-record": """
        from specrt.context import get_context, get_exec, get_server_args

        def f() -> None:
            get_context().override("src", tp_size=2)
            get_exec().override(attention_backend="x")
            with get_context().override_server_args(tp_size=2):
                pass
            get_server_args().resolved_dict()
        """,
    "copies-of-non-records": """
        import copy
        from dataclasses import replace

        from specrt.record import ServerArgs

        class Config:
            def derive(self) -> "Config":
                return self

        def f(sa: ServerArgs, cfg: Config, batch: list, args) -> list:
            return [
                copy.deepcopy(batch),
                copy.copy(sa.tp_size),  # a field value, not the record
                replace(cfg, x=1),
                cfg.derive(),
                args.derive(),  # `args` is not this codebase's record name
                "sa".replace("s", "t"),
                copy.deepcopy([sa]),  # a container holding it: not the call's subject
            ]
        """,
    "same-named-class-elsewhere": """
        import copy

        from other.record import ServerArgs

        def f(sa: ServerArgs) -> None:
            copy.deepcopy(sa)
            sa.derive()
        """,
    "same-named-class-annotation-beats-the-convention": """
        import copy

        from other.record import ServerArgs
        from specrt.record import ServerArgs as Record

        def launch(server_args: Record) -> None:
            pass

        def serve(server_args: Record) -> None:
            pass

        def component(server_args: ServerArgs) -> ServerArgs:
            return copy.copy(server_args)  # another module's ServerArgs, as annotated
        """,
    "shadowed-copy-module": """
        from specrt.record import ServerArgs

        class copy:
            @staticmethod
            def deepcopy(x: object) -> object:
                return x

        def f(sa: ServerArgs) -> None:
            copy.deepcopy(sa)  # this module's own class, not the stdlib
        """,
}


@pytest.mark.parametrize("source", BAD.values(), ids=BAD.keys())
def test_bad(project: Path, source: str) -> None:
    assert_case(project, RULE, source)


@pytest.mark.parametrize("source", GOOD.values(), ids=GOOD.keys())
def test_good(project: Path, source: str) -> None:
    assert_case(
        project, RULE, source, extra={"other/record.py": "class ServerArgs:\n    tp_size = 1\n"}
    )


def test_entry_points_on_the_record_and_inherited(project: Path) -> None:
    """A copy method on the record, and one it inherits from an in-tree mixin,
    are both reported at their definitions and listed as derived."""
    write(
        project,
        {
            "specrt/mixins.py": (
                "class Copyable:\n"
                "    def derive(self, **kw: object) -> object:\n"
                "        return self\n\n\n"
                "class Unrelated:\n"
                "    def override(self) -> None:\n"
                "        pass\n"
            ),
            "specrt/record.py": (
                FIELDS + "from specrt.mixins import Copyable\n\n\n"
                f"class ServerArgs(Copyable, {BASES}):\n"
                "    def replace_resolved(self) -> 'ServerArgs':\n"
                "        return self\n"
            ),
        },
    )
    out = run_engine(project, select={RULE})
    assert not out.errors
    got = sorted((f.path, f.line) for f in out.findings)
    assert got == [("specrt/mixins.py", 2), ("specrt/record.py", 6)]
    inherited = next(f for f in out.findings if f.path == "specrt/mixins.py")
    assert "inherited by ServerArgs" in inherited.message
    sets = out.program.sets[RULE]
    assert sets["copy entry points defined on the record"] == [
        "specrt.mixins.Copyable.derive",
        "specrt.record.ServerArgs.replace_resolved",
    ]
    assert sets["record lineage"][:2] == ["specrt.record.ServerArgs", "specrt.mixins.Copyable"]


def test_record_copying_itself(project: Path) -> None:
    """Inside the record class, `self` is a record: `dataclasses.replace(self)`
    and `self.derive()` are copies; a guard that refuses copies is not."""
    source = (
        "import copy\nimport dataclasses\n" + FIELDS + f"\n\nclass ServerArgs({BASES}):\n"
        "    def __copy__(self) -> 'ServerArgs':\n"
        "        raise TypeError('records are not copied')\n\n"
        "    def snapshot(self) -> 'ServerArgs':\n"
        "        return dataclasses.replace(self, tp_size=1)  # expect\n\n"
        "    def also(this) -> object:\n"
        "        return copy.copy(this)  # expect\n"
    )
    assert_case(project, RULE, source, path="specrt/record.py")


def test_message_names_the_form_and_the_fix(project: Path) -> None:
    write(
        project,
        {
            "app/m.py": (
                "import copy\nfrom specrt.record import ServerArgs\n\n"
                "def f(sa: ServerArgs) -> None:\n"
                "    copy.deepcopy(sa)\n"
                "    sa.derive(tp_size=1)\n"
                "    sa.override(tp_size=1)\n"
            )
        },
    )
    first, second, third = run_engine(project, select={RULE}).findings
    assert "copy.deepcopy()" in first.message and ".derive()" in second.message
    # what and why in the message; the remedies in the details
    for f in (first, second, third):
        assert len(f.message) <= 160, f.message
        for text in ("declare_resolution", "constructor argument", "override_server_args"):
            assert text in f.details and text not in f.message
    assert (first.scope, first.snippet) == ("f", "copy.deepcopy(sa)")
    # `.override()` edits the record it is called on: not called a copy; a tree
    # that publishes nowhere cannot place it before or after a publish
    assert third.message.startswith("edit of a record (.override()): where it runs after")
    assert "cop" not in third.message.replace("no-copy", "")


def test_nothing_defined_is_an_empty_set_not_an_error(project: Path) -> None:
    """The contract holds when the record defines no copy entry point: that is
    the expected state, so an empty set is not a derivation failure."""
    write(project, {"app/m.py": "from specrt.record import ServerArgs\n"})
    out = run_engine(project, select={RULE})
    assert out.findings == [] and not out.errors
    assert out.program.sets[RULE]["copy entry points defined on the record"] == []


def test_the_remedy_names_this_trees_declaration_function(project: Path) -> None:
    """The details name the declaration call as the tree's def spells it
    (Resolution.declaration_hint(), as CTX104/CTX201): sglang 0.5.17 has no
    `declare_resolution`; its writer is `run_post_process_pass(server_args, fn)`."""
    copy_site = (
        "import copy\nfrom specrt.record import ServerArgs\n\n"
        "def f(sa: ServerArgs) -> None:\n"
        "    copy.deepcopy(sa)\n"
    )
    write(project, {**RUNTIME, "app/m.py": copy_site})
    (finding,) = run_engine(project, select={RULE}).findings
    assert "declare_resolution(server_args, source, **fields)" in finding.details
    runtime = RUNTIME["specrt/resolution.py"]
    old = runtime[runtime.index("def declare_resolution") : runtime.index("def record_foreign")]
    new = (
        "def run_post_process_pass(server_args, fn) -> None:\n"
        "    getattr(server_args, STASH).append(fn(resolved_view(server_args)))\n\n\n"
    )
    write(project, {"specrt/resolution.py": runtime.replace(old, new)})
    (finding,) = run_engine(project, select={RULE}).findings
    assert "run_post_process_pass(server_args, fn)" in finding.details
    assert "declare_resolution" not in finding.details


def test_an_edit_no_publish_precedes_is_the_contract_not_a_stale_bag(project: Path) -> None:
    """sglang 0.5.17's `_ServerArgsOverride.install` builds a record, edits it with
    `.override(...)` and then publishes it (runtime_context.py:1028, :1034): the
    bags are projected from the edited record, so "the bags do not see it" is
    false there; the call still breaks the no-copy contract. The ordered
    question (program.published) places each edit; an edit after the publish
    keeps the stale-bag message."""
    write(
        project,
        {
            "app/boot.py": (
                "from specrt.context import publish\n"
                "from specrt.record import ServerArgs\n\n\n"
                "def install() -> ServerArgs:\n"
                "    sa = ServerArgs()\n"
                "    sa.override(tp_size=2)\n"
                "    publish(sa, role='scheduler')\n"
                "    sa.override(dp_size=2)\n"
                "    return sa\n"
            )
        },
    )
    before, after = sorted(run_engine(project, select={RULE}).findings, key=lambda f: f.line)
    assert before.message == (
        "edit of a record (.override()): no publish precedes it, so a later publish projects "
        "it, but the record has no edit entry point (the no-copy contract)"
    )
    assert before.details.startswith("Build the record with the values (ServerArgs(..., **fields))")
    assert after.message.startswith("edit of a record after resolution (.override()): the bags")
    assert "Build the record" not in after.details


def test_a_declaration_is_offered_only_for_a_whitelisted_field(project: Path) -> None:
    """sglang 0.5.17's draft copy edits `context_length` and `load_format`, and
    its deep-gemm launcher `watchdog_timeout`: none is `resolvable=True` there,
    so `run_post_process_pass` (whose `validate_declarations` checks the
    whitelist) raises for them. The remedy names a declaration only where every
    field the call sets (keywords, literal keys of a `**{...}`) is on the
    whitelist; where the declaration function does not check it, the design's
    limit is the reason given."""
    source = (
        "import copy\n"
        "from specrt.record import ServerArgs\n\n\n"
        "def f(sa: ServerArgs, resolved: dict) -> None:\n"
        "    sa.override(tp_size=2)\n"
        "    draft = copy.deepcopy(sa)\n"
        "    draft.override(source='copy', **{**resolved, 'dp_size': 1, 'context_length': 8})\n"
    )
    for gated in (True, False):
        write(project, {**whitelisted(gated=gated), "app/m.py": source})
        found = sorted(run_engine(project, select={RULE}).findings, key=lambda f: f.line)
        ok, copied, refused = found
        assert "Declare a decision on the record you hold with declare_resolution(" in ok.details
        # a plain copy takes the fields of the edits of its function (sglang 0.5.17
        # #44, draft_worker_common.py:114): the constructor argument first, and no
        # declaration for a field off the whitelist
        assert copied.details.startswith(
            "Pass a value another runner owns as a constructor argument; `dp_size` cannot be "
            "declared (not declared resolvable: "
        ), copied.details
        assert "declare_resolution" not in copied.details
        assert ("`_check_names` refuses it at its slot" in copied.details) is gated
        assert "Declare a decision" not in refused.details
        assert refused.details.startswith("Pass a per-runner value as a constructor argument")
        assert "`dp_size` is not declared resolvable" in refused.details  # `source`: no field
        gate = "(`_check_names` checks the whitelist)"
        assert (gate in refused.details) is gated, refused.details
        assert ("the design limits declarations to the whitelist" in refused.details) is not gated
    # a copy no call of its function edits: its fields are not known, so the
    # declaration is named with the whitelist's limit
    write(project, {"app/m.py": source.rpartition("    draft.override")[0]})
    found = sorted(run_engine(project, select={RULE}).findings, key=lambda f: f.line)
    assert found[1].details.startswith(
        "Pass a value another runner owns as a constructor argument; a decision every holder "
        "shares is declared on the record you hold with declare_resolution("
    ), found[1].details
    assert "for a field declared resolvable only" in found[1].details


def test_a_name_that_is_no_field_is_told_only_the_constructor_argument(project: Path) -> None:
    """sglang 0.5.17's Ray engine sets `placement_group` (a Ray handle, no field)
    through `ServerArgs.override(source, **fields)`: a declaration names fields
    (the writer refuses another name at its slot), so the remedy is the
    constructor argument alone. The edit method's own parameter (`source`) is no
    field it sets; where the record class does not define the method in the tree,
    no keyword is judged."""
    record = project / "specrt" / "record.py"
    plain = record.read_text()
    source = (
        "from specrt.record import ServerArgs\n\n\n"
        "def f(sa: ServerArgs, pg: object) -> None:\n"
        "    sa.override('ray', placement_group=pg)\n"
        "    sa.override(source='x', tp_size=2)\n"
    )
    method = "\n    def override(self, source: str, **fields: object) -> None:\n        pass\n"
    write(project, {"app/m.py": source})
    record.write_text(plain + method)
    found = sorted(run_engine(project, select={RULE}).findings, key=lambda f: f.line)
    handle, field, entry = found  # the third: the edit method on the record itself
    assert entry.message.startswith("`ServerArgs.override` defined on the record")
    assert handle.details.startswith(
        "Keep the value off the record: pass it to what uses it as a constructor argument; "
        "`placement_group` is no field of the record, so no declaration can carry it"
    ), handle.details
    assert "declare_resolution" not in handle.details
    assert "Declare a decision on the record you hold with" in field.details
    assert "no field" not in field.details
    record.write_text(plain)  # no `override` in the tree: its parameters are not known
    found = run_engine(project, select={RULE}).findings
    assert len(found) == 2
    for f in found:
        assert "no field of the record" not in f.details
