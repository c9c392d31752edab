"""The probe part of bench/compare_guard_tests.py on its tiny tree (no wheel, no download):
ctxlint's verdict on every probe is the one the probe table expects, so the
comparison cannot rot silently."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]


def _compare() -> ModuleType:
    path = REPO / "bench" / "compare_guard_tests.py"
    spec = importlib.util.spec_from_file_location("compare_guard_tests", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve annotations through it
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def compared(tmp_path_factory: pytest.TempPathFactory) -> tuple[ModuleType, dict[str, Any]]:
    cmp = _compare()
    return cmp, cmp.compare_probes(tmp_path_factory.mktemp("probes"))


def test_the_base_tree_is_clean(compared: tuple[ModuleType, dict[str, Any]]) -> None:
    cmp, data = compared
    assert data["base_ctxlint_findings"] == 0
    hits = data["base_guard_hits"]
    # the tiny tree holds one of the publish guard's 15 hand-listed entries
    publish = len(cmp.load_guard("test_publish_precedes_bag_reads.py")._ENTRY_POINTS) - 1
    assert hits.pop("publish") == publish
    assert all(n in (0, None) for n in hits.values()), hits


def test_ctxlint_gives_every_probe_its_expected_verdict(
    compared: tuple[ModuleType, dict[str, Any]],
) -> None:
    _, data = compared
    wrong = [
        f"{r.name}: ctxlint {r.ctxlint}, expected {r.ctxlint_expected} ({r.ctxlint_saw})"
        for r in data["probes"]
        if r.ctxlint != r.ctxlint_expected
    ]
    assert not wrong, "\n".join(wrong)


def test_configuring_the_plugin_base_catches_every_plugin_probe(
    compared: tuple[ModuleType, dict[str, Any]],
) -> None:
    cmp, data = compared
    plugin = [r for r in data["probes"] if r.family == "plugin"]
    assert plugin
    for r in plugin:
        assert r.ctxlint_plugin_bases == cmp.verdict(r.positive, r.positive), r


def test_every_guard_scan_runs_and_detects_its_plainest_form(
    compared: tuple[ModuleType, dict[str, Any]],
) -> None:
    _, data = compared
    by_family: dict[str, set[str]] = {}
    for r in data["probes"]:
        by_family.setdefault(r.family, set()).add(r.guard)
    for family, verdicts in by_family.items():
        if verdicts == {"n/a (no ruff)"}:
            continue
        assert "detected" in verdicts, family


def test_probe_table_renders(compared: tuple[ModuleType, dict[str, Any]]) -> None:
    from dataclasses import asdict

    cmp, data = compared
    probes = dict(data, probes=[asdict(r) for r in data["probes"]])
    meta = {"date": "d", "machine": "m", "python": "3", "load_start": [0], "ctxlint": "0"}
    text = cmp.render({"meta": meta | {"jobs": 2}, "probes": probes})
    assert "| read-direct |" in text and "ctxlint, profile + plugin-bases" in text
