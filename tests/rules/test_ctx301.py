"""CTX301 publish-before-read: the derivations themselves (an entry through every
shape, a publisher reaching nothing, a stale pin), multi-level chains, and the
negatives (reads after publish, assert_published constructors, lambdas)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from conftest import FIXTURE
from helpers import CliResult, cli, run_engine, write
from rulecase import assert_case

from ctxlint.config.settings import find_config, load_config
from ctxlint.engine.registry import load_rules
from ctxlint.engine.run import Engine, RunOutput
from ctxlint.rules.ctx301_publish_before_read import NO_READ

RULE = "CTX301"


def run(project: Path, files: dict[str, str], pinned: dict[str, Any] | None = None) -> RunOutput:
    write(project, {k: textwrap.dedent(v).lstrip("\n") for k, v in files.items()})
    rules = load_rules()
    config = load_config(
        find_config(project),  # type: ignore[arg-type]
        rule_ids=[r.id for r in rules],
        rule_options={k: v for r in rules for k, v in r.options.items()},
    )
    out = Engine(
        config, rules, jobs=1, use_cache=False, selected={RULE}, pinned={RULE: pinned or {}}
    ).run()
    assert not out.errors, out.errors
    return out


def here(*args: str, cwd: Path | None = None) -> CliResult:
    """`ctxlint ARGS` in this process, from `cwd` (default: the working folder): the
    command's output is asserted, not its process (helpers.cli)."""
    return cli(*args, cwd=Path.cwd() if cwd is None else cwd)


def entries(out: RunOutput) -> dict[str, str]:
    """Entry qualname -> its roles, from the derived set."""
    found = {}
    for line in out.program.sets[RULE]["process entries"]:
        name, _, roles = line.partition(" (")
        found[name] = roles.rstrip(")")
    return found


def findings(out: RunOutput) -> list[tuple[str, int, str]]:
    return sorted((f.path, f.line, f.message) for f in out.findings if f.rule == RULE)


