"""CTX402 test-double: replaced accessor bindings, config stand-ins and records
published by hand, in test code only (pytest's conventions and the configured
test roots); a rival record's package; the derived sets."""

from __future__ import annotations

from pathlib import Path

from helpers import run_engine, write
from rulecase import assert_case

RULE = "CTX402"
CONSUMER = {
    "app/sched.py": """\
from specrt.context import get_exec, get_flags
from specrt.record import ServerArgs


def get_model() -> str:
    return "the loader's own"


def plan(server_args: ServerArgs) -> int:
    return get_exec().tp_size


def other(server_args: ServerArgs) -> int:
    return 0
""",
}


def test_every_spelling_of_a_replaced_accessor_binding(project: Path) -> None:
    assert_case(
        project,
        RULE,
        """
        import unittest.mock
        from unittest import mock
        from unittest.mock import patch

        import specrt.context
        from specrt import context as rc

        from app import sched


        @patch("app.sched.get_exec")  # expect
        def test_all(patched, monkeypatch, mocker) -> None:
            sched.get_flags = lambda: None  # expect
            setattr(rc, "get_parallel", None)  # expect
            monkeypatch.setattr("specrt.context.get_context", None)  # expect
            monkeypatch.setattr(specrt.context, "get_server_args", None)  # expect
            with mock.patch.object(sched, "get_exec"):  # expect
                pass
            with unittest.mock.patch("specrt.context.get_tp_size"):  # expect
                pass
            mocker.patch("app.sched.get_flags")  # expect
            sched.get_model = lambda: None  # the module's own function
            monkeypatch.setattr(sched, "plan", None)  # not an accessor
            monkeypatch.setattr("specrt.context.publish", None)  # takes arguments
            rc.helper = None  # not a function of the runtime
        """,
        path="app/test_sched.py",
        extra=CONSUMER,
    )


def test_stand_ins_where_a_record_is_taken(project: Path) -> None:
    assert_case(
        project,
        RULE,
        """
        import types
        from types import SimpleNamespace
        from unittest.mock import MagicMock, Mock

        from specrt.context import assert_published, publish
        from specrt.record import ServerArgs

        from app import sched


        def test_doubles(runner) -> None:
            sched.plan(server_args=SimpleNamespace(tp_size=2))  # expect
            runner.server_args = MagicMock()  # expect
            server_args = types.SimpleNamespace(tp_size=2)  # expect
            publish(Mock(), role="scheduler")  # expect
            assert_published({"tp_size": 2}, role="scheduler")  # expect
            sched.plan(server_args=dict(tp_size=2))  # expect
            sched.plan(server_args=MagicMock(spec=ServerArgs))
            sched.plan(server_args=Mock(ServerArgs))
            runner.config = SimpleNamespace(tp_size=2)  # not a record name
            other = SimpleNamespace(server_args=None)
            sched.plan(options={"a": 1})
        """,
        path="app/test_doubles.py",
        extra=CONSUMER,
    )


def test_a_record_built_by_hand_and_published(project: Path) -> None:
    assert_case(
        project,
        RULE,
        """
        from specrt.context import get_context, publish
        from specrt.record import ServerArgs


        def test_hand() -> None:
            publish(ServerArgs(), role="scheduler")  # expect
            built = ServerArgs()
            publish(built, role="scheduler")  # expect
            get_context().override_server_args(tp_size=2)
        """,
        path="app/test_hand.py",
        extra=CONSUMER,
    )


def test_only_test_code_by_pytest_conventions_and_configured_roots(project: Path) -> None:
    double = (
        "from app import sched\n\n\ndef test_x(monkeypatch) -> None:\n"
        '    monkeypatch.setattr(sched, "get_exec", None)\n'
    )
    write(
        project,
        {
            **CONSUMER,
            "app/test_a.py": double,
            "app/b_test.py": double,
            "app/conftest.py": double,
            "app/helpers.py": double,
            "kits/fixtures.py": double,
            "app/testing.py": double,
        },
    )
    found = lambda out: sorted({f.path for f in out.findings if f.rule == RULE})  # noqa: E731
    assert found(run_engine(project, select={RULE})) == [
        "app/b_test.py",
        "app/conftest.py",
        "app/test_a.py",
    ]
    config = project / "pyproject.toml"
    config.write_text(config.read_text() + 'test-roots = ["kits"]\n')
    out = run_engine(project, select={RULE})
    assert found(out) == ["app/b_test.py", "app/conftest.py", "app/test_a.py", "kits/fixtures.py"]
    assert out.program.sets[RULE]["test roots (configured)"] == ["kits"]


