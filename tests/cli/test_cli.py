"""The command line: exit codes, the baseline ratchet, output formats and
options, and the rules / explain / sets / --version commands."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import run_cli
from helpers import cli, write

from ctxlint import __version__

READ = "from specrt.context import get_server_args\n\n\ndef f() -> int:\n    return get_server_args().tp_size\n"
WRITE = (
    "from specrt.record import ServerArgs\n\n\n"
    "def g(server_args: ServerArgs) -> None:\n    server_args.dp_size = 2\n"
)
BASELINE = "ctxlint-baseline.json"


@pytest.fixture
def findings_project(project: Path) -> Path:
    """The fixture project with one CTX101 (app/a.py) and one CTX201 (app/b.py);
    the config's `select` keeps later rules out of these exact assertions."""
    write(project, {"app/a.py": READ, "app/b.py": WRITE})
    cfg = project / "pyproject.toml"
    cfg.write_text(cfg.read_text() + 'select = ["CTX001", "ctx101", "CTX201"]\n')
    return project


def _json(res: object) -> dict:
    return json.loads(res.stdout)  # type: ignore[attr-defined]


def _entries(root: Path) -> list[dict]:
    return json.loads((root / BASELINE).read_text())["entries"]


# -- exit codes --------------------------------------------------------------------
def test_exit_codes_in_a_real_process(findings_project: Path) -> None:
    """0 clean, 1 new findings: the installed command, in a subprocess."""
    assert run_cli("check", cwd=findings_project).returncode == 1
    (findings_project / "app" / "a.py").write_text("X = 1\n")
    (findings_project / "app" / "b.py").write_text("Y = 2\n")
    res = run_cli("check", cwd=findings_project)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "All clear" in res.stdout


def test_the_command_runs_with_the_cyclic_gc_off_and_exits_with_mains_code() -> None:
    """`ctxlint` (cli.run) keeps the GC off for the whole command, not only the
    engine's run, and leaves through os._exit with main()'s code, output flushed."""
    probe = (
        "import gc, sys, ctxlint.cli.main as m\n"
        "m.main = lambda: print('gc on' if gc.isenabled() else 'gc off', end='') or 3\n"
        "m.run()\n"
        "print('not reached')\n"
    )
    res = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert (res.returncode, res.stdout, res.stderr) == (3, "gc off", "")


def test_stale_entry_fails_only_with_strict(findings_project: Path) -> None:
    """A pinned finding that went away: exit 0, but 1 under --strict with advice."""
    root = findings_project
    assert cli("baseline", "update", "--allow-growth", "--reason", "r", cwd=root).returncode == 0
    (root / "app" / "a.py").write_text("X = 1\n")
    assert cli("check", cwd=root).returncode == 0
    res = cli("check", "--strict", cwd=root)
    assert res.returncode == 1
    assert "ctxlint baseline update" in res.stderr
    doc = _json(cli("check", "--strict", "--format", "json", cwd=root))
    assert [(s["rule"], s["path"]) for s in doc["stale"]] == [("CTX101", "app/a.py")]
    assert doc["summary"]["CTX101"] == {"found": 0, "new": 0, "baselined": 0, "stale": 1}


