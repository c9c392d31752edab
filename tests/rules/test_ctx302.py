"""CTX302 role-namespace: the role table derived from the runtime (inline or imported,
bare or wrapped), each entry's role from its publish, the reach over the call graph
(helpers, methods, callers of a publishing helper), reads outside a restricted
role's set reported at the read with the path, undeclared roles, and no table."""

from __future__ import annotations

from pathlib import Path

from helpers import run_engine, write
from rulecase import assert_case

from ctxlint.engine.registry import load_rules

RULE = "CTX302"

# specrt's table (tests/fixtures/specrt/specrt/context.py): scheduler and tokenizer
# read the full tree, detokenizer {model}, dp_controller {exec, parallel}.
HELPERS = """\
from specrt.context import get_exec, get_model, get_schedule


def model_name() -> str:
    return get_model().name


def batch() -> int:
    return get_schedule().max_batch  # the one read under two paths


def backend() -> str:
    return get_exec().backend


class Stream:
    def __init__(self) -> None:
        self.limit = self.size()

    def size(self) -> int:
        return batch()
"""


def test_reads_outside_the_set_along_every_call_shape(project: Path) -> None:
    assert_case(
        project,
        RULE,
        """
        from multiprocessing import Process

        from specrt.context import get_exec, get_model, get_parallel, get_schedule, publish
        from specrt.record import ServerArgs

        from app import helpers


        def run_detokenizer_process(server_args: ServerArgs) -> None:
            get_exec().backend  # before the publish: CTX301's, not a role's read
            publish(server_args, role="detokenizer")
            helpers.model_name()  # model: in the set
            get_schedule().max_batch  # expect
            helpers.Stream()
            Process(target=run_scheduler_process, args=(server_args,)).start()


        def run_dp_controller_process(server_args: ServerArgs) -> None:
            publish(server_args, role="dp_controller")
            get_parallel().tp_size + get_exec().dp_size  # both in the set
            get_model().name  # expect
            helpers.backend()


        def run_scheduler_process(server_args: ServerArgs) -> None:  # its own role, full tree
            publish(server_args, role="scheduler")
            get_model().name + helpers.backend() + str(helpers.batch())
        """,
        extra={"app/helpers.py": HELPERS},
    )
    out = run_engine(project, select={RULE})
    helper = [f for f in out.findings if f.path == "app/helpers.py"]
    # the shared helper read: once for the detokenizer, at the read, by the shortest path
    # (the message names the entry; the path of calls is the details' first line)
    assert [(f.line, f.message, f.details.splitlines()[0]) for f in helper] == [
        (
            9,
            "role 'detokenizer' reads namespace 'schedule' outside its set {model} "
            "(from run_detokenizer_process)",
            "run_detokenizer_process -> Stream.__init__ -> Stream.size -> batch -> get_schedule()",
        )
    ]
    assert helper[0].data == {"role": "detokenizer", "namespace": "schedule"}


def test_callables_handed_on_run_in_the_process(project: Path) -> None:
    assert_case(
        project,
        RULE,
        """
        import threading
        from concurrent.futures import ThreadPoolExecutor

        from specrt.context import get_exec, get_schedule, publish
        from specrt.record import ServerArgs


        def _report() -> None:
            print(get_exec().backend)  # expect


        def _unused() -> None:
            print(get_exec().backend)


        class Detokenizer:
            def __init__(self) -> None:
                threading.Thread(target=self._watch, daemon=True).start()

            def _watch(self) -> None:
                print(get_schedule().max_batch)  # expect


        def run_detokenizer_process(server_args: ServerArgs) -> None:
            publish(server_args, role="detokenizer")
            Detokenizer()
            ThreadPoolExecutor(1).submit(_report)
        """,
    )


def test_a_caller_of_a_publishing_helper_runs_on_under_its_role(project: Path) -> None:
    assert_case(
        project,
        RULE,
        """
        from specrt.context import get_exec, get_schedule, publish
        from specrt.record import ServerArgs


        def _publish_detokenizer(server_args: ServerArgs) -> None:
            publish(server_args, role="detokenizer")


        def run_detokenizer_process(server_args: ServerArgs) -> None:
            get_exec().backend  # before the helper publishes
            _publish_detokenizer(server_args)
            get_schedule().max_batch  # expect


        def publish_somewhere(server_args: ServerArgs, role: str) -> None:
            publish(server_args, role=role)  # computed: attributed to no role
            get_schedule().max_batch
        """,
    )


