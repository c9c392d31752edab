"""The one check session: every front end (check, audit, the pytest plugin,
baseline update) sees the same findings for the same tree; pins are a finding
kind; findings carry their data into the JSON.

The tree is a copy of examples/legacy_app with its runtime and baseline, edited
so that every status shows: three entries dropped from the baseline (new
findings), one finding fixed (a stale entry) and one pin changed (a pin finding).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO
from helpers import cli, write

from ctxlint import session
from ctxlint.core.findings import PIN

CONFIG = "examples/legacy_app/ctxlint.toml"
BASELINE = "baselines/legacy_app.json"
APP = "examples/legacy_app"
PIN_KEY = "examples.legacy_app.speculative.SpecAlgorithm.propose"
DROPPED = ("CTX101", "CTX102", "CTX201")  # the first baseline entry of each: new findings
PLUGIN_ARGS = ("--ctxlint", "--ctxlint-config", CONFIG, "--ctxlint-root", ".")
FIXED = '"served_model_name": get_server_args().served_model_name,'  # CTX101: a stale entry


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("session") / "repo"
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(REPO / "src" / "ctxrt", root / "src" / "ctxrt", ignore=skip)
    shutil.copytree(REPO / APP, root / APP, ignore=skip)
    shutil.copy2(REPO / "examples" / "__init__.py", root / "examples" / "__init__.py")
    doc = json.loads((REPO / BASELINE).read_text())
    for rule in DROPPED:
        doc["entries"].remove(next(e for e in doc["entries"] if e["rule"] == rule))
    doc["pins"]["CTX501"][PIN_KEY] = "(self, token_ids)"
    (root / "baselines").mkdir()
    (root / BASELINE).write_text(json.dumps(doc, indent=2))
    readback = root / APP / "readback.py"
    text = readback.read_text()
    assert text.count(FIXED) == 1
    readback.write_text(text.replace(FIXED, '"served_model_name": "fixed",'))
    return root


def ctxlint(root: Path, *args: str) -> tuple[int, str]:
    res = cli(*args, "--config", CONFIG, "--jobs", "1", ".", cwd=root)
    return res.returncode, res.stdout + res.stderr


@pytest.fixture(scope="module")
def checked(tree: Path) -> dict[str, Any]:
    rc, out = ctxlint(tree, "check", "--strict", "--format", "json")
    assert rc == 1, out
    return json.loads(out)


def test_check_shows_every_status(checked: dict[str, Any]) -> None:
    new = [f for f in checked["findings"] if f["status"] == "new"]
    assert sorted(f["rule"] for f in new if "kind" not in f) == sorted(DROPPED)
    (pin,) = (f for f in new if f.get("kind") == PIN)
    assert pin["rule"] == "CTX501" and pin["data"] == {"key": PIN_KEY}
    assert [s["rule"] for s in checked["stale"]] == ["CTX101"]


def test_audit_lists_the_findings_check_reports(tree: Path, checked: dict[str, Any]) -> None:
    rc, out = ctxlint(tree, "audit", "--format", "json")
    assert rc == 0, out
    audit = json.loads(out)
    rows = {tuple(r.values()) for r in audit["findings"]}
    expected = {
        (f["rule"], f["status"], f["path"], f["line"], f["scope"], f["message"])
        for f in checked["findings"]
    }
    assert {r for r in rows if r[1] != "stale"} == expected
    assert sorted((r[0], r[2], r[4]) for r in rows if r[1] == "stale") == [
        (s["rule"], s["path"], s["scope"]) for s in checked["stale"]
    ]


def test_pytest_plugin_fails_with_the_findings_check_reports(
    tree: Path, checked: dict[str, Any]
) -> None:
    res = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *PLUGIN_ARGS],
        cwd=tree,
        capture_output=True,
        text=True,
        check=False,
    )
    assert res.returncode == 1, res.stdout + res.stderr
    new = set(re.findall(r"^  NEW   (\S+):(\d+):(\d+) \[(.*?)\] (.*)$", res.stdout, re.M))
    stale = set(re.findall(r"^  STALE (\S+) \[(.*?)\] (\w+):", res.stdout, re.M))
    assert new == {
        (f["path"], str(f["line"]), str(f["column"]), f["scope"], f["message"])
        for f in checked["findings"]
        if f["status"] == "new"
    }
    assert stale == {(s["path"], s["scope"], s["fingerprint"]) for s in checked["stale"]}
    failed = sorted(set(re.findall(r"^FAILED ctxlint::(CTX\d+)", res.stdout, re.M)))
    assert failed == sorted({*DROPPED, "CTX501"})  # CTX101 also has the stale entry


def test_the_session_api_gives_the_same_result(tree: Path, checked: dict[str, Any]) -> None:
    request = session.Request(
        config=str(tree / CONFIG), paths=(str(tree),), run=session.RunOptions(jobs=1)
    )
    result = session.check(session.resolve(request)).result
    assert [f.to_json() for f in result.findings] == checked["findings"]
    assert [s.to_json() for s in result.stale] == checked["stale"]


def test_baseline_update_pins_the_findings_check_reports(
    tree: Path, checked: dict[str, Any], tmp_path: Path
) -> None:
    """The pin finding is recorded as a pin, never as an entry; growth takes the
    new findings, and the stale entry goes."""
    root = tmp_path / "repo"
    shutil.copytree(tree, root)
    rc, out = ctxlint(root, "baseline", "update")
    assert rc == 1 and "removed 1, added 0" in out, out  # the new findings need --allow-growth
    doc = json.loads((root / BASELINE).read_text())
    assert doc["pins"]["CTX501"][PIN_KEY] == "(self, token_ids, num_tokens)"  # recorded
    rc, out = ctxlint(root, "baseline", "update", "--allow-growth", "--reason", "accepted")
    assert rc == 0 and "removed 0, added 3" in out, out
    doc = json.loads((root / BASELINE).read_text())
    violations = {f["fingerprint"] for f in checked["findings"] if f.get("kind") != PIN}
    assert {e["fingerprint"] for e in doc["entries"]} == violations
    assert ctxlint(root, "check", "--strict")[0] == 0


def test_findings_carry_their_field_in_the_json(checked: dict[str, Any]) -> None:
    """CTX101, CTX102, CTX105 and CTX603 name the field they read or declare (and
    its namespace when the runtime declares one), CTX204 the member it calls,
    CTX602 its kind, CTX301 the read in a callee; the other rules' findings have
    no data."""
    reads = [f for f in checked["findings"] if f["rule"] in ("CTX101", "CTX102")]
    assert reads and all(f["data"]["field"] in f["message"] for f in reads)
    named = [f for f in checked["findings"] if f["rule"] in ("CTX105", "CTX603")]
    assert named and all(f["data"]["field"] in f["message"] for f in named)
    calls = [f for f in checked["findings"] if f["rule"] == "CTX204"]
    assert calls and all(f"`.{f['data']['member']}()`" in f["message"] for f in calls)
    seed = next(f for f in reads if f["message"].startswith("`tp_size` read off the seed"))
    assert seed["data"] == {"field": "tp_size", "namespace": "parallel"}
    frozen = [f for f in checked["findings"] if f["rule"] == "CTX602"]
    assert all(f["data"]["kind"] in ("import", "global", "memo", "legacy", "hop") for f in frozen)
    roles = [f for f in checked["findings"] if f["rule"] == "CTX302"]
    assert roles and all(f["data"]["namespace"] in f["message"] for f in roles)
    plain = ("CTX101", "CTX102", "CTX103", "CTX104", "CTX105", "CTX204", "CTX302", "CTX501")
    plain += ("CTX602", "CTX603")
    # the guardrails of issue 36 name the field (CTX303, CTX403, CTX705) or the
    # configured width (CTX704) they are about
    guards = [f for f in checked["findings"] if f["rule"] in ("CTX303", "CTX403", "CTX705")]
    assert guards and all(f["data"]["field"] in f["message"] for f in guards)
    widths = [f for f in checked["findings"] if f["rule"] == "CTX704"]
    assert widths and all(f["data"]["leaf"] in f["message"] for f in widths)
    plain += ("CTX303", "CTX403", "CTX704", "CTX705")
    # CTX301 names the read it leads to where that sits in a callee (SARIF's
    # related location): `path:line` and what is read there
    related = [f for f in checked["findings"] if f["rule"] == "CTX301" and "data" in f]
    assert related and all(
        set(f["data"]) == {"related", "related_what"}
        and f["data"]["related"].rpartition(":")[2].isdigit()
        for f in related
    )
    plain += ("CTX301",)
    others = [f for f in checked["findings"] if f["rule"] not in plain]
    assert others and all("data" not in f for f in others)


def test_a_replayed_outcome_keeps_kind_and_data(tree: Path, checked: dict[str, Any]) -> None:
    """The warm run replays the stored outcome: kind and data survive it, and a
    --no-cache run agrees."""
    assert any("data" in f for f in checked["findings"])
    for extra in ((), ("--no-cache",)):
        rc, out = ctxlint(tree, "check", "--strict", "--format", "json", *extra)
        assert rc == 1 and json.loads(out) == checked, extra


@pytest.mark.parametrize("command", [("check", "--no-cache"), ("audit", "--no-cache")])
def test_a_run_discovers_the_tree_once(
    tree: Path, command: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session discovers the files once and hands them to the engine; the
    audit (its folders) and a PATH that selects nothing (its warning) read that
    list instead of walking the tree again."""
    from ctxlint.discover import files

    walks: list[Path] = []
    real = files._git_files  # what every discovery runs first (its global, so patchable)

    def counting(root: Path) -> Any:
        walks.append(root)
        return real(root)

    monkeypatch.setattr(files, "_git_files", counting)
    res = cli(*command, "--config", CONFIG, "--jobs", "1", ".", APP, CONFIG, cwd=tree)
    assert res.returncode in (0, 1), res.stderr
    assert res.stderr.endswith(f"ctxlint: warning: {CONFIG} is not a Python file: not checked\n")
    assert len(walks) == 1


