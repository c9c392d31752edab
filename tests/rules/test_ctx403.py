"""CTX403 resolved-field-assert: in test code, an assertion on a resolved field off a
record after resolution ran is reported with the derived reader; before resolution,
outside the whitelist, outside test code, or with no reader, it is not."""

from __future__ import annotations

from pathlib import Path

from helpers import run_engine, write
from rulecase import assert_case

RULE = "CTX403"

FIELDS = """\
from dataclasses import field
from typing import Annotated


def Arg(default: object, resolvable: bool = False) -> object:
    return field(default=default)


class Parallel:
    _NS_PATH = "parallel"
    tp_size: int = Arg(1)


class ExecKernel:
    _NS_PATH = "exec.kernel"
    attention_backend: str = Arg("auto", resolvable=True)
    # SGLang 0.5.17's spelling: the marker in the annotation
    kv_cache_dtype: Annotated[str, Arg(None, resolvable=True)] = "auto"
"""
RESOLUTION = """\
STASH = "_stash"


class View:
    def __init__(self, server_args) -> None:
        object.__setattr__(self, "_args", server_args)

    def __getattr__(self, name: str) -> object:
        for decided in reversed(getattr(self._args, STASH)):
            if name in decided:
                return decided[name]
        return self._args.__dict__[name]


def resolving_view(server_args) -> View:
    return View(server_args)


def declare_resolution(server_args, source: str, **fields: object) -> None:
    getattr(server_args, STASH).append(fields)


def resolution_result(server_args, field: str, default: object = None) -> object:
    for decided in reversed(server_args.__dict__[STASH]):  # ctxrt's spelling
        if field in decided:
            return decided[field]
    return getattr(server_args, field, default)


def resolve(server_args) -> None:
    declare_resolution(server_args, "kernels", attention_backend="sdpa")
"""
# resolution runs in a method the launcher calls, not at construction (SGLang 0.5.23)
RECORD = """\
from specrt.fields import ExecKernel, Parallel
from specrt.resolution import resolve


class ServerArgs(Parallel, ExecKernel):
    def __post_init__(self) -> None:
        object.__setattr__(self, "_stash", [])

    def resolve_once(self) -> None:
        resolve(self)
"""
RUNTIME = {
    "specrt/fields.py": FIELDS,
    "specrt/resolution.py": RESOLUTION,
    "specrt/record.py": RECORD,
}


def test_asserts_after_resolution_in_test_code(project: Path) -> None:
    assert_case(
        project,
        RULE,
        """
        import unittest

        from specrt.record import ServerArgs
        from specrt.resolution import resolve

        def test_method_resolves() -> None:
            sa = ServerArgs()
            assert sa.attention_backend == "auto"  # the input, before resolution
            sa.resolve_once()
            assert sa.attention_backend == "sdpa"  # expect
            assert sa.tp_size == 1
            assert sa.kv_cache_dtype == "auto"  # expect

        def test_a_call_handing_it_resolves() -> None:
            sa = ServerArgs()
            resolve(sa)
            assert sa.attention_backend is not None and sa.tp_size  # expect

        def test_rebound() -> None:
            sa = ServerArgs()
            sa.resolve_once()
            sa = object()
            assert sa.attention_backend

        class TestCase(unittest.TestCase):
            def test_unittest(self) -> None:
                sa = ServerArgs()
                sa.resolve_once()
                self.assertEqual(sa.attention_backend, "sdpa")  # expect
        """,
        path="tests/test_case.py",
        extra=RUNTIME,
    )
    sets = run_engine(project, select={RULE}).program.sets[RULE]
    assert sets == {
        "declaration function": "specrt.resolution.declare_resolution",
        "construction resolves": False,
        "resolved fields": 2,
        "reader of the decision": "specrt.resolution.resolution_result",
    }


def test_not_test_code_unless_a_test_root(project: Path) -> None:
    case = """\
from specrt.record import ServerArgs


def check() -> None:
    sa = ServerArgs()
    sa.resolve_once()
    assert sa.attention_backend == "sdpa"
"""
    write(project, {**RUNTIME, "app/checks.py": case})
    assert run_engine(project, select={RULE}).findings == []
    cfg = project / "pyproject.toml"
    cfg.write_text(cfg.read_text() + 'test-roots = ["app"]\n')
    found = run_engine(project, select={RULE}).findings
    assert [(f.path, f.line) for f in found] == [("app/checks.py", 7)]
    assert 'assert `resolution_result(sa, "attention_backend")`' in found[0].message


def test_no_reader_checks_nothing_and_says_so(project: Path) -> None:
    write(
        project,
        {
            **RUNTIME,
            "specrt/resolution.py": RESOLUTION.replace(
                "for decided in reversed(server_args.__dict__[STASH]):  # ctxrt's spelling\n"
                "        if field",
                "for decided in ():\n        if field",
            ),
            "tests/test_x.py": "from specrt.record import ServerArgs\n\n\n"
            "def test_x() -> None:\n    sa = ServerArgs()\n    sa.resolve_once()\n"
            "    assert sa.attention_backend\n",
        },
    )
    out = run_engine(project, select={RULE})
    assert out.findings == []
    from ctxlint.rules.ctx403_resolved_field_assert import RULE as rule

    assert "no reader of the decision" in (rule.partial(out.program.sets[RULE]) or "")


def test_a_metadata_marked_field_is_resolved_as_the_whitelist_says(project: Path) -> None:
    """`field(metadata={"resolvable": True})` puts a field on the whitelist CTX105
    holds returns to (program.resolvable): resolution decides it here too."""
    marked = FIELDS + '    cuda_graph_bs: int = field(default=8, metadata={"resolvable": True})\n'
    case = """\
from specrt.record import ServerArgs


def test_x() -> None:
    sa = ServerArgs()
    sa.resolve_once()
    assert sa.cuda_graph_bs == 8
"""
    write(project, {**RUNTIME, "specrt/fields.py": marked, "tests/test_x.py": case})
    out = run_engine(project, select={RULE})
    assert [(f.path, f.line) for f in out.findings] == [("tests/test_x.py", 7)]
    assert out.program.sets[RULE]["resolved fields"] == 3


def test_a_record_local_is_what_its_last_binding_holds(project: Path) -> None:
    """The names holding a new record are the binding model's: a loop or a `with`
    rebinding the name leaves it holding something else."""
    assert_case(
        project,
        RULE,
        """
        from specrt.record import ServerArgs

        def test_loop(others: list, opened) -> None:
            sa = ServerArgs()
            sa.resolve_once()
            for sa in others:
                assert sa.attention_backend
            sa = ServerArgs()
            sa.resolve_once()
            with opened() as sa:
                assert sa.attention_backend
        """,
        path="tests/test_case.py",
        extra=RUNTIME,
    )