# -- the ratchet -----------------------------------------------------------------
def test_baseline_ratchet_end_to_end(findings_project: Path) -> None:
    """Update never grows without --allow-growth; growth needs a reason and stores
    it; fixes must be locked in; new findings and moved findings fail."""
    root = findings_project
    res = cli("baseline", "update", cwd=root)
    assert res.returncode == 1
    assert "NOT added" in res.stdout and "--allow-growth" in res.stdout
    assert "2 new findings were NOT added: fix them, or accept them" in res.stdout
    assert _entries(root) == []

    res = cli("baseline", "update", "--allow-growth", cwd=root)
    assert res.returncode == 2 and "--reason" in res.stderr
    res = cli("baseline", "update", "--allow-growth", "--reason", "  ", cwd=root)
    assert res.returncode == 2

    res = cli("baseline", "update", "--allow-growth", "--reason", "legacy", cwd=root)
    assert res.returncode == 0, res.stderr
    assert "added 2" in res.stdout
    entries = _entries(root)
    assert sorted((e["rule"], e["path"], e["reason"]) for e in entries) == [
        ("CTX101", "app/a.py", "legacy"),
        ("CTX201", "app/b.py", "legacy"),
    ]
    assert cli("check", "--strict", cwd=root).returncode == 0
    doc = _json(cli("check", "--format", "json", cwd=root))
    assert {f["status"] for f in doc["findings"]} == {"baselined"}

    # fix one: stale until the baseline is updated, then clean under --strict
    (root / "app" / "b.py").write_text("Y = 2\n")
    assert cli("check", "--strict", cwd=root).returncode == 1
    res = cli("baseline", "update", cwd=root)
    assert res.returncode == 0 and "removed 1" in res.stdout
    assert [e["rule"] for e in _entries(root)] == ["CTX101"]
    assert cli("check", "--strict", cwd=root).returncode == 0

    # a new one fails, and plain update refuses it
    write(root, {"app/c.py": READ.replace("tp_size", "dp_size")})
    assert cli("check", cwd=root).returncode == 1
    assert cli("baseline", "update", cwd=root).returncode == 1
    assert len(_entries(root)) == 1
    (root / "app" / "c.py").unlink()

    # moving the pinned read to another file is new there and stale here
    (root / "app" / "a.py").write_text("X = 1\n")
    write(root, {"app/moved.py": READ})
    doc = _json(cli("check", "--format", "json", cwd=root))
    assert [(f["path"], f["status"]) for f in doc["findings"]] == [("app/moved.py", "new")]
    assert [s["path"] for s in doc["stale"]] == ["app/a.py"]
    assert cli("check", cwd=root).returncode == 1
    assert cli("baseline", "update", cwd=root).returncode == 1  # a move is growth


def test_baseline_update_refuses_path_filters(findings_project: Path) -> None:
    """`baseline update PATH` would grow the baseline outside PATH: refused."""
    root = findings_project
    res = cli("baseline", "update", "--allow-growth", "--reason", "r", "app/a.py", cwd=root)
    assert res.returncode == 2
    assert "whole tree" in res.stderr
    assert not (root / BASELINE).exists()


def test_baseline_show_prints_counts(findings_project: Path) -> None:
    """`baseline show` lists the total, per-rule counts and the entries."""
    root = findings_project
    cli("baseline", "update", "--allow-growth", "--reason", "why", cwd=root)
    res = cli("baseline", "show", cwd=root)
    assert res.returncode == 0
    assert "2 baseline entries" in res.stdout
    assert "CTX101: 1" in res.stdout and "CTX201: 1" in res.stdout
    assert "get_server_args().tp_size" in res.stdout


def test_baseline_option_points_elsewhere(findings_project: Path) -> None:
    """--baseline FILE is read and written instead of the configured one."""
    root = findings_project
    other = root / "elsewhere.json"
    res = cli(
        "baseline", "update", "--baseline", str(other), "--allow-growth", "--reason", "r", cwd=root
    )
    assert res.returncode == 0
    assert other.is_file() and not (root / BASELINE).exists()
    assert cli("check", "--baseline", str(other), cwd=root).returncode == 0
    assert cli("check", cwd=root).returncode == 1


# -- formats and options ------------------------------------------------------------
def test_text_report(findings_project: Path) -> None:
    """Findings grouped by file with a code frame, a summary and a closing line."""
    res = cli("check", cwd=findings_project)
    assert res.returncode == 1
    out = res.stdout
    assert "app/a.py:5:12" in out and "CTX101" in out
    assert "> 5 |     return get_server_args().tp_size" in out
    assert "app/b.py" in out and "CTX201" in out
    assert "2 new findings" in out


def test_json_report(findings_project: Path) -> None:
    """Schema 1 with sorted, project-relative findings."""
    doc = _json(cli("check", "--format", "json", cwd=findings_project))
    assert (doc["tool"], doc["schema"], doc["version"]) == ("ctxlint", 1, __version__)
    assert [(f["rule"], f["path"], f["line"]) for f in doc["findings"]] == [
        ("CTX101", "app/a.py", 5),
        ("CTX201", "app/b.py", 5),
    ]
    assert doc["findings"][0]["scope"] == "f" and doc["findings"][1]["scope"] == "g"


