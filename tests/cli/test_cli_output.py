"""What a user sees of `ctxlint check` (issue 18, items 1-6 and 14): width off
a terminal, the one-line clean run, --quiet, --exit-zero, the concise format,
--color, rule selection by prefix and name, show-settings, --statistics in
JSON, CTX501's one-sentence messages, one progress bar, and escaped markup."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli
from helpers import cli, run_engine, write

from ctxlint.engine.registry import load_rules

READ = "from specrt.context import get_server_args\n\n\ndef f() -> int:\n    return get_server_args().tp_size\n"
WRITE = (
    "from specrt.record import ServerArgs\n\n\n"
    "def g(server_args: ServerArgs) -> None:\n    server_args.dp_size = 2\n"
)
LONG_LINE = "    return get_server_args().tp_size  # " + " ".join(["why"] * 40)
ANSI = "\x1b["


@pytest.fixture(autouse=True)
def _plain_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tests decide the width and colour themselves."""
    for name in ("COLUMNS", "NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def two_findings(project: Path) -> Path:
    """One CTX101 (app/a.py, on a 190-column line) and one CTX201 (app/b.py)."""
    write(project, {"app/a.py": READ.replace("    return get_server_args().tp_size", LONG_LINE)})
    write(project, {"app/b.py": WRITE})
    cfg = project / "pyproject.toml"
    cfg.write_text(cfg.read_text() + 'select = ["CTX001", "CTX101", "CTX201"]\n')
    return project


def piped(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """The real command with stdout a pipe (as in CI or pre-commit), extra env set."""
    environ = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "NO_COLOR")}
    environ.pop("FORCE_COLOR", None)
    return run_cli(*args, cwd=cwd, env={**environ, **env})


# -- 1: no hard wrap off a terminal; COLUMNS respected ---------------------------------
def test_piped_text_is_not_wrapped(two_findings: Path) -> None:
    res = piped("check", "--no-cache", cwd=two_findings)
    assert res.returncode == 1, res.stderr
    assert f"     > 5 | {LONG_LINE}" in res.stdout.splitlines()
    assert res.stdout.splitlines()[-1] == (
        "2 new findings, 0 stale baseline entries, 0 errors: checked 7 files under ., "
        "3 rules (CTX001 CTX101 CTX201), config pyproject.toml, no baseline"
    )

    narrow = piped("check", "--no-cache", cwd=two_findings, COLUMNS="60")
    assert narrow.returncode == 1
    assert max(len(line) for line in narrow.stdout.splitlines()) == 60
    assert f"     > 5 | {LONG_LINE}" not in narrow.stdout


def test_output_file_is_not_wrapped(two_findings: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "50")  # a file is no console: its width does not apply
    assert cli("check", "-o", "report.txt", cwd=two_findings).returncode == 1
    text = (two_findings / "report.txt").read_text()
    assert f"     > 5 | {LONG_LINE}" in text.splitlines()


def test_piped_audit_keeps_whole_paths(project: Path) -> None:
    deep = "app/" + "/".join(["a_rather_long_package_name"] * 3) + "/serving_module.py"
    write(project, {deep: READ})
    res = piped("audit", "--no-cache", cwd=project)
    assert res.returncode == 0, res.stderr
    assert deep in res.stdout
    assert "…" not in "".join(line for line in res.stdout.splitlines() if deep[-20:] in line)


# -- 2: a clean run is one line; each baselined count is said once -----------------------
def test_clean_run_is_one_line(project: Path) -> None:
    write(project, {"app/ok.py": "X = 1\n"})
    res = cli("check", "--no-cache", cwd=project)
    assert res.returncode == 0, res.stderr
    ids = [r.id for r in load_rules()]
    assert res.stdout.splitlines() == [  # every rule: counted, not the catalogue again
        f"All clear: checked 6 files under ., {len(ids)} rules, config pyproject.toml, no baseline"
    ]


def test_path_filter_says_how_many_files_it_reports_on(project: Path) -> None:
    """The whole program is checked; the closing line says the report covers the PATHs."""
    write(project, {"app/ok.py": "X = 1\n", "app/other.py": "Y = 2\n"})
    res = cli("check", "--no-cache", "app/ok.py", cwd=project)
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("All clear: checked 7 files under . (reporting on 1), ")
    res = cli("check", "--no-cache", "app", cwd=project)
    assert "checked 7 files under . (reporting on " in res.stdout
    assert "(reporting on 1)" not in res.stdout


