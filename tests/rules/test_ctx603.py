"""CTX603 literal-leaf-name: literal names handed to the runtime's config_leaf
and to its wrappers (a wrapper's own names excluded), the accessor spelling
from the namespace map, non-leaf literals, and a runtime without config_leaf."""

from __future__ import annotations

from pathlib import Path

from helpers import run_engine, write
from rulecase import assert_case

RULE = "CTX603"


def test_literal_reads(project: Path) -> None:
    source = """
        from specrt.context import get_context

        OWNED = ("model_path",)

        class Manager:
            def config_value(self, name: str) -> object:
                if name in OWNED:
                    return name
                return get_context().config_leaf(name)

        def value(name: str) -> object:  # a wrapper of a wrapper
            return Manager().config_value(name)

        def f(m: Manager, key: str) -> None:
            ctx = get_context()
            ctx.config_leaf("tp_size")  # expect
            ctx.config_leaf("not_a_leaf")  # expect
            ctx.config_leaf(key)
            ctx.config_leaf("tp" + "_size")
            m.config_value("context_length")  # expect
            m.config_value("model_path")
            value("attention_backend")  # expect
            dict(a=1).get("tp_size")  # not a reader
        """
    assert_case(project, RULE, source)


def test_message_spells_the_leaf(project: Path) -> None:
    write(
        project,
        {
            "app/m.py": (
                "from specrt.context import get_context\n\n"
                "def f() -> None:\n"
                "    get_context().config_leaf('moe_runner_backend')\n"
                "    get_context().config_leaf('tp_sise')\n"
            )
        },
    )
    first, second = run_engine(project, select={RULE}).findings
    assert "`get_exec().moe.moe_runner_backend`" in first.message
    assert "`tp_sise` is not a config leaf" in second.message


def test_a_name_shared_with_a_non_reader_is_not_matched(project: Path) -> None:
    source = """
        from specrt.context import get_context

        class Manager:
            def config_value(self, name: str) -> object:
                return get_context().config_leaf(name)

        class Table:
            def config_value(self, name: str) -> object:
                return {}.get(name)

        def f(t: Table) -> None:
            t.config_value("tp_size")  # which class: unknown by name, so not reported
        """
    assert_case(project, RULE, source)


def test_runtime_without_config_leaf_is_partial(project: Path) -> None:
    from ctxlint.engine.registry import load_rules

    rule = next(r for r in load_rules() if r.id == RULE)
    ctx = (project / "specrt/context.py").read_text().replace("def config_leaf", "def leaf")
    write(
        project,
        {
            "specrt/context.py": ctx,
            "app/m.py": "def f(c) -> None:\n    c.config_leaf('tp_size')\n",
        },
    )
    out = run_engine(project, select={RULE})
    assert out.findings == []
    why = rule.partial(out.program.sets[RULE])
    assert why is not None and "defines no `config_leaf`" in why
