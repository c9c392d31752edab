"""program.calls: the whole-program call graph (the part "calls"): typed targets
and events, anchored events, per-module summaries, record parameters taken from
the codebase's own convention, and one graph per program state."""

from __future__ import annotations

import textwrap
from pathlib import Path

from helpers import run_engine, write

from ctxlint.engine.registry import file_visitors, load_rules
from ctxlint.facts.extract import extract_file
from ctxlint.program.call_model import (
    Event,
    EventKind,
    Global,
    HeldMethod,
    ModuleSummary,
    SelfMethod,
    StartKind,
    SuperMethod,
)
from ctxlint.program.calls import KEY, call_graph, summaries
from ctxlint.program.parts import CALL_LINES
from ctxlint.program.record_conventions import record_names

APP = {
    "app/helpers.py": """
        from specrt.context import get_model

        def helper():
            return get_model()

        class Loader:
            def load(self):
                return get_model()
        """,
    "app/main.py": """
        import multiprocessing

        from app import helpers
        from app.helpers import helper as h
        from specrt.context import get_exec, publish

        class Base:
            def hook(self):
                pass

        class Worker(Base):
            def __init__(self, server_args):
                self.loader = helpers.Loader()
                self.cb = h

            def hook(self):
                super().hook()
                self.loader.load()
                self.cb()
                self.step()
                get_exec()

            def step(self):
                pass

        def run(server_args):
            publish(server_args, role="scheduler")
            h()
            Worker(server_args).hook()

        def unrelated():
            h()

        def launch(server_args):
            multiprocessing.Process(target=run, args=(server_args,)).start()
        """,
}


def _project(project: Path, files: dict[str, str]) -> Path:
    write(project, {k: textwrap.dedent(v).lstrip("\n") for k, v in files.items()})
    return project


def test_targets_and_events_are_typed_and_resolved(project: Path) -> None:
    program = run_engine(_project(project, APP), select={"CTX301"}).program
    g = call_graph(program)
    hook = g.funcs["app.main.Worker.hook"]
    assert [(e.kind, e.targets, e.accessor) for e in hook.events] == [
        (EventKind.CALL, (SuperMethod("hook"),), None),
        (EventKind.CALL, (HeldMethod("loader", "load"),), None),
        (EventKind.CALL, (SelfMethod("cb"),), None),
        (EventKind.CALL, (SelfMethod("step"),), None),
        (EventKind.READ, (), "get_exec"),
    ]
    # each call's targets resolved across modules: super, an instance parked on
    # self, a callable parked on self, the class's own method
    assert g.edges["app.main.Worker.hook"] == [
        ["app.main.Base.hook"],
        ["app.helpers.Loader.load"],
        ["app.helpers.helper"],
        ["app.main.Worker.step"],
        [],
    ]
    run = g.funcs["app.main.run"]
    assert [e.kind for e in run.events] == [EventKind.PUBLISH, *[EventKind.CALL] * 3]
    assert run.events[1].targets == (Global("app.helpers.helper"),)
    # a class call runs its __init__, and a method called on the instance it made
    # runs that method (issue 36: `Manager().loop()` was not followed), in that order
    assert run.events[3].targets == (Global("app.main.Worker.hook"),)
    assert g.edges["app.main.run"] == [
        [],
        ["app.helpers.helper"],
        ["app.main.Worker.__init__"],
        ["app.main.Worker.hook"],
    ]
    assert g.callers["app.helpers.helper"] == {
        "app.main.run",
        "app.main.unrelated",
        "app.main.Worker.hook",
    }
    assert g.reaching({"app.helpers.Loader.load"}) == {
        "app.helpers.Loader.load",
        "app.main.Worker.hook",
        "app.main.run",  # through Worker(server_args).hook()
    }
    [(path, start)] = g.starts
    assert (path, start.kind, start.targets) == (
        "app/main.py",
        StartKind.PROCESS,
        (Global("app.main.run"),),
    )
    assert g.start_targets(start) == ["app.main.run"]


def test_only_events_that_can_be_a_finding_site_are_anchored(project: Path) -> None:
    program = run_engine(_project(project, APP), select={"CTX301"}).program
    g = call_graph(program)
    publish, call, *_ = g.funcs["app.main.run"].events  # a publisher: its whole body
    assert publish.site is not None
    assert publish.site.snippet == 'publish(server_args, role="scheduler")'
    assert publish.line == 27
    assert call.site is not None and call.line == 28
    # a function reaching no read in its own module (the read is in another) and
    # started by nothing: its call cannot be a site, and costs no position in
    # the part the rules read; its line is a side fact (for `fix`)
    [only] = g.funcs["app.main.unrelated"].events
    assert only == Event(EventKind.CALL, (Global("app.helpers.helper"),))
    assert only.site is None and only.line == 0
    [lines] = [f for path, _, f in program.facts(CALL_LINES) if path == "app/main.py"]
    assert "app.main.run" not in lines  # every event of it keeps a site
    [line] = lines["app.main.unrelated"]
    assert line > 0


