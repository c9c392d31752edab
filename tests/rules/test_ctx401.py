"""CTX401 accessor-binding: every binding form, the shadowing hazard, calls with
arguments, member shapes against the derived class graph (across modules and
through inheritance), ruff's F811 merged and deduplicated, and the negatives
(the runtime module, re-exports, library types, real methods)."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

import pytest
from helpers import run_engine, write
from rulecase import assert_case

from ctxlint.rules import ctx401_accessor_binding as ctx401

RULE = "CTX401"
LOADER = {
    "app/loader.py": """
        class Loader:
            def get_model(self) -> object:
                return object()


        current: Loader = Loader()
        """,
}

BAD = {
    "import-spellings": """
        from specrt.context import get_exec, get_memory
        import app.other as get_exec  # expect
        from specrt.context import get_schedule as get_model  # expect
        from .other import get_memory  # expect
        """,
    "module-level-forms": """
        from specrt.context import get_exec, get_memory, get_model, get_parallel
        from specrt.context import get_schedule, get_server_args

        get_model, x = None, 1  # expect
        get_memory: object = None  # expect
        get_schedule += 1  # expect
        with open("f") as get_parallel:  # expect
            pass
        if (get_server_args := 1):  # expect
            pass

        def f() -> None:
            global get_exec
            get_exec = None  # expect
        """,
    "function-local-forms": """
        from specrt.context import get_exec, get_memory, get_model, get_parallel
        from specrt.context import get_schedule, get_server_args

        def f(*get_model, **get_exec) -> None:  # expect x2
            a, *get_memory = [1, 2]  # expect
            g = lambda get_schedule: get_schedule  # expect

            class get_parallel:  # expect
                pass

            from app.other import get_server_args  # expect
        """,
    "shadowing-the-imported-accessor": """
        from specrt.context import get_exec, get_model

        def f() -> object:
            bag = get_exec()
            for get_exec in range(2):  # expect
                pass
            return bag

        def g() -> object:
            bag = get_model()
            from specrt.context import get_model  # expect
            return bag

        def h(again: bool) -> object:
            from specrt.context import get_schedule

            first = get_schedule()
            if again:
                from specrt.context import get_schedule  # bound above: no hazard

                return get_schedule()
            return first
        """,
    "calls-with-arguments": """
        from specrt import context
        from specrt.context import get_exec
        from app.bags import get_model

        def f(*args: object, **kw: object) -> None:
            get_exec(*args)  # expect
            get_exec(**kw)  # expect
            context.get_schedule(1)  # expect
            get_model("m")  # expect
        """,
    "member-shapes": """
        import app.other as other
        from specrt.context import get_model
        from app.loader import Loader, current
        from specrt import context as rc

        class Plain:
            pass

        class Child(Loader):
            def m(self) -> None:
                super().get_exec()  # expect

        class Holder:
            def __init__(self, thing) -> None:
                self.thing = thing
                self.plain = Plain()

            def go(self) -> None:
                self.thing.get_model()  # expect
                self.plain.get_model()  # expect

        def f(p: Plain, unknown) -> None:
            p.get_exec()  # expect
            unknown.get_model()  # expect
            make().get_model()  # expect
            other.get_model()  # expect
            current.get_exec()  # expect
            Plain.get_model(p)  # expect
            fn = p.get_schedule  # expect
            rc.get_model = None  # expect
            p.get_model = fn  # expect
        """,
    "class-body-bindings": """
        from specrt.context import get_exec, get_memory, get_model

        class Exporter:
            get_model = staticmethod(get_exec)  # expect
            get_exec: object  # expect

            class get_memory:  # expect
                pass
        """,
    "a-same-named-import-where-the-bag-is-read-under-another-name": """
        from specrt.context import get_model as model_bag
        from app.other import get_model  # expect

        def load() -> object:
            return get_model(), model_bag()
        """,
    "a-same-named-import-where-a-read-of-that-bag-is-pending": """
        # examples/legacy_app/model_runner.py: the record's `model_path` read
        # migrates to `get_model().model_path`, which then meets the loader's import
        from specrt.context import get_exec
        from specrt.record import ServerArgs
        from app.other import get_model  # expect

        def load(server_args: ServerArgs) -> object:
            return get_model(), server_args.model_path, get_exec()
        """,
    "a-same-named-import-where-the-bag-is-read-through-the-runtime": """
        from specrt import context as rc
        from app.other import get_model  # expect

        def load() -> object:
            return get_model(), rc.get_model().model_path
        """,
    "a-field-beside-the-accessor": """
        from specrt.context import get_model

        class WeightUpdater:
            get_model: object  # expect

            def update(self) -> object:
                return self.get_model(), get_model()  # the field's use, and the bag

        class Later(WeightUpdater):
            def again(self) -> object:
                return self.get_model()
        """,
}

GOOD = {
    "names-bound-where-the-accessor-is-not": """
        from specrt.context import get_exec

        def get_memory() -> None: ...

        class Exporter:
            get_schedule: object

            def export(self, get_parallel: object) -> object:
                return self.get_schedule(), get_exec(), get_parallel
        """,
    "a-same-named-import-in-a-module-reading-other-bags": """
        # sglang 0.5.23 models/gpt_oss.py: the util `get_device` beside get_exec;
        # the device bag is never read here, so nothing collides (F811 is silent)
        from specrt.context import get_exec
        from app.other import get_model

        def load() -> object:
            return get_model(), get_exec()
        """,
    "a-same-named-import-where-no-accessor-is-read": """
        from app.other import get_model

        def load() -> object:
            return get_model()
        """,
    "function-local-module-imports": """
        def f() -> object:
            import specrt.context as rc
            from specrt import context

            return rc.get_exec(), context.get_memory()
        """,
    "runtime-imports-and-reexports": """
        from specrt import context as rc
        from specrt.context import get_exec
        from app.bags import get_model

        def f() -> object:
            from specrt.context import get_schedule

            return get_exec(), get_model(), rc.get_memory(), get_schedule()
        """,
    "real-methods": """
        from app.loader import Loader, current
        from app import loader as loader_module

        class Sub(Loader):
            def go(self) -> object:
                return self.get_model(), super().get_model()

        class Holder:
            loader: Loader

            def __init__(self, handed: Loader) -> None:
                self.sub = Sub()
                self.handed = handed
                alias = handed
                alias.get_model()

            def go(self) -> object:
                return self.loader.get_model(), self.sub.get_model(), self.handed.get_model()

        def f(l: Loader, maybe: "Loader | None") -> object:
            built = Sub()
            return (
                l.get_model(),
                maybe.get_model(),
                built.get_model(),
                Loader.get_model(l),
                current.get_model(),
                loader_module.current.get_model(),
            )
        """,
    "instance-of-a-class-made-by-type": """
        from app.loader import Loader

        def f() -> object:
            # a class built at run time from a base that defines the method
            made = type("Cached", (Loader,), {"cached": True})()
            return made.get_model()
        """,
    "library-types": """
        import torch
        from hub import Client

        class Wrapped(Client):
            def go(self) -> object:
                return self.get_model()  # may come from the library base

        def f(t: torch.Tensor, c: Client) -> object:
            return t.get_model(), c.get_exec("x"), torch.get_model()
        """,
    "not-bindings": """
        from specrt.context import get_model

        def f(builder) -> None:
            builder(get_model=lambda: None)
            builder.get_model_path()
            d = {"get_model": 1}
            print("get_exec = 1")  # get_schedule = 2
        """,
}


def _extra() -> dict[str, str]:
    return {
        **LOADER,
        "app/other.py": "def get_model() -> None: ...\n",
        "app/bags.py": "from specrt.context import get_model\n",
    }


@pytest.mark.parametrize("source", BAD.values(), ids=BAD.keys())
def test_bad(project: Path, source: str) -> None:
    assert_case(project, RULE, source, extra=_extra())


@pytest.mark.parametrize("source", GOOD.values(), ids=GOOD.keys())
def test_good(project: Path, source: str) -> None:
    assert_case(project, RULE, source, extra=_extra())


def test_runtime_module_is_exempt_from_binding_checks(project: Path) -> None:
    runtime = project / "specrt" / "context.py"
    runtime.write_text(
        runtime.read_text()
        + "\n\ndef _helper(get_model: object = None) -> object:\n    return get_model\n"
    )
    write(project, {"app/m.py": "from specrt.context import get_model\n"})
    assert run_engine(project, select={RULE}).findings == []


def test_inheritance_through_a_file_without_accessor_tokens(project: Path) -> None:
    """The middle class's file names no accessor; the derivation still reaches it
    (its base's name is a learnt token) and sees the inherited method."""
    write(
        project,
        {
            **{k: v.replace("\n        ", "\n") for k, v in LOADER.items()},
            "app/middle.py": "from app.loader import Loader\n\n\nclass Middle(Loader):\n    pass\n",
            "app/leaf.py": (
                "from app.middle import Middle\n\n\n"
                "class Leaf(Middle):\n"
                "    def go(self) -> object:\n"
                "        return self.get_model()\n"
            ),
        },
    )
    out = run_engine(project, select={RULE})
    assert out.findings == [], [f.message for f in out.findings]
    assert out.program.sets[RULE]["classes defining accessor-named methods"] == {
        "get_model": ["app.loader.Loader"]
    }


def test_ruff_f811_is_merged_with_its_origin_and_deduplicated(project: Path) -> None:
    write(
        project,
        {
            "app/m.py": (
                "from app.loader import get_model\n"
                "from specrt.context import get_model\n"
                "from specrt.context import get_exec\n\n\n"
                "def get_exec() -> None:\n"
                "    pass\n"
            )
        },
    )
    out = run_engine(project, select={RULE})
    lines = sorted((f.line, f.message.startswith("ruff F811")) for f in out.findings)
    # line 2 is ruff's alone; lines 1 and 6 are reported once, by the rule itself
    assert lines == [(1, False), (2, True), (6, False)]
    ruff_finding = out.findings[1]
    assert "ruff F811: redefinition of unused `get_model` from line 1" in ruff_finding.message
    assert ruff_finding.scope == "<module>"
    sets = out.program.sets[RULE]
    assert sets["ruff"] == "ran on 1 file(s)"
    assert sets["ruff F811 on accessor names"] == [
        "app/m.py:2:28: Redefinition of unused `get_model` from line 1",
        "app/m.py:6:5: Redefinition of unused `get_exec` from line 3",
    ]


# two meanings: ruff's F811 on line 2, the rule's own import finding on line 1
TWICE_IMPORT = "from app.loader import get_model\nfrom specrt.context import get_model\n"


def test_the_accessor_imported_again_is_one_object_and_left_to_ruff(project: Path) -> None:
    """sglang 0.5.17's model_loader/loader.py imports the runtime's get_parallel
    twice (lines 53 and 120): ruff's F811 says so, but both bind the same function,
    so the name keeps one meaning there: no finding, directly or through a
    re-export of the accessor. A redefinition by another object still is one."""
    write(
        project,
        {
            "app/reexport.py": "from specrt.context import get_exec, get_model\n",
            "app/m.py": (
                "from specrt.context import get_model\n"
                "from specrt.context import get_exec\n"
                "from app.reexport import get_exec\n"
                "from specrt.context import get_model\n"
                "from specrt.context import get_memory\n"
                "from specrt.context import get_schedule as get_memory\n"
            ),
        },
    )
    out = run_engine(project, select={RULE})
    assert [(f.line, f.message.startswith("ruff F811")) for f in out.findings] == [(6, False)]
    assert out.program.sets[RULE]["ruff F811 on accessor names"] == [
        "app/m.py:3:26: Redefinition of unused `get_exec` from line 2",
        "app/m.py:4:28: Redefinition of unused `get_model` from line 1",
        "app/m.py:6:44: Redefinition of unused `get_memory` from line 5",
    ]


@pytest.mark.parametrize(
    "noqa",
    [
        "  # noqa: F811",
        "  # noqa",
        "  # NOQA:F811",
        "\n# ruff: noqa: F811",
        "\n# flake8: noqa",
        "  # ruff: ignore[F811]",
    ],
)
def test_a_noqa_edit_runs_ruff_again(project: Path, noqa: str) -> None:
    """ruff honours noqa comments, so they are the candidate file's facts: an
    edit of one alone (no code moves) gives what an uncached run gives, and
    so does taking it out again (the earlier content's facts, unparsed)."""
    (project / "app" / "m.py").write_text(TWICE_IMPORT)
    before = run_engine(project, use_cache=True, select={RULE})
    assert [f.line for f in before.findings] == [1, 2]

    def same_as_uncached(text: str) -> list[int]:
        (project / "app" / "m.py").write_text(text)
        cached = run_engine(project, use_cache=True, select={RULE})
        assert cached.findings == run_engine(project, select={RULE}).findings
        return [f.line for f in cached.findings]

    lines = TWICE_IMPORT.splitlines(keepends=True)
    noted = lines[0] + lines[1].rstrip("\n") + noqa + "\n"
    assert same_as_uncached(noted) == [1]
    assert same_as_uncached(TWICE_IMPORT) == [1, 2]


def _count_ruff_runs(monkeypatch) -> list[object]:
    calls: list[object] = []
    real_run = subprocess.run

    def run(args, *a, **kw):  # count ruff's runs; git's (discovery) pass through
        if "F811" in args:
            calls.append(args)
        return real_run(args, *a, **kw)

    monkeypatch.setattr(subprocess, "run", run)
    return calls


def test_ruff_is_only_run_for_candidates(project: Path, monkeypatch) -> None:
    calls = _count_ruff_runs(monkeypatch)
    write(project, {"app/m.py": "from specrt.context import get_model\n"})
    out = run_engine(project, select={RULE})
    assert calls == [] and out.program.sets[RULE]["ruff"].startswith("not run")
    write(project, {"app/n.py": TWICE_IMPORT})  # a candidate: ruff runs once
    out = run_engine(project, select={RULE})
    assert len(calls) == 1 and out.program.sets[RULE]["ruff"].startswith("ran on 1 file")


def test_ruff_runs_again_only_for_a_candidate_whose_text_changed(
    project: Path, monkeypatch
) -> None:
    """F811 is per file: a resident's next run reads the reports of a text
    ruff read before, and starts ruff on the changed candidates alone; the
    findings are a fresh process's (the memo forgotten) on the same text."""
    from ctxlint.facts import ruff

    calls = _count_ruff_runs(monkeypatch)
    third = TWICE_IMPORT.replace("get_model", "get_exec")
    write(project, {"app/n.py": TWICE_IMPORT, "app/o.py": TWICE_IMPORT + "x = 1\n"})

    def run() -> tuple[list[str], list[object]]:
        out = run_engine(project, select={RULE})
        return [f"{f.path}:{f.line} {f.message}" for f in out.findings], out.program.sets[RULE]

    first = run()
    assert len(calls) == 1 and first[1]["ruff F811 on accessor names"]
    assert run() == first and len(calls) == 1  # nothing changed: ruff not started
    write(project, {"app/o.py": third})  # one candidate changed: ruff on it alone
    changed = run()
    assert len(calls) == 2 and calls[-1][-1] == "app/o.py"
    monkeypatch.setattr(ruff, "_KNOWN", {})
    assert run() == changed and len(calls) == 3
    # an editor's buffer of that file, of the text on disk: its reports too
    held = ruff.BUFFERS.set({"app/o.py": third})
    try:
        assert run() == changed and len(calls) == 3
    finally:
        ruff.BUFFERS.reset(held)


def test_ruff_is_not_run_when_ctx401_is_not_selected(project: Path, monkeypatch) -> None:
    """Every runnable rule derives its sets, whatever the selection: ruff runs
    from CTX401's check, which only a selected rule's run reaches."""
    calls = _count_ruff_runs(monkeypatch)
    write(project, {"app/n.py": TWICE_IMPORT})
    out = run_engine(project, select={"CTX501"})
    assert calls == []
    assert "ruff" not in out.program.sets[RULE]
    assert out.program.sets[RULE]["accessor names"]  # derived all the same
    out = run_engine(project, select={RULE, "CTX501"})
    assert len(calls) == 1
    assert [str(h) for h in ctx401.run_ruff_f811(project, ["app/n.py"], {"get_model"})[1]] == [
        "app/n.py:2:28: Redefinition of unused `get_model` from line 1"
    ]
    hit = ctx401.run_ruff_f811(project, ["app/n.py"], {"get_model"})[1][0]
    assert (hit.path, hit.row, hit.col, hit.name) == ("app/n.py", 2, 28, "get_model")


def test_without_ruff_the_rule_still_works(project: Path, monkeypatch) -> None:
    monkeypatch.setattr(ctx401, "_ruff_command", lambda: None)
    write(
        project,
        {
            "app/m.py": (
                "from specrt.context import get_exec, get_model\n"
                "from specrt.context import get_model\n\n\n"
                "def get_exec() -> None:\n"
                "    pass\n"
            )
        },
    )
    out = run_engine(project, select={RULE})
    assert [f.line for f in out.findings] == [5]
    assert out.program.sets[RULE]["ruff"].startswith("unavailable: ruff is not installed")


def test_messages(project: Path) -> None:
    write(
        project,
        {
            "app/m.py": (
                "from specrt.context import get_exec, get_model\n"
                "from app.other import get_model\n\n\n"
                "def f(get_exec) -> None:\n"
                "    get_exec\n\n\n"
                "def g() -> None:\n"
                "    get_exec = 1\n"
            ),
            "app/other.py": "def get_model() -> None: ...\n",
        },
    )
    out = run_engine(project, select={RULE})
    by_line = {(f.path, f.line): f for f in out.findings}
    imported = by_line[("app/m.py", 2)]
    assert "imported from `app.other.get_model`" in imported.message
    assert "specrt.context.get_model" in imported.message
    # no name is bound twice (the bag may be imported under another name): no F811 claim
    assert imported.details.startswith("import the other one under another name, so that")
    # a parameter is bound at entry: no use can come above it (sglang 0.5.17's
    # `EPLBManager.__init__(self, get_model)`), so no UnboundLocalError is claimed
    param = by_line[("app/m.py", 5)]
    assert "is a parameter of `f` and shadows the imported accessor" in param.message
    assert "UnboundLocalError" not in param.message
    assert "rename the parameter" in param.message
    shadow = by_line[("app/m.py", 10)]
    assert "shadows the imported accessor" in shadow.message
    assert "UnboundLocalError" in shadow.message
    # a parameter binds on entry (no UnboundLocalError): its remedy is its callers'
    param = by_line[("app/m.py", 5)]
    assert "shadows the imported accessor" in param.message
    assert "UnboundLocalError" not in param.message
    assert "any caller's `get_exec=` keyword" in param.details
    # the other module's own def meets no accessor: listed apart, not reported
    assert ("app/other.py", 1) not in by_line
    apart = out.program.sets[RULE][
        "accessor names bound where the module does not bind that accessor "
        "(no collision: not reported)"
    ]
    assert apart == ["app/other.py:1 def get_model"]


def test_a_parameter_passed_by_keyword_is_renamed_with_its_callers(project: Path) -> None:
    """sglang 0.5.23 eplb/eplb_manager.py:34: a keyword-only `get_model` that
    ModelRunner passes as `EPLBManager(get_model=...)`. "Rename the local" raised
    TypeError at that call; the hint names the callers' keyword, or the import."""
    write(
        project,
        {
            "app/manager.py": (
                "from specrt.context import get_model\n\n\n"
                "class Manager:\n"
                "    def __init__(self, *, get_model) -> None:\n"
                "        self.getter = get_model\n\n\n"
                "def build(get_model, other: int) -> object:\n"
                "    return get_model\n\n\n"
                "def only(get_model, /) -> object:\n"
                "    return get_model\n"
            ),
            "app/runner.py": (
                "from app import manager\n"
                "from app.manager import Manager\n\n\n"
                "def run() -> object:\n"
                "    return Manager(get_model=lambda: 1), manager.build(get_model=1, other=2)\n"
            ),
        },
    )
    out = run_engine(project, select={RULE})
    # the message says what and why; the callers and the alternatives are the details
    by_line = {f.line: f.details for f in out.findings if f.path == "app/manager.py"}
    assert "callers pass it by keyword (`get_model=` at app/runner.py:6)" in by_line[5]
    assert "raises TypeError there" in by_line[5]
    assert "import the accessor under another name" in by_line[5]
    assert "rename the local" not in by_line[5]
    assert "app/runner.py:6" in by_line[9]  # a positional parameter a caller names
    assert "positional-only: no caller names it" in by_line[13]


def test_accessor_names_are_derived(project: Path) -> None:
    write(project, {"app/m.py": "x = 1\n"})
    sets = run_engine(project, select={RULE}).program.sets[RULE]
    assert sets["accessor names"] == [
        "get_exec",
        "get_memory",
        "get_model",
        "get_parallel",
        "get_schedule",
        "get_server_args",
    ]


def test_member_shapes_use_the_class_index(project: Path) -> None:
    """Fixed by the class index: a receiver typed with a re-exported class
    (`from app import Loader`) was looked up under the re-export's name and
    reported as defining nothing; a `self.attr` typed in a base class (another
    file) was of unknown class. Both really define `get_model`, so neither is a
    finding now; their twins whose class lacks the method still are."""
    write(
        project,
        {
            **{k: textwrap.dedent(v) for k, v in LOADER.items()},
            "app/__init__.py": "from app.loader import Loader\n",
            "app/base.py": (
                "from app.loader import Loader\n\n\n"
                "class Base:\n"
                "    def __init__(self) -> None:\n"
                "        self.loader = Loader()\n"
                "        self.count = 0\n"
            ),
            "app/m.py": (
                "from app import Loader\n"
                "from app.base import Base\n\n\n"
                "def f(x: Loader) -> None:\n"
                "    x.get_model()\n"
                "    x.get_exec()\n\n\n"
                "class Child(Base):\n"
                "    def go(self) -> None:\n"
                "        self.loader.get_model()\n"
                "        self.count.get_model()\n"
            ),
        },
    )
    out = run_engine(project, select={RULE})
    found = sorted((f.path, f.line, f.message.split(":")[0]) for f in out.findings)
    assert found == [
        ("app/m.py", 7, "`x.get_exec` member shape"),
        ("app/m.py", 13, "`self.count.get_model` member shape on a receiver of unknown class"),
    ]


def test_a_member_holding_the_runners_model_is_renamed_not_replaced(project: Path) -> None:
    """sglang 0.5.23's `weight_updater.py`: a dataclass field `get_model` holds the
    runner's model getter beside the imported bag accessor. The hint renames the
    member; it never sends `self.get_model()` to the config bag (loading weights
    into the config would break), and `ctxlint fix` leaves it to a hand rename."""
    write(
        project,
        {
            "app/weights.py": (
                "from dataclasses import dataclass\n"
                "from typing import Any, Callable\n\n"
                "from specrt.context import get_model\n\n\n"
                "@dataclass\n"
                "class WeightUpdater:\n"
                "    get_model: Callable[[], Any]\n\n"
                "    def update(self) -> object:\n"
                "        path = get_model().model_path\n"
                "        return self.get_model(), path\n"
            ),
        },
    )
    (finding,) = run_engine(project, select={RULE}).findings
    assert (finding.line, finding.scope) == (9, "WeightUpdater")
    assert "rename the member and its uses" in finding.message
    assert "call `get_model()`" not in finding.message