def test_sarif_github_junit(findings_project: Path) -> None:
    """The machine formats carry the findings in their own shapes."""
    root = findings_project
    sarif = _json(cli("check", "--format", "sarif", cwd=root))
    assert sarif["version"] == "2.1.0"
    results = sarif["runs"][0]["results"]
    assert sorted(r["ruleId"] for r in results) == ["CTX101", "CTX201"]
    assert all(r["partialFingerprints"] for r in results)

    github = cli("check", "--format", "github", cwd=root).stdout.splitlines()
    assert len(github) == 2
    assert github[0].startswith("::error file=app/a.py,line=5,")

    suite = ET.fromstring(cli("check", "--format", "junit", cwd=root).stdout)
    assert suite.get("failures") == "2"


def test_output_file(findings_project: Path) -> None:
    """--output writes the report to a file and nothing to stdout; exit code kept."""
    res = cli("check", "--format", "json", "--output", "report.json", cwd=findings_project)
    assert res.returncode == 1
    assert res.stdout == ""
    doc = json.loads((findings_project / "report.json").read_text())
    assert len(doc["findings"]) == 2


def test_select_and_ignore(findings_project: Path) -> None:
    """--select keeps only those rules, --ignore drops rules; the summary follows."""
    root = findings_project
    doc = _json(cli("check", "--format", "json", "--select", "CTX201", cwd=root))
    assert [f["rule"] for f in doc["findings"]] == ["CTX201"]
    assert list(doc["summary"]) == ["CTX201"]
    doc = _json(cli("check", "--format", "json", "--ignore", "ctx201,CTX001", cwd=root))
    assert [f["rule"] for f in doc["findings"]] == ["CTX101"]
    assert "CTX201" not in doc["summary"] and "CTX001" not in doc["summary"]
    res = cli("check", "--select", "CTX001", cwd=root)
    assert res.returncode == 0


def test_paths_filter_the_report(findings_project: Path) -> None:
    """`check PATH` reports only findings under PATH (the whole tree is analysed)."""
    doc = _json(cli("check", "--format", "json", "app/b.py", cwd=findings_project))
    assert [f["path"] for f in doc["findings"]] == ["app/b.py"]


def _count_rows(stdout: str) -> dict[str, tuple[str, ...]]:
    """rule -> (found, new, baselined, stale), read by column name from the table."""
    rows = [[t for t in re.split(r"[\s│┃]+", line) if t] for line in stdout.splitlines()]
    header = next(r for r in rows if {"found", "new", "baselined", "stale"} <= {*map(str.lower, r)})
    cols = [t.lower() for t in header]
    return {
        r[0]: tuple(
            dict(zip(cols, r, strict=True))[c] for c in ("found", "new", "baselined", "stale")
        )
        for r in rows
        if r and re.fullmatch(r"CTX\d{3}", r[0])
    }


def test_statistics(findings_project: Path) -> None:
    """--statistics prints counts per rule instead of findings: every column exact,
    with a new, a baselined and a stale count that differ from each other."""
    root = findings_project
    assert cli("baseline", "update", "--allow-growth", "--reason", "r", cwd=root).returncode == 0
    new_read = READ.replace("def f", "def h").replace("tp_size", "dp_size")
    write(root, {"app/c.py": new_read, "app/d.py": new_read})
    (root / "app" / "b.py").write_text("Y = 2\n")  # its CTX201 entry goes stale
    res = cli("check", "--statistics", cwd=root)
    assert res.returncode == 1
    assert "statistics" in res.stdout
    assert _count_rows(res.stdout) == {
        "CTX001": ("0", "0", "0", "0"),
        "CTX101": ("3", "2", "1", "0"),
        "CTX201": ("0", "0", "0", "1"),
    }
    assert "get_server_args().dp_size" not in res.stdout
    # the stale entries are counted, not listed; their heading keeps the hint
    assert "1 stale baseline entry (no longer found; run `ctxlint baseline update`" in res.stdout
    assert "app/b.py  CTX201" not in res.stdout
    # concise lists each stale entry with its snippet (entries of one scope apart)
    concise = cli("check", "--output-format", "concise", cwd=root).stdout
    assert "app/b.py: CTX201 stale baseline entry in g `server_args.dp_size`: no longer" in concise


