"""The hints a run gives work from where the user stands: the pin-gone hint
names the project as every `baseline update` hint does, the stale-entry hint
does not praise a run with new findings, and `--reason` alone is refused."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import cli, write
from test_ctx501 import PLUGIN, PLUGIN_USE  # a plugin base and its dispatch

READ = "from specrt.context import get_server_args\n\n\ndef f() -> int:\n    return get_server_args().tp_size\n"


def test_the_pin_gone_hint_names_the_project_from_above(project: Path) -> None:
    """From the repository's root (a hook), `ctxlint baseline update` alone finds
    no config; the pin finding names `baseline update proj`, and that works."""
    write(project, {"app/plugin.py": PLUGIN, **PLUGIN_USE})  # a dispatch: an interface
    assert cli("baseline", "update", cwd=project).returncode == 0
    (project / "app/plugin.py").write_text(
        PLUGIN.replace("def build(self, server_args, target)", "def make(self)")
    )
    above = project.parent
    for fmt in ("concise", "text", "github"):
        out = cli("check", "proj", "--select", "CTX501", "--format", fmt, cwd=above)
        assert out.returncode == 1, out.stderr
        assert "was pinned as" in out.stdout and "is gone" in out.stdout
        assert "record it with `ctxlint baseline update proj`" in out.stdout, out.stdout
    # JSON, as its project-relative paths, reads the same from every folder
    doc = json.loads(cli("check", "proj", "--format", "json", cwd=above).stdout)
    (gone,) = [f for f in doc["findings"] if "is gone" in f["message"]]
    assert gone["message"].endswith("record it with `ctxlint baseline update`")
    assert cli("baseline", "update", "proj", cwd=above).returncode == 0  # what it says works
    assert cli("check", "proj", "--select", "CTX501", cwd=above).returncode == 0
    # from the project's own folder the plain command is the one that works
    (project / "app/plugin.py").write_text(PLUGIN)
    here = cli("check", "--select", "CTX501", "--format", "concise", cwd=project)
    assert "record it with `ctxlint baseline update`" in here.stdout, here.stdout


def test_stale_entries_beside_new_findings_are_not_called_an_improvement(project: Path) -> None:
    write(project, {"app/a.py": READ})
    assert cli("baseline", "update", "--allow-growth", "--reason", "r", cwd=project).returncode == 0
    other = READ.replace("def f()", "def g()").replace("tp_size", "dp_size")
    write(project, {"app/a.py": "X = 1\n", "app/b.py": other})  # one fixed, one new (not moved)
    out = cli("check", "--strict", "--select", "CTX101", cwd=project)
    assert out.returncode == 1
    assert "got better" not in out.stderr, out.stderr
    assert out.stderr == (
        "1 stale baseline entry: fixed findings, beside 1 new one; `ctxlint baseline update` "
        "drops the entries and does not accept the new findings\n"
    )
    write(project, {"app/b.py": "Y = 1\n"})  # nothing new: the code did get better
    assert "the code got better" in cli("check", "--strict", cwd=project).stderr


def test_reason_without_allow_growth_is_an_error_before_the_run(project: Path) -> None:
    write(project, {"app/a.py": READ})
    out = cli("baseline", "update", "--reason", "accepted", cwd=project)
    assert out.returncode == 2
    assert out.stderr == (
        "ctxlint: error: --reason goes with --allow-growth: it is stored with the new "
        "findings that pins\n"
    )
    assert out.stdout == ""
    assert not (project / "ctxlint-baseline.json").exists()  # no run, nothing written


def test_the_moved_hint_names_the_project_from_above(project: Path) -> None:
    write(project, {"app/stats.py": READ})
    assert cli("baseline", "update", "--allow-growth", "--reason", "r", cwd=project).returncode == 0
    (project / "app" / "stats.py").rename(project / "app" / "metrics.py")
    out = cli("check", "proj", cwd=project.parent)
    hint = '`ctxlint baseline update proj --allow-growth --reason "moved"`'
    assert f"after review run {hint}" in out.stderr, out.stderr
    assert f"after review, {hint} records the move" in out.stdout
    assert cli(*hint.strip("`").replace('"', "").split()[1:], cwd=project.parent).returncode == 0
    assert cli("check", "--strict", "proj", cwd=project.parent).returncode == 0


NOQA = READ.replace("tp_size\n", "tp_size  # noqa: E501, CTX101\n")


def test_a_noqa_naming_a_rule_points_at_the_ctxlint_suppression(project: Path) -> None:
    write(project, {"app/a.py": NOQA})
    hint = (
        "ctxlint: warning: app/a.py:5: `# noqa: CTX101` is not read by ctxlint: write "
        "`# ctxlint: ignore[CTX101] <reason>` to suppress this finding\n"
    )
    for _ in range(2):  # cold, then from the cache: the same word
        res = cli("check", "--select", "CTX101", cwd=project)
        assert res.returncode == 1 and res.stderr == hint, res.stderr
    above = cli("check", "proj", "--select", "CTX101", "--format", "json", cwd=project.parent)
    assert above.stderr == hint.replace("app/a.py", "proj/app/a.py")
    # a noqa for other tools says nothing; the suppression it points at works
    write(project, {"app/a.py": READ.replace("tp_size\n", "tp_size  # noqa: E501\n")})
    assert cli("check", "--select", "CTX101", cwd=project).stderr == ""
    write(
        project, {"app/a.py": READ.replace("tp_size\n", "tp_size  # ctxlint: ignore[CTX101] x\n")}
    )
    assert cli("check", "--select", "CTX101", cwd=project).returncode == 0
