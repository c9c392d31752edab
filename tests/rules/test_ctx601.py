"""CTX601 bag-coverage: namespace classes the record does not assemble, fields
declared by two namespaces, namespaces without an accessor; the derived sets;
and what is not a namespace class or not a field."""

from __future__ import annotations

from pathlib import Path

from helpers import run_engine, write
from rulecase import assert_case

RULE = "CTX601"
RECORD = """\
from specrt.fields import ExecKernel, ExecMoe, Memory, Model, Parallel, Schedule
from specrt.kv import {names}


class ServerArgs(Parallel, Model, ExecKernel, ExecMoe, Schedule, Memory, {names}):
    def resolved_dict(self) -> dict:
        return dict(vars(self))
"""


def assembled(*names: str) -> dict[str, str]:
    """specrt's record, also assembled from the given classes of specrt/kv.py."""
    return {"specrt/record.py": RECORD.format(names=", ".join(names))}


def test_namespace_classes_the_record_does_not_assemble(project: Path) -> None:
    assert_case(
        project,
        RULE,
        """
        from typing import ClassVar

        NS = "kv"

        class Kv:  # expect
            _NS_PATH = "kv"
            page_size: int = 16

        class Outer:
            class Nested:  # expect
                _NS_PATH = "memory.nested"

        class Computed:
            _NS_PATH = NS  # not a literal: not a namespace class

        class Plain:
            page_size: int = 16
            layouts: ClassVar[tuple[str, ...]] = ()

        def f() -> str:
            return "_NS_PATH"
        """,
    )


def test_a_field_declared_by_two_namespaces_is_reported_after_its_first(project: Path) -> None:
    assert_case(
        project,
        RULE,
        """
        class Kv:
            _NS_PATH = "memory.kv"
            page_size: int = 16
            tp_size: int = 1  # expect
            mem_fraction_static: float = 0.5  # expect

        class KvMore:
            _NS_PATH = "memory.kv"
            page_size: int = 32  # expect
        """,
        path="specrt/kv.py",
        extra=assembled("Kv", "KvMore"),
    )


def test_a_namespace_without_an_accessor_is_reported_once(project: Path) -> None:
    assert_case(
        project,
        RULE,
        """
        class Kv:  # expect
            _NS_PATH = "kv"
            page_size: int = 16

        class KvHost:
            _NS_PATH = "kv.host"
            host_pages: int = 0
        """,
        path="specrt/kv.py",
        extra=assembled("Kv", "KvHost"),
    )


def test_sets_show_every_namespace_class_and_accessor(project: Path) -> None:
    write(
        project,
        {
            "specrt/kv.py": 'class Kv:\n    _NS_PATH = "memory.kv"\n    page_size: int = 16\n',
            "app/orphan.py": 'class Orphan:\n    _NS_PATH = "spec.draft"\n',
            **assembled("Kv"),
        },
    )
    out = run_engine(project)
    sets = out.program.sets[RULE]
    assert sets["namespace classes"] == [
        "app.orphan.Orphan (spec.draft): not assembled",
        "specrt.fields.Parallel (parallel)",
        "specrt.fields.Model (model)",
        "specrt.fields.ExecKernel (exec.kernel)",
        "specrt.fields.ExecMoe (exec.moe)",
        "specrt.fields.Schedule (schedule)",
        "specrt.fields.Memory (memory)",
        "specrt.kv.Kv (memory.kv)",
    ]
    assert sets["namespaces and their accessors"] == [
        "exec: get_exec()",
        "memory: get_memory()",
        "model: get_model()",
        "parallel: get_parallel()",
        "schedule: get_schedule()",
    ]
    assert [(f.rule, f.path, f.line) for f in out.findings if f.rule == RULE] == [
        (RULE, "app/orphan.py", 1)
    ]


def test_a_suppression_with_a_reason_silences_it(project: Path) -> None:
    write(
        project,
        {
            "app/a.py": (
                "class Draft:  # ctxlint: ignore[CTX601] wired in by the plugin loader\n"
                '    _NS_PATH = "spec.draft"\n'
            )
        },
    )
    out = run_engine(project)
    assert [f for f in out.findings if f.rule in (RULE, "CTX001")] == []


def test_a_field_declared_twice_keeps_the_namespace_the_mro_puts_first(project: Path) -> None:
    """The vocabulary (and every message naming a field's bag) agrees with Python:
    the record's first base declaring a field decides its namespace."""
    write(
        project,
        {
            "specrt/kv.py": 'class Kv:\n    _NS_PATH = "memory.kv"\n    tp_size: int = 1\n',
            **assembled("Kv"),  # ServerArgs(Parallel, ..., Kv): Parallel comes first
        },
    )
    out = run_engine(project)
    assert out.program.vocab.fields["tp_size"] == "parallel"
    assert [f.path for f in out.findings if f.rule == RULE] == ["specrt/kv.py"]
