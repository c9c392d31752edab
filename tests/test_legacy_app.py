"""examples/legacy_app: the serving example before the migration, pinned in
baselines/legacy_app.json, and the ratchet on it (fix, add, move a finding).

Every test works on a copy of the runtime, the example, its config and its
baseline under tmp_path; the repository is never written."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, run_cli
from helpers import cli

from ctxlint.engine.registry import load_rules

CONFIG = "examples/legacy_app/ctxlint.toml"
BASELINE = "baselines/legacy_app.json"
APP = "examples/legacy_app"

# One CTX101 read the tests fix or move (readback.py, scope server_info).
SEED_READ = '"served_model_name": get_server_args().served_model_name,'


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The needed tree copied once, checked once so its fact cache is warm."""
    root = tmp_path_factory.mktemp("legacy") / "repo"
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(REPO / "src" / "ctxrt", root / "src" / "ctxrt", ignore=skip)
    shutil.copytree(REPO / APP, root / APP, ignore=skip)
    shutil.copy2(REPO / "examples" / "__init__.py", root / "examples" / "__init__.py")
    (root / "baselines").mkdir()
    shutil.copy2(REPO / BASELINE, root / BASELINE)
    run(root, "check")
    return root


@pytest.fixture
def tree(pristine: Path, tmp_path: Path) -> Path:
    """A private copy of the pristine tree (cache included) that a test may edit."""
    root = tmp_path / "repo"
    shutil.copytree(pristine, root)
    return root


def run(root: Path, *args: str) -> tuple[int, str]:
    """`ctxlint ARGS --config CONFIG .` in-process, from the copied tree's root."""
    result = cli(*args, "--config", CONFIG, "--jobs", "1", ".", cwd=root)
    return result.returncode, result.stdout + result.stderr


def check(root: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    rc, out = run(root, "check", "--format", "json", *extra)
    assert rc in (0, 1), out
    report = json.loads(out)
    assert report["errors"] == [], report["errors"]
    return rc, report


def entries(root: Path) -> list[dict[str, Any]]:
    return json.loads((root / BASELINE).read_text())["entries"]


def edit(root: Path, rel: str, old: str, new: str) -> None:
    path = root / APP / rel
    text = path.read_text()
    assert text.count(old) == 1, f"{old!r} not once in {rel}"
    path.write_text(text.replace(old, new))


def by_status(report: dict[str, Any], status: str) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["status"] == status]


def test_every_rule_has_two_pinned_findings_and_strict_check_passes(tree: Path) -> None:
    rc, report = check(tree, "--strict")
    assert rc == 0, report
    assert report["stale"] == [] and by_status(report, "new") == []
    found = Counter(f["rule"] for f in report["findings"])
    pinned = Counter(e["rule"] for e in entries(tree))
    assert found == pinned
    for rule in load_rules():
        if rule.id == "CTX203":
            continue  # below: it can only report the runtime's own record class
        assert found[rule.id] >= 2, f"{rule.id}: {found[rule.id]} finding(s) in the legacy app"
    # CTX203 reads the record class and its bases alone: here that is ctxrt's
    # ServerArgs, which the repository's own check holds clean (test_self_check),
    # so the example cannot carry one. It did look: the lineage is derived.
    sets = run_cli(
        "sets", "--select", "CTX203", "--format", "json", "--config", str(tree / CONFIG), str(tree)
    )
    lineage = json.loads(sets.stdout)["CTX203"]["record lineage"]
    assert lineage == ["ctxrt.record.ServerArgs"] and found["CTX203"] == 0
    # the plugin base's hook signatures are pinned too
    pins = json.loads((tree / BASELINE).read_text())["pins"]["CTX501"]
    assert set(pins) == {
        "examples.legacy_app.speculative.SpecAlgorithm.build_draft",
        "examples.legacy_app.speculative.SpecAlgorithm.propose",
    }


def test_fixing_a_finding_is_stale_until_update_then_the_baseline_shrinks_by_one(
    tree: Path,
) -> None:
    before = entries(tree)
    edit(tree, "readback.py", SEED_READ, SEED_READ.replace("get_server_args()", "get_model()"))
    edit(tree, "readback.py", "import get_observability,", "import get_model, get_observability,")

    rc, report = check(tree, "--strict")
    assert rc == 1
    assert by_status(report, "new") == []
    [stale] = report["stale"]
    assert stale["rule"] == "CTX101" and stale["path"] == f"{APP}/readback.py"
    assert check(tree)[0] == 0  # stale fails only under --strict

    rc, out = run(tree, "baseline", "update")
    assert rc == 0, out
    after = entries(tree)
    assert len(after) == len(before) - 1
    assert [e for e in before if e not in after] == [
        e for e in before if e["fingerprint"] == stale["fingerprint"]
    ]
    assert check(tree, "--strict")[0] == 0


def test_a_new_finding_fails_and_update_without_growth_does_not_add_it(tree: Path) -> None:
    before = entries(tree)
    path = tree / APP / "scheduler.py"
    path.write_text(
        path.read_text()
        + "\n\ndef prefill_budget(server_args: ServerArgs) -> int:\n"
        + "    return server_args.chunked_prefill_size\n"
    )
    rc, report = check(tree)
    assert rc == 1
    [new] = by_status(report, "new")
    assert (new["rule"], new["path"], new["scope"]) == (
        "CTX102",
        f"{APP}/scheduler.py",
        "prefill_budget",
    )
    assert report["stale"] == []

    rc, out = run(tree, "baseline", "update")
    assert rc == 1 and "NOT added" in out
    assert entries(tree) == before
    assert check(tree)[0] == 1


def test_moving_a_finding_to_another_file_is_a_new_finding_and_a_stale_entry(tree: Path) -> None:
    before = entries(tree)
    edit(tree, "readback.py", SEED_READ, '"served_model_name": served_model_name(),')
    edit(
        tree,
        "readback.py",
        "from ctxrt.context import",
        "from examples.legacy_app.detokenizer import served_model_name\nfrom ctxrt.context import",
    )
    path = tree / APP / "detokenizer.py"
    path.write_text(
        path.read_text()
        + "\n\ndef served_model_name() -> str:\n"
        + "    return get_server_args().served_model_name\n"
    )
    for strict in ((), ("--strict",)):
        rc, report = check(tree, *strict)
        assert rc == 1
        [new] = by_status(report, "new")
        [stale] = report["stale"]
        assert new["rule"] == stale["rule"] == "CTX101"
        assert new["path"] == f"{APP}/detokenizer.py" and stale["path"] == f"{APP}/readback.py"

    # without --allow-growth the update drops the stale entry and never adds the moved one
    rc, out = run(tree, "baseline", "update")
    assert rc == 1 and "NOT added" in out
    after = entries(tree)
    assert len(after) == len(before) - 1
    assert all(e in before for e in after)
    rc, report = check(tree, "--strict")
    assert rc == 1 and report["stale"] == [] and len(by_status(report, "new")) == 1
