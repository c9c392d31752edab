"""CTX105 declaration-whitelist: direct declarations name fields (and, when the
declaration function consults the whitelist, resolvable ones); registered
overrides' and passes' returned keys name resolvable fields; the derived sets;
the partial runs (no declaration function, an empty whitelist)."""

from __future__ import annotations

from pathlib import Path

from helpers import run_engine, write
from resolution_rt import RUNTIME
from resolution_rt import whitelisted as runtime
from rulecase import assert_case

RULE = "CTX105"


def test_direct_declarations_name_fields(project: Path) -> None:
    """Not gated: a field outside the whitelist is fine, a non-field is not;
    every import spelling of the declaration function counts."""
    source = """
        from specrt import resolution
        from specrt.resolution import declare_resolution as declare

        def resolve(server_args) -> None:
            declare(server_args, "a", dp_size=2, tp_size=2)
            declare(server_args, "a", tp_szie=2)  # expect
            resolution.declare_resolution(server_args, "b", nope=1, model_path="m")  # expect
        """
    assert_case(project, RULE, source, path="app/pipeline.py", extra=runtime())


def test_gated_declaration_function_holds_direct_calls_to_the_whitelist(project: Path) -> None:
    source = """
        from specrt.resolution import declare_resolution

        def resolve(server_args) -> None:
            declare_resolution(server_args, "a", tp_size=2, context_length=8)
            declare_resolution(server_args, "a", dp_size=2)  # expect
        """
    assert_case(project, RULE, source, path="app/pipeline.py", extra=runtime(gated=True))
    sets = run_engine(project, select={RULE}).program.sets[RULE]
    assert sets["whitelist checks below the declaration function"] == [
        "specrt.resolution._check_names"
    ]


def test_override_and_pass_returns(project: Path) -> None:
    source = """
        from specrt.resolution import (
            declare_resolution,
            register_model_override,
            run_post_process_pass,
        )

        @register_model_override("TinyLM")
        def tiny(cfg, hf_config: dict) -> dict:
            if hf_config:
                return dict(context_length=8, dp_size=2)  # expect
            return {"tp_size": 2, "max_running_requests": 4}  # expect

        def split(view) -> dict:
            return {"chunked_prefill_size": 64, "page_sz": 1}  # expect

        def helper(view) -> dict:
            return {"anything": 1}  # neither registered nor a pass

        def resolve(server_args) -> None:
            declare_resolution(server_args, "a", tp_size=2)
            run_post_process_pass(server_args, "split", split)
        """
    assert_case(project, RULE, source, path="app/pipeline.py", extra=runtime())
    sets = run_engine(project, select={RULE}).program.sets[RULE]
    assert sets["whitelist (resolvable fields)"] == [
        "attention_backend",
        "chunked_prefill_size",
        "context_length",
        "tp_size",
    ]
    assert sets["registered callables and passes"] == ["app.pipeline.split", "app.pipeline.tiny"]


def test_message_names_the_field_and_the_nearest(project: Path) -> None:
    write(
        project,
        {
            **runtime(),
            "app/pipeline.py": (
                "from specrt.resolution import declare_resolution\n\n"
                "def resolve(server_args) -> None:\n"
                "    declare_resolution(server_args, 'a', tp_szie=2)\n"
            ),
        },
    )
    (f,) = run_engine(project, select={RULE}).findings
    assert "`tp_szie` is not a ServerArgs field" in f.message
    assert "did you mean `tp_size`" in f.message
    assert (f.line, f.scope) == (4, "resolve")


def test_empty_whitelist_is_partial(project: Path) -> None:
    """The fixture's fields declare nothing resolvable: returned keys are checked
    against the fields only, and the run says so."""
    from ctxlint.engine.registry import load_rules

    rule = next(r for r in load_rules() if r.id == RULE)
    source = """
        from specrt.resolution import register_model_override

        @register_model_override("TinyLM")
        def tiny(cfg, hf_config: dict) -> dict:
            return {"dp_size": 2, "nope": 1}  # expect
        """
    assert_case(project, RULE, source, path="app/pipeline.py", extra=RUNTIME)
    sets = run_engine(project, select={RULE}).program.sets[RULE]
    assert sets["whitelist (resolvable fields)"] == []
    why = rule.partial(sets)
    assert why is not None and "whitelist is empty" in why


def test_no_declaration_function_is_partial(project: Path) -> None:
    from ctxlint.engine.registry import load_rules

    rule = next(r for r in load_rules() if r.id == RULE)
    write(
        project,
        {
            "app/pipeline.py": (
                "def register(arch):\n    return lambda fn: fn\n\n\n"
                "def declare_resolution(server_args, source, **fields):\n    pass\n\n\n"
                "def resolve(server_args) -> None:\n"
                "    declare_resolution(server_args, 'a', nope=1)\n"
            )
        },
    )
    out = run_engine(project, select={RULE})
    assert out.findings == []
    assert out.program.sets[RULE]["declaration function"] == []
    assert out.program.sets[RULE]["note"].startswith("no declaration function derived")
    assert rule.partial(out.program.sets[RULE]) is None  # nothing to check at all