# -- entry derivation: every shape ----------------------------------------------------
SHAPES = {
    "publish-caller": (
        """
        from specrt.context import publish

        def run_scheduler_process(server_args):
            publish(server_args, role="scheduler")
        """,
        "app.case.run_scheduler_process",
        "publishes",
    ),
    "publish-through-a-module-alias": (
        """
        import specrt.context as rc

        def run_tokenizer(server_args):
            rc.publish(server_args, role="tokenizer")
        """,
        "app.case.run_tokenizer",
        "publishes",
    ),
    "publish-through-a-same-module-helper": (
        """
        from specrt.context import publish

        def _pub(server_args):
            publish(server_args, role="scheduler")

        def run_dp_controller(server_args):
            _pub(server_args)
        """,
        "app.case.run_dp_controller",
        "publishes",
    ),
    "publishing-constructor": (
        """
        def helper():
            pass

        class Daemon:
            def __init__(self, server_args):
                from specrt.context import publish
                publish(server_args, role="weight_cache")
        """,
        "app.case.Daemon.__init__",
        "publishes",
    ),
    "multiprocessing-Process": (
        """
        import multiprocessing

        def worker(sa):
            pass

        def launch(sa):
            multiprocessing.Process(target=worker, args=(sa,)).start()
        """,
        "app.case.worker",
        "process target",
    ),
    "mp-Process-local-alias": (
        """
        import multiprocessing as mp

        def a(sa):
            pass

        def b(sa):
            pass

        def launch(sa, flag):
            target = a if flag else b
            target = a
            p = mp.Process(target=target, args=(sa,))
        """,
        "app.case.a",
        "process target",
    ),
    "spawn-context-Process-partial": (
        """
        import functools
        import multiprocessing as mp

        def worker(sa, rank):
            pass

        def launch(sa):
            ctx = mp.get_context("spawn")
            ctx.Process(target=functools.partial(worker, sa), args=(0,)).start()
        """,
        "app.case.worker",
        "process target",
    ),
    "from-import-Process-param-default": (
        """
        from multiprocessing import Process

        def worker(sa):
            pass

        def launch(sa, run_func=worker):
            Process(target=run_func, args=(sa,)).start()
        """,
        "app.case.worker",
        "process target",
    ),
    "Process-target-parked-on-self": (
        """
        import multiprocessing as mp

        def run_scheduler(sa):
            pass

        class Controller:
            def __init__(self, run_func=run_scheduler):
                self.run_func = run_func

            def launch(self, sa):
                mp.Process(target=self.run_func, args=(sa,)).start()
        """,
        "app.case.run_scheduler",
        "process target",
    ),
    "ProcessPoolExecutor-with-submit": (
        """
        from concurrent.futures import ProcessPoolExecutor

        def task(sa):
            pass

        def bench(sa):
            with ProcessPoolExecutor(2) as pool:
                pool.submit(task, sa)
        """,
        "app.case.task",
        "pool task",
    ),
    "ProcessPoolExecutor-on-self": (
        """
        import concurrent.futures

        def task(sa):
            pass

        class Bench:
            def __init__(self):
                self.pool = concurrent.futures.ProcessPoolExecutor(2)

            def go(self, sa):
                return self.pool.submit(task, sa)
        """,
        "app.case.task",
        "pool task",
    ),
    "ProcessPoolExecutor-direct": (
        """
        from concurrent.futures import ProcessPoolExecutor

        def task(sa):
            pass

        def bench(sa):
            ProcessPoolExecutor().submit(task, sa)
        """,
        "app.case.task",
        "pool task",
    ),
    "ray-remote-decorated-actor": (
        """
        import ray

        @ray.remote
        class SchedulerActor:
            def __init__(self, sa):
                pass
        """,
        "app.case.SchedulerActor.__init__",
        "ray actor",
    ),
    "ray-remote-with-options-inherited-init": (
        """
        import ray

        class Base:
            def __init__(self, sa):
                pass

        @ray.remote(num_gpus=1)
        class Actor(Base):
            pass
        """,
        "app.case.Base.__init__",
        "ray actor",
    ),
    "ray-remote-call-on-class": (
        """
        from ray import remote

        class EncoderActor:
            def __init__(self, sa):
                pass

        Handle = remote(EncoderActor)
        Handle2 = remote(num_cpus=1)(EncoderActor)
        """,
        "app.case.EncoderActor.__init__",
        "ray actor",
    ),
    "ray-task": (
        """
        import ray

        def outer():
            @ray.remote(num_cpus=0)
            def get_node_ip():
                return 1
            return get_node_ip
        """,
        "app.case.outer.get_node_ip",
        "ray",
    ),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_an_entry_is_derived_from_each_shape(project: Path, shape: str) -> None:
    source, qual, role = SHAPES[shape]
    out = run(project, {"app/case.py": source})
    found = entries(out)
    assert qual in found, found
    assert found[qual].startswith(role), found[qual]


def test_a_thread_or_unknown_submit_is_not_an_entry(project: Path) -> None:
    out = run(
        project,
        {
            "app/case.py": """
            import threading
            from concurrent.futures import ThreadPoolExecutor

            def task():
                pass

            def go(executor):
                threading.Thread(target=task).start()
                with ThreadPoolExecutor() as pool:
                    pool.submit(task)
                executor.submit(task)
            """
        },
    )
    assert entries(out) == {}


def test_a_cross_module_target_resolves_through_imports_and_reexports(project: Path) -> None:
    out = run(
        project,
        {
            "app/launch.py": """
            import multiprocessing as mp
            from app import workers

            def launch(sa):
                mp.Process(target=workers.run_encoder, args=(sa,)).start()
            """,
            "app/workers/__init__.py": "from app.workers.encoder import run_encoder\n",
            "app/workers/encoder.py": """
            def run_encoder(sa):
                pass
            """,
        },
    )
    assert "app.workers.encoder.run_encoder" in entries(out)


def test_only_the_modules_a_target_runs_through_are_parsed(project: Path) -> None:
    """An unresolved target asks for the modules its name (and the re-exports
    it passes) runs through, never for every file defining the same name."""
    out = run(
        project,
        {
            "app/launch.py": """
            import multiprocessing as mp
            from app import workers

            def launch(sa):
                mp.Process(target=workers.run_encoder, args=(sa,)).start()
            """,
            "app/workers/__init__.py": "from app.workers.encoder import run_encoder\n",
            "app/workers/encoder.py": "def run_encoder(sa):\n    pass\n",
            "app/elsewhere.py": "def run_encoder(sa):\n    pass\n",
        },
    )
    assert "app.workers.encoder.run_encoder" in entries(out)
    assert {"app/workers/__init__.py", "app/workers/encoder.py"} <= set(out.program.files)
    assert "app/elsewhere.py" not in out.program.files


# -- publishers reaching nothing: listed and pinned ----------------------------------------
SILENT = {
    "app/case.py": """
    from specrt.context import get_exec, publish

    def set_global_server_args_for_scheduler(sa):
        publish(sa, role="scheduler")

    def run_scheduler(sa):
        publish(sa, role="scheduler")
        return get_exec()
    """
}


def test_a_publisher_reaching_no_read_is_listed_and_pinned(project: Path) -> None:
    out = run(project, SILENT)
    silent = "app.case.set_global_server_args_for_scheduler"
    assert out.program.sets[RULE]["publishers reaching no bag read"] == [silent]
    assert out.pins == {RULE: {silent: NO_READ}}
    # unpinned, it is a finding on its publish
    assert [(f.line, f.snippet) for f in out.findings] == [(4, "pin " + silent)]
    assert "not pinned" in out.findings[0].message
    # pinned, nothing to report
    assert run(project, SILENT, pinned={silent: NO_READ}).findings == []


def test_a_pin_whose_function_now_reads_is_reported(project: Path) -> None:
    files = {
        "app/case.py": """
        from specrt.context import get_exec, publish

        def quiet(sa):
            publish(sa, role="scheduler")
            get_exec()
        """
    }
    out = run(project, files, pinned={"app.case.quiet": NO_READ})
    assert [f.snippet for f in out.findings] == ["pin app.case.quiet"]
    assert "was pinned as" in out.findings[0].message and "is gone" in out.findings[0].message


def test_a_stale_pin_naming_a_function_that_no_longer_exists_is_reported(
    project: Path,
) -> None:
    pinned = {
        "app.case.set_global_server_args_for_scheduler": NO_READ,
        "app.case.removed_entry": NO_READ,
    }
    out = run(project, SILENT, pinned=pinned)
    assert [f.snippet for f in out.findings] == ["pin app.case.removed_entry"]
    assert "app.case.removed_entry was pinned" in out.findings[0].message
    assert "is gone" in out.findings[0].message


def test_a_derivation_that_finds_nothing_fails_against_its_pins(project: Path) -> None:
    """The design's failure mode: an entry list naming code that no longer exists
    passes green forever. Here every pinned publisher is gone and nothing else
    publishes: the stale pins are still findings, on any remaining entry."""
    files = {
        "app/case.py": """
        from specrt.context import get_exec, publish

        def run(sa):
            publish(sa, role="scheduler")
            get_exec()
        """
    }
    out = run(project, files, pinned={"app.case.old_shim": NO_READ})
    assert [f.snippet for f in out.findings] == ["pin app.case.old_shim"]


def test_the_last_pinned_publisher_removed_is_reported_at_the_runtime(project: Path) -> None:
    """No publisher remains to anchor the stale pin: it is reported at the top of
    the runtime module, not dropped (a new user's trial passed `check --strict`
    after deleting the only publisher)."""
    files = {
        "app/case.py": """
        from specrt.context import get_exec

        def helper():
            return get_exec()
        """
    }
    out = run(project, files, pinned={"app.main.main": NO_READ})
    assert [(f.path, f.line, f.snippet) for f in out.findings] == [
        ("specrt/context.py", 1, "pin app.main.main")
    ]
    assert "app.main.main was pinned as" in out.findings[0].message


def test_baseline_update_records_the_pin_and_check_strict_passes(project: Path) -> None:
    write(project, {k: textwrap.dedent(v).lstrip("\n") for k, v in SILENT.items()})
    baseline = project / "ctx.json"
    args = ["--config", str(project / "pyproject.toml"), "--baseline", str(baseline)]
    # (the --baseline file is not there yet: check refuses it; the config's own is absent too)
    failing = here("check", "--strict", "--no-cache", "--select", RULE, *args[:2])
    assert failing.returncode == 1, failing.stdout + failing.stderr
    upd = here("baseline", "update", "--no-cache", *args)
    assert upd.returncode == 0, upd.stdout + upd.stderr
    # what it recorded is said: not "removed 0, added 0, kept 0" alone
    said = " ".join(upd.stdout.split())  # (the runner sets COLUMNS)
    assert said.endswith("removed 0, added 0, kept 0; pins: 1 added (CTX301 1)")
    assert json.loads(baseline.read_text())["pins"][RULE] == {
        "app.case.set_global_server_args_for_scheduler": NO_READ
    }
    ok = here("check", "--strict", "--no-cache", "--select", RULE, *args)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    sets = here("sets", "--no-cache", "--select", RULE, "--format", "json", *args)
    assert sets.returncode == 0, sets.stderr
    assert "set_global_server_args_for_scheduler" in sets.stdout


# -- chains ---------------------------------------------------------------------------
def test_a_multi_level_chain_across_modules_names_the_path(project: Path) -> None:
    out = run(
        project,
        {
            "app/entry.py": """
            from specrt.context import publish
            from app.sched import Scheduler

            def run_scheduler(sa):
                s = Scheduler(sa)
                publish(sa, role="scheduler")
                return s
            """,
            "app/sched.py": """
            from app import runner

            class Base:
                def __init__(self, sa):
                    self.setup()

            class Scheduler(Base):
                def __init__(self, sa):
                    super().__init__(sa)

                def setup(self):
                    self.worker = runner.Worker()
            """,
            "app/runner.py": """
            from app.model import load_model

            class Worker:
                def __init__(self, loader=load_model):
                    self.model = loader()
            """,
            "app/model.py": """
            from specrt.context import get_model

            def load_model():
                return get_model().model_path
            """,
        },
    )
    # the message names the read and the publish it precedes; the hops are details
    assert findings(out) == [
        (
            "app/entry.py",
            5,
            "get_model() at app/model.py:4 before publish at line 6: no bag exists there yet",
        )
    ]
    (finding,) = out.findings
    assert finding.details == (
        "path: run_scheduler -> Scheduler.__init__ -> Base.__init__ -> Scheduler.setup -> "
        "Worker.__init__ -> load_model -> get_model() (app/model.py:4)\n"
        "Read it after the publish, or take the value as an argument."
    )
    # SARIF carries them: the details, and the read as a related location
    sarif = here(
        "check", "--no-cache", "--select", RULE, "--format", "sarif",
        "--config", str(project / "pyproject.toml"),
    )  # fmt: skip
    doc = json.loads(sarif.stdout)
    schema = json.loads((Path(__file__).parents[1] / "data" / "sarif-2.1.0.json").read_text())
    assert not list(jsonschema.Draft4Validator(schema).iter_errors(doc))
    (result,) = doc["runs"][0]["results"]
    assert result["properties"]["details"] == finding.details
    (related,) = result["relatedLocations"]
    assert related["physicalLocation"]["artifactLocation"]["uri"].endswith("app/model.py")
    assert related["physicalLocation"]["region"] == {"startLine": 4}
    assert related["message"]["text"] == "get_model() read"


def test_the_middle_module_without_tokens_is_pulled_in_by_more_tokens(project: Path) -> None:
    out = run(
        project,
        {
            "app/entry.py": """
            from specrt.context import publish
            from app.middle import relay_config

            def run_detokenizer(sa):
                relay_config()  # expect
                publish(sa, role="detokenizer")
            """,
            # no bag accessor, publish, Process, submit or remote in this file
            "app/middle.py": """
            from app.leaf import read_leaf

            def relay_config():
                return read_leaf()
            """,
            "app/leaf.py": """
            from specrt.context import get_schedule

            def read_leaf():
                return get_schedule().chunked_prefill_size
            """,
        },
    )
    assert [(p, n) for p, n, _ in findings(out)] == [("app/entry.py", 5)]
    assert "relay_config -> read_leaf -> get_schedule()" in out.findings[0].details


def test_instances_and_self_attributes_are_followed(project: Path) -> None:
    assert_case(
        project,
        RULE,
        """
        from specrt.context import get_exec, get_memory, publish

        class Pool:
            def size(self):
                return get_memory().mem_fraction_static

        class Runner:
            def __init__(self):
                self.pool = Pool()

            def plan(self):
                return self.pool.size()

        def run(sa):
            r = Runner()
            r.plan()  # expect
            publish(sa, role="scheduler")
            r.plan()
        """,
    )


def test_reads_after_publish_and_in_uncalled_nested_code_are_fine(project: Path) -> None:
    assert_case(
        project,
        RULE,
        """
        from specrt.context import get_exec, get_parallel, publish

        def later():
            return get_parallel().tp_size

        def run(sa):
            def nested():
                return get_exec()
            callback = lambda: get_exec()
            publish(sa, role="scheduler")
            later()
            nested()
            return callback, get_exec()

        def run_called_nested(sa):
            def nested():
                return get_exec()
            nested()  # expect
            publish(sa, role="scheduler")
        """,
    )


def test_arguments_of_publish_run_before_it(project: Path) -> None:
    assert_case(
        project,
        RULE,
        """
        from specrt.context import get_parallel, publish

        def run(sa):
            publish(sa, role="scheduler", rank=get_parallel().tp_size)  # expect
            get_parallel()
        """,
    )


def test_a_callee_that_publishes_ends_the_walk(project: Path) -> None:
    assert_case(
        project,
        RULE,
        """
        from specrt.context import get_exec
        from app.shims import set_global_server_args_for_scheduler

        def bench(sa):
            set_global_server_args_for_scheduler(sa)
            return get_exec()

        def main(sa):
            import multiprocessing as mp
            mp.Process(target=bench, args=(sa,)).start()
        """,
        extra={
            "app/shims.py": """
            from specrt.context import get_exec, publish

            def set_global_server_args_for_scheduler(sa):
                publish(sa, role="scheduler")
                get_exec()
            """
        },
    )


def test_recursion_terminates(project: Path) -> None:
    assert_case(
        project,
        RULE,
        """
        from specrt.context import get_exec, publish

        def a(n):
            return b(n - 1) if n else get_exec()

        def b(n):
            return a(n)

        def run(sa):
            a(3)  # expect
            publish(sa, role="scheduler")
        """,
    )


def test_a_read_whose_handler_swallows_the_pre_publish_error_cannot_fail(
    project: Path,
) -> None:
    """SGLang 0.5.23's `is_symmetric_memory_enabled`: `try: return
    get_exec().comm.enable_symm_mem` / `except ValueError: return False`. Before
    publish the accessor raises ValueError, so a handler of it (or of a base, or a
    bare `except:`) that does not raise again answers its value instead; the walk
    goes on past such a read to one that can fail."""
    assert_case(
        project,
        RULE,
        """
        import builtins

        from specrt.context import get_exec, get_memory, get_model, publish

        def symm_enabled():
            try:
                return get_exec().comm.enable_symm_mem
            except ValueError:
                return False

        def any_base():
            try:
                get_exec()
            except (KeyError, Exception):
                pass
            try: get_memory()
            except: pass
            try:
                get_model()
            except builtins.BaseException as exc:
                print(exc)

        def then_unguarded():
            try:
                get_exec()
            except ValueError:
                pass
            return get_memory()

        def other_error():
            try:
                return get_exec()
            except KeyError:
                return None

        def raises_again():
            try:
                return get_exec()
            except ValueError as exc:
                raise RuntimeError("publish first") from exc

        def in_else_or_handler():
            try:
                pass
            except ValueError:
                get_model()
            else:
                get_exec()

        def nested_def_runs_unguarded():
            try:
                def later():
                    return get_exec()
            except ValueError:
                return None
            later()

        def run_guarded(sa):
            symm_enabled()
            any_base()
            publish(sa, role="scheduler")

        def run_unguarded(sa):
            then_unguarded()  # expect
            other_error()  # expect
            raises_again()  # expect
            in_else_or_handler()  # expect
            nested_def_runs_unguarded()  # expect
            publish(sa, role="scheduler")
        """,
    )


def test_a_publisher_reaching_only_a_guarded_read_still_reaches_a_read(project: Path) -> None:
    out = run(
        project,
        {
            "app/case.py": """
            from specrt.context import get_exec, publish

            def symm_enabled():
                try:
                    return get_exec().comm.enable_symm_mem
                except ValueError:
                    return False

            def set_global_server_args_for_scheduler(sa):
                publish(sa, role="scheduler")
                symm_enabled()
            """
        },
    )
    assert out.program.sets[RULE]["publishers reaching no bag read"] == []
    assert findings(out) == []


def _runtime_raising(raise_line: str, header: str = "") -> str:
    """The spec runtime with `config_bag`'s pre-publish failure replaced by `raise_line`
    ("" : it raises nothing), and `header` above it."""
    source = (FIXTURE / "specrt" / "context.py").read_text()
    old = '            raise ValueError(f"config namespace {name!r} not published")\n'
    assert old in source
    new = f"            {raise_line}\n" if raise_line else "            return None\n"
    return header + source.replace(old, new)


def test_a_guard_is_what_the_runtime_raises_before_publish_with_its_bases(project: Path) -> None:
    """The pre-publish error is derived from the runtime module (here its own
    `Unpublished(LookupError)`, defined in another module), not stated as
    ValueError: a handler of it (under any import name), or of a base (in the
    tree, or a builtin's MRO) guards the read; `except ValueError` no longer does."""
    assert_case(
        project,
        RULE,
        """
        from specrt import errors
        from specrt.errors import Unpublished as Aliased
        from specrt.context import get_exec, publish

        def own_class():
            try:
                return get_exec().comm
            except errors.Unpublished:
                return None

        def tree_base():
            try:
                return get_exec().comm
            except errors.Missing:
                return None

        def builtin_base():
            try:
                return get_exec().comm
            except LookupError:
                return None

        def under_another_name():
            try:
                return get_exec().comm
            except Aliased:
                return None

        def stated_value_error():
            try:
                return get_exec().comm
            except ValueError:
                return None

        def run_guarded(sa):
            own_class()
            tree_base()
            builtin_base()
            under_another_name()
            publish(sa, role="scheduler")

        def run_unguarded(sa):
            stated_value_error()  # expect
            publish(sa, role="scheduler")
        """,
        extra={
            "specrt/errors.py": """
            class Missing(LookupError):
                pass

            class Unpublished(Missing):
                pass
            """,
            "specrt/context.py": _runtime_raising(
                "raise Unpublished(name)", "from specrt.errors import Unpublished\n"
            ),
        },
    )


def test_no_handler_guards_a_read_whose_runtime_raises_nothing_found(project: Path) -> None:
    """Where the runtime's read path raises nothing the code shows, nothing is
    known to be caught: even `except BaseException:` leaves the read in the reach."""
    assert_case(
        project,
        RULE,
        """
        from specrt.context import get_exec, publish

        def swallow_all():
            try:
                return get_exec().comm
            except BaseException:
                return None

        def run(sa):
            swallow_all()  # expect
            publish(sa, role="scheduler")
        """,
        extra={"specrt/context.py": _runtime_raising("")},
    )


def test_a_guard_must_catch_every_class_the_read_path_raises(project: Path) -> None:
    """An accessor handing out an object built at import reads its leaves through
    the class's `__getattr__`: what it raises, itself or through its own methods
    (`self._read`), is each a pre-publish error to catch."""
    header = textwrap.dedent(
        """
        class Parallel:
            def __getattr__(self, name):
                if name.startswith("_"):
                    raise AttributeError(name)
                return self._read(name)

            def _read(self, name):
                if name == "moe_ep_size":
                    raise RuntimeError("derived width not available")
                raise ValueError("config namespace 'parallel' not published")


        _PARALLEL = Parallel()
        """
    )
    source = (FIXTURE / "specrt" / "context.py").read_text()
    old = 'def get_parallel() -> object:\n    return _CONTEXT.config_bag("parallel")\n'
    assert old in source
    runtime = source.replace(old, "def get_parallel() -> Parallel:\n    return _PARALLEL\n")
    assert_case(
        project,
        RULE,
        """
        from specrt.context import get_parallel, publish

        def value_error_only():
            try:
                return get_parallel().tp_size
            except ValueError:
                return 1

        def every_class():
            try:
                return get_parallel().tp_size
            except (AttributeError, RuntimeError, ValueError):
                return 1

        def run(sa):
            every_class()
            value_error_only()  # expect
            publish(sa, role="scheduler")
        """,
        extra={"specrt/context.py": runtime.replace("import warnings\n", header, 1)},
    )


# -- constructors ----------------------------------------------------------------------
def test_constructors(project: Path) -> None:
    assert_case(
        project,
        RULE,
        """
        from specrt.context import assert_published, get_exec, get_model, publish
        from specrt.record import ServerArgs

        class Unreached:
            def __init__(self, server_args):
                self.a = get_model().model_path  # expect

        class ThroughHelper:
            def __init__(self, args: ServerArgs):
                self.a = self._load()  # expect

            def _load(self):
                return get_model()

        class Asserts:
            def __init__(self, server_args):
                assert_published(server_args, role="scheduler")
                self.a = get_model()

        class ReadsBeforeAssert:
            def __init__(self, server_args):
                x = get_exec()  # expect
                assert_published(server_args, role="scheduler")

        class Reached:
            def __init__(self, server_args):
                self.a = get_model()

        class NoReads:
            def __init__(self, server_args):
                self.server_args = server_args

        class NotHandedTheRecord:
            # a layer built deep under a model loader: it cannot assert_published
            def __init__(self, hidden_size):
                self.tp = get_model()

        def run(server_args):
            publish(server_args, role="scheduler")
            Reached(server_args)
        """,
    )


def test_the_repo_example_server_derives_its_spawned_entries() -> None:
    """`examples/serving_app`: the launcher publishes (its process runs the HTTP
    server and the tokenizer manager), and each spawned target publishes before it
    reads; the entries are found through the spawn context."""
    from conftest import REPO

    # (one job: the files parsed here, where the suite's memo of facts serves them)
    res = here("sets", "--no-cache", "--select", RULE, "--format", "json", "--jobs", "1", cwd=REPO)
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    got = data[RULE]["process entries"]
    for name in ("run_scheduler_process", "run_detokenizer_process"):
        assert any(name in e and "process target" in e for e in got), got
    assert "examples.serving_app.launcher.main (publishes)" in got


def test_a_constructor_handed_around_by_name_counts_as_reached(project: Path) -> None:
    """Registries and factories construct where no call names the class: a
    reference from code a publishing entry runs (or from the import-time code of
    a module it enters) is enough to keep the constructor check quiet."""
    assert_case(
        project,
        RULE,
        """
        from specrt.context import get_model, get_spec, publish

        class EagleWorker:
            def __init__(self, server_args):
                self.k = get_spec()

        class NgramWorker:
            def __init__(self, server_args):
                self.k = get_spec()

        class Orphan:
            def __init__(self, server_args):
                self.k = get_model()  # expect

        WORKERS = {"ngram": NgramWorker}

        def pick(name):
            return EagleWorker if name == "eagle" else WORKERS[name]

        def run(server_args):
            publish(server_args, role="scheduler")
            get_model()
            return pick("eagle")(server_args)
        """,
    )


def test_an_instance_built_in_a_classmethod_is_followed(project: Path) -> None:
    """`self = cls.__new__(cls)` then `self._init(...)`: the walk follows it, so the
    publisher is not mistaken for one reaching no read."""
    out = run(
        project,
        {
            "app/case.py": """
            from specrt.context import get_model, publish

            class Engine:
                @classmethod
                def attach(cls, server_args):
                    publish(server_args, role="tokenizer")
                    self = cls.__new__(cls)
                    self._init_worker()
                    return self

                def _init_worker(self):
                    return get_model()
            """
        },
    )
    assert out.program.sets[RULE]["publishers reaching no bag read"] == []
    assert findings(out) == []


def test_a_factory_importing_the_class_locally_reaches_it(project: Path) -> None:
    """SGLang's shape: `self.spec = Algorithm.from_string(...)` then
    `self.spec.create_worker()` returns a class imported inside the method."""
    assert_case(
        project,
        RULE,
        """
        from specrt.context import get_model, publish

        class Algorithm:
            @classmethod
            def from_string(cls, name):
                return cls()

            def create_worker(self):
                from app.workers import DraftWorker
                return DraftWorker

        class Scheduler:
            def __init__(self, server_args):
                self.spec = Algorithm.from_string("eagle")
                self.worker = self.spec.create_worker()(server_args)

        def run_scheduler_process(server_args):
            publish(server_args, role="scheduler")
            get_model()
            Scheduler(server_args)
        """,
        extra={
            "app/workers.py": """
            from specrt.context import get_exec, get_model

            class DraftWorker:
                def __init__(self, server_args):
                    self.k = get_exec()
                    self.m = get_model()

            class Orphan:
                def __init__(self, server_args):
                    self.k = get_exec()
                    self.m = get_model()
            """
        },
    )
    out = run(project, {})
    got = [(f.path, f.line) for f in out.findings]
    assert got == [("app/workers.py", 11)], got  # Orphan only, once
    assert "1 more statements read bags" in out.findings[0].details


def test_a_subclass_of_a_class_reached_code_names_counts_as_reached(project: Path) -> None:
    """Plugin registries found by scanning modules (`issubclass(cls, Base)`)."""
    assert_case(
        project,
        RULE,
        """
        from specrt.context import get_model, publish

        class BaseProcessor:
            def __init__(self, server_args):
                self.sa = server_args

        class LlavaProcessor(BaseProcessor):
            def __init__(self, server_args):
                self.n = get_model()

        def find(classes):
            return [c for c in classes if issubclass(c, BaseProcessor)]

        def run_tokenizer(server_args):
            publish(server_args, role="tokenizer")
            get_model()
            find([])
        """,
    )


def test_a_constructor_imported_through_a_package_reexport_is_reached(project: Path) -> None:
    """SGLang's `from sglang.srt.layers.moe.dwdp import DwdpManager`: the package
    re-exports the class and holds no token of its own, so it is parsed only when
    a constructor that looks unreached asks for its class by name."""
    out = run(
        project,
        {
            "app/runner.py": """
            from specrt.context import get_model, publish

            def run_scheduler(server_args):
                publish(server_args, role="scheduler")
                get_model()
                init_weights(server_args)

            def init_weights(server_args):
                from app.weights import WeightManager

                return WeightManager(server_args)
            """,
            "app/weights/__init__.py": """
            from app.weights.manager import WeightManager

            __all__ = ["WeightManager"]
            """,
            "app/weights/manager.py": """
            from specrt.context import get_parallel

            class WeightManager:
                def __init__(self, server_args):
                    self.size = get_parallel().tp_size
            """,
        },
    )
    assert findings(out) == []


def test_methods_of_an_object_a_publisher_builds_or_names_are_reached(project: Path) -> None:
    """An object built by a publishing entry runs its methods wherever it is
    handed (`app.state.handler.serve(...)`), and a class it names runs its
    classmethods (`self.server_class().launch(...)`)."""
    assert_case(
        project,
        RULE,
        """
        from specrt.context import get_model, publish

        class Session:
            def __init__(self, server_args):
                self.k = get_model()

        class Handler:
            def serve(self, server_args):
                return Session(server_args)

        class Spec:
            def __init__(self, server_args):
                self.k = get_model()

        class Server:
            @classmethod
            def launch(cls, server_args):
                return Spec(server_args)

        class Orphan:
            def __init__(self, server_args):
                self.k = get_model()  # expect

        class Scheduler:
            def __init__(self, server_args):
                self.handler = Handler()
                self.server = self.server_class().launch(server_args)

            def server_class(self):
                return Server

        def run_scheduler(server_args):
            publish(server_args, role="scheduler")
            get_model()
            Scheduler(server_args)

        def route(app, server_args):
            return app.state.handler.serve(server_args)
        """,
    )


def test_a_publish_through_a_helper_in_another_module_makes_an_entry(project: Path) -> None:
    """SGLang's test kits publish through `set_global_server_args_for_scheduler`, a
    helper in the record's module: the function calling it publishes too (derived:
    its body publishes, transitively, through any module), so a bag read before
    that call is reported, and one after it is not."""
    out = run(
        project,
        {
            "app/shims.py": """
            from specrt.context import publish

            def set_global_for_scheduler(server_args):
                publish(server_args, role="scheduler")

            def publish_twice_removed(server_args):
                set_global_for_scheduler(server_args)
            """,
            "app/kits.py": """
            from specrt.context import get_model, get_parallel
            from app.shims import publish_twice_removed, set_global_for_scheduler

            def build_fixture(server_args):
                get_parallel().override(tp_size=1)
                set_global_for_scheduler(server_args)
                return get_model().model_path

            def build_other(server_args):
                publish_twice_removed(server_args)
                return get_model().model_path
            """,
        },
        pinned={
            "app.shims.set_global_for_scheduler": NO_READ,
            "app.shims.publish_twice_removed": NO_READ,
        },
    )
    found = entries(out)
    assert found["app.kits.build_fixture"] == "publishes through app.shims.set_global_for_scheduler"
    assert found["app.kits.build_other"] == "publishes through app.shims.publish_twice_removed"
    assert found["app.shims.publish_twice_removed"] == (
        "publishes through app.shims.set_global_for_scheduler"
    )
    assert findings(out) == [
        (
            "app/kits.py",
            5,
            "get_parallel() before publish at line 6: no bag exists there yet",
        )
    ]


def test_a_republish_inside_a_running_entry_makes_no_new_entries(project: Path) -> None:
    """0.5.17's ModelRunner re-publishes (through the legacy shim) under a
    scheduler that published first: its callers run inside that entry, so they
    are not entries and their reads before the constructor are not reported."""
    out = run(
        project,
        {
            "app/shims.py": """
            from specrt.context import publish

            def set_global_for_scheduler(server_args):
                publish(server_args, role="scheduler")
            """,
            "app/runner.py": """
            from app.shims import set_global_for_scheduler

            class ModelRunner:
                def __init__(self, server_args):
                    set_global_for_scheduler(server_args)
            """,
            "app/scheduler.py": """
            from specrt.context import get_schedule, publish
            from app.runner import ModelRunner

            class Worker:
                def __init__(self, server_args):
                    self.budget = get_schedule().max_running_requests
                    self.runner = ModelRunner(server_args)

            def run_scheduler_process(server_args):
                publish(server_args, role="scheduler")
                Worker(server_args)
            """,
        },
        pinned={"app.shims.set_global_for_scheduler": NO_READ},
    )
    found = entries(out)
    assert "app.scheduler.Worker.__init__" not in found, found
    assert "app.runner.ModelRunner.__init__" not in found, found
    assert findings(out) == []


# SGLang's `get_parallel()` hands out an object built at import: the call reads
# nothing, and only a published leaf read off it fails closed before publish.
LIVE_PARALLEL = """
class ParallelContext:
    def __init__(self) -> None:
        self._overrides: dict[str, object] = {}

    def __getattr__(self, name: str) -> object:
        return get_context().config_leaf(name)

    def override(self, **values: object) -> "ParallelContext":
        self._overrides.update(values)
        return self


_PARALLEL = ParallelContext()


def get_parallel() -> ParallelContext:
    return _PARALLEL
"""
ENTRY_READING_PARALLEL = """
from specrt.context import get_parallel, publish

def run_scheduler_process(server_args):
    group = get_parallel().world_group
    get_parallel().override(tp_size=1)
    size = get_parallel().tp_size
    handle = get_parallel()
    publish(server_args, role="scheduler")
    return group, size, handle
"""


def test_a_bag_handed_out_at_import_fails_closed_only_on_its_leaves(project: Path) -> None:
    asked = run(project, {"app/case.py": ENTRY_READING_PARALLEL})
    # `config_bag("parallel")` fails at the call: every statement reads
    assert [line for _, line, _ in findings(asked)] == [4, 5, 6, 7]
    ctx = project / "specrt" / "context.py"
    old = 'def get_parallel() -> object:\n    return _CONTEXT.config_bag("parallel")\n'
    assert old in ctx.read_text()
    ctx.write_text(ctx.read_text().replace(old, LIVE_PARALLEL))
    live = run(project, {"app/case.py": ENTRY_READING_PARALLEL})
    # a group handle the namespace does not declare, and the class's own
    # `override`, read no leaf; the declared leaf and the escaping object do
    assert [line for _, line, _ in findings(live)] == [6, 7]


def test_a_callee_that_publishes_on_some_paths_only_ends_no_walk(project: Path) -> None:
    """htri17's bug 1: a constructor publishing only under a guard
    (`if not is_draft:`, sglang's `ModelRunner` and its draft workers), called
    with the guard off, published nothing: the read after it has no bag. A
    publish in one branch ends no walk either; on every path it does."""
    guarded = """
        from specrt.context import publish

        class Runner:
            def __init__(self, server_args, is_draft: bool = False) -> None:
                if not is_draft:
                    publish(server_args, role='scheduler')
        """
    entry = """
        from specrt.context import publish
        from app.draft import build

        def main(server_args) -> None:
            build(server_args)  # expect
            publish(server_args, role='scheduler')
        """
    draft = """
        from specrt.context import get_parallel
        from app.runner import Runner

        def build(server_args) -> int:
            Runner(server_args, is_draft=True)
            return get_parallel().tp_size
        """
    files = {"app/runner.py": guarded, "app/draft.py": draft}
    assert_case(project, RULE, entry, extra=files, path="app/entry.py")
    (found,) = [f for f in run_engine(project, select={RULE}).findings if f.kind != "pin"]
    assert found.message.startswith("get_parallel() at app/draft.py:7 before publish"), found
    # published on every path: the walk ends at the call
    always = guarded.replace("        if not is_draft:\n    ", "")
    assert "if" not in always
    files["app/runner.py"] = always
    assert_case(project, RULE, entry.replace("  # expect", ""), extra=files, path="app/entry.py")
    # a publish in one branch of the entry's own body, on a test the walk
    # cannot settle: it may run, so it ends the walk (hpub2: sglang 0.5.23's
    # `lifespan`)
    branch = """
        from specrt.context import get_parallel, publish

        def main(server_args) -> int:
            if server_args.tp_size == 1:
                publish(server_args, role='scheduler')
            return get_parallel().tp_size
        """
    assert_case(project, RULE, branch, extra=files, path="app/entry.py")


GUARDED_RUNNER = """
    from specrt.context import publish

    class Runner:
        def __init__(self, server_args, is_draft: bool = False) -> None:
            self.is_draft = is_draft
            if not self.is_draft:
                publish(server_args, role='scheduler')

    class Stub(Runner):
        def __init__(self, *args, pool=None, **kwargs) -> None:
            self.pool = pool
            super().__init__(*args, **kwargs)
    """


@pytest.mark.parametrize(
    ("call", "reported"),
    [
        # the call settles the guard: the publish runs, the read after it has a bag
        ("Runner(server_args)", False),  # left to its literal default
        ("Runner(server_args, is_draft=False)", False),
        ("Runner(server_args, False)", False),
        # sglang 0.5.17's one_batch: a kwargs dict without the flag, through a
        # subclass forwarding `*args, **kwargs` to the guarded constructor
        ("kw = dict(server_args=server_args)\n    Stub(**kw)", False),
        ("kw = {'server_args': server_args, 'pool': None}\n    Stub(**kw)", False),
        # the call settles it the other way (the draft workers): no publish
        ("Runner(server_args, is_draft=True)", True),
        ("Runner(server_args, True)", True),
        ("kw = dict(server_args=server_args, is_draft=True)\n    Stub(**kw)", True),
        # the call cannot tell: the publish may run, so it ends the walk (CTX102
        # names no line for it: test_ctx102)
        ("Runner(server_args, is_draft=bool(server_args))", False),
        ("kw = dict(server_args=server_args)\n    kw['is_draft'] = 1\n    Stub(**kw)", False),
    ],
    ids=[
        "default",
        "keyword-false",
        "positional-false",
        "forwarded-dict-leaves-default",
        "forwarded-display-leaves-default",
        "keyword-true",
        "positional-true",
        "forwarded-dict-true",
        "unknown-value",
        "dict-changed-after",
    ],
)
def test_a_guarded_publish_is_taken_or_not_as_the_call_settles_its_guard(
    project: Path, call: str, reported: bool
) -> None:
    """The guard of a publish evaluated at the call (issue 36, hpub2): sglang
    0.5.17's `ModelRunner.__init__` publishes only `if not self.is_draft_worker`
    (assigned from its parameter, default False). one_batch's runner leaves it
    False (a publish: no finding after it); a draft worker hands True (none);
    a value the call cannot tell may publish: CTX301 stops there, as main
    did (0.5.23's `lifespan` publishes in one arm; its other arm runs in a
    process that has published: 31 false findings otherwise)."""
    entry = """
        from specrt.context import publish
        from app.draft import build

        def main(server_args) -> None:
            build(server_args){mark}
            publish(server_args, role='scheduler')
        """.format(mark="  # expect" if reported else "")
    draft = (
        "from specrt.context import get_parallel\n"
        "from app.runner import Runner, Stub\n\n\n"
        f"def build(server_args) -> int:\n    {call}\n    return get_parallel().tp_size\n"
    )
    files = {"app/runner.py": GUARDED_RUNNER, "app/draft.py": draft}
    assert_case(project, RULE, entry, extra=files, path="app/entry.py")