def test_baselined_count_is_said_once(two_findings: Path) -> None:
    root = two_findings
    assert cli("baseline", "update", "--allow-growth", "--reason", "r", cwd=root).returncode == 0
    write(root, {"app/c.py": READ.replace("tp_size", "dp_size")})  # one new finding
    res = cli("check", "--no-cache", cwd=root)
    assert res.returncode == 1
    assert res.stdout.count("baselined") == 1
    assert res.stdout.splitlines()[-1].endswith(
        "baseline ctxlint-baseline.json (2 baselined findings)"
    )
    assert "app/a.py" not in res.stdout and "app/b.py" not in res.stdout


# -- 3: --quiet, --exit-zero, concise, --color, selection, show-settings -----------------
def test_quiet_prints_findings_only(two_findings: Path) -> None:
    res = cli("check", "--quiet", cwd=two_findings)
    assert res.returncode == 1
    assert "app/a.py:5:12  CTX101 seed-read  NEW" in res.stdout
    assert "checked" not in res.stdout and res.stderr == ""
    stats = cli("check", "-q", "--statistics", cwd=two_findings).stdout.splitlines()
    assert stats[0] == "ctxlint statistics" and not any("checked" in x for x in stats)
    assert [x.split()[0] for x in stats if x.startswith("CTX")] == ["CTX001", "CTX101", "CTX201"]
    (two_findings / "app/a.py").write_text("X = 1\n")
    (two_findings / "app/b.py").write_text("Y = 1\n")
    res = cli("check", "-q", cwd=two_findings)
    assert (res.returncode, res.stdout, res.stderr) == (0, "", "")


def test_exit_zero(two_findings: Path) -> None:
    failing = cli("check", cwd=two_findings)
    passing = cli("check", "--exit-zero", cwd=two_findings)
    assert (failing.returncode, passing.returncode) == (1, 0)
    assert passing.stdout == failing.stdout
    write(two_findings, {"app/broken.py": "def (:\n"})
    assert cli("check", "--exit-zero", cwd=two_findings).returncode == 2  # unchecked files


def test_concise_format(two_findings: Path) -> None:
    res = cli("check", "--output-format", "concise", cwd=two_findings)
    assert res.returncode == 1
    lines = res.stdout.splitlines()
    assert lines[:2] == [
        "app/a.py:5:12: CTX101 `tp_size` read off the seed record: it is the operator's raw "
        "input and misses resolution and overrides; read get_parallel().tp_size",
        "app/b.py:5:5: CTX201 write to record field `dp_size` (assignment): read-only after "
        "resolution: change it with get_context().override(...)",
    ]
    assert lines[2].startswith("2 new findings, 0 stale baseline entries, 0 errors: checked ")
    assert len(lines) == 3
    quiet = cli("check", "--format", "concise", "-q", cwd=two_findings)
    assert quiet.stdout.splitlines() == lines[:2]


