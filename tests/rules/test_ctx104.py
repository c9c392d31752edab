"""CTX104 declaration-writer: stash writes outside the declaration function,
declarations reached after publish (not through the pass runner), overrides and
passes assigning a field; the derived sets; the note when none is derived."""

from __future__ import annotations

from pathlib import Path

from helpers import run_engine, write
from resolution_rt import RUNTIME
from rulecase import assert_case

RULE = "CTX104"


def test_stash_writes_outside_the_declaration_function(project: Path) -> None:
    assert_case(
        project,
        RULE,
        """
        from specrt.resolution import STASH, declare_resolution


        def resolve(server_args) -> None:
            server_args._stash = list(getattr(server_args, "_stash", ()))  # a copy of itself
            declare_resolution(server_args, "kernels", attention_backend="sdpa")
            server_args._stash.append({"tp_size": 2})  # expect
            server_args._stash += [{"tp_size": 2}]  # expect
            getattr(server_args, STASH).extend([{"tp_size": 2}])  # expect
            object.__setattr__(server_args, STASH, [{"tp_size": 2}])  # expect
            server_args.__dict__["_stash"] = []  # a fresh stash
            server_args._other.append(1)  # not the stash
        """,
        path="app/pipeline.py",
        extra=RUNTIME,
    )


def test_declarations_after_publish(project: Path) -> None:
    assert_case(
        project,
        RULE,
        """
        from specrt.context import publish
        from specrt.resolution import declare_resolution, run_post_process_pass


        def resolve(server_args) -> None:
            pass


        def _publish(server_args) -> None:
            publish(server_args, role="scheduler")


        def _late(server_args) -> None:
            declare_resolution(server_args, "late", tp_size=2)


        def launch(server_args) -> None:
            declare_resolution(server_args, "launcher", dp_size=1)
            publish(server_args, role="scheduler")
            declare_resolution(server_args, "launcher", tp_size=2)  # expect
            _late(server_args)  # expect
            run_post_process_pass(server_args, "check", lambda cfg: {})  # a validation


        def launch_through_helper(server_args) -> None:
            _late(server_args)
            _publish(server_args)
            _late(server_args)  # expect
        """,
        path="app/pipeline.py",
        extra=RUNTIME,
    )


def test_overrides_and_passes_return_their_declarations(project: Path) -> None:
    assert_case(
        project,
        RULE,
        """
        from specrt.resolution import register_model_override, register_pass, run_post_process_pass


        def resolve(server_args) -> None:
            run_post_process_pass(server_args, "chunk", split_chunk)


        def split_chunk(cfg) -> dict:
            cfg.chunked_prefill_size = 512  # expect
            return {}


        @register_model_override("TinyLM")
        def tiny(cfg, hf_config: dict) -> dict:
            setattr(cfg, "context_length", 4096)  # expect
            return {"tp_size": 2}


        @register_pass
        def registered(cfg) -> dict:
            cfg.dp_size = 1  # expect
            cfg.note = "x"  # not a record field
            return {}


        def helper(cfg) -> None:
            cfg.dp_size = 1  # neither registered nor handed to the pass runner
        """,
        path="app/pipeline.py",
        extra=RUNTIME,
    )


def test_the_derived_sets(project: Path) -> None:
    write(
        project,
        {
            **RUNTIME,
            "app/pipeline.py": """\
from specrt.resolution import record_foreign_defaults, register_pass, run_post_process_pass


def resolve(server_args) -> None:
    run_post_process_pass(server_args, "chunk", split_chunk)
    record_foreign_defaults(server_args, "plugin", plugin_defaults)


def split_chunk(cfg) -> dict:
    return {}


@register_pass
def checked(cfg) -> dict:
    return {}


def plugin_defaults(stand_in) -> None:
    pass
""",
        },
    )
    sets = run_engine(project, select={RULE}).program.sets[RULE]
    assert sets["declaration function"] == ["specrt.resolution.declare_resolution"]
    assert sets["stash slots"] == ["_stash"]
    assert sets["stash appenders (through a parameter)"] == ["specrt.resolution.declare_resolution"]
    assert sets["pass runners"] == ["specrt.resolution.run_post_process_pass"]
    assert sets["foreign-default wrappers"] == ["specrt.resolution.record_foreign_defaults"]
    assert sets["registered callables"] == ["app.pipeline.checked"]
    assert sets["passes handed to a pass runner"] == ["app.pipeline.split_chunk"]


