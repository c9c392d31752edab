"""CTX103 resolution-view: direct field reads and bag reads inside the derived
resolution pipeline (the record's __post_init__ and what it reaches, hooks and
passes handed by name, registered overrides, wrapped foreign resolvers, the
resolution modules' record-taking functions); the derived sets; the note when
a set comes out empty."""

from __future__ import annotations

from pathlib import Path

from helpers import run_engine, write
from resolution_rt import RUNTIME
from rulecase import assert_case

RULE = "CTX103"
# a pipeline that declares: what the record's `__post_init__` calls after it is
# past the undeclared prefix
DECLARING = (
    "from specrt.resolution import declare_resolution\n\n\n"
    "def resolve(server_args):\n"
    "    declare_resolution(server_args, 'k', attention_backend='sdpa')\n"
)
ENTRIES = "pipeline entries (the record's __post_init__ and methods reaching the declaration)"
HOOKS = {
    "app/hooks.py": """\
from specrt.context import get_exec
from specrt.resolution import declare_resolution, register_model_override, resolving_view


def run_hook(step, server_args) -> None:
    step(server_args)


@register_model_override("TinyLM")
def tiny(server_args, hf_config: dict) -> dict:
    return {"context_length": server_args.context_length * 2}


def unrelated(server_args) -> int:
    return server_args.tp_size  # reached by nothing in the pipeline
""",
}


def test_reads_inside_the_pipeline(project: Path) -> None:
    assert_case(
        project,
        RULE,
        """
        from specrt.context import get_exec, get_tp_size
        from specrt.resolution import (
            declare_resolution,
            record_foreign_defaults,
            resolving_view,
            run_post_process_pass,
        )

        from app.hooks import run_hook


        def resolve(server_args) -> None:
            cfg = resolving_view(server_args)
            if cfg.attention_backend == "auto" and server_args.tp_size > 1:  # expect
                declare_resolution(server_args, "kernels", attention_backend="sdpa")
            run_hook(handle_parallel, server_args)
            run_post_process_pass(server_args, "chunk", split_chunk)
            record_foreign_defaults(server_args, "plugin", plugin_defaults)
            _nested(server_args)
            get_tp_size()  # a legacy accessor, not a bag (CTX602's)


        def handle_parallel(server_args) -> None:
            declare_resolution(server_args, "parallel", dp_size=getattr(server_args, "tp_size"))  # expect
            server_args = resolving_view(server_args)
            declare_resolution(server_args, "parallel", dp_size=server_args.tp_size)  # a view now


        def split_chunk(cfg) -> dict:
            if get_exec().moe_runner_backend == "triton":  # expect
                return {}
            return {"chunked_prefill_size": cfg.chunked_prefill_size // 2}


        def plugin_defaults(stand_in) -> None:
            stand_in.attention_backend = stand_in.moe_runner_backend


        def _nested(server_args) -> None:
            def inner(other) -> int:
                return server_args.tp_size  # a closure's read: not its parameter
            inner(1)
            print(server_args.model_path, server_args.resolved_dict)  # expect
        """,
        path="app/pipeline.py",
        extra={**RUNTIME, **HOOKS},
    )


def test_record_methods_and_registered_overrides(project: Path) -> None:
    # `resolve` declares, so `_check` (called after it) is past the undeclared prefix
    write(project, {**RUNTIME, **HOOKS, "app/pipeline.py": DECLARING})
    out = run_engine(project, select={RULE})
    got = sorted((f.path, f.line, f.scope) for f in out.findings if f.rule == RULE)
    assert got == [
        ("app/hooks.py", 11, "tiny"),  # a registered override reads the raw input
        ("specrt/record.py", 13, "ServerArgs._check"),  # self.x in a record method reached
    ]
    # where nothing declares before it, `_check` only runs in the undeclared prefix
    write(project, {"app/pipeline.py": "def resolve(server_args):\n    pass\n"})
    out = run_engine(project, select={RULE})
    got = sorted((f.path, f.line, f.scope) for f in out.findings if f.rule == RULE)
    assert got == [("app/hooks.py", 11, "tiny")]