def test_a_record_name_in_a_rival_records_package_is_not_the_record(project: Path) -> None:
    rival = {
        "gen/__init__.py": "",
        "gen/args.py": "class ServerArgs:\n    width: int = 0\n",
        "gen/pipe.py": (
            "from gen.args import ServerArgs\n\n\n"
            "def a(server_args: ServerArgs) -> None: ...\n\n\n"
            "def b(server_args: ServerArgs) -> None: ...\n\n\n"
            "def c(server_args: ServerArgs) -> None: ...\n"
        ),
    }
    assert_case(
        project,
        RULE,
        """
        from types import SimpleNamespace

        from gen import pipe


        def test_gen() -> None:
            server_args = SimpleNamespace(width=2)
            pipe.a(server_args=SimpleNamespace(width=2))
        """,
        path="gen/test_pipe.py",
        extra={**CONSUMER, **rival},
    )
    sets = run_engine(project, select={RULE}).program.sets[RULE]
    assert sets["record parameter names meaning a rival record class"] == ["server_args in gen"]


def test_the_sets_derive_accessors_and_record_takers_from_the_runtime(project: Path) -> None:
    write(project, {**CONSUMER, "app/test_x.py": "from types import SimpleNamespace\n"})
    sets = run_engine(project, select={RULE}).program.sets[RULE]
    assert sets["runtime accessors"] == [
        "specrt.context.get_context",
        "specrt.context.get_exec",
        "specrt.context.get_flags",
        "specrt.context.get_forward",  # the fixture's per-forward and resources tiers
        "specrt.context.get_memory",
        "specrt.context.get_model",
        "specrt.context.get_parallel",
        "specrt.context.get_resources",
        "specrt.context.get_schedule",
        "specrt.context.get_server_args",
        "specrt.context.get_tp_size",
    ]
    assert sets["runtime functions taking a record"] == [
        "specrt.context.assert_published",
        "specrt.context.publish",
    ]
    assert sets["record parameter names"] == ["server_args"]
    assert sets["test files (pytest's conventions and the test roots)"] == ["app/test_x.py"]


def test_the_test_files_come_from_discovery_not_from_what_was_parsed(project: Path) -> None:
    # a test file with none of any rule's tokens is not parsed, and still a test file:
    # the set must not move when another rule's tokens make more files parsed
    write(project, {**CONSUMER, "app/test_plain.py": "def test_one():\n    assert 1\n"})
    out = run_engine(project, select={RULE})
    assert "app/test_plain.py" not in out.program.files
    assert out.program.sets[RULE]["test files (pytest's conventions and the test roots)"] == [
        "app/test_plain.py"
    ]


def test_a_runtime_function_takes_a_record_by_the_naming_convention(project: Path) -> None:
    context = project / "specrt" / "context.py"
    context.write_text(
        context.read_text() + "\n\ndef publish_plain(server_args, *, role):\n    return None\n"
    )
    assert_case(
        project,
        RULE,
        """
        from types import SimpleNamespace

        from specrt.context import publish_plain
        from specrt.record import ServerArgs


        def test_plain() -> None:
            publish_plain(SimpleNamespace(), role="scheduler")  # expect
            publish_plain(ServerArgs(), role="scheduler")  # expect
        """,
        path="app/test_plain.py",
        extra=CONSUMER,
    )


def test_a_new_unparsed_test_file_joins_the_set_on_a_warm_run(project: Path) -> None:
    # the derived sets' stored outcome is keyed by every checked path too: a file
    # that is not parsed still changes a set made from discovery
    write(project, CONSUMER)
    key = "test files (pytest's conventions and the test roots)"
    assert run_engine(project, use_cache=True).program.sets[RULE][key] == []
    write(project, {"app/test_plain.py": "def test_one():\n    assert 1\n"})
    for memo in (True, False):  # the whole-run outcome, and the derived sets' own entry
        warm = run_engine(project, use_cache=True, memo=memo)
        assert warm.program.sets[RULE][key] == ["app/test_plain.py"]


RUNTIME_EXTRAS = """

def publish_role() -> str | None:
    return None


def reset_context() -> None:
    _CONTEXT.server_args = None
"""


def _with_role_and_reset(project: Path) -> None:
    write(project, CONSUMER)
    context = project / "specrt" / "context.py"
    context.write_text(context.read_text() + RUNTIME_EXTRAS)