def test_timings(findings_project: Path) -> None:
    """--timings prints seconds per phase and per rule on stderr."""
    res = cli("check", "--timings", "--format", "json", cwd=findings_project)
    json.loads(res.stdout)  # the report itself is untouched
    for name in ("discover", "vocabulary", "facts", "derive", "rule CTX101", "rule CTX201"):
        assert name in res.stderr, name


# -- other commands ----------------------------------------------------------------------
def test_rules_catalogue(project: Path) -> None:
    """`rules` lists every rule with its name."""
    res = cli("rules", cwd=project)
    assert res.returncode == 0
    for rid, name in (
        ("CTX001", "suppression-hygiene"),
        ("CTX101", "seed-read"),
        ("CTX201", "record-mutation"),
    ):
        assert rid in res.stdout and name in res.stdout


def test_explain_renders_the_spec(project: Path) -> None:
    """`explain CTX101` (any case) renders rules/CTX101.md."""
    res = cli("explain", "ctx101", cwd=project)
    assert res.returncode == 0
    assert "CTX101 seed-read" in res.stdout
    assert "What it protects" in res.stdout and "How to fix" in res.stdout
    assert "get_parallel().tp_size" in res.stdout


def test_explain_unknown_rule(project: Path) -> None:
    """A near miss gets a did-you-mean and exit 2."""
    res = cli("explain", "CTX110", cwd=project)
    assert res.returncode == 2
    line = res.stderr.strip()
    assert line.startswith("ctxlint: error: unknown rule 'CTX110' (did you mean 'CTX10")
    assert "\n" not in line


def test_sets_json(findings_project: Path) -> None:
    """`sets --format json` shows the derived vocabulary and every rule's sets."""
    res = cli("sets", "--format", "json", cwd=findings_project)
    assert res.returncode == 0
    data = json.loads(res.stdout)
    vocab = data["vocabulary"]
    assert vocab["seed accessors"] == ["get_server_args"]
    assert vocab["bag accessors"]["get_parallel"] == "parallel"
    assert vocab["bag accessors"]["get_exec"] == "exec"
    fields = vocab["record fields by namespace"]
    assert fields["parallel"] == ["dp_size", "tp_size"]
    assert fields["exec.kernel"] == ["attention_backend"]
    assert data["CTX201"]["record parameter names"] == ["server_args"]
    assert data["CTX101"]["files reading the seed"] == ["app/a.py"]


def test_sets_text(findings_project: Path) -> None:
    """The text tree shows the same sets."""
    res = cli("sets", cwd=findings_project)
    assert res.returncode == 0
    for text in (
        "seed accessors",
        "get_server_args",
        "get_parallel: parallel",
        "parallel: dp_size, tp_size",
        "record parameter names",
        "server_args",
    ):
        assert text in res.stdout, text


def test_version(tmp_path: Path) -> None:
    """`--version` prints the package version."""
    res = cli("--version", cwd=tmp_path)
    assert res.returncode == 0
    assert res.stdout.strip() == f"ctxlint {__version__}"


def test_usage_error_is_exit_2(project: Path) -> None:
    """An unknown format is a usage error."""
    res = cli("check", "--format", "yaml", cwd=project)
    assert res.returncode == 2
    assert "invalid choice" in res.stderr


def test_python_dash_m_ctxlint_is_the_command() -> None:
    import subprocess
    import sys

    from ctxlint import __version__

    res = subprocess.run(
        [sys.executable, "-m", "ctxlint", "--version"], capture_output=True, text=True
    )
    assert res.returncode == 0, res.stderr
    assert __version__ in res.stdout
