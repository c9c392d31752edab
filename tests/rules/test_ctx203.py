"""CTX203 record-slots: public non-field data on the record (instance
attributes its methods write, class attributes bound to values), inherited
classes too; methods, properties, fields, constants and private names are not
slots."""

from __future__ import annotations

from pathlib import Path

from helpers import run_engine, write
from rulecase import assert_case

RULE = "CTX203"
FIELDS = "from specrt.fields import ExecKernel, ExecMoe, Memory, Model, Parallel, Schedule\n"
BASES = "Parallel, Model, ExecKernel, ExecMoe, Schedule, Memory"


def test_slots_on_the_record(project: Path) -> None:
    source = (
        FIELDS + f"\n\nclass ServerArgs({BASES}):\n"
        "    cache = {}  # expect\n"
        "    LIMITS = (1, 2)\n"
        "    _registry = []\n"
        "    extra: 'ClassVar[int]' = 0\n"
        "    make = staticmethod(dict)  # expect\n\n"
        "    def __post_init__(self) -> None:\n"
        "        self.tp_size = 2\n"
        "        self._memo = {}\n"
        "        self.memo = {}  # expect\n"
        "        self.a, self.b = 1, 2  # expect x2\n"
        "        self.count += 1  # expect\n"
        "        setattr(self, 'flag', True)  # expect\n"
        "        object.__setattr__(self, '_flag', True)\n"
        "        self.url = 'u'\n\n"
        "    @property\n"
        "    def url(self) -> str:\n"
        "        return 'x'\n\n"
        "    @url.setter\n"
        "    def url(self, value: str) -> None:\n"
        "        pass\n\n"
        "    @staticmethod\n"
        "    def build(other) -> None:\n"
        "        other.anything = 1\n\n"
        "    def helper(this) -> None:\n"
        "        def inner() -> None:\n"
        "            this.nested = 1  # expect\n"
    )
    assert_case(project, RULE, source, path="specrt/record.py")


def test_inherited_class_and_other_classes(project: Path) -> None:
    """A mixin the record inherits is held to the contract; an unrelated class
    of the same module is not."""
    write(
        project,
        {
            "specrt/record.py": (
                FIELDS + "from app.case import Mixin\n\n\n"
                f"class ServerArgs(Mixin, {BASES}):\n    pass\n"
            ),
        },
    )
    source = """
        class Mixin:
            def remember(self) -> None:
                self.seen = True  # expect

        class Other:
            def __init__(self) -> None:
                self.seen = True
        """
    assert_case(project, RULE, source)
    sets = run_engine(project, select={RULE}).program.sets[RULE]
    assert sets["record lineage"][:2] == ["specrt.record.ServerArgs", "app.case.Mixin"]
    assert sets["public non-field members"] == ["remember (method)"]


def test_message(project: Path) -> None:
    write(
        project,
        {
            "specrt/record.py": (
                FIELDS + f"\n\nclass ServerArgs({BASES}):\n"
                "    def f(self) -> None:\n        self.decided = 1\n"
            )
        },
    )
    (f,) = run_engine(project, select={RULE}).findings
    assert "`decided` stored on ServerArgs is not a field" in f.message
    assert "`_decided`" in f.message