def test_a_line_moving_leaves_the_call_facts_the_rules_read(project: Path) -> None:
    """Lines above a function that keeps no sites move only its side facts: the
    "calls" part every call-graph rule's round answer reads stays the same."""
    root = _project(project, APP)
    before = run_engine(root, select={"CTX301"}).program
    main = root / "app" / "main.py"
    main.write_text("\n\n" + main.read_text())
    after = run_engine(root, select={"CTX301"}).program

    def facts(program, key):
        return {p: f for p, _, f in program.facts(key)}

    assert facts(after, CALL_LINES) != facts(before, CALL_LINES)
    summary, old = summaries(after), summaries(before)
    assert (
        summary["app/main.py"].funcs["app.main.unrelated"]
        == old["app/main.py"].funcs["app.main.unrelated"]
    )


def test_module_summaries_round_trip_through_the_facts(project: Path) -> None:
    root = _project(project, APP)
    program = run_engine(root, select={"CTX301"}, memo=False).program
    seen = 0
    for path, module, summary in program.facts(KEY):
        # once read, the summary stands in the entry for the part's JSON
        assert isinstance(summary, ModuleSummary)
        assert summary.module == module
        raw = extract_file(
            path,
            module,
            (root / path).read_bytes(),
            program.vocab.to_json(),
            file_visitors(load_rules()),
        )["facts"][KEY]
        assert summary.to_json() == raw
        assert ModuleSummary.from_json(raw) == summary
        seen += 1
    assert seen == len(program.files)
    assert summaries(program) == {p: f for p, _, f in program.facts(KEY)}


def test_record_parameters_are_the_codebases_own_names(project: Path) -> None:
    """A codebase whose record parameter is `cfg`, not `server_args`: the
    constructor check follows its convention (derived from annotations)."""
    context = project / "specrt" / "context.py"
    context.write_text(context.read_text().replace("server_args", "cfg"))
    files = {
        "app/conv.py": """
            from specrt.record import ServerArgs

            def build(cfg: ServerArgs):
                return cfg

            def check(cfg: ServerArgs):
                return cfg
            """,
        "app/models.py": """
            from specrt.context import get_model

            class Layer:
                def __init__(self, cfg):
                    self.m = get_model()

            class Sized:
                def __init__(self, server_args):
                    self.m = get_model()
            """,
    }
    out = run_engine(_project(project, files), select={"CTX301"})
    assert record_names(out.program) == {"cfg"}
    g = call_graph(out.program)
    assert g.funcs["app.models.Layer.__init__"].takes_record
    assert not g.funcs["app.models.Sized.__init__"].takes_record
    assert g.funcs["app.conv.build"].takes_record  # annotated
    found = sorted((f.path, f.scope, f.line) for f in out.findings if f.rule == "CTX301")
    assert found == [("app/models.py", "Layer.__init__", 5)]


def test_the_graph_is_built_once_per_program_state(project: Path) -> None:
    program = run_engine(_project(project, APP), select={"CTX301"}).program
    g = call_graph(program)
    assert call_graph(program) is g
    summaries = {path: program.per_file(KEY, path, lambda e: object()) for path in program.files}
    # a fixed-point round adds a file: the graph is rebuilt, each kept file's
    # summary is not
    program.files["app/late.py"] = {"module": "app.late", "facts": {}}
    again = call_graph(program)
    assert again is not g
    assert set(again.funcs) == set(g.funcs)
    for path, value in summaries.items():
        assert program.per_file(KEY, path, lambda e: object()) is value


def test_a_read_in_a_try_keeps_what_its_handlers_catch_and_any_other_its_cached_form() -> None:
    """`caught` (what the handlers of the `try` bodies around a read catch) is
    written only when there is one, so the facts of every other event serialise
    as before; it comes back as the same typed tuple."""
    plain = Event(EventKind.READ, accessor="get_exec", member="comm")
    assert plain.to_json() == {"k": "r", "r": "get_exec", "m": "comm"}
    assert Event.from_json(plain.to_json()) == plain
    caught = plain._replace(caught=("ValueError", "app.errors.Unpublished"))
    raw = {"k": "r", "r": "get_exec", "m": "comm", "g": ["ValueError", "app.errors.Unpublished"]}
    assert caught.to_json() == raw
    assert Event.from_json(caught.to_json()) == caught


def test_the_files_reach_closures_read_each_functions_callees_once() -> None:
    """CallFactsVisitor.finish's closures (functions that reach a publish or a
    read through same-module calls): the fixpoint over every function's
    callees, from the callers found once (a long chain of helpers took a
    round per link, each round reading every function's callees again)."""
    import random

    from ctxlint.program.call_facts import _callers, _closure

    rng = random.Random(7)
    names = [f"f{i}" for i in range(60)]
    calls = {q: rng.sample(names, rng.randint(0, 3)) for q in names}
    calls.update({f"f{i}": [f"f{i + 1}"] for i in range(20, 40)})  # a chain
    read: list[str] = []

    def callees(fn: str):  # type: ignore[no-untyped-def]
        read.append(fn)
        return iter(calls[fn])

    callers = _callers({q: q for q in names}, callees)  # type: ignore[arg-type]
    assert sorted(read) == sorted(names)  # each function's callees read once
    for seed in ({"f40"}, {"f3", "f59"}, set()):
        naive, changed = set(seed), True
        while changed:  # the fixpoint, round by round
            grown = {q for q in names if any(c in naive for c in calls[q])} - naive
            naive |= grown
            changed = bool(grown)
        assert _closure(seed, callers) == naive, seed
    assert {f"f{i}" for i in range(20, 41)} <= _closure({"f40"}, callers)
