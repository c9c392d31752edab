"""Names handed as arguments are kept only where they can name program code.

`f(x)` hands `x`: the resolution part and CTX302 record such names, so that a
function handed by name (a hook, a pass) is followed. Most are locals, which
`FileContext.resolve` qualifies with the module for want of an import
(`app.jobs.x`); no function, class or import table of the program answers to
them, so the facts do not keep them (on sglang 0.5.23 they were 23 of the
facts' 94 MB). These tests pin what is kept, and that dropping the rest changes
nothing a run derives: the same findings, derived sets and parsed files as
when every name is kept.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from conftest import REPO
from helpers import run_engine

from ctxlint.engine.registry import file_visitors, load_rules
from ctxlint.facts.context import FileContext
from ctxlint.facts.extract import extract_file

JOBS = """\
import functools

from app import hooks


def run(step, config):
    local = step
    functools.reduce(local, [])
    hooks.register(helper, config.callback, later, hooks.default)
    return Worker(step)


class Worker:
    def start(self):
        self.loop(self.tick, self.pool)


def later():
    pass


def helper():
    pass
"""


def _facts(project: Path, rel: str, module: str, text: str) -> dict[str, Any]:
    path = project / rel
    path.write_text(textwrap.dedent(text))
    vocab = run_engine(project, select={"CTX201"}).program.vocab
    out = extract_file(rel, module, path.read_bytes(), vocab.to_json(), file_visitors(load_rules()))
    assert "error" not in out, out
    return out["facts"]  # type: ignore[no-any-return]


def test_a_modules_handed_locals_are_not_kept_its_defs_and_imports_are(project: Path) -> None:
    facts = _facts(project, "app/jobs.py", "app.jobs", JOBS)
    handed = {(h["fn"], h["callee"]): h["refs"] for h in facts["resolution"]["handed"]}
    assert handed == {
        # `later` and `helper` are defined after their use: kept all the same
        ("app.jobs.run", "app.hooks.register"): [
            "app.jobs.helper",
            "app.jobs.later",
            "app.hooks.default",
        ],
    }
    # `local` and `config.callback`, `self.tick`, `self.pool` were handed and not kept
    assert facts["resolution"]["local_handed"] == ["app.jobs.Worker.start", "app.jobs.run"]
    assert facts["CTX302"]["handed"] == {
        "app.jobs.run": [
            ["g", "app.jobs.helper"],
            ["g", "app.jobs.later"],
            ["g", "app.hooks.default"],
        ],
        "app.jobs.Worker.start": [["s", "tick"], ["s", "pool"]],
    }


def test_a_packages_init_keeps_every_name(project: Path) -> None:
    """`from .sub import f` binds `sub` in the package: `sub.g` names its function."""
    facts = _facts(
        project,
        "app/__init__.py",
        "app",
        "from .hooks import x\n\n\ndef run(v):\n    w = v\n    go(w, hooks.g)\n",
    )
    assert facts["resolution"]["handed"] == [
        {"fn": "app.run", "callee": "app.go", "refs": ["app.w", "app.hooks.g"]}
    ]
    assert "local_handed" not in facts["resolution"]


def test_may_name_program_code() -> None:
    ctx = mock.Mock(spec=FileContext, module="a.b", is_package=False, module_defs={"f", "C"})
    may = FileContext.may_name_program_code
    assert may(ctx, "a.b.f") and may(ctx, "a.b.C.meth") and may(ctx, "torch.zeros")
    assert may(ctx, "a.bc.x")  # another module that shares the prefix
    assert not may(ctx, "a.b.local") and not may(ctx, "a.b.self.x")
    ctx.is_package = True
    assert may(ctx, "a.b.sub.g")


def _derived(root: Path) -> tuple[Any, ...]:
    out = run_engine(root)
    sets = {k: repr(v) for k, v in sorted(out.program.sets.items())}
    return out.findings, sorted(out.program.files), sets, out.pins


@pytest.mark.parametrize("where", [".", "examples/legacy_app"])
def test_dropping_the_unkept_names_changes_nothing_a_run_derives(where: str) -> None:
    """On the repository's own check (ctxrt and the serving app) and the legacy app."""
    dropped = _derived(REPO / where)
    with mock.patch.object(FileContext, "may_name_program_code", lambda _self, _q: True):
        kept = _derived(REPO / where)
    assert dropped == kept
    assert dropped[2] and dropped[1], "the run derives sets over parsed files"