def test_color_choices(two_findings: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert ANSI not in cli("check", cwd=two_findings).stdout  # not a terminal
    always = cli("check", "--color", "always", cwd=two_findings).stdout
    assert "\x1b[1m" in always  # bold
    assert ANSI not in cli("check", "--color", "never", cwd=two_findings).stdout
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert "\x1b[1m" in cli("check", cwd=two_findings).stdout
    monkeypatch.setenv("NO_COLOR", "1")  # NO_COLOR wins over FORCE_COLOR, bold and dim too
    assert ANSI not in cli("check", cwd=two_findings).stdout
    res = piped("check", "--color", "always", cwd=two_findings, NO_COLOR="1")
    assert "\x1b[1m" in res.stdout  # the command line wins over the environment


def _summary_rules(*args: str, cwd: Path) -> list[str]:
    res = cli("check", "--format", "json", *args, cwd=cwd)
    assert res.returncode in (0, 1), res.stderr
    return sorted(json.loads(res.stdout)["summary"])


def test_select_by_prefix_and_name(project: Path) -> None:
    ids = [r.id for r in load_rules()]

    def starting(*prefixes: str) -> list[str]:
        return [rid for rid in ids if rid.startswith(prefixes)]

    assert {"CTX101", "CTX102"} <= set(starting("CTX1"))  # a prefix selects several
    assert _summary_rules("--select", "CTX1", cwd=project) == starting("CTX1")
    assert _summary_rules("--select", "ctx1", cwd=project) == starting("CTX1")
    assert _summary_rules("--select", "seed-read,CTX6", cwd=project) == [
        "CTX101",
        *starting("CTX6"),
    ]
    kept = [rid for rid in ids if rid not in starting("CTX1", "CTX2", "CTX3", "CTX4")]
    assert {"CTX001", "CTX501"} <= set(kept)
    assert _summary_rules("--select", "ALL", "--ignore", "CTX1,CTX2,CTX3,CTX4", cwd=project) == kept
    assert _summary_rules("--ignore", "record-mutation,CTX0", cwd=project) == [
        rid for rid in ids if rid != "CTX201" and not rid.startswith("CTX0")
    ]
    res = cli("check", "--select", "seed-reed", cwd=project)
    assert res.returncode == 2
    assert res.stderr.strip().endswith("(did you mean 'seed-read'?)")
    assert "\n" not in res.stderr.strip()


def test_config_select_by_prefix_and_name(project: Path) -> None:
    cfg = project / "pyproject.toml"
    text = cfg.read_text()
    cfg.write_text(text + 'select = ["CTX2", "seed-read"]\nignore = ["record-copy"]\n')
    assert _summary_rules(cwd=project) == ["CTX101", "CTX201", "CTX203", "CTX204"]
    cfg.write_text(text + 'select = ["CTX9"]\n')
    res = cli("check", cwd=project)
    assert res.returncode == 2
    assert "unknown rule 'CTX9' in config key 'select'" in res.stderr


def test_show_settings(two_findings: Path) -> None:
    res = cli("show-settings", "--format", "json", "--select", "CTX1", cwd=two_findings)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    root = two_findings.resolve()
    assert [k for k in doc if k != k.lower().replace(" ", "-")] == []  # the config's key style
    assert doc["config-file"] == str(root / "pyproject.toml")
    assert doc["root"] == str(root)
    assert doc["src"] == ["."]
    assert doc["per-rule-exclude"] == {"CTX201": ["specrt/record.py"]}
    assert doc["baseline"] == f"{root / 'ctxlint-baseline.json'} (not written yet)"
    assert doc["cache-dir"] == str(root / ".ctxlint_cache")
    assert doc["selected-rules"] == [
        "CTX101 seed-read",
        "CTX102 supplied-exposure",
        "CTX103 resolution-view",
        "CTX104 declaration-writer",
        "CTX105 declaration-whitelist",
    ]
    assert doc["files-checked"] == 7
    assert sorted(doc["derived-set-sizes"]) == ["CTX101", "CTX102", "CTX103", "CTX104", "CTX105"]
    assert doc["derived-set-sizes"]["CTX101"]["seed accessors"] == 1
    text = cli("show-settings", "--select", "CTX1", cwd=two_findings).stdout
    assert f"config-file: {root / 'pyproject.toml'}" in text.splitlines()
    assert "  CTX102 supplied-exposure" in text.splitlines()


# -- 4: --statistics in the JSON --------------------------------------------------------
def test_json_statistics(two_findings: Path) -> None:
    plain = json.loads(cli("check", "--format", "json", cwd=two_findings).stdout)
    res = cli("check", "--format", "json", "--statistics", cwd=two_findings)
    assert res.returncode == 1
    doc = json.loads(res.stdout)
    assert {k: v for k, v in doc.items() if k not in ("statistics", "files_checked")} == plain
    assert doc["files_checked"] == 7
    assert doc["statistics"] == [
        {"rule": "CTX001", "name": "suppression-hygiene", "found": 0, "new": 0}
        | {"baselined": 0, "stale": 0},
        {"rule": "CTX101", "name": "seed-read", "found": 1, "new": 1, "baselined": 0, "stale": 0},
        {"rule": "CTX201", "name": "record-mutation", "found": 1, "new": 1}
        | {"baselined": 0, "stale": 0},
    ]
    res = cli("check", "--format", "sarif", "--statistics", cwd=two_findings)
    assert res.returncode == 2
    assert "--statistics works with --format text or json" in res.stderr


# -- 5: CTX501 messages are one sentence; the detail is asked for ------------------------
SAMPLER = """\
class Sampler:
    def sample(self, logits, temperature=1.0, top_p=1.0, top_k=-1, min_p=0.0, seed=None):
        raise NotImplementedError


class Greedy(Sampler):
    def sample(self, logits, temp=1.0, p=1.0, k=-1, mp=0.0, s=None):
        return 0


def use(s: Sampler) -> None:
    s.sample([1], temperature=0.5, top_p=0.9, top_k=5, min_p=0.1, seed=3)
"""


def test_ctx501_message_is_one_sentence(project: Path) -> None:
    write(project, {"app/s.py": SAMPLER})
    res = cli("check", "--format", "json", "--select", "CTX501", cwd=project)
    (f,) = json.loads(res.stdout)["findings"]
    assert f["message"] == (
        "`Greedy.sample` does not accept what the plugin base `Sampler.sample` is called with "
        "(unknown keyword `temperature`, and 4 more problems)"
    )
    details = f["details"].splitlines()
    assert details[:3] == [
        "override: Greedy.sample(self, logits, temp=1.0, p=1.0, k=-1, mp=0.0, s=None)",
        "base: Sampler.sample(self, logits, temperature=1.0, top_p=1.0, top_k=-1, min_p=0.0, "
        "seed=None)",
        "problems:",
    ]
    assert len(details) == 3 + 5
    text = cli("check", "--select", "CTX501", cwd=project).stdout
    assert "problems:" not in text and "Sampler.sample(self" not in text
    shown = cli("check", "--select", "CTX501", "--show-details", cwd=project).stdout.splitlines()
    assert "      problems:" in shown
    assert "        - unknown keyword `seed` at the dispatch app/s.py:12" in shown


# -- 6: one progress bar, labelled by phase ---------------------------------------------
def test_progress_is_one_count_over_all_phases(project: Path) -> None:
    write(project, {f"app/m{i}.py": READ for i in range(4)} | {"app/plain.py": "X = 1\n"})
    seen: list[tuple[int, int, str]] = []
    out = run_engine(project, jobs=1)
    assert out.files_checked == 10
    from ctxlint.config.settings import find_config, load_config
    from ctxlint.engine.registry import load_rules
    from ctxlint.engine.run import Engine

    rules = load_rules()
    config = load_config(
        find_config(project),
        rule_ids=[r.id for r in rules],
        rule_options={k: v for r in rules for k, v in r.options.items()},
    )
    Engine(config, rules, jobs=1, use_cache=False, progress=lambda *a: seen.append(a)).run()
    done = [d for d, _, _ in seen]
    totals = [t for _, t, _ in seen]
    assert done == sorted(done) and totals == sorted(totals)  # never restarts
    assert all(d <= t for d, t, _ in seen)
    phases = list(dict.fromkeys(p for _, _, p in seen))
    assert phases == ["declarations", "parsing", "syntax", "checking"]
    assert seen[-1][0] == seen[-1][1] == done[-1]


# -- 14: markup in text is printed as written --------------------------------------------
def test_sets_and_rules_print_brackets(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ctxlint.rules import ctx401_accessor_binding as ctx401

    # a derived set's text with brackets (ruff is a dependency now: its own message has none)
    status = "unavailable: see ctxlint[dev]"
    monkeypatch.setattr(ctx401, "run_ruff_f811", lambda root, paths, names: (status, []))
    write(
        project,
        {
            "app/twice.py": "from specrt.context import get_server_args\n\n\n"
            "def get_server_args():\n    return 1\n"
        },
    )
    out = cli("sets", "--no-cache", "--select", "CTX401", cwd=project).stdout
    assert status in out
    monkeypatch.setattr(ctx401.RULE, "summary", "needs [bold]ruff[/bold] (ctxlint[dev])")
    assert "needs [bold]ruff[/bold] (ctxlint[dev])" in cli("rules", cwd=project).stdout


def test_pytest_plugin_reads_a_config_that_names_rules(project: Path) -> None:
    cfg = project / "pyproject.toml"
    cfg.write_text(cfg.read_text() + 'select = ["seed-read", "CTX2"]\n')
    write(project, {"app/bad.py": READ})
    res = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--ctxlint", "-rf"],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    assert res.returncode == 1, res.stdout
    assert "FAILED ctxlint::CTX101" in res.stdout
    assert "unknown rule" not in res.stdout


def test_timings_charge_each_rule_its_visitors_derive_and_check(project: Path) -> None:
    from ctxlint.config.settings import find_config, load_config
    from ctxlint.engine.registry import load_rules
    from ctxlint.engine.run import Engine

    write(project, {"app/a.py": READ, "app/b.py": WRITE})
    rules = load_rules()
    config = load_config(
        find_config(project),
        rule_ids=[r.id for r in rules],
        rule_options={k: v for r in rules for k, v in r.options.items()},
    )
    with_visitors = {r.id for r in rules if r.visitor is not None}
    # every rule but CTX001 (it reads suppressions), CTX301 (it queries the
    # program's call graph, whose visitor is the part "calls") and CTX103/CTX104
    # (the part "resolution") has its own visitor
    assert {r.id for r in rules} - with_visitors == {"CTX001", "CTX103", "CTX104", "CTX301"}
    timed = Engine(config, rules, jobs=1, use_cache=False, time_rules=True).run().timings
    for rule in rules:
        assert timed[f"rule {rule.id} derive"] > 0
        assert timed[f"rule {rule.id} check"] > 0
        assert (f"rule {rule.id} visit" in timed) == (rule.id in with_visitors)
    assert all(timed[f"rule {rid} visit"] > 0 for rid in with_visitors)
    assert timed["records visit"] > 0 and timed["calls visit"] > 0 and timed["parse"] > 0
    plain = Engine(config, rules, jobs=1, use_cache=False).run().timings
    assert not [k for k in plain if k.endswith(" visit")]  # no clock in the walk unless asked

    res = cli("check", "--timings", "--no-cache", "--format", "json", cwd=project)
    rows = {
        line.split()[1]: line.split()[2:] for line in res.stderr.splitlines() if "rule " in line
    }
    assert sorted(rows) == sorted(r.id for r in rules)
    assert rows["CTX001"][0] == "-"  # no visitor
    assert all(len(cells) == 4 for cells in rows.values())


def test_audit_header_prints_a_bracketed_folder_name(project: Path, tmp_path: Path) -> None:
    import shutil

    root = tmp_path / "serving[dev]"
    shutil.copytree(project, root)
    res = cli("audit", "--no-cache", cwd=root)
    assert res.returncode == 0, res.stderr
    assert "ctxlint audit · serving[dev]" in res.stdout


def test_piped_explain_is_prose_width(project: Path) -> None:
    res = piped("explain", "CTX101", cwd=project)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert [line for line in lines if line != line.rstrip()] == []  # no padding to the width
    assert 72 < max(len(line) for line in lines) <= 100  # wrapped at the prose width
    assert "What it protects" in res.stdout
    narrow = piped("explain", "CTX101", cwd=project, COLUMNS="72").stdout.splitlines()
    assert max(len(line) for line in narrow) <= 72 and len(narrow) > len(lines)


def test_concise_paths_open_from_the_working_folder(two_findings: Path, tmp_path: Path) -> None:
    """`check --config python/pyproject.toml python/` (SGLang's shape): the paths
    carry the `python/` prefix; a tree outside the working folder is absolute."""
    import shutil

    repo = tmp_path / "repo"
    shutil.copytree(two_findings, repo / "python")
    args = ("check", "--config", "python/pyproject.toml", "python", "--format", "concise", "-q")
    res = cli(*args, cwd=repo)
    assert [line.split(": ")[0] for line in res.stdout.splitlines()] == [
        "python/app/a.py:5:12",
        "python/app/b.py:5:5",
    ]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    cfg = str(repo / "python" / "pyproject.toml")
    res = cli(
        "check", "--config", cfg, str(repo / "python"), "--format", "concise", "-q", cwd=elsewhere
    )
    assert res.stdout.splitlines()[0].startswith(f"{(repo / 'python').resolve()}/app/a.py:5:12: ")


def test_the_code_frame_honours_the_coding_declaration(project: Path) -> None:
    """N6: a latin-1 file (PEP 263) shows its characters in the frame, not U+FFFD."""
    source = (
        "# -*- coding: latin-1 -*-\n"
        "from specrt.context import get_server_args\n\n\n"
        "def f() -> int:\n"
        "    return get_server_args().tp_size  # taille: é\n"
    )
    (project / "app" / "latin.py").write_bytes(source.encode("latin-1"))
    res = cli("check", "--select", "CTX101", cwd=project)
    assert res.returncode == 1, res.stderr
    assert "return get_server_args().tp_size  # taille: é" in res.stdout, res.stdout
    assert "\ufffd" not in res.stdout
