"""CTX102 supplied-exposure: each spelling of a read off a handed record, the
exemptions (factories by name and by config, allowed classes, per-rule-exclude),
and the negatives (the seed, methods, writes, non-record parameters)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from helpers import RIVAL, run_engine, write
from resolution_rt import RUNTIME
from rulecase import assert_case

from ctxlint.program.whole_object import APART, DECLARED, MATERIALISER, NOTE, OVERRIDDEN
from ctxlint.program.whole_object import ELSEWHERE as ELSEWHERE_SET
from ctxlint.program.whole_object import LAUNCHER as LAUNCHER_SET
from ctxlint.rules.ctx102_supplied_exposure import RULE as RULE_OBJECT

RULE = "CTX102"
# Two annotated `server_args` parameters make the name the codebase's convention.
CONVENTION = {
    "app/conv.py": """\
from specrt.record import ServerArgs


def a(server_args: ServerArgs) -> None:
    pass


def b(server_args: ServerArgs) -> None:
    pass
"""
}

BAD = {
    "annotated-parameter-any-name": """
        from specrt.record import ServerArgs

        def f(cfg: ServerArgs, other: "ServerArgs | None") -> int:
            a = cfg.tp_size  # expect
            return a + other.dp_size  # expect
        """,
    "convention-name-unannotated": """
        def f(server_args) -> int:
            return server_args.tp_size  # expect
        """,
    "literal-getattr": """
        from specrt.record import ServerArgs

        def f(server_args: ServerArgs) -> str:
            return getattr(server_args, "model_path", "") + getattr(server_args, "model_path")  # expect x2
        """,
    "closure-sees-the-parameter": """
        from specrt.record import ServerArgs

        def f(server_args: ServerArgs):
            def inner() -> int:
                return server_args.context_length  # expect
            return inner
        """,
    "a-nested-class-sees-the-parameter": """
        from specrt.record import ServerArgs

        def f(server_args: ServerArgs):
            class Inner:
                size = server_args.tp_size  # expect

                def later(self) -> int:
                    return server_args.dp_size  # expect
            return Inner
        """,
    "rebound-parameter-is-still-the-handed-record": """
        from specrt.record import ServerArgs

        def f(server_args: ServerArgs | None = None) -> int:
            server_args = server_args or make()
            return server_args.tp_size  # expect
        """,
    "self-server-args": """
        class W:
            def run(self) -> int:
                return self.server_args.max_running_requests  # expect
        """,
    "parked-under-another-name": """
        from specrt.record import ServerArgs

        class W:
            def __init__(self, cfg: ServerArgs) -> None:
                self.cfg = cfg

            def later(self) -> float:
                return self.cfg.mem_fraction_static  # expect

            def closure(self):
                return lambda: self.cfg.tp_size  # expect
        """,
    "parked-from-convention-name": """
        class W:
            def __init__(self, server_args) -> None:
                self._args = server_args

            def later(self) -> int:
                return getattr(self._args, "dp_size", 1)  # expect
        """,
    "parked-by-tuple-assignment": """
        from specrt.record import ServerArgs

        class W:
            def __init__(self, n: int, server_args: ServerArgs) -> None:
                self.n, (self.cfg, self.m) = n, (server_args, 2)

            def later(self) -> int:
                return self.cfg.tp_size  # expect
        """,
    "class-annotated-attribute": """
        from specrt.record import ServerArgs

        class W:
            sa: ServerArgs

            def later(self) -> int:
                return self.sa.tp_size  # expect
        """,
    "chains-through-another-object": """
        def f(runner) -> str:
            return runner.server_args.attention_backend  # expect

        class C:
            def g(self) -> int:
                return self.worker.model_runner.server_args.tp_size  # expect

        def h(make) -> int:
            return make().server_args.dp_size  # expect
        """,
}

GOOD = {
    "seed-is-ctx101": """
        from specrt.context import get_server_args

        class W:
            def __init__(self) -> None:
                self.server_args = get_server_args()

            def later(self) -> int:
                return self.server_args.tp_size

        def f() -> int:
            server_args = get_server_args()
            return server_args.dp_size + get_server_args().tp_size
        """,
    "methods-handoffs-writes": """
        from specrt.record import ServerArgs

        def f(server_args: ServerArgs) -> dict:
            g(server_args)
            server_args.tp_size = 2  # a write: CTX201
            return server_args.resolved_dict()

        def g(x) -> None:
            pass
        """,
    "non-record-parameters": """
        def f(args: dict, runner) -> int:
            return args.tp_size + runner.config.tp_size + runner.server_args_dict.tp_size

        def g(server_args: dict) -> int:
            return server_args.tp_size  # explicitly not the record
        """,
    "tuple-elements-that-are-not-the-record": """
        from specrt.record import ServerArgs

        class W:
            def __init__(self, server_args: ServerArgs, pair) -> None:
                self.n, self.cfg = 1, server_args.resolved_dict()
                self.a, self.b = pair
                self.c, *self.rest = 1, server_args, 3

            def later(self) -> int:
                return self.cfg.tp_size + self.b.tp_size + self.rest.tp_size
        """,
    "local-record-is-not-handed": """
        from specrt.record import ServerArgs

        def build() -> int:
            sa = ServerArgs()
            return sa.tp_size

        class K:
            tp_size = 1

            def f(self) -> int:
                return self.tp_size + self.other.tp_size
        """,
    "record-the-class-builds-itself": """
        from specrt.record import ServerArgs

        class Runtime:
            def __init__(self, **kwargs) -> None:
                self.server_args = ServerArgs(**kwargs)

            def launch(self) -> int:
                return self.server_args.tp_size
        """,
    "factories-by-name": """
        from specrt.record import ServerArgs

        class Cfg:
            @classmethod
            def from_server_args(cls, server_args: ServerArgs):
                def helper() -> int:
                    return server_args.dp_size
                return cls(server_args.tp_size, helper())

        def create_lora_config_from_server_args(server_args: ServerArgs) -> int:
            return server_args.tp_size
        """,
    "receivers-and-star-parameters-are-not-handed": """
        class W:
            def run(server_args) -> int:  # the receiver, whatever its name
                return server_args.tp_size

        def f(*server_args, **kw) -> int:
            return server_args.tp_size + kw.tp_size
        """,
    "class-level-names-are-not-parameters": """
        from specrt.record import ServerArgs

        def f(server_args: ServerArgs):
            class Inner:
                size = 1
            return Inner
        """,
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad(project: Path, name: str) -> None:
    assert_case(project, RULE, BAD[name], extra=CONVENTION)


@pytest.mark.parametrize("name", sorted(GOOD))
def test_good(project: Path, name: str) -> None:
    assert_case(project, RULE, GOOD[name], extra=CONVENTION)


def test_without_the_convention_an_unannotated_name_is_not_a_record(project: Path) -> None:
    # specrt itself annotates `server_args` twice; `args` is nobody's convention
    assert_case(
        project,
        RULE,
        """
        from specrt.record import ServerArgs

        def f(args) -> int:
            return args.tp_size

        def g(args: ServerArgs) -> int:
            return args.tp_size  # expect
        """,
    )


def _configure(project: Path, extra: str) -> None:
    cfg = project / "pyproject.toml"
    cfg.write_text(cfg.read_text() + extra)


CLASSES = """\
from specrt.record import ServerArgs