def test_a_zero_argument_function_that_is_no_tier_accessor_is_not_one(project: Path) -> None:
    # sglang 0.5.23's `publish_role()` is a role query: replacing it pins no config
    _with_role_and_reset(project)
    assert_case(
        project,
        RULE,
        """
        from specrt import context as rc


        def test_role(monkeypatch) -> None:
            monkeypatch.setattr(rc, "publish_role", lambda: None)
            monkeypatch.setattr(rc, "get_exec", lambda: None)  # expect
        """,
        path="app/test_role.py",
    )
    accessors = run_engine(project, select={RULE}).program.sets[RULE]["runtime accessors"]
    assert "specrt.context.publish_role" not in accessors
    assert "specrt.context.get_exec" in accessors


def test_a_tripwire_is_told_to_reset_not_to_publish(project: Path) -> None:
    # sglang 0.5.23 multimodal_gen/test/unit/test_qwen_vl_rope.py:93: a replacement
    # that only raises asserts the accessor is never called
    _with_role_and_reset(project)
    source = """\
from unittest import mock

from specrt import context as rc


def test_tripwire(monkeypatch) -> None:
    def fail_get_exec():
        \"\"\"Must not be read.\"\"\"
        raise AssertionError("must not read an unpublished context")

    monkeypatch.setattr(rc, "get_exec", fail_get_exec)
    rc.get_model = fail_later
    with mock.patch.object(rc, "get_memory", side_effect=AssertionError):
        pass
    with mock.patch("specrt.context.get_schedule", mock.Mock(side_effect=RuntimeError("x"))):
        pass
    monkeypatch.setattr(rc, "get_parallel", lambda: None)


def fail_later():
    raise AssertionError("no")
"""
    write(project, {"app/test_trip.py": source})
    out = run_engine(project, select={RULE})
    got = {f.line: f.message for f in out.findings if f.rule == RULE}
    assert sorted(got) == [11, 12, 13, 15, 17]
    for line in (11, 12, 13, 15):
        assert "only raises" in got[line] and "call `reset_context()` first" in got[line]
        assert "override_server_args" not in got[line]
    assert "override_server_args" in got[17] and "only raises" not in got[17]
    assert out.program.sets[RULE]["runtime reset"] == ["reset_context"]


def test_a_kit_function_publishing_and_resetting_in_finally_is_the_scoped_wrapper(
    project: Path,
) -> None:
    # sglang 0.5.23 test/test_utils.py:2094 `published_topology`
    _with_role_and_reset(project)
    assert_case(
        project,
        RULE,
        """
        import contextlib

        from specrt.record import ServerArgs


        @contextlib.contextmanager
        def published(**fields):
            from specrt.context import publish, reset_context

            server_args = ServerArgs(**fields)
            reset_context()
            publish(server_args, role="scheduler")
            try:
                yield server_args
            finally:
                reset_context()


        def publish_for_build(**fields):
            from specrt.context import publish, reset_context

            reset_context()
            publish(ServerArgs(**fields), role="scheduler")  # expect


        def published_after(**fields):
            from specrt.context import publish, reset_context

            try:
                pass
            finally:
                reset_context()
            publish(ServerArgs(**fields), role="scheduler")  # expect
        """,
        path="app/test_kit.py",
    )


def test_a_kit_helper_publishing_fields_with_what_the_override_cannot_carry(
    project: Path,
) -> None:
    # sglang 0.5.23 test/test_utils.py:2117 `publish_build_topology`: it resets
    # before it publishes (teardown left to the caller), builds the record from its
    # own `**` fields and places ranks, which `override_server_args(**fields)` cannot
    write(project, CONSUMER)
    assert_case(
        project,
        RULE,
        """
        from specrt.context import publish
        from specrt.record import ServerArgs


        def publish_build(*, world_rank: int = 0, **fields):
            publish(ServerArgs(**fields), role="scheduler", ranks=(world_rank,))


        def publish_kit(**fields):
            args = ServerArgs(**fields)
            publish(args, role="scheduler", ranks=None)


        def publish_plain(**fields):
            publish(ServerArgs(**fields), role="scheduler")  # expect


        def publish_fixed(world_rank: int = 0):
            publish(ServerArgs(), role="scheduler", ranks=(world_rank,))  # expect


        def publish_other(options, **fields):
            publish(ServerArgs(**options), role="scheduler", ranks=None)  # expect
        """,
        path="app/test_kit.py",
    )
