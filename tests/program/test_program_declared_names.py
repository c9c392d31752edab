"""Model questions about declarations (issue 35: CTX105's and CTX403's moved into
program/): how deep below the declaration function a whitelist check counts
(program.declared_names.gated), and the one whitelist both rules read
(program.resolvable.whitelist), on a real program built from sources."""

from __future__ import annotations

from pathlib import Path

from helpers import run_engine, write
from resolution_rt import RUNTIME, whitelisted

from ctxlint.program.declarable import declarable_fields
from ctxlint.program.declared_names import GATE_DEPTH, declarable, gated
from ctxlint.program.resolved_asserts import resolved_asserts

# declare_resolution -> _one -> _two -> _three: _two and _three name the whitelist
CHAIN = RUNTIME["specrt/resolution.py"].replace(
    "def declare_resolution(server_args, source: str, **fields: object) -> None:\n",
    "def _three(fields: dict) -> None:\n"
    "    assert all(getattr(f, 'resolvable', True) for f in fields)\n\n\n"
    "def _two(fields: dict) -> None:\n"
    "    assert all(getattr(f, 'resolvable', True) for f in fields)\n"
    "    _three(fields)\n\n\n"
    "def _one(fields: dict) -> None:\n"
    "    _two(fields)\n\n\n"
    "def declare_resolution(server_args, source: str, **fields: object) -> None:\n"
    "    _one(fields)\n",
)
FIELDS = """\
def arg(default: object, *, resolvable: bool = False) -> object:
    return default


class Parallel:
    _NS_PATH = "parallel"
    tp_size: int = arg(1, resolvable=True)
    dp_size: int = arg(1)


class Model:
    _NS_PATH = "model"
    model_path: str = arg("")
    context_length: int = arg(0, resolvable=True)


class NotAField:
    other: int = arg(0, resolvable=True)
"""


def test_a_whitelist_check_counts_down_to_gate_depth_calls_below(project: Path) -> None:
    assert GATE_DEPTH == 2
    write(project, {**RUNTIME, "specrt/resolution.py": CHAIN, "specrt/fields.py": FIELDS})
    program = run_engine(project, select={"CTX105"}).program
    # _two is two calls below; _three, three calls below, is not reached
    assert gated(program) == ["specrt.resolution._two"]


def test_ctx105_and_ctx403_read_one_whitelist(project: Path) -> None:
    """The record's field classes' `resolvable=True` fields, and no other class's."""
    write(project, {**RUNTIME, "specrt/fields.py": FIELDS})
    program = run_engine(project, select={"CTX105", "CTX403"}).program
    assert sorted(declarable(program)) == ["context_length", "tp_size"]
    assert resolved_asserts(program).resolved == ["context_length", "tp_size"]


def test_declarable_names_the_whitelist_and_the_gate_that_enforces_it(project: Path) -> None:
    """program.declarable: what a remedy may tell the code to declare (CTX201,
    CTX202). No whitelist: every field; a whitelist: its fields only, with the
    gate named where the declaration function checks it."""
    write(project, RUNTIME)
    none = declarable_fields(run_engine(project, select={"CTX105"}).program)
    assert none.whitelist == frozenset() and none.refused(["dp_size"]) == []
    for gate in (True, False):
        write(project, whitelisted(gated=gate))
        can = declarable_fields(run_engine(project, select={"CTX105"}).program)
        assert can.refused(["tp_size", "dp_size", "model_path"]) == ["dp_size", "model_path"]
        assert can.gate == ("specrt.resolution._check_names" if gate else None)
        assert can.call == "declare_resolution(server_args, source, **fields)"
        assert can.why(["dp_size"]).startswith("`dp_size` is not declared resolvable")
