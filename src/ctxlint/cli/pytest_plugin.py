"""`pytest --ctxlint`: one test item per rule, a drop-in for hand-written
ratchet tests. A rule's item fails with its new findings (and its stale
baseline entries: the ratchet is strict, as in CI).

The config is resolved at collection, so a config error stops the session
with one usage error instead of failing every rule's item; an error of the run
itself (a file that does not parse) fails the first item, and the others skip."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest

from ctxlint.baseline.ratchet import BaselineError, compare, load_baseline
from ctxlint.config.settings import Config, find_config, load_config
from ctxlint.core.errors import ConfigError, CtxlintError
from ctxlint.core.findings import Finding, StaleEntry
from ctxlint.discover.roots import check_roots, shown
from ctxlint.engine.registry import load_rules
from ctxlint.engine.run import Engine
from ctxlint.program.rule import Rule

_RESULT = pytest.StashKey[dict[str, Any]]()
_CONFIG = pytest.StashKey[Config]()


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
        self.add_marker("ctxlint")

    def runtest(self) -> None:
        self.config.stash[_ITEM] = self.nodeid
        result = _run(self.config)
        new = [f for f in result["findings"] if f.rule == self.rule.id and f.status == "new"]
        stale = [s for s in result["stale"] if s.rule == self.rule.id]
        if self.config.getoption("--ctxlint-no-strict"):
            stale = []
        if new or stale:
            raise CtxlintFailure(_describe(self.rule, new, stale))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, (CtxlintFailure, CtxlintError)):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"ctxlint {self.rule.id} {self.rule.name}"


def _describe(rule: Rule, new: list[Finding], stale: list[StaleEntry]) -> str:
    lines = [
        f"{rule.id} {rule.name}: {len(new)} new finding(s), {len(stale)} stale baseline entr(y/ies)"
    ]
    for f in new:
        lines.append(f"  NEW   {f.path}:{f.line}:{f.span.column} [{f.scope}] {f.message}")
    for s in stale:
        lines.append(
            f"  STALE {s.path} [{s.scope}] {s.fingerprint}: fixed; run `ctxlint baseline update`"
        )
    return "\n".join(lines)


def _resolve(config: pytest.Config, rules: list[Rule]) -> Config:
    """The ctxlint config for this session (ConfigError when it cannot be used)."""
    given = config.getoption("--ctxlint-config")
    root_opt = config.getoption("--ctxlint-root")
    here = Path(config.invocation_params.dir)  # options are relative to where pytest ran
    root = here / root_opt if root_opt else None
    if root is not None and not root.is_dir():
        raise ConfigError(f"--ctxlint-root {root_opt} is not a folder")
    if given:
        path = here / given
        if not path.is_file():
            raise ConfigError(f"--ctxlint-config {given} not found")
    else:
        path = find_config((root or Path(config.rootpath)).resolve())
    cfg = load_config(
        path,
        root=root,
        rule_ids=[r.id for r in rules],
        rule_options={k: v for r in rules for k, v in r.options.items()},
        rule_names=[r.name for r in rules],  # select/ignore may name rules (seed-read)
    )
    check_roots(cfg, lambda folder: f"pass --ctxlint-root {shown(folder)}")
    return cfg


def _run(config: pytest.Config) -> dict[str, Any]:
    if _RESULT in config.stash:
        result = config.stash[_RESULT]
        if "error" in result:  # reported by the item that ran first
            pytest.skip(f"ctxlint could not run; see {result['error_item']}")
        return result
    rules = load_rules()
    cfg = config.stash[_CONFIG]
    try:
        baseline = load_baseline(cfg.baseline) if cfg.baseline else None
        out = Engine(cfg, rules, pinned=baseline.pins if baseline else None).run()
        if out.errors:
            raise CtxlintError("; ".join(f"{e.path}: {e.message}" for e in out.errors))
    except (CtxlintError, BaselineError) as exc:
        config.stash[_RESULT] = {"error": str(exc), "error_item": _current(config)}
        raise CtxlintFailure(f"ctxlint could not run: {exc}") from None
    for rule in rules:  # a rule that checked less than its spec says so, as in `check`
        why = rule.partial(out.program.sets.get(rule.id, {}))
        if why:
            warnings.warn(f"ctxlint: {rule.id} {rule.name} is partial: {why}", stacklevel=1)
    findings, stale = (
        compare(out.findings, baseline, rules={r.id for r in rules})
        if baseline
        else (out.findings, [])
    )
    config.stash[_RESULT] = {"findings": findings, "stale": stale}
    return config.stash[_RESULT]


_ITEM = pytest.StashKey[str]()


def _current(config: pytest.Config) -> str:
    return config.stash.get(_ITEM, "the first ctxlint item")


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    if not config.getoption("--ctxlint"):
        return
    rules = load_rules()
    try:
        config.stash[_CONFIG] = _resolve(config, rules)
    except CtxlintError as exc:  # once, as a usage error, not once per rule
        raise pytest.UsageError(f"ctxlint: {exc}") from None
    for rule in rules:
        items.append(
            RuleItem.from_parent(
                session, name=f"ctxlint[{rule.id}]", nodeid=f"ctxlint::{rule.id}", rule=rule
            )
        )
