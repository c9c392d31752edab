"""`pytest --ctxlint`: one test item per rule, a drop-in for hand-written
ratchet tests. A rule's item fails with its new findings (and its stale
baseline entries: the ratchet is strict, as in CI)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ctxlint.baseline import compare, load_baseline
from ctxlint.config import find_config, load_config
from ctxlint.engine import Engine
from ctxlint.errors import CtxlintError
from ctxlint.model import Finding, StaleEntry
from ctxlint.rule import Rule, load_rules

_RESULT = pytest.StashKey[dict[str, Any]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ctxlint")
    group.addoption("--ctxlint", action="store_true", help="run ctxlint's rules as test items")
    group.addoption(
        "--ctxlint-config", help="ctxlint config file (default: nearest [tool.ctxlint])"
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


def _run(config: pytest.Config) -> dict[str, Any]:
    if _RESULT in config.stash:
        return config.stash[_RESULT]
    rules = load_rules()
    given = config.getoption("--ctxlint-config")
    path = Path(given) if given else find_config(Path(config.rootpath))
    cfg = load_config(
        path,
        rule_ids=[r.id for r in rules],
        rule_options={k: v for r in rules for k, v in r.options.items()},
        rule_names=[r.name for r in rules],  # select/ignore may name rules (seed-read)
    )
    baseline = load_baseline(cfg.baseline) if cfg.baseline else None
    out = Engine(cfg, rules, pinned=baseline.pins if baseline else None).run()
    findings, stale = (
        compare(out.findings, baseline, rules={r.id for r in rules})
        if baseline
        else (out.findings, [])
    )
    if out.errors:
        raise CtxlintError("; ".join(f"{e.path}: {e.message}" for e in out.errors))
    config.stash[_RESULT] = {"findings": findings, "stale": stale}
    return config.stash[_RESULT]


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    if not config.getoption("--ctxlint"):
        return
    for rule in load_rules():
        items.append(
            RuleItem.from_parent(
                session, name=f"ctxlint[{rule.id}]", nodeid=f"ctxlint::{rule.id}", rule=rule
            )
        )