def test_the_repository_baselines_hold_no_pin_entries() -> None:
    """A pin is never an entry: the checked-in baselines (format unchanged) say so."""
    for name in ("legacy_app.json", "sglang-0.5.23.json"):
        doc = json.loads((REPO / "baselines" / name).read_text())
        assert not any(e["snippet"].startswith("pin ") for e in doc["entries"]), name


def test_pytest_plugin_runs_the_selected_rules_and_skips_the_disabled(tmp_path: Path) -> None:
    """As `check`: the config's ignore drops a rule's item, and a rule this
    codebase cannot run skips, its baseline entries not stale (they were
    written when it could run, or by a later tree)."""
    from test_vocab_stages import DISABLED, PRE_MIGRATION

    write(tmp_path, PRE_MIGRATION)
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + 'ignore = ["CTX202"]\n')
    (seed,) = json.loads(cli("check", "--format", "json", cwd=tmp_path).stdout)["findings"]
    entries = [
        {k: seed[k] for k in ("rule", "path", "scope", "fingerprint")} | {"snippet": "x"},
        {"rule": "CTX601", "path": "old/server_args.py", "scope": "ServerArgs"}
        | {"fingerprint": "0" * 20, "snippet": "class ServerArgs"},
    ]
    baseline = {"schema": 1, "tool": "ctxlint", "entries": entries, "pins": {}}
    (tmp_path / "ctxlint-baseline.json").write_text(json.dumps(baseline))
    assert cli("check", "--strict", cwd=tmp_path).returncode == 0
    res = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-v", "-rs", "--ctxlint"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    ran = dict(re.findall(r"^ctxlint::(CTX\d+) (PASSED|SKIPPED)", res.stdout, re.M))
    assert ran == {
        "CTX001": "PASSED",
        "CTX101": "PASSED",
        "CTX102": "PASSED",
        "CTX105": "PASSED",  # the record's own rules run before any migration
        "CTX201": "PASSED",
        "CTX203": "PASSED",
        "CTX204": "PASSED",
        "CTX402": "PASSED",
        "CTX501": "PASSED",
        **dict.fromkeys(DISABLED, "SKIPPED"),
    }, res.stdout
    for rule, why in DISABLED.items():
        assert f"{rule} cannot run on this codebase: {why}" in res.stdout