def test_a_record_method_after_resolution_is_no_entry(project: Path) -> None:
    """SGLang 0.5.17's `ServerArgs.check_server_args`: a record method reaching the
    declaration function (through the record's `override`, which stashes) that
    the launcher calls after `__post_init__` has resolved is not resolution code;
    where `__post_init__` does not resolve (0.5.23's `resolve_once` resolves
    instead), such a method is an entry."""
    record = RUNTIME["specrt/record.py"] + (
        "\n"
        "    def override(self, source: str, **fields) -> None:\n"
        "        from specrt.resolution import declare_resolution\n"
        "\n"
        "        declare_resolution(self, source, **fields)\n"
        "\n"
        "    def check_server_args(self) -> None:\n"
        "        if self.tp_size > 1:\n"
        '            self.override("check", dp_size=self.tp_size)\n'
    )
    resolving = (
        "from specrt.resolution import declare_resolution\n"
        "\n"
        "\n"
        "def resolve(server_args):\n"
        '    declare_resolution(server_args, "kernels", attention_backend="sdpa")\n'
    )
    files = {
        **RUNTIME,
        "specrt/record.py": record,
        "app/launch.py": "def launch(server_args):\n    server_args.check_server_args()\n",
    }
    write(project, {**files, "app/pipeline.py": resolving})
    out = run_engine(project, select={RULE})
    assert out.program.sets[RULE][ENTRIES] == ["specrt.record.ServerArgs.__post_init__"]
    got = sorted((f.line, f.scope) for f in out.findings if f.rule == RULE)
    assert got == [(13, "ServerArgs._check")]

    write(project, {**files, "app/pipeline.py": "def resolve(server_args):\n    pass\n"})
    out = run_engine(project, select={RULE})
    assert out.program.sets[RULE][ENTRIES] == [
        "specrt.record.ServerArgs.__post_init__",
        "specrt.record.ServerArgs.check_server_args",
        "specrt.record.ServerArgs.override",
    ]
    got = sorted((f.line, f.scope) for f in out.findings if f.rule == RULE)
    assert got == [  # `_check` runs before anything declares (undeclared_callees)
        (25, "ServerArgs.check_server_args"),
        (26, "ServerArgs.check_server_args"),
    ]


def test_the_derived_sets(project: Path) -> None:
    write(
        project,
        {
            **RUNTIME,
            **HOOKS,
            "app/pipeline.py": """\
from specrt.resolution import record_foreign_defaults, resolving_view, run_post_process_pass


def resolve(server_args) -> None:
    cfg = resolving_view(server_args)
    run_post_process_pass(server_args, "chunk", split_chunk)
    record_foreign_defaults(server_args, "plugin", plugin_defaults)


def split_chunk(cfg) -> dict:
    return {}


def plugin_defaults(stand_in) -> None:
    pass
""",
        },
    )
    sets = run_engine(project, select={RULE}).program.sets[RULE]
    assert sets[ENTRIES] == ["specrt.record.ServerArgs.__post_init__"]
    assert sets["declaration function"] == ["specrt.resolution.declare_resolution"]
    assert sets["view functions"] == [
        "specrt.resolution.resolved_view",
        "specrt.resolution.resolving_view",
    ]
    assert sets["view bindings (name: view functions)"] == {"cfg": ["resolving_view"]}
    assert sets["registered callables"] == ["app.hooks.tiny"]
    assert sets["passes handed to a pass runner"] == ["app.pipeline.split_chunk"]
    assert sets["foreign-default resolvers"] == ["app.pipeline.plugin_defaults"]
    assert sets["resolution modules"] == ["specrt.record", "specrt.resolution"]