def test_undeclared_roles_are_reported_at_the_publish(project: Path) -> None:
    assert_case(
        project,
        RULE,
        """
        from specrt.context import get_schedule, publish
        from specrt.record import ServerArgs


        def main(server_args: ServerArgs) -> None:
            publish(server_args, role="launcher")  # expect
            get_schedule().max_batch  # the launcher role restricts nothing: unknown
            publish(server_args, role="tokenizer")
        """,
    )


def test_the_table_imported_into_the_runtime_module_and_its_sets(project: Path) -> None:
    context = project / "specrt" / "context.py"
    text = context.read_text()
    table = text[text.index("ROLE_NAMESPACE_SETS = {") :]
    context.write_text(
        text.replace(table, "").replace(
            "import warnings\n",
            "import warnings\n\nfrom specrt.roles import ROLE_NAMESPACE_SETS\n",
            1,
        )
    )
    write(
        project,
        {
            "specrt/roles.py": (
                "from types import MappingProxyType\n\n"
                "ROLE_NAMESPACE_SETS = MappingProxyType(\n"
                '    {"scheduler": None, "detokenizer": frozenset(["model", "exec"]), '
                '"encoder": set()}\n'
                ")\n"
                'NOT_A_TABLE = {"a": 1}\n'
            ),
            "app/detok.py": (
                "from specrt.context import get_exec, get_schedule, publish\n\n\n"
                "def run_detokenizer_process(server_args) -> None:\n"
                '    publish(server_args, role="detokenizer")\n'
                "    get_exec().backend\n"
                "    get_schedule().max_batch\n"
            ),
        },
    )
    out = run_engine(project, select={RULE})
    assert [(f.path, f.line) for f in out.findings if f.rule == RULE] == [("app/detok.py", 7)]
    sets = out.program.sets[RULE]
    assert sets["role table"] == {
        "detokenizer": ["exec", "model"],
        "encoder": [],
        "scheduler": "(full tree)",
    }
    assert sets["role table source"] == "specrt.roles.ROLE_NAMESPACE_SETS (specrt/roles.py:3)"
    assert sets["restricted roles"] == ["detokenizer", "encoder"]
    assert sets["role entries"] == [
        "detokenizer: app.detok.run_detokenizer_process (app/detok.py:5)"
    ]
    assert sets["roles without an entry"] == ["encoder", "scheduler"]
    assert sets["reach"] == {"detokenizer": ["exec", "schedule"]}
    assert sets["reach paths"] == {
        "detokenizer exec": "run_detokenizer_process -> get_exec() (app/detok.py:6)",
        "detokenizer schedule": "run_detokenizer_process -> get_schedule() (app/detok.py:7)",
    }
    rule = next(r for r in load_rules() if r.id == RULE)
    assert rule.partial(sets) is None


def test_no_table_is_partial_and_reports_nothing(project: Path) -> None:
    context = project / "specrt" / "context.py"
    text = context.read_text()
    context.write_text(text[: text.index("\n\n# The roles processes publish under")] + "\n")
    write(
        project,
        {
            "app/detok.py": (
                "from specrt.context import get_schedule, publish\n\n\n"
                "def run(server_args) -> None:\n"
                '    publish(server_args, role="nobody")\n'
                "    get_schedule().max_batch\n"
            )
        },
    )
    out = run_engine(project, select={RULE})
    assert [f for f in out.findings if f.rule == RULE] == []
    sets = out.program.sets[RULE]
    assert sets["roles published"] == ["nobody"]
    rule = next(r for r in load_rules() if r.id == RULE)
    assert rule.partial(sets) == (
        "no role table: specrt.context defines or imports no mapping from role names to a "
        "set of namespaces or None"
    )
    # a tree before roles (no publish names one) has nothing to check: not partial
    assert rule.partial({**sets, "roles published": []}) is None


def test_restricted_roles_no_entry_publishes_are_listed_not_partial(project: Path) -> None:
    write(
        project,
        {
            "app/sched.py": (
                "from specrt.context import get_schedule, publish\n\n\n"
                "def run(server_args) -> None:\n"
                '    publish(server_args, role="scheduler")\n'
                "    get_schedule().max_batch\n"
            )
        },
    )
    out = run_engine(project, select={RULE})
    sets = out.program.sets[RULE]
    assert sets["roles without an entry"] == ["detokenizer", "dp_controller", "tokenizer"]
    assert sets["reach"] == {"scheduler": ["schedule"]}
    rule = next(r for r in load_rules() if r.id == RULE)
    assert rule.partial(sets) is None
