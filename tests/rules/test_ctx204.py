"""CTX204 record-member-call: calls on every kind of record instance resolve
against the record's lineage (inherited members, properties, class attributes,
fields); calls on non-records and dunders are never reported; an ancestor
outside the tree makes the run partial instead of passing."""

from __future__ import annotations

from pathlib import Path

from helpers import run_engine, write
from rulecase import assert_case

RULE = "CTX204"
FIELDS = "from specrt.fields import ExecKernel, ExecMoe, Memory, Model, Parallel, Schedule\n"
BASES = "Parallel, Model, ExecKernel, ExecMoe, Schedule, Memory"
RECORD = (
    FIELDS + "from specrt.mixins import Dumps\n\n\n"
    f"class ServerArgs(Dumps, {BASES}):\n"
    "    make = staticmethod(dict)\n\n"
    "    def url(self) -> str:\n"
    "        return 'x'\n\n"
    "    @property\n"
    "    def launch_command(self) -> str:\n"
    "        return 'x'\n\n"
    "    def check(self) -> None:\n"
    "        self.url()\n"
    "        self.ulr()  # expect\n"
)
MIXINS = "class Dumps:\n    def resolved_dict(self) -> dict:\n        return {}\n"


def test_calls_on_record_instances(project: Path) -> None:
    source = """
        from specrt.context import get_server_args
        from specrt.record import ServerArgs

        SEED = get_server_args()

        def a(server_args: ServerArgs) -> None:
            server_args.url()
            server_args.resolved_dict()  # inherited from a mixin
            server_args.make()  # a class attribute
            server_args.launch_command()  # a property (callable or not: it exists)
            server_args.override(tp_size=2)  # expect
            server_args.resolved_dct()  # expect

        def b() -> None:
            SEED.derive()  # expect
            get_server_args().replace_resolved()  # expect

        class Holder:
            def __init__(self, server_args: ServerArgs) -> None:
                self.server_args = server_args

            def go(self) -> None:
                self.server_args.to_json()  # expect
        """
    assert_case(
        project,
        RULE,
        source,
        extra={"specrt/record.py": RECORD, "specrt/mixins.py": MIXINS},
    )


def test_self_inside_the_record(project: Path) -> None:
    write(project, {"specrt/mixins.py": MIXINS})
    assert_case(project, RULE, RECORD, path="specrt/record.py")


def test_non_records_and_dunders(project: Path) -> None:
    source = """
        from specrt.record import ServerArgs

        class Planner:
            def derive(self) -> None: ...

        def f(sa: ServerArgs, planner: Planner, args) -> None:
            planner.derive()
            args.derive()  # `args` is not this codebase's record name
            sa.__repr__()
            sa.tp_size.bit_length()  # a field's value, not the record

        def g(req) -> None:
            for arg, ok in req.server_args.items():  # a spec's dict named like the record
                pass
        """
    assert_case(project, RULE, source)


def test_message_and_sets(project: Path) -> None:
    write(
        project,
        {
            "specrt/record.py": RECORD,
            "specrt/mixins.py": MIXINS,
            "app/m.py": (
                "from specrt.record import ServerArgs\n\n"
                "def f(sa: ServerArgs) -> None:\n"
                "    sa.resolved_dct()\n"
            ),
        },
    )
    out = run_engine(project, select={RULE})
    (f,) = [f for f in out.findings if f.path == "app/m.py"]
    assert "defines no `resolved_dct`" in f.message
    assert "did you mean `resolved_dict`" in f.message
    sets = out.program.sets[RULE]
    assert sets["record lineage"][:2] == ["specrt.record.ServerArgs", "specrt.mixins.Dumps"]
    assert {"url", "resolved_dict", "make", "launch_command"} <= set(
        sets["record members (methods, properties, class attributes)"]
    )


def test_ancestor_outside_the_tree_is_partial(project: Path) -> None:
    """A base class from another package: its members are unknown, so nothing
    is reported and the run says why."""
    from ctxlint.engine.registry import load_rules

    rule = next(r for r in load_rules() if r.id == RULE)
    write(
        project,
        {
            "specrt/record.py": (
                FIELDS + "from pydantic import BaseModel\n\n\n"
                f"class ServerArgs(BaseModel, {BASES}):\n    pass\n"
            ),
            "app/m.py": (
                "from specrt.record import ServerArgs\n\n"
                "def f(sa: ServerArgs) -> None:\n"
                "    sa.model_dump()\n"
            ),
        },
    )
    out = run_engine(project, select={RULE})
    assert out.findings == []
    why = rule.partial(out.program.sets[RULE])
    assert why is not None and "pydantic.BaseModel" in why