def test_an_empty_set_is_a_note_not_a_pass(project: Path) -> None:
    """The bare specrt fixture has no pipeline at all: the sets say nothing is
    checked; a pipeline half derived (a stash and views, but no record method
    running them) makes the run say the rule is partial."""
    from ctxlint.engine.registry import load_rules

    rule = next(r for r in load_rules() if r.id == RULE)
    write(project, {"app/a.py": "def f(server_args):\n    return server_args.tp_size\n"})
    out = run_engine(project, select={RULE})
    assert [f for f in out.findings if f.rule == RULE] == []
    sets = out.program.sets[RULE]
    assert sets["note"].startswith("no resolution pipeline derived")
    assert rule.partial(sets) is None
    record = "class ServerArgs(Parallel, Model, ExecKernel, ExecMoe, Schedule, Memory):\n"
    write(
        project,
        {
            **RUNTIME,
            "specrt/record.py": RUNTIME["specrt/record.py"].split(record)[0]
            + record
            + "    pass\n",
        },
    )
    sets = run_engine(project, select={RULE}).program.sets[RULE]
    assert "note" not in sets
    assert rule.partial(sets) == (
        "no pipeline entries (the record's __post_init__ and methods reaching the "
        "declaration) derived: the resolution pipeline cannot be checked (entries: the "
        "record's __post_init__ and its methods reaching the declaration function; the "
        "declaration function appends to a record slot a view reads)"
    )


def test_an_attribute_named_like_an_imported_function_is_no_call(project: Path) -> None:
    """sglang 0.5.23's `req.attention_backends` (an attribute of a spec record) in a
    handler that imports runtime_context's `attention_backends` (a bag reader):
    the pipeline follows calls and functions handed by name, not every name."""
    write(
        project,
        {
            **RUNTIME,
            "app/reader.py": """\
from specrt.context import get_exec


def attention_backends() -> str:
    return get_exec().attention_backend
""",
            "app/pipeline.py": """\
from app.reader import attention_backends


def resolve(server_args) -> None:
    from specrt.resolution import declare_resolution

    req = object()
    print(req.attention_backends)
    declare_resolution(server_args, "k", attention_backend="sdpa")
""",
        },
    )
    out = run_engine(project, select={RULE})
    found = [(f.path, f.line) for f in out.findings if f.rule == RULE]
    assert found == [("specrt/record.py", 13)]  # the fixture's own `self.tp_size`


def test_an_in_place_edit_is_told_to_declare_not_to_read_a_view(project: Path) -> None:
    """sglang 0.5.17 server_args.py:4375 (`self.cuda_graph_config.prefill.backend =
    ...`) and :3754 (`prefill_config = self.cuda_graph_config.prefill`, then
    `prefill_config.max_bs = ...`): the read is the receiver of an edit of the
    record, and a view is read-only; the hint is a declaration."""
    body = """\
from specrt.resolution import declare_resolution


def resolve(server_args) -> None:
    declare_resolution(server_args, "kernels", attention_backend="sdpa")
    server_args.model_path.backend = "off"
    part = server_args.context_length.prefill
    part.max_bs = 8
    server_args.chunked_prefill_size["decode"] = 1
    server_args.mem_fraction_static.update(x=1)
    del server_args.max_running_requests[0]
    getattr(server_args, "dp_size").append(1)
    if server_args.tp_size > 1:
        pass
"""
    write(project, {**RUNTIME, "app/pipeline.py": body})
    out = run_engine(project, select={RULE})
    got = {f.line: f.message for f in out.findings if f.rule == RULE and f.scope == "resolve"}
    assert sorted(got) == [6, 7, 9, 10, 11, 12, 13]
    for line in (6, 7, 9, 10, 11, 12):
        assert "edited in place" in got[line], line
        assert got[line].endswith(
            "declare the new value with declare_resolution(server_args, source, **fields)"
        )
    assert got[13].endswith("read it through a view (resolved_view, resolving_view)")