def test_no_declaration_function_is_a_note(project: Path) -> None:
    """No stash a view reads: a note in the sets; with a record method resolving
    (a __post_init__) but no writer derived, the run says the rule is partial."""
    from ctxlint.engine.registry import load_rules

    rule = next(r for r in load_rules() if r.id == RULE)
    write(project, {"app/a.py": "def f(server_args):\n    server_args._stash.append(1)\n"})
    out = run_engine(project, select={RULE})
    assert [f for f in out.findings if f.rule == RULE] == []
    assert out.program.sets[RULE]["note"].startswith("no declaration function derived")
    assert rule.partial(out.program.sets[RULE]) is None
    write(project, {"specrt/record.py": RUNTIME["specrt/record.py"]})
    sets = run_engine(project, select={RULE}).program.sets[RULE]
    assert sets["record methods resolving"] == ["specrt.record.ServerArgs.__post_init__"]
    why = rule.partial(sets)
    assert why is not None and why.startswith("no declaration function derived")


def _stash_hint(project: Path) -> list[str]:
    out = run_engine(project, select={RULE})
    return [f.message.partition(": ")[2] for f in out.findings if f.rule == RULE]


def test_the_hint_is_the_declaration_as_this_tree_declares_it(project: Path) -> None:
    """The hint names the declaration function with the parameters its def
    declares: sglang 0.5.17's writer is `run_post_process_pass(server_args, fn)`
    (a pass returning its declaration), not `(record, source, **fields)`."""
    body = """\
from specrt.resolution import run_post_process_pass


def resolve(server_args) -> None:
    run_post_process_pass(server_args, lambda cfg: {})


def adjust(server_args) -> None:
    server_args._stash.append({})
"""
    write(project, {**RUNTIME, "app/pipeline.py": body})
    assert _stash_hint(project) == [
        "declare through `declare_resolution(server_args, source, **fields)`, "
        "the stash's one writer"
    ]
    # 0.5.17's shape: the pass runner is the stash's one appender
    runtime = RUNTIME["specrt/resolution.py"]
    old = runtime[runtime.index("def declare_resolution") : runtime.index("def record_foreign")]
    new = """\
def run_post_process_pass(server_args, fn) -> None:
    getattr(server_args, STASH).append(fn(resolved_view(server_args)))


"""
    write(project, {"specrt/resolution.py": runtime.replace(old, new)})
    assert _stash_hint(project) == [
        "declare through `run_post_process_pass(server_args, fn)`, the stash's one writer"
    ]


def test_a_stash_write_in_a_record_edit_method_defers_to_ctx202(project: Path) -> None:
    """sglang 0.5.17's `ServerArgs.override` appends to the stash: declaring
    through the pass runner is no remedy inside the post-resolution edit entry
    the design removed; the hint is CTX202's (remove it, `get_context().override`)."""
    record = RUNTIME["specrt/record.py"] + (
        "\n    def override(self, source: str, **fields) -> None:\n"
        "        self._stash.append(fields)\n"
    )
    body = """\
from specrt.resolution import declare_resolution


def resolve(server_args) -> None:
    declare_resolution(server_args, "kernels", attention_backend="sdpa")


def adjust(server_args) -> None:
    server_args._stash.append({})
"""
    write(project, {**RUNTIME, "specrt/record.py": record, "app/pipeline.py": body})
    out = run_engine(project, select={RULE})
    got = {f.path: f.message for f in out.findings if f.rule == RULE}
    assert sorted(got) == ["app/pipeline.py", "specrt/record.py"]
    assert got["specrt/record.py"] == (
        "the declaration stash `_stash` written outside `declare_resolution`: "
        "`ServerArgs.override` is an edit entry point the record may not define (CTX202): "
        "remove it"
    )
    assert got["app/pipeline.py"].endswith("the stash's one writer")
