"""CTX303 manager-owned-override: the owned fields, the manager and the override
wrappers are derived from the code; an override of an owned field is reported in the
manager's process (its methods, its mixins, what only its role reaches) and not in a
process that rewrites its own copy."""

from __future__ import annotations

from pathlib import Path

from helpers import run_engine, write
from rulecase import assert_case

RULE = "CTX303"

MANAGER = """\
from app.mixin import ControlMixin
from specrt.context import get_context

_MANAGER_OWNED_FIELDS = ("model_path", "not_a_field")


class TokenizerManager(ControlMixin):
    def __init__(self, model_path: str) -> None:
        self.model_path = model_path

    def resolved_config_dict(self, base: dict) -> dict:
        for name in _MANAGER_OWNED_FIELDS:
            base[name] = getattr(self, name)
        return base

    def record_config_updates(self, source: str, **fields: object) -> None:
        get_context().override(source, **fields)
"""
MIXIN = """\
class ControlMixin:
    def attach(self, path: str) -> None:
        self.record_config_updates("attach", model_path=path)  # expect
"""


def test_overrides_in_the_managers_process(project: Path) -> None:
    assert_case(
        project,
        RULE,
        """
        from app.manager import TokenizerManager
        from specrt.context import get_context, publish

        def launch_server(server_args: object) -> None:
            publish(server_args, role="tokenizer")
            manager = TokenizerManager("m")
            reload(manager, "p")

        def reload(manager: TokenizerManager, path: str) -> None:
            ctx = get_context()
            ctx.override("reload", model_path=path)  # expect
            ctx.override("reload", context_length=8)
            get_context().override("reload", tp_size=2)

        class ModelRunner:
            def update_model_fields(self, model_path: str) -> None:
                get_context().override("runner", model_path=model_path)

        def shared(path: str) -> None:
            get_context().override("both", model_path=path)

        def run_scheduler_process(server_args: object) -> None:
            publish(server_args, role="scheduler")
            ModelRunner().update_model_fields("m")
            shared("m")

        def run_tokenizer_too(server_args: object) -> None:
            publish(server_args, role="tokenizer")
            TokenizerManager("m")
            shared("m")

        def never_reached(path: str) -> None:
            get_context().override("nowhere", model_path=path)
        """,
        extra={"app/manager.py": MANAGER},
    )
    # the mixin's call through the wrapper on self, in the manager's MRO
    out = run_engine(project, select={RULE})
    assert not [f for f in out.findings if f.path == "app/mixin.py"]
    write(project, {"app/mixin.py": MIXIN})
    out = run_engine(project, select={RULE})
    assert [f.line for f in out.findings if f.path == "app/mixin.py"] == [3]


def test_derived_sets_and_the_message(project: Path) -> None:
    write(
        project,
        {
            "app/manager.py": MANAGER,
            "app/mixin.py": MIXIN,
            "app/launch.py": "from app.manager import TokenizerManager\n"
            "from specrt.context import publish\n\n\n"
            "def launch_server(server_args: object) -> None:\n"
            "    publish(server_args, role='tokenizer')\n    TokenizerManager('m')\n",
        },
    )
    out = run_engine(project, select={RULE})
    sets = out.program.sets[RULE]
    assert sets == {
        "manager-owned fields": {
            "model_path": ["app.manager.TokenizerManager (_MANAGER_OWNED_FIELDS)"]
        },
        "override wrappers": ["app.manager.TokenizerManager.record_config_updates"],
        "manager roles": ["tokenizer"],
    }
    (f,) = out.findings
    assert f.message.startswith(
        "`record_config_updates(model_path=...)` in the manager's process records a "
        "process-wide change no other process sees"
    )
    assert "where: a method of ControlMixin" in f.details


def test_no_owned_fields_checks_nothing_and_says_so(project: Path) -> None:
    write(
        project,
        {
            "app/manager.py": MANAGER.replace("getattr(self, name)", "None"),
            "app/mixin.py": MIXIN,
        },
    )
    out = run_engine(project, select={RULE})
    assert out.findings == []
    from ctxlint.rules.ctx303_manager_owned_override import RULE as rule

    # no manager: said in the derived sets, not as a warning on every run
    assert "no manager-owned fields derived" in out.program.sets[RULE]["note"]
    assert rule.partial(out.program.sets[RULE]) is None


def test_an_annotated_constant_names_the_owned_fields(project: Path) -> None:
    """ctxrt spells it `MANAGER_OWNED_FIELDS: tuple[str, ...] = (...)`."""
    annotated = MANAGER.replace(
        '_MANAGER_OWNED_FIELDS = ("model_path", "not_a_field")',
        '_MANAGER_OWNED_FIELDS: tuple[str, ...] = ("model_path", "not_a_field")',
    )
    write(project, {"app/manager.py": annotated, "app/mixin.py": MIXIN})
    out = run_engine(project, select={RULE})
    assert out.program.sets[RULE]["manager-owned fields"] == {
        "model_path": ["app.manager.TokenizerManager (_MANAGER_OWNED_FIELDS)"]
    }
    assert [(f.path, f.line) for f in out.findings] == [("app/mixin.py", 3)]


def test_a_context_local_is_what_its_last_binding_holds(project: Path) -> None:
    """The names bound to get_context() are the binding model's: an annotated local
    or a walrus holds it, a loop rebinding the name holds something else."""
    assert_case(
        project,
        RULE,
        """
        from app.manager import TokenizerManager
        from specrt.context import get_context, publish

        def launch_server(server_args: object, others: list) -> None:
            publish(server_args, role="tokenizer")
            TokenizerManager("m")
            annotated: object = get_context()
            annotated.override("reload", model_path="p")  # expect
            if (ctx := get_context()) is not None:
                ctx.override("reload", model_path="p")  # expect
            for ctx in others:
                ctx.override("other", model_path="p")
        """,
        extra={"app/manager.py": MANAGER},
    )