def test_a_read_in_post_init_before_its_first_declaring_call_is_no_finding(
    project: Path,
) -> None:
    """The record is being built in `__post_init__`: until a call that may declare
    runs, the stash is empty and a view answers the raw field too. A read after
    such a call, in a loop, or after a call handing a function on is reported."""
    record = """\
from specrt.fields import ExecKernel, ExecMoe, Memory, Model, Parallel, Schedule


class ServerArgs(Parallel, Model, ExecKernel, ExecMoe, Schedule, Memory):
    def __post_init__(self) -> None:
        from app.pipeline import resolve

        object.__setattr__(self, "_stash", [])
        if self.model_path.lower() == "dummy":
            return
        self._plain(str(self.tp_size))
        for _ in range(2):
            print(self.dp_size)  # a loop: may run after a declaration
        sorted([1], key=self._plain)
        print(self.context_length)  # a function was handed on
        resolve(self)
        print(self.attention_backend)  # after the declaring call

    def _plain(self, value) -> str:
        return value
"""
    body = """\
from specrt.resolution import declare_resolution


def resolve(server_args) -> None:
    declare_resolution(server_args, "kernels", attention_backend="sdpa")
"""
    write(project, {**RUNTIME, "specrt/record.py": record, "app/pipeline.py": body})
    out = run_engine(project, select={RULE})
    got = sorted(
        (f.line, f.message.partition("`")[2].partition("`")[0])
        for f in out.findings
        if f.rule == RULE and f.path == "specrt/record.py"
    )
    assert got == [
        (13, "self.dp_size"),
        (15, "self.context_length"),
        (17, "self.attention_backend"),
    ]


def test_a_function_only_the_undeclared_prefix_runs_is_no_finding(project: Path) -> None:
    """sglang 0.5.17's `_handle_return_hidden_states_mode` (the first call
    `__post_init__` makes), `_alias_bootstrap_port_to_api_port` (two calls
    below `_handle_pd_disaggregation`) and npu `set_default_server_args` run
    before any call that may declare: the stash is empty there as in the
    prefix itself (program.pipeline_reads.undeclared_callees). A function also
    called after the first declaring call, or from another pipeline function,
    keeps its reads reported."""
    record = """\
from specrt.fields import ExecKernel, ExecMoe, Memory, Model, Parallel, Schedule


class ServerArgs(Parallel, Model, ExecKernel, ExecMoe, Schedule, Memory):
    def __post_init__(self) -> None:
        from app.early import platform_defaults, shared
        from app.pipeline import resolve

        object.__setattr__(self, "_stash", [])
        self._handle_early()
        shared(self)
        self._twice()
        resolve(self)
        self._twice()
        print(self.tp_size)  # after the declaring call

    def _handle_early(self) -> None:
        from app.early import platform_defaults

        print(self.model_path)
        platform_defaults(self)

    def _twice(self) -> None:
        print(self.dp_size)  # also runs after resolve
"""
    early = """\
from specrt.record import ServerArgs


def platform_defaults(server_args: ServerArgs) -> None:
    _deeper(server_args)


def _deeper(server_args: ServerArgs) -> None:
    print(server_args.attention_backend)  # a field resolution declares


def shared(server_args: ServerArgs) -> None:
    print(server_args.max_running_requests)  # resolve calls it too
"""
    body = """\
from app.early import shared
from specrt.resolution import declare_resolution


def resolve(server_args) -> None:
    declare_resolution(server_args, "kernels", attention_backend="sdpa")
    shared(server_args)
"""
    files = {"specrt/record.py": record, "app/early.py": early, "app/pipeline.py": body}
    write(project, {**RUNTIME, **files})
    out = run_engine(project, select={RULE, "CTX102"})
    # still resolution's read, not a handed read CTX102 takes over
    assert not [f for f in out.findings if f.rule == "CTX102" and f.path == "app/early.py"]
    got = sorted(
        (f.path, f.message.partition("`")[2].partition("`")[0])
        for f in out.findings
        if f.rule == RULE
    )
    assert got == [
        ("app/early.py", "server_args.max_running_requests"),
        ("specrt/record.py", "self.dp_size"),
        ("specrt/record.py", "self.tp_size"),
    ]