def test_the_steps_re_check_one_edited_file_as_a_started_run_does() -> None:
    """What a resident front end (a language server) does on an edit: the
    program of the first run kept, the edited file's facts extracted again
    (session.Runs.steps), put in the program, derived and checked again. Its
    findings are the re-check's (the fix's path: Runs.recheck), and the edit
    shows in them: the read it removes is no longer reported."""
    from helpers import project_setup

    setup = project_setup(REPO / APP)
    runs = session.Runs(setup)
    first = runs.check(memo=False)  # memo=False: the program keeps its per-file facts
    rel = f"{APP}/readback.py"
    text = (REPO / rel).read_text()
    assert text.count(FIXED) == 1
    texts = {rel: text.replace(FIXED, '"served_model_name": "fixed",')}

    program = first.program
    steps = runs.steps(texts)
    _files, sources, _errors = steps.sources()
    module = program.files[rel]["module"]
    program.files[rel] = steps.facts([(rel, module)], sources, program.vocab)[rel]
    steps.derive(program)
    edited = steps.findings(program)

    rechecked = runs.recheck(texts, first).findings
    assert [f.to_json() for f in edited] == [f.to_json() for f in rechecked]
    gone = [f for f in first.findings if f not in edited]
    assert [(f.rule, f.path) for f in gone] == [("CTX101", rel)]