class GrammarManager:
    def __init__(self, server_args: ServerArgs) -> None:
        self.server_args = server_args
        self.backend = server_args.attention_backend

    def vocab(self) -> int:
        return self.server_args.context_length


class Other:
    def __init__(self, server_args: ServerArgs) -> None:
        self.size = server_args.tp_size


def build_kt_config(server_args: ServerArgs) -> int:
    return server_args.dp_size
"""


def test_config_allowed_classes_and_factories(project: Path) -> None:
    write(project, {"app/managers.py": CLASSES})
    out = run_engine(project, select={RULE})
    assert sorted(f.line for f in out.findings) == [7, 10, 15, 19]

    _configure(
        project,
        'exposure-allowed-classes = ["GrammarManager", "app.managers.Missing"]\n'
        'exposure-factories = ["build_*_config"]\n',
    )
    out = run_engine(project, select={RULE})
    assert [f.line for f in out.findings] == [15]
    sets = out.program.sets[RULE]
    assert sets["allowed classes with no read"] == ["app.managers.Missing"]
    assert "build_*_config" in sets["exempt factory patterns"]


def test_per_instance_fields_are_kept_apart_off_the_instances_own_record(
    project: Path,
) -> None:
    """The design: "What genuinely stays per-instance is what differs per worker
    within one engine: `base_gpu_id` ... (`BaseMultimodalProcessor.
    _fast_image_processor_device` is the shape to copy)", a read off the
    processor's own `self.server_args` (sglang 0.5.23's multimodal processors).
    Configured fields read off `self.<record>` are listed in the sets, not
    reported; a parameter read of the same field is still reported."""
    write(project, {"app/managers.py": CLASSES})
    _configure(project, 'exposure-per-instance-fields = ["context_length", "tp_size"]\n')
    out = run_engine(project, select={RULE})
    assert sorted(f.line for f in out.findings) == [7, 15, 19]  # 10 kept, 15 a parameter
    sets = out.program.sets[RULE]
    assert sets["per-instance fields"] == ["context_length", "tp_size"]
    kept = sets["per-instance reads off the instance's own record (kept apart)"]
    assert kept == ["app/managers.py:10 GrammarManager.vocab `context_length`"]


def test_dotted_allowed_class_names_exactly_that_class(project: Path) -> None:
    write(project, {"app/managers.py": CLASSES, "app/other.py": CLASSES})
    _configure(project, 'exposure-allowed-classes = ["app.managers.GrammarManager"]\n')
    out = run_engine(project, select={RULE})
    got = sorted((f.path, f.line) for f in out.findings)
    assert ("app/managers.py", 7) not in got
    assert ("app/other.py", 7) in got and ("app/other.py", 10) in got


def test_resolution_pipeline_is_excluded_by_config(project: Path) -> None:
    """The excluded file reports nothing; the same code beside it, not excluded,
    reports every read (the positive control: a CTX102 that finds nothing at
    all must fail here)."""
    write(project, {"app/pipeline.py": CLASSES, "app/elsewhere.py": CLASSES})
    text = (project / "pyproject.toml").read_text()
    text = text.replace(
        'per-rule-exclude = { CTX201 = ["specrt/record.py"] }',
        'per-rule-exclude = { CTX201 = ["specrt/record.py"], CTX102 = ["app/pipeline.py"] }',
    )
    (project / "pyproject.toml").write_text(text)
    out = run_engine(project, select={RULE})
    assert sorted((f.path, f.line) for f in out.findings) == [
        ("app/elsewhere.py", line) for line in (7, 10, 15, 19)
    ]


def test_message_names_the_field_and_its_bag(project: Path) -> None:
    write(
        project,
        {
            "app/m.py": (
                "from specrt.record import ServerArgs\n\n\n"
                "def f(sa: ServerArgs) -> str:\n"
                "    return sa.attention_backend\n"
            )
        },
    )
    (finding,) = run_engine(project, select={RULE}).findings
    assert "`attention_backend`" in finding.message and len(finding.message) <= 160
    # one remedy, in the details, with when it holds
    assert finding.details.startswith("Read get_exec().kernel.attention_backend once the process")
    assert "runner stamp" not in finding.details


# A provenance property (SGLang 0.5.23's `launch_command`) reads no configuration;
# one computed from fields has no leaf either, and the runtime lacks its accessor.
RECORD_PROPERTIES = """

    @property
    def launch_command(self) -> str | None:
        \"\"\"The command line, as launched.\"\"\"
        return getattr(self, "_launch_command", None)

    @property
    def wide(self) -> bool:
        return self.tp_size > 1