def test_an_in_place_edit_of_a_field_off_the_whitelist_is_not_told_to_declare(
    project: Path,
) -> None:
    """htri17's bug 2: sglang 0.5.17 edits `cuda_graph_config` in place in the
    pipeline (26 sites), and the hint offered `run_post_process_pass(...)`; the
    field is not `resolvable=True`, so `validate_declarations` raises at that
    slot. Off the whitelist the hint says so, and names the step before it
    (program.declarable, as CTX201 and CTX202 do); on it, the declaration."""
    from resolution_rt import whitelisted

    pipeline = """\
from specrt.resolution import declare_resolution


def resolve(server_args) -> None:
    declare_resolution(server_args, 'kernels', attention_backend='sdpa')
    server_args.dp_size.backend = 0
    server_args.tp_size.backend = 0
"""
    write(project, {**whitelisted(gated=True), "app/pipeline.py": pipeline})
    got = {f.line: f for f in run_engine(project, select={RULE}).findings if f.scope == "resolve"}
    off, on = got[6], got[7]
    assert "declare_resolution" not in off.message and "not declared resolvable" in off.message
    assert off.details.startswith(
        "`dp_size` is not declared resolvable, so `declare_resolution(server_args, source, "
        "**fields)` would raise at its slot (`_check_names` checks the whitelist): mark it "
        "`Arg(..., resolvable=True)` first"
    ), off.details
    assert on.message.endswith(
        "declare the new value with declare_resolution(server_args, source, **fields)"
    )
    assert not on.details


def test_a_helper_or_factory_the_pipeline_hands_only_a_view_reads_the_view(
    project: Path,
) -> None:
    """The design keeps "a helper the resolution pipeline calls with a
    resolved_view" and "a factory whose contract is build X from the record you
    are handed" parameter-form: sglang 0.5.17's `DllmConfig.from_server_args`,
    called in the pipeline only by the pass `_dllm_page_size(view)` (htri17
    #37, 9 findings). Derived from the calls (program.view_handed): a pass's
    parameter, a view function's result, a local bound to one, and a parameter
    every pipeline call hands a view, through a chain. One raw call keeps
    every read in the callee reported."""
    files = {
        **RUNTIME,
        "app/dllm.py": """\
class DllmConfig:
    @classmethod
    def from_server_args(cls, server_args) -> int:
        return server_args.context_length


def backends_of(server_args) -> str:
    return server_args.attention_backend


def chained(server_args) -> str:
    return backends_of(server_args) + server_args.model_path


def mixed(server_args) -> int:
    return server_args.tp_size  # expect
""",
        "app/pipeline.py": """\
from specrt.resolution import (
    declare_resolution,
    resolved_view,
    resolving_view,
    run_post_process_pass,
)

from app.dllm import DllmConfig, backends_of, chained, mixed


def page_size(view) -> dict:
    return {"chunked_prefill_size": DllmConfig.from_server_args(view)}


def resolve(server_args) -> None:
    declare_resolution(server_args, "kernels", attention_backend="sdpa")
    run_post_process_pass(server_args, "dllm", page_size)
    backends_of(resolved_view(server_args))
    cfg = resolving_view(server_args)
    chained(cfg)
    mixed(cfg)
    mixed(server_args)
""",
    }
    write(project, files)
    out = run_engine(project, select={RULE})
    got = sorted((f.path, f.line) for f in out.findings if f.path.startswith("app/"))
    assert got == [("app/dllm.py", 16)], got
    viewed = out.program.sets[RULE]["parameters the pipeline hands only a view"]
    assert viewed == {
        "app.dllm.DllmConfig.from_server_args": ["server_args"],
        "app.dllm.backends_of": ["server_args"],
        "app.dllm.chained": ["server_args"],
        "app.pipeline.page_size": ["view"],
    }, viewed


