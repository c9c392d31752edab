"""`pytest --ctxlint`: one test item per selected rule, a drop-in for hand-written
ratchet tests. A rule's item fails with its new findings (and its stale
baseline entries: the ratchet is strict, as in CI); they are the findings of
`ctxlint check --strict`, through the same session.

The config is resolved at collection, so a config error stops the session
with one usage error instead of failing every rule's item; an error of the run
itself (a file that does not parse) fails the first item, and the others skip."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ctxlint import session
from ctxlint.baseline.ratchet import BaselineError
from ctxlint.cli import options
from ctxlint.core.errors import ConfigError, CtxlintError
from ctxlint.core.findings import Finding, StaleEntry
from ctxlint.core.shown_paths import opener
from ctxlint.program.rule import Rule
from ctxlint.session import Setup

_RESULT = pytest.StashKey[dict[str, Any]]()
_SETUP = pytest.StashKey[Setup]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ctxlint")
    group.addoption("--ctxlint", action="store_true", help="run ctxlint's rules as test items")
    group.addoption(
        "--ctxlint-config", help="ctxlint config file (default: nearest [tool.ctxlint])"
    )
    group.addoption(
        "--ctxlint-root",
        metavar="PATH",
        help="the tree to check (as PATH in `ctxlint check --config FILE PATH`; "
        "default: the config file's project root)",
    )
    group.addoption(
        "--ctxlint-no-strict", action="store_true", help="stale baseline entries do not fail"
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "ctxlint: a ctxlint rule run as a test item")


class CtxlintFailure(Exception):
    pass


class RuleItem(pytest.Item):
    def __init__(self, *, rule: Rule, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rule = rule
        # No fixtures, but the attribute a test function has: other plugins'
        # pytest_runtest_call wrappers look their fixtures up there, and one
        # that returns before its `yield` for an item without it (pytest-lsp 1.0)
        # fails every item of this plugin ("wrap_controller ... did not yield")
        self.funcargs: dict[str, Any] = {}
        self.add_marker("ctxlint")

    def runtest(self) -> None:
        self.config.stash[_ITEM] = self.nodeid
        result = _run(self.config)
        if self.rule.id in result["disabled"]:
            pytest.skip(
                f"{self.rule.id} cannot run on this codebase: {result['disabled'][self.rule.id]}"
            )
        new = [f for f in result["findings"] if f.rule == self.rule.id and f.status == "new"]
        stale = [s for s in result["stale"] if s.rule == self.rule.id]
        if self.config.getoption("--ctxlint-no-strict"):
            stale = []
        if new or stale:
            raise CtxlintFailure(
                _describe(self.rule, new, stale, _update_command(self.config), _opener(self.config))
            )

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, (CtxlintFailure, CtxlintError)):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"ctxlint {self.rule.id} {self.rule.name}"


def _update_command(config: pytest.Config) -> str:
    """`ctxlint baseline update` reaching this session's project from where pytest
    ran (with the config it was given: the plain command may update another)."""
    given = config.getoption("--ctxlint-config")
    here = Path(config.invocation_params.dir)
    return options.command_as_typed(
        config.stash[_SETUP].config,
        "baseline update",
        config_file=str(here / given) if given else None,
    )


def _opener(config: pytest.Config) -> Callable[[str], str]:
    """Project paths as seen from where pytest ran, as `ctxlint check` prints them."""
    return opener(str(config.stash[_SETUP].config.root), str(config.invocation_params.dir))


def _describe(
    rule: Rule,
    new: list[Finding],
    stale: list[StaleEntry],
    update: str,
    shown: Callable[[str], str],
) -> str:
    lines = [
        f"{rule.id} {rule.name}: {len(new)} new finding{'' if len(new) == 1 else 's'}, "
        f"{len(stale)} stale baseline entr{'y' if len(stale) == 1 else 'ies'}"
    ]
    for f in new:
        lines.append(f"  NEW   {shown(f.path)}:{f.line}:{f.span.column} [{f.scope}] {f.message}")
    for s in stale:
        lines.append(f"  STALE {shown(s.path)} [{s.scope}] {s.fingerprint}: fixed; run `{update}`")
    return "\n".join(lines)


def _resolve(config: pytest.Config) -> Setup:
    """The ctxlint setup for this session (ConfigError when it cannot be used)."""
    given = config.getoption("--ctxlint-config")
    root_opt = config.getoption("--ctxlint-root")
    here = Path(config.invocation_params.dir)  # options are relative to where pytest ran
    root = here / root_opt if root_opt else None
    if root is not None and not root.is_dir():
        raise ConfigError(f"--ctxlint-root {root_opt} is not a folder")
    if given and not (here / given).is_file():
        raise ConfigError(f"--ctxlint-config {given} not found")
    return session.resolve(
        session.Request(
            config=str(here / given) if given else None,
            root=str(root) if root is not None else None,
            search_from=str(root or Path(config.rootpath)),
            command=session.PYTEST,
            report=session.Report(disabled=session.QUIET, warn=_warn),
        )
    )


def _warn(message: str) -> None:
    warnings.warn(f"ctxlint: {message}", stacklevel=1)


def _run(config: pytest.Config) -> dict[str, Any]:
    if _RESULT in config.stash:
        result = config.stash[_RESULT]
        if "error" in result:  # reported by the item that ran first
            pytest.skip(f"ctxlint could not run; see {result['error_item']}")
        return result
    try:
        checked = session.check(config.stash[_SETUP])
        if checked.out.errors:
            shown = _opener(config)
            raise CtxlintError(
                "; ".join(f"{shown(e.path)}: {e.message}" for e in checked.out.errors)
            )
    except (CtxlintError, BaselineError) as exc:
        config.stash[_RESULT] = {"error": str(exc), "error_item": _current(config)}
        raise CtxlintFailure(f"ctxlint could not run: {exc}") from None
    result = checked.result
    config.stash[_RESULT] = {
        "findings": result.findings,
        "stale": result.stale,
        "disabled": result.disabled,
    }
    return config.stash[_RESULT]


_ITEM = pytest.StashKey[str]()


def _current(config: pytest.Config) -> str:
    return config.stash.get(_ITEM, "the first ctxlint item")


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    if not config.getoption("--ctxlint"):
        return
    try:
        config.stash[_SETUP] = _resolve(config)
    except CtxlintError as exc:  # once, as a usage error, not once per rule
        raise pytest.UsageError(f"ctxlint: {exc}") from None
    for rule in config.stash[_SETUP].selected:
        items.append(
            RuleItem.from_parent(
                session, name=f"ctxlint[{rule.id}]", nodeid=f"ctxlint::{rule.id}", rule=rule
            )
        )