"""


def test_a_property_with_no_configuration_behind_it_is_not_exposure(project: Path) -> None:
    record = project / "specrt" / "record.py"
    record.write_text(record.read_text() + RECORD_PROPERTIES)
    write(
        project,
        {
            "app/m.py": (
                "from specrt.record import ServerArgs\n\n\n"
                "def f(sa: ServerArgs) -> object:\n"
                "    return sa.launch_command, sa.wide\n"
            )
        },
    )
    (finding,) = run_engine(project, select={RULE}).findings
    assert "`wide`" in finding.message
    assert "the runtime lacks an accessor deriving it from the bags" in finding.details
    assert "specrt.context" in finding.details


def test_parked_sets_are_derived(project: Path) -> None:
    write(project, {"app/w.py": BAD["parked-under-another-name"].replace("\n        ", "\n")})
    sets = run_engine(project, select={RULE}).program.sets[RULE]
    assert sets["parked record attributes"] == ["app/w.py:W.cfg = cfg"]


def test_a_rival_record_class_takes_the_convention_over_in_its_package(project: Path) -> None:
    """SGLang's multimodal_gen has its own ServerArgs (outside the contract): in the
    package whose parameters are annotated with it, `server_args`, `self.server_args`
    and `x.server_args` are that record; an explicit annotation still decides."""
    inside = """
        from specrt.record import ServerArgs as Record

        def validate(server_args, case) -> int:
            return server_args.tp_size + getattr(server_args, "dp_size", 1) + case.server_args.dp_size

        class Worker:
            def __init__(self, server_args) -> None:
                self.server_args = server_args
                self.args = server_args

            def size(self) -> int:
                return self.server_args.tp_size + self.args.dp_size

        def real(server_args: Record) -> int:
            return server_args.tp_size  # expect
        """
    assert_case(project, RULE, inside, path="specrt/mmgen/config.py", extra=RIVAL)
    outside = """
        def size(server_args, runner) -> int:
            return server_args.tp_size + runner.server_args.dp_size  # expect x2
        """
    assert_case(project, RULE, outside, extra=RIVAL)


def test_no_bag_hint_where_no_publish_precedes(project: Path) -> None:
    """A launcher that starts the server in another process and reads the handed
    record (sglang 0.5.23's `benchmark/endpoint.py`, `compile_deep_gemm.py`) runs
    where no publish came first: `get_serving().host` would raise there, so the
    hint is to pass the value down or keep the record. A read that a publishing
    entry reaches after its publish keeps the bag leaf, and so does one whose
    callers the graph cannot trace back to import-time code."""
    write(
        project,
        {
            "app/launch.py": (
                "from multiprocessing import Process\n\n"
                "from specrt.context import publish\n"
                "from specrt.record import ServerArgs\n\n\n"
                "def serve(server_args: ServerArgs) -> None:\n"
                "    publish(server_args, role='scheduler')\n"
                "    worker(server_args)\n\n\n"
                "def worker(server_args: ServerArgs) -> int:\n"
                "    return server_args.tp_size\n\n\n"
                "def url(server_args: ServerArgs) -> str:\n"
                "    return f'{server_args.model_path}:1'\n\n\n"
                "def main(server_args: ServerArgs) -> str:\n"
                "    Process(target=serve, args=(server_args,)).start()\n"
                "    return url(server_args)\n\n\n"
                "if __name__ == '__main__':\n"
                "    main(ServerArgs())\n"
            )
        },
    )
    after, before = sorted(run_engine(project, select={RULE}).findings, key=lambda f: f.line)[:2]
    assert (after.scope, before.scope) == ("worker", "url")
    assert "get_parallel().tp_size" in after.details
    assert "No publish precedes this read in `url`" in before.details
    assert "get_model()" not in before.details and "pass the resolved value down" in before.details
    # a caller chain the graph cannot follow to import-time code claims nothing
    launch = (project / "app/launch.py").read_text()
    write(project, {"app/launch.py": launch.rpartition("if __name__")[0]})
    found = sorted(run_engine(project, select={RULE}).findings, key=lambda f: f.line)
    assert "get_model().model_path" in found[1].details


def test_a_read_before_its_own_functions_publish_gets_no_bag_hint(project: Path) -> None:
    """The ordered question, asked of the statement (as CTX301 orders events), not
    "does a publisher reach the function": sglang 0.5.23's
    `test/cache_consistency_jitter.py` reads `server_args.tp_size` at :93 and
    :155, then publishes itself (`run_scheduler_process(...)` at :161, in another
    module); nothing calls it (a `partial` the engine starts). A read after the
    publish keeps the bag leaf, with when it answers."""
    write(
        project,
        {
            "app/sched.py": (
                "from specrt.context import publish\n\n\n"
                "def run_scheduler(server_args) -> None:\n"
                "    publish(server_args, role='scheduler')\n"
            ),
            "app/jitter.py": (
                "from functools import partial\n\n\n"
                "def with_jitter(server_args, p: float) -> int:\n"
                "    from app.sched import run_scheduler\n\n"
                "    share = p / server_args.tp_size\n"
                "    print(\n"
                "        share,\n"
                "        server_args.dp_size,\n"
                "    )\n"
                "    run_scheduler(\n"
                "        server_args,\n"
                "        server_args.model_path,\n"
                "    )\n"
                "    return server_args.context_length\n\n\n"
                "ENTRY = partial(with_jitter, p=0.1)\n"
            ),
        },
    )
    found = sorted(run_engine(project, select={RULE}).findings, key=lambda f: f.line)
    assert [f.snippet for f in found] == [
        "server_args.tp_size",
        "server_args.dp_size",
        "server_args.model_path",  # an argument of the publishing call: before it runs
        "server_args.context_length",
    ]
    # a publish follows in the same function (0.5.17's `TokenizerManager.__init__`):
    # the leaf answers below it, never where the read stands
    for f in found[:2]:
        assert f.details.startswith(
            "`with_jitter` publishes at line 12, after this read, so a bag accessor raises here:"
            f" read get_parallel().{f.snippet.rpartition('.')[2]} below line 12, or pass"
        ), f.details
    # an argument of the publishing call is read before it runs, and not after it
    assert found[2].details.startswith("No publish precedes this read in `with_jitter`")
    assert "get_" not in found[2].details
    assert found[3].details.startswith("Read get_model().context_length once the process")
    # a way in that published first (sglang 0.5.17's `run_scheduler_process`
    # publishes, then builds the Scheduler, whose model worker publishes again):
    # the read before the second publish is not pre-publish
    write(
        project,
        {
            "app/entry.py": (
                "from specrt.context import publish\n"
                "from app.jitter import with_jitter\n\n\n"
                "def run(server_args) -> None:\n"
                "    publish(server_args, role='scheduler')\n"
                "    with_jitter(server_args, 0.1)\n"
            )
        },
    )
    found = sorted(run_engine(project, select={RULE}).findings, key=lambda f: f.line)
    # (the `partial` is still a way in the graph cannot follow: not claimed either way)
    assert found[0].details.startswith(
        "`with_jitter` publishes at line 12, after this read, so a bag accessor raises here "
        "unless an earlier publish ran: read get_parallel().tp_size below line 12"
    )


def test_a_launcher_reached_only_before_any_publish_gets_no_bag_hint(project: Path) -> None:
    """sglang's `launch_server.run_server` is called from its `__main__` block
    and from CLI code (not a `__main__` block): each way in is launcher code
    before a publish. Here the CLI function is a process target (a fresh
    process: nothing published), which the import-time-roots-only question
    could not see. A caller whose statements before the call publish makes
    that way in published: then the graph cannot say, and the leaf is named
    with when it answers."""
    launch = (
        "from multiprocessing import Process\n\n"
        "from specrt.context import publish\n\n\n"
        "def serve(server_args) -> None:\n"
        "    publish(server_args, role='scheduler')\n\n\n"
        "def run_server(server_args) -> None:\n"
        "    if server_args.tp_size > 1:\n"
        "        print('wide')\n"
        "    Process(target=serve, args=(server_args,)).start()\n\n\n"
        "if __name__ == '__main__':\n"
        "    run_server(object())\n"
    )
    cli = (
        "from multiprocessing import Process\n\n"
        "from app.launch import run_server\n\n\n"
        "def run_llm(server_args) -> None:\n"
        "    run_server(server_args)\n\n\n"
        "def main(argv) -> None:\n"
        "    run_llm(argv)\n\n\n"
        "def spawn() -> None:\n"
        "    Process(target=main, args=([],)).start()\n"
    )
    write(project, {"app/launch.py": launch, "app/cli.py": cli})
    (finding,) = run_engine(project, select={RULE}).findings
    assert finding.details.startswith("No publish precedes this read in `run_server`")
    # a way in after a publish: the graph cannot say the read is unpublished
    published = cli.replace(
        "def main(argv) -> None:\n",
        "def main(argv) -> None:\n    from specrt.context import publish\n\n"
        "    publish(argv, role='scheduler')\n",
    )
    write(project, {"app/cli.py": published})
    (finding,) = run_engine(project, select={RULE}).findings
    assert finding.details.startswith("Read get_parallel().tp_size once the process")
    # 0.5.23's shape: run_server publishes later itself (its launcher process),
    # and the CLI function calling it is run by dispatch (no caller the graph
    # knows): a publishing function with a way in from `__main__` is a process
    # entry, so the unknown way in is taken as another entry
    in_process = launch.replace(
        "    Process(target=serve, args=(server_args,)).start()\n",
        "    serve(server_args)\n",
    )
    write(project, {"app/launch.py": in_process, "app/cli.py": cli.rpartition("def spawn")[0]})
    (finding,) = run_engine(project, select={RULE}).findings
    assert finding.details.startswith(
        "`run_server` publishes at line 13, after this read, so a bag accessor raises here:"
    )


# A tree that resolves and overrides (issue 36's whole-object passes): resolution
# declares `chunked_prefill_size` and, through a constant table the pipeline
# reads, `context_length`; `get_context().override` moves `dp_size` and the
# manager's wrapper `record_config_updates` moves `model_path`. Nothing declares
# or overrides `tp_size`.
DECIDING = {
    **RUNTIME,
    **CONVENTION,
    "app/pipeline.py": """\
from specrt.resolution import declare_resolution

TABLE = {"Arch": {"context_length": 4096}}


def resolve(server_args) -> None:
    declare_resolution(server_args, "pipeline", chunked_prefill_size=512)
    server_args.max_running_requests = 8  # a pipeline that still writes (0.5.17)
    fixed = TABLE.get("Arch")
    if fixed:
        declare_resolution(server_args, "table", **fixed)
""",
    "app/control.py": """\
from specrt.context import get_context


class Manager:
    def record_config_updates(self, source: str, **fields: object) -> None:
        get_context().override(source, **fields)


def reload(manager: Manager) -> None:
    manager.record_config_updates("reload", model_path="/new")


def scale() -> None:
    get_context().override("scale", dp_size=2)
""",
}
WHOLE_OBJECT = """
    def init_groups(server_args) -> int:
        return server_args.tp_size  # a whole-object pass of a field nothing moves

    def chunk(server_args) -> int:
        return server_args.chunked_prefill_size  # expect

    def window(server_args) -> int:
        return server_args.context_length  # expect

    def path(server_args) -> str:
        return server_args.model_path  # expect

    def budget(server_args) -> int:
        return server_args.max_running_requests  # expect

    def width(server_args) -> int:
        return getattr(server_args, "dp_size", 1)  # expect

    class Worker:
        def __init__(self, server_args) -> None:
            self.server_args = server_args
            self.size = server_args.tp_size  # the parameter, though parked: a whole-object pass

        def size_again(self) -> int:
            return self.server_args.tp_size  # expect

        def launch(self, server_args) -> int:
            return server_args.tp_size  # a whole-object pass: only __init__ parks it
    """


def test_a_whole_object_pass_of_a_field_nothing_moves_is_kept_apart(project: Path) -> None:
    """The design's supplied-instance contract: a parameter read is reported
    only for a field resolution fills in (a declaration keyword, a key of a
    constant table the pipeline reads, a pipeline write) or a post-publish override moves (the
    context's `override`, a wrapper handing it `**fields`, called on another
    object); the rest is listed apart by `ctxlint sets`. A read held by an
    object (`self.server_args`) is reported whatever the field; a read of the
    parameter in the constructor that parks it is a parameter read (sglang
    0.5.17's `ExpertBackupClient.__init__` reading `server_args.nnodes`)."""
    assert_case(project, RULE, WHOLE_OBJECT, extra=DECIDING)
    out = run_engine(project, select={RULE})
    sets = out.program.sets[RULE]
    # the method that parks the parameter, and another (sglang 0.5.17's
    # DataParallelController.launch_tensor_parallel_group): whole-object passes
    assert sets[APART] == [
        "app/case.py:2 init_groups `tp_size`",
        "app/case.py:22 Worker.__init__ `tp_size`",
        "app/case.py:28 Worker.launch `tp_size`",
    ]
    assert set(sets[DECLARED]) == {
        "chunked_prefill_size",
        "context_length",
        "max_running_requests",
    }
    assert sets[DECLARED]["max_running_requests"] == "app/pipeline.py:8"
    assert sets[DECLARED]["context_length"] == "app/pipeline.py TABLE"
    assert sets[OVERRIDDEN] == {
        "dp_size": "app/control.py:14",
        "model_path": "app/control.py:10",
    }
    assert "note" not in sets and not sets[MATERIALISER]
    found = {f.scope: f for f in out.findings if f.path == "app/case.py"}
    assert found["chunk"].message.endswith(
        "raw input, which resolution's declaration of it passes by"
    )
    assert found["chunk"].details.startswith("Declared at app/pipeline.py:7. Read ")
    assert found["path"].message.endswith(
        "raw input, which a post-publish override of it passes by"
    )
    assert found["path"].details.startswith("Overridden at app/control.py:10. Read ")


# The whitelist alone (sglang's `Arg(..., resolvable=True)`): a field a
# declaration may fill, also where no literal keyword names it (a computed
# dict handed to the declaration function).
WHITELISTED = """\
def arg(default: object, *, resolvable: bool = False) -> object:
    return default


class Parallel:
    _NS_PATH = "parallel"
    tp_size: int = arg(1)
    dp_size: int = arg(1)


class Model:
    _NS_PATH = "model"
    model_path: str = arg("")
    context_length: int = arg(0)


class ExecKernel:
    _NS_PATH = "exec.kernel"
    attention_backend: str = arg("auto")


class ExecMoe:
    _NS_PATH = "exec.moe"
    moe_runner_backend: str = arg("auto")


class Schedule:
    _NS_PATH = "schedule"
    max_running_requests: int = arg(0)
    chunked_prefill_size: int = arg(0)


class Memory:
    _NS_PATH = "memory"
    mem_fraction_static: float = arg(0.8, resolvable=True)
"""


def test_a_field_declared_resolvable_is_one_resolution_fills_in(project: Path) -> None:
    """The design: "Declarable fields form a whitelist: `Arg(..., resolvable=True)`",
    so a parameter read of one is reported (named where the whitelist says so),
    while a field off it that nothing declares or overrides is kept apart; the
    whitelist alone is a derived set (no partial note)."""
    source = """
        def init_groups(server_args) -> int:
            return server_args.tp_size

        def fraction(server_args) -> float:
            return server_args.mem_fraction_static  # expect
        """
    assert_case(project, RULE, source, extra={**CONVENTION, "specrt/fields.py": WHITELISTED})
    out = run_engine(project, select={RULE})
    sets = out.program.sets[RULE]
    where = "specrt/fields.py Memory (resolvable=True)"
    assert sets[DECLARED] == {"mem_fraction_static": where}
    assert sets[APART] == ["app/case.py:2 init_groups `tp_size`"] and "note" not in sets
    (found,) = [f for f in out.findings if f.path == "app/case.py"]
    assert found.details.startswith(f"Declared at {where}. Read get_memory()")


def test_with_nothing_declared_or_overridden_every_read_is_reported_and_partial(
    project: Path,
) -> None:
    """An empty derived set cannot tell a whole-object pass from exposure: the
    reads are reported and the rule says it is partial, never a quiet pass."""
    source = "def init_groups(server_args) -> int:\n    return server_args.tp_size\n"
    write(project, {**CONVENTION, "app/case.py": source})
    out = run_engine(project, select={RULE})
    assert [(f.path, f.line) for f in out.findings] == [("app/case.py", 2)]
    sets = out.program.sets[RULE]
    assert sets["note"] == NOTE and sets[APART] == []
    assert RULE_OBJECT.partial(sets) == NOTE


def test_a_raw_read_inside_resolution_is_ctx103s(project: Path) -> None:
    """sglang 0.5.17's npu `set_default_server_args`, which `__post_init__`
    reaches: a raw read there is answered by a view (CTX103), and the bag
    CTX102 would name raises (no bag exists during resolution)."""
    pipeline = DECIDING["app/pipeline.py"] + (
        "\n\ndef wide(server_args) -> bool:\n    return server_args.chunked_prefill_size > 1\n"
    )
    pipeline = pipeline.replace("    fixed = TABLE", "    wide(server_args)\n    fixed = TABLE")
    write(project, {**DECIDING, "app/pipeline.py": pipeline})
    out = run_engine(project, select={RULE, "CTX103"})
    at = [(f.rule, f.line) for f in out.findings if f.path == "app/pipeline.py"]
    assert at == [("CTX103", 16)]


# The release that writes its declarations onto the fields at the end of
# resolution (sglang 0.5.17's `materialize_declarations`).
MATERIALISE = """

def materialize(server_args) -> None:
    for decided in getattr(server_args, STASH):
        for name, value in decided.items():
            setattr(server_args, name, value)
"""


def test_where_declarations_are_written_onto_the_fields_the_message_says_so(
    project: Path,
) -> None:
    record = RUNTIME["specrt/record.py"].replace(
        "        resolve(self)\n",
        "        resolve(self)\n        from specrt.resolution import materialize\n\n"
        "        materialize(self)\n",
    )
    resolution_py = RUNTIME["specrt/resolution.py"] + MATERIALISE
    files = {**DECIDING, "specrt/record.py": record, "specrt/resolution.py": resolution_py}
    held = "\n        def chunk_again(self) -> int:\n            return self.server_args.chunked_prefill_size\n"
    case = textwrap.dedent(WHOLE_OBJECT + held)
    write(project, {**files, "app/case.py": case})
    out = run_engine(project, select={RULE})
    sets = out.program.sets[RULE]
    assert sets[MATERIALISER] == ["specrt.resolution.materialize"]
    found = {f.scope: f.message for f in out.findings if f.path == "app/case.py"}
    # the record holds resolution's decision for a field declared (a keyword, a
    # table key, a pipeline write) and never overridden: a parameter read of it
    # answers as the bag does, and keeps the supplied-instance contract
    assert sorted(sets[APART]) == [
        "app/case.py:15 budget `max_running_requests`",
        "app/case.py:23 Worker.__init__ `tp_size`",
        "app/case.py:29 Worker.launch `tp_size`",
        "app/case.py:3 init_groups `tp_size`",
        "app/case.py:6 chunk `chunked_prefill_size`",
        "app/case.py:9 window `context_length`",
    ]
    assert sorted(found) == [
        "Worker.chunk_again",
        "Worker.size_again",
        "path",
        "width",
    ]
    # an object holding the record is reported whatever the field (the design
    # moves those reads to the bags); an overridden field is reported as before
    assert found["Worker.chunk_again"].endswith(
        "resolution's decision written onto the field, which a post-publish override passes by"
    )
    assert found["width"].endswith(
        "the startup record, which a post-publish override of it passes by"
    )
    assert "raw input" not in " ".join(found.values())


def test_a_pipeline_read_before_the_materialiser_is_not_kept_apart(project: Path) -> None:
    """Inside resolution the materialiser has not run yet: the field is the raw
    input there, so a parameter read of a declared field stays a finding (the
    view is its remedy) where CTX103 cannot take it (no bag accessors derived)."""
    record = RUNTIME["specrt/record.py"].replace(
        "        resolve(self)\n",
        "        resolve(self)\n        from specrt.resolution import materialize\n\n"
        "        materialize(self)\n",
    )
    pipeline = DECIDING["app/pipeline.py"].replace(
        "    fixed = TABLE", "    wide(server_args)\n    fixed = TABLE"
    ) + ("\n\ndef wide(server_args) -> bool:\n    return server_args.chunked_prefill_size > 1\n")
    context = (
        "def get_context() -> object:\n    return object()\n\n\n"
        "def publish(server_args, *, role: str) -> None:\n    pass\n"
    )
    files = {
        **DECIDING,
        "specrt/record.py": record,
        "specrt/resolution.py": RUNTIME["specrt/resolution.py"] + MATERIALISE,
        "specrt/context.py": context,
        "app/pipeline.py": pipeline,
    }
    write(project, files)
    out = run_engine(project, select={RULE, "CTX103"})
    assert out.program.sets[RULE][MATERIALISER] == ["specrt.resolution.materialize"]
    (found,) = [f for f in out.findings if f.path == "app/pipeline.py"]
    assert (found.rule, found.line, found.scope) == (RULE, 16, "wide")
    assert found.details.startswith("Declared at app/pipeline.py:7.")
    assert "Inside resolution (reached from" in found.details


def test_a_publish_on_some_paths_only_is_named_nowhere_below(project: Path) -> None:
    """A publish under a guard is no publish on every path (issue 36, htri17's
    bug 1): sglang 0.5.17's draft workers build a `ModelRunner` with
    `is_draft_worker=True`, and it publishes only `if not self.is_draft_worker`;
    the hint named that call "publishes at line N" and sent the read below it.
    htri23's launcher shape: the read decides the branch that publishes (one
    path starts a child process instead), so "read below line N" cannot be
    followed. Either way the hint says what is known, with no line."""
    write(
        project,
        {
            "app/runner.py": (
                "from specrt.context import publish\n\n\n"
                "class Runner:\n"
                "    def __init__(self, server_args, is_draft: bool = False) -> None:\n"
                "        if not is_draft:\n"
                "            publish(server_args, role='scheduler')\n"
            ),
            "app/draft.py": (
                "from app.runner import Runner\n\n\n"
                "class DraftWorker:\n"
                "    def __init__(self, server_args) -> None:\n"
                "        self.server_args = server_args\n"
                "        self.n = server_args.tp_size\n"
                "        self.runner = Runner(server_args, is_draft=True)\n"
            ),
            "app/launch.py": (
                "from multiprocessing import Process\n\n"
                "from specrt.context import publish\n\n\n"
                "def work(server_args) -> None:\n"
                "    publish(server_args, role='scheduler')\n\n\n"
                "def main(server_args) -> None:\n"
                "    if server_args.model_path:\n"
                "        print('x')\n"
                "    if server_args.tp_size == 1:\n"
                "        work(server_args)\n"
                "    else:\n"
                "        Process(target=work, args=(server_args,)).start()\n\n\n"
                "if __name__ == '__main__':\n"
                "    main(object())\n"
            ),
        },
    )
    found = {(f.path, f.line): f for f in run_engine(project, select={RULE}).findings}
    draft, model, width = (
        found[("app/draft.py", 7)],
        found[("app/launch.py", 11)],
        found[("app/launch.py", 13)],
    )
    for f in (draft, model, width):
        assert "publishes at line" not in f.details and "below line" not in f.details, f.details
    # the draft worker: no way in the graph can follow; the leaf with when it answers
    assert draft.details.startswith("Read get_parallel().tp_size once the process"), draft.details
    # the launcher: nothing has published on any path into the reads
    for f in (model, width):
        assert f.details.startswith("No publish precedes this read in `main`"), f.details
    # the same publish on every path is still named, with its line
    write(
        project,
        {
            "app/runner.py": (
                "from specrt.context import publish\n\n\n"
                "class Runner:\n"
                "    def __init__(self, server_args, is_draft: bool = False) -> None:\n"
                "        publish(server_args, role='scheduler')\n"
            )
        },
    )
    found = {(f.path, f.line): f for f in run_engine(project, select={RULE}).findings}
    assert found[("app/draft.py", 7)].details.startswith(
        "`DraftWorker.__init__` publishes at line 8, after this read"
    ), found[("app/draft.py", 7)].details


@pytest.mark.parametrize(
    ("call", "line"),
    [
        ("Runner(server_args)", 8),  # the guard's literal default: it publishes
        ("Runner(server_args, False)", 8),
        ("kw = dict(server_args=server_args)\n        self.runner = Stub(**kw)", 9),
        ("Runner(server_args, is_draft=True)", None),  # sglang's draft workers
        ("Runner(server_args, is_draft=bool(server_args))", None),  # cannot tell
    ],
    ids=["default", "positional-false", "forwarded-dict", "keyword-true", "unknown-value"],
)
def test_a_guarded_publish_is_named_where_the_call_settles_its_guard(
    project: Path, call: str, line: int | None
) -> None:
    """The ordered walk CTX301 takes (issue 36, hpub2): the publish under
    `if not self.is_draft:` is "publishes at line N" where the call makes the
    guard true (a literal or a literal default, also through a kwargs dict and
    a subclass forwarding `*args, **kwargs`), and nowhere where it makes it false
    or cannot tell."""
    runner = (
        "from specrt.context import publish\n\n\n"
        "class Runner:\n"
        "    def __init__(self, server_args, is_draft: bool = False) -> None:\n"
        "        self.is_draft = is_draft\n"
        "        if not self.is_draft:\n"
        "            publish(server_args, role='scheduler')\n\n\n"
        "class Stub(Runner):\n"
        "    def __init__(self, *args, **kwargs) -> None:\n"
        "        super().__init__(*args, **kwargs)\n"
    )
    worker = (
        "from app.runner import Runner, Stub\n\n\n"
        "class Worker:\n"
        "    def __init__(self, server_args) -> None:\n"
        "        self.server_args = server_args\n"
        "        self.n = server_args.tp_size\n"
        f"        self.runner = {call}\n"
    )
    write(project, {"app/runner.py": runner, "app/worker.py": worker})
    found = {(f.path, f.line): f for f in run_engine(project, select={RULE}).findings}
    details = found[("app/worker.py", 7)].details
    if line is None:
        assert "publishes at line" not in details and "below line" not in details, details
    else:
        assert details.startswith(f"`Worker.__init__` publishes at line {line}, after this read")


LAUNCHER = """
    from specrt.record import ServerArgs
    from specrt.resolution import declare_resolution

    def launch(server_args) -> int:
        size = server_args.chunked_prefill_size  # before this function declares on it
        declare_resolution(server_args, "launch", context_length=size)
        return server_args.chunked_prefill_size  # expect (after the declaration)

    def relaunch(server_args, other: ServerArgs) -> int:
        declare_resolution(server_args, "launch", chunked_prefill_size=1)
        size = server_args.chunked_prefill_size  # expect (declared above the read)
        wide = other.dp_size  # expect (another record: nothing resolves it here)
        declare_resolution(server_args, "again", context_length=size)
        return size + wide
    """
# sglang 0.5.23: `__post_init__` leaves resolution to `resolve_once`, which the
# launcher calls on the record it was handed
RESOLVE_ONCE = RUNTIME["specrt/record.py"].replace(
    "        resolve(self)\n        self._check()\n",
    "\n    def resolve_once(self) -> None:\n"
    "        from app.pipeline import resolve\n\n"
    "        resolve(self)\n",
)


def test_a_read_before_its_function_resolves_the_record_is_launcher_stage(
    project: Path,
) -> None:
    """sglang 0.5.23's `launch_server.run_server` and `benchmark/one_batch.py`
    read the handed record, then declare on it or call `resolve_once()`: that
    is launcher-stage resolution ("resolution, not mutation"), where no bag
    exists and a view answers the raw field too, so the read is kept apart. A
    read after the resolving call, after a declaration of the field in the same
    function, or off another parameter, is still reported."""
    assert_case(project, RULE, LAUNCHER, extra=DECIDING)
    sets = run_engine(project, select={RULE}).program.sets[RULE]
    assert sets[LAUNCHER_SET] == ["app/case.py:5 launch `chunked_prefill_size`"]
    source = """
        def run_server(server_args) -> int:
            if server_args.chunked_prefill_size > 1:
                print("chunked")
            server_args.resolve_once()
            return server_args.chunked_prefill_size  # expect
        """
    assert_case(project, RULE, source, extra={**DECIDING, "specrt/record.py": RESOLVE_ONCE})
    sets = run_engine(project, select={RULE}).program.sets[RULE]
    assert sets[LAUNCHER_SET] == ["app/case.py:2 run_server `chunked_prefill_size`"]


ROLES = {
    **CONVENTION,
    "app/control.py": """\
from specrt.context import get_context, publish


def scheduler_main(server_args) -> int:
    publish(server_args, role="scheduler")
    scale()
    return shared(server_args)


def scale() -> None:
    get_context().override("scale", dp_size=2)


def shared(server_args) -> int:
    return server_args.dp_size
""",
}


def test_a_field_overridden_only_in_another_process_is_kept_apart(project: Path) -> None:
    """sglang 0.5.17's encode server reads `server_args.dp_size` in its own
    `launch_server`, and every override of `dp_size` runs in a scheduler
    process: "bags do not cross a process boundary", so no override reaches the
    encoder's process. A read in a function the overriding role runs too is
    still reported, and so is one no role reaches (not claimed)."""
    source = """
        from specrt.context import publish

        def encoder_main(server_args) -> int:
            width = server_args.dp_size  # the encoder's process: no override there
            publish(server_args, role="encoder")
            return width

        def nowhere(server_args) -> int:
            return server_args.dp_size  # expect (no role reaches it)
        """
    assert_case(project, RULE, source, extra=ROLES)
    out = run_engine(project, select={RULE})
    assert [(f.path, f.line) for f in out.findings if f.path == "app/control.py"] == [
        ("app/control.py", 15)
    ]
    assert out.program.sets[RULE][ELSEWHERE_SET] == ["app/case.py:4 encoder_main `dp_size`"]


def test_an_override_in_a_method_run_by_dispatch_runs_where_its_object_is_built(
    project: Path,
) -> None:
    """sglang 0.5.17's `ModelRunner._finalize_scale_up` overrides `dp_size`; it is
    reached from `ModelRunner.forward`, which nothing the call graph follows
    calls: it runs where the runner is built, in the scheduler. Without that
    class the override's role is not known, and the read is reported."""
    control = (
        ROLES["app/control.py"]
        .replace(
            "    scale()\n",
            "    Runner()\n",
        )
        .replace(
            "def scale() -> None:\n",
            "class Runner:\n    def __init__(self) -> None:\n        pass\n\n"
            "    def forward(self) -> None:\n        self.scale()\n\n"
            "    def scale(self) -> None:\n",
        )
    )
    control = control.replace("    get_context().override", "        get_context().override")
    source = """
        from specrt.context import publish

        def encoder_main(server_args) -> int:
            width = server_args.dp_size  # the encoder's process: no override there
            publish(server_args, role="encoder")
            return width
        """
    assert_case(project, RULE, source, extra={**ROLES, "app/control.py": control})
    built_nowhere = control.replace("    Runner()\n", "")
    assert_case(
        project,
        RULE,
        source.replace("# the encoder's process: no override there", "# expect"),
        extra={**ROLES, "app/control.py": built_nowhere},
    )


def test_a_worker_constructor_keeps_its_parameter_reads_a_helpers_does_not(
    project: Path,
) -> None:
    """The design's per-runner text names the process's workers ("every worker
    (`TpModelWorker`, the draft workers) is handed the same instance the
    process published, so a bag leaf is the decision"): a parking constructor
    that builds what publishes (0.5.17's `TpModelWorker.__init__` builds the
    `ModelRunner`) keeps its parameter reads reported whatever the field; a
    helper's parking constructor (`ExpertBackupClient.__init__`) reads the
    parameter as a whole-object pass."""
    source = """
        from specrt.context import publish

        class Runner:
            def __init__(self, server_args) -> None:
                publish(server_args, role="scheduler")

        class Worker:
            def __init__(self, server_args) -> None:
                self.server_args = server_args
                self.size = server_args.tp_size  # expect
                self.runner = Runner(server_args)

        class Helper:
            def __init__(self, server_args) -> None:
                self.server_args = server_args
                self.size = server_args.tp_size  # a helper: kept apart
        """
    assert_case(project, RULE, source, extra=DECIDING)


def test_a_worker_interfaces_other_implementation_keeps_its_parameter_reads(
    project: Path,
) -> None:
    """sglang 0.5.17's `NGRAMWorker` is a `BaseSpecWorker` like `EAGLEWorkerV2`,
    handed the record the same way, but drafts from a CPU corpus and builds no
    runner: its constructor reaches no publish. The design names it anyway
    ("the draft workers in `speculative/`"), so it is a worker, not a helper. A
    class sharing no base with a worker stays a helper."""
    source = """
        from specrt.context import publish

        class Runner:
            def __init__(self, server_args) -> None:
                publish(server_args, role="scheduler")

        class BaseSpec:
            pass

        class Eagle(BaseSpec):
            def __init__(self, server_args) -> None:
                self.server_args = server_args
                self.runner = Runner(server_args)

        class Ngram(BaseSpec):
            def __init__(self, server_args) -> None:
                self.server_args = server_args
                self.size = server_args.tp_size  # expect

        class Helper:
            def __init__(self, server_args) -> None:
                self.server_args = server_args
                self.size = server_args.tp_size  # a helper: kept apart
        """
    assert_case(project, RULE, source, extra=DECIDING)