def test_a_pass_handed_to_a_declaration_that_calls_it_with_a_view_reads_the_view(
    project: Path,
) -> None:
    """sglang 0.5.17's shape of htri17 #37: no pass runner apart from the
    declaration function, `run_post_process_pass(server_args, fn)`, which
    stashes `fn(View(...))` itself; the passes are registered by a decorator
    and imported inside the method that hands them, and `_dllm_page_size(view)`
    hands its view to the static `DllmConfig.from_server_args`. A pass also
    called directly with the record keeps its reads reported."""
    runtime = RUNTIME["specrt/resolution.py"].replace(
        "def run_post_process_pass(server_args, source: str, fn) -> None:\n"
        "    declared = fn(resolved_view(server_args))\n"
        "    declare_resolution(server_args, source, **declared)\n",
        "def run_post_process_pass(server_args, fn) -> None:\n"
        "    getattr(server_args, STASH).append(fn(View(server_args)))\n",
    )
    assert runtime != RUNTIME["specrt/resolution.py"]
    files = {
        **RUNTIME,
        "specrt/resolution.py": runtime,
        "app/dllm.py": """\
class DllmConfig:
    @staticmethod
    def from_server_args(server_args) -> int:
        return server_args.context_length
""",
        "app/overrides.py": """\
from specrt.resolution import register_pass


@register_pass
def _dllm_page_size(view) -> dict:
    from app.dllm import DllmConfig

    return {"chunked_prefill_size": DllmConfig.from_server_args(view)}


@register_pass
def _twice(server_args) -> dict:
    return {"page_size": server_args.tp_size}  # expect
""",
        "app/pipeline.py": """\
def resolve(server_args) -> None:
    from specrt.resolution import run_post_process_pass

    from app.overrides import _dllm_page_size, _twice

    run_post_process_pass(server_args, _dllm_page_size)
    run_post_process_pass(server_args, _twice)
    _twice(server_args)
    step(server_args)


def step(server_args) -> None:
    from specrt.resolution import run_post_process_pass

    from app.overrides import _twice

    run_post_process_pass(server_args, _twice)
""",
    }
    write(project, files)
    out = run_engine(project, select={RULE})
    derived = out.program.sets[RULE]
    assert derived["declaration function"] == ["specrt.resolution.run_post_process_pass"]
    assert derived["passes handed to a pass runner"] == []  # as on 0.5.17
    got = sorted((f.path, f.line) for f in out.findings if f.path.startswith("app/"))
    assert got == [("app/overrides.py", 13)], got
    assert derived["parameters the pipeline hands only a view"] == {
        "app.dllm.DllmConfig.from_server_args": ["server_args"],
        "app.overrides._dllm_page_size": ["view"],
    }


def test_a_read_in_a_method_entry_before_it_declares_names_the_caller_s_declaration(
    project: Path,
) -> None:
    """sglang 0.5.23's `ServerArgs.resolve_once` reads `device` before it runs
    the pipeline: there only a declaration made on the record before the method
    ran (a launcher's) can have moved the field, so the message says what the
    read misses, not that it misses "resolution's decision" (which has not run
    yet). A read after the declaring call keeps the pipeline's message."""
    record = """\
from specrt.fields import ExecKernel, ExecMoe, Memory, Model, Parallel, Schedule


class ServerArgs(Parallel, Model, ExecKernel, ExecMoe, Schedule, Memory):
    def __post_init__(self) -> None:
        object.__setattr__(self, "_stash", [])

    def resolve_once(self) -> None:
        from app.pipeline import resolve

        if getattr(self, "_resolved", False):
            return
        requested = getattr(self, "attention_backend", None)  # line 13
        resolve(self)
        print(requested, self.tp_size)  # line 15
"""
    files = {**RUNTIME, "specrt/record.py": record, "app/pipeline.py": DECLARING}
    write(project, files)
    out = run_engine(project, select={RULE})
    got = sorted((f.line, f.message) for f in out.findings if f.scope == "ServerArgs.resolve_once")
    assert [line for line, _ in got] == [13, 15], got
    early, late = got[0][1], got[1][1]
    assert early.startswith("`self.attention_backend` read in `resolve_once` before it declares")
    assert "missing a declaration made before it ran" in early, early
    assert "not resolution's decision" in late and "before it declares" not in late
