"""Issue 18's integration items as a user meets them: ruff as a dependency,
paths in CI formats, the pytest plugin's tree root, configs found from a path,
`explain`'s labelled examples."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import cli, write

from ctxlint.engine.registry import load_rules
from ctxlint.rules import ctx401_accessor_binding as ctx401

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]

# read inside a function: at module level it would be an import-time read too (CTX602)
SEED_READ = "from specrt.context import get_server_args\n\nX = lambda: get_server_args().tp_size\n"
# two meanings of the name: the rule reports line 1, ruff's F811 line 2
TWICE = "from app.loader import get_model\nfrom specrt.context import get_model\n"


# -- item 12: ruff is the linter's dependency; without it CTX401 says it is partial
def test_ruff_is_a_dependency_of_the_linter_not_only_of_dev() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    names = {d.split(">")[0].split("=")[0].split(";")[0].strip() for d in project["dependencies"]}
    assert "ruff" in names


def test_without_ruff_ctx401_is_reported_partial_on_every_run(project: Path, monkeypatch) -> None:
    write(project, {"app/m.py": TWICE})
    monkeypatch.setattr(ctx401, "_ruff_command", lambda: None)
    warning = "ctxlint: warning: CTX401 accessor-binding is partial: ruff F811"
    for extra in (["--no-cache"], [], [], ["--format", "json"]):  # cold, stored, replayed, json
        out = cli("check", *extra, cwd=project)
        assert out.stderr.count(warning) == 1, out.stderr
    # CTX401 not selected: nothing to say
    assert "partial" not in cli("check", "--select", "CTX101", cwd=project).stderr


def test_with_ruff_ctx401_is_complete_and_says_nothing(project: Path) -> None:
    write(project, {"app/m.py": TWICE})
    out = cli("check", "--no-cache", cwd=project)
    assert "partial" not in out.stderr
    assert "ruff F811" in out.stdout


# -- item 16: `explain` says which example is bad and which good, and what specrt is
def test_explain_labels_every_example_and_says_what_specrt_is(tmp_path: Path) -> None:
    from specs import examples

    for rid in ("CTX101", "CTX202", "CTX601"):
        blocks = examples(REPO / "rules" / f"{rid}.md")
        kinds = [e.kind for e in blocks]
        out = cli("explain", rid, cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        text = " ".join(out.stdout.split())  # rich wraps at the console width
        for kind in ("bad", "good"):
            n = kinds.count(kind)
            labels = [f"{kind.upper()} example {i} of {n}" for i in range(1, n + 1)]
            assert [label for label in labels if label in text] == labels
            assert f"{kind.upper()} example {n + 1} " not in text
        assert text.count("The examples import specrt, the small fixture runtime") == 1
        assert "ctxlint reports nothing here" in text or "good" not in kinds
        first_bad = next(e for e in blocks if e.kind == "bad")
        marks = len(first_bad.expected)
        assert f"BAD example 1 of {kinds.count('bad')}: ctxlint reports {marks} finding" in text


# -- item 11: the natural command on a config in a subfolder; which command would work
def _legacy_tree(root: Path) -> Path:
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", ".ctxlint_cache")
    shutil.copytree(REPO / "src" / "ctxrt", root / "src" / "ctxrt", ignore=skip)
    shutil.copytree(REPO / "examples" / "legacy_app", root / "examples" / "legacy_app", ignore=skip)
    shutil.copy2(REPO / "examples" / "__init__.py", root / "examples" / "__init__.py")
    (root / "baselines").mkdir()
    shutil.copy2(REPO / "baselines" / "legacy_app.json", root / "baselines" / "legacy_app.json")
    # the example's config names its repository as root (`root = "../.."`): allowed
    # inside the git work tree that holds it (docs/untrusted-trees.md)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def test_check_and_audit_of_the_example_folder_work_as_typed(tmp_path: Path) -> None:
    root = _legacy_tree(tmp_path / "repo")
    pinned = len(json.loads((root / "baselines" / "legacy_app.json").read_text())["entries"])
    typed = cli("check", "--strict", "--format", "json", "examples/legacy_app", cwd=root)
    assert typed.returncode == 0, typed.stderr
    report = json.loads(typed.stdout)
    assert report["errors"] == [] and report["stale"] == []
    assert len(report["findings"]) == pinned
    assert {f["status"] for f in report["findings"]} == {"baselined"}
    # the same as the explicit form, and from inside the folder
    explicit = cli(
        "check", "--format", "json", "--config", "examples/legacy_app/ctxlint.toml", ".", cwd=root
    )
    assert json.loads(explicit.stdout)["findings"] == report["findings"]
    inside = cli("check", "--strict", "--format", "json", cwd=root / "examples" / "legacy_app")
    assert inside.returncode == 0 and json.loads(inside.stdout)["findings"] == report["findings"]
    audit = cli("audit", "--format", "json", "examples/legacy_app", cwd=root)
    assert audit.returncode == 0, audit.stderr
    assert json.loads(audit.stdout)["summary"]["found"] == pinned


def test_missing_roots_name_the_command_that_would_work(tmp_path: Path) -> None:
    shutil.copytree(REPO / "tests" / "fixtures" / "specrt" / "specrt", tmp_path / "src" / "specrt")
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "ctxlint.toml").write_text(
        '[tool.ctxlint]\nruntime-module = "specrt.context"\n'
        'record-class = "specrt.record.ServerArgs"\nsrc = ["src"]\n'
    )
    out = cli("check", "tools", cwd=tmp_path)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr == (
        "ctxlint: error: src root 'src' is not a folder under tools (roots are relative to "
        "the project root, the config's folder); they are all under .: run "
        '`ctxlint check --config tools/ctxlint.toml .`, or set root = ".." in '
        "tools/ctxlint.toml\n"
    )
    # and the suggested command works
    assert cli("check", "--config", "tools/ctxlint.toml", ".", cwd=tmp_path).returncode == 0
    # the tree given with --config: its config's `root` played no part, so only
    # the command is suggested (hwalk: "or set root" named a key already set)
    out = cli("check", "--config", "tools/ctxlint.toml", "tools", cwd=tmp_path)
    assert out.returncode == 2
    assert out.stderr.endswith(
        "they are all under .: run `ctxlint check --config tools/ctxlint.toml .`\n"
    ), out.stderr


def test_missing_roots_never_suggest_a_folder_outside_the_git_work_tree(tmp_path: Path) -> None:
    # a src root that exists only above the repository (on this machine `/lib`,
    # for src = ["lib"]): a root there is refused, so the error must not offer one
    repo = tmp_path / "repo"
    shutil.copytree(REPO / "tests" / "fixtures" / "specrt" / "specrt", repo / "src" / "specrt")
    (tmp_path / "lib").mkdir()
    (repo / "tools").mkdir()
    (repo / "tools" / "ctxlint.toml").write_text(
        '[tool.ctxlint]\nruntime-module = "specrt.context"\n'
        'record-class = "specrt.record.ServerArgs"\nsrc = ["lib"]\n'
    )
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    out = cli("check", "tools", cwd=repo)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr == (
        "ctxlint: error: src root 'lib' is not a folder under tools; fix `src` in "
        "tools/ctxlint.toml\n"
    )


def test_a_root_that_names_no_folder_is_said_first(tmp_path: Path) -> None:
    shutil.copytree(REPO / "tests" / "fixtures" / "specrt" / "specrt", tmp_path / "src" / "specrt")
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "ctxlint.toml").write_text(
        '[tool.ctxlint]\nroot = "nope"\nruntime-module = "specrt.context"\n'
        'record-class = "specrt.record.ServerArgs"\nsrc = ["src"]\n'
    )
    out = cli("check", "tools", cwd=tmp_path)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr == (
        "ctxlint: error: the project root tools/nope is not a folder, so src root 'src' is "
        "not a folder under tools/nope (roots are relative to the project root, the config's "
        "folder); they are all under .: run `ctxlint check --config tools/ctxlint.toml .`, or "
        'set root = ".." in tools/ctxlint.toml\n'
    )


def test_a_dedicated_ctxlint_toml_wins_over_pyproject_and_names_it(project: Path) -> None:
    write(project, {"app/bad.py": SEED_READ})
    pyproject = project / "pyproject.toml"
    dedicated = pyproject.read_text().replace("[tool.ctxlint]\n", "")
    pyproject.write_text(pyproject.read_text() + 'ignore = ["CTX101"]\n')
    (project / "ctxlint.toml").write_text(dedicated)
    out = cli("check", "--format", "json", cwd=project)
    assert out.returncode == 1
    assert [f["rule"] for f in json.loads(out.stdout)["findings"]] == ["CTX101"]
    assert out.stderr == (
        "ctxlint: warning: using ctxlint.toml; the ctxlint table in pyproject.toml is ignored\n"
    )


# -- item 10: the pytest plugin takes a tree root; a config error is said once
def _pytest(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rs", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )


def _tools_config(root: Path) -> None:
    shutil.copytree(REPO / "tests" / "fixtures" / "specrt" / "specrt", root / "src" / "specrt")
    (root / "tools").mkdir()
    (root / "tools" / "ctxlint.toml").write_text(
        '[tool.ctxlint]\nruntime-module = "specrt.context"\n'
        'record-class = "specrt.record.ServerArgs"\nsrc = ["src"]\n'
    )


def test_pytest_plugin_reports_a_config_error_once_and_takes_a_root(tmp_path: Path) -> None:
    _tools_config(tmp_path)
    bad = _pytest(tmp_path, "--ctxlint", "--ctxlint-config", "tools/ctxlint.toml")
    assert bad.returncode == 4  # pytest's usage error
    assert bad.stderr.count("src root 'src' is not a folder") == 1, bad.stderr
    assert "pass --ctxlint-root ." in bad.stderr
    good = _pytest(
        tmp_path, "--ctxlint", "--ctxlint-config", "tools/ctxlint.toml", "--ctxlint-root", "."
    )
    assert good.returncode == 0, good.stdout + good.stderr
    assert f"{len(load_rules())} passed" in good.stdout


def test_pytest_plugins_advice_for_a_config_in_a_subfolder_leads_to_a_run(
    tmp_path: Path,
) -> None:
    """A config in apps/x whose root is the repository (root = "../.."), pytest run
    at the repository's root (hwalk): the advice was `--ctxlint-root apps/x`, whose
    error advised `--ctxlint-root .`, whose error advised `--ctxlint-root apps/x`.
    It names the config, which carries its root."""
    _tools_config(tmp_path)
    (tmp_path / "apps" / "x").mkdir(parents=True)
    (tmp_path / "tools" / "ctxlint.toml").rename(tmp_path / "apps" / "x" / "ctxlint.toml")
    cfg = tmp_path / "apps" / "x" / "ctxlint.toml"
    cfg.write_text(cfg.read_text().replace("[tool.ctxlint]\n", '[tool.ctxlint]\nroot = "../.."\n'))
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    lost = _pytest(tmp_path, "--ctxlint", "-n", "0")
    assert lost.returncode == 4
    assert "has one: pass --ctxlint-config apps/x/ctxlint.toml" in lost.stderr, lost.stderr
    as_root = _pytest(tmp_path, "--ctxlint", "-n", "0", "--ctxlint-root", "apps/x")
    assert as_root.returncode == 4
    assert "pass --ctxlint-config apps/x/ctxlint.toml --ctxlint-root ." in as_root.stderr, (
        as_root.stderr
    )
    config = ("--ctxlint-config", "apps/x/ctxlint.toml")
    for advised in (config, (*config, "--ctxlint-root", ".")):
        good = _pytest(tmp_path, "--ctxlint", "-n", "0", *advised)
        assert good.returncode == 0, good.stdout + good.stderr
        assert f"{len(load_rules())} passed" in good.stdout


def test_pytest_plugin_reports_a_run_error_once(tmp_path: Path) -> None:
    _tools_config(tmp_path)
    (tmp_path / "src" / "specrt" / "broken.py").write_text("x = (\n")
    out = _pytest(
        tmp_path, "--ctxlint", "--ctxlint-config", "tools/ctxlint.toml", "--ctxlint-root=."
    )
    assert out.returncode == 1
    assert out.stdout.count("'(' was never closed") == 1, out.stdout
    assert f"1 failed, {len(load_rules()) - 1} skipped" in out.stdout


# -- item 8: CI formats resolve paths from the repository root (a project in python/)
def _consumer(root: Path, *, git: bool) -> Path:
    """A consumer repository in SGLang's shape: the project (and its config) in python/."""
    shutil.copytree(REPO / "tests" / "fixtures" / "specrt", root / "python")
    write(root / "python", {"app/bad.py": SEED_READ})
    (root / "README.md").write_text("consumer\n")
    if git:
        subprocess.run(["git", "init", "--quiet"], cwd=root, check=True)
        subprocess.run(["git", "add", "."], cwd=root, check=True)
    return root


def test_github_and_sarif_paths_are_relative_to_the_git_root(tmp_path: Path) -> None:
    root = _consumer(tmp_path / "consumer", git=True)
    args = ("--config", "python/pyproject.toml", "python/")
    gh = cli("check", "--format", "github", *args, cwd=root)
    assert gh.returncode == 1, gh.stderr
    (line,) = gh.stdout.splitlines()
    assert line.startswith("::error file=python/app/bad.py,line=3,col=13,")
    assert (root / "python/app/bad.py").is_file()
    # from inside the project too: the repository root does not move
    inside = cli("check", "--format", "github", cwd=root / "python")
    assert inside.stdout == gh.stdout

    doc = json.loads(cli("check", "--format", "sarif", *args, cwd=root).stdout)
    (run,) = doc["runs"]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == root.resolve().as_uri() + "/"
    (res,) = run["results"]
    loc = res["locations"][0]["physicalLocation"]["artifactLocation"]
    assert loc == {"uri": "python/app/bad.py", "uriBaseId": "%SRCROOT%"}
    sarif_inside = json.loads(cli("check", "--format", "sarif", cwd=root / "python").stdout)
    assert sarif_inside == doc
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((REPO / "tests" / "data" / "sarif-2.1.0.json").read_text())
    assert list(jsonschema.Draft4Validator(schema).iter_errors(doc)) == []


def test_outside_git_paths_are_relative_to_the_working_folder(tmp_path: Path) -> None:
    root = _consumer(tmp_path / "plain", git=False)
    gh = cli("check", "--format", "github", "python/", cwd=root)
    assert gh.stdout.startswith("::error file=python/app/bad.py,line=3,")
    doc = json.loads(cli("check", "--format", "sarif", "python/", cwd=root).stdout)
    assert doc["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"] == root.resolve().as_uri() + "/"
    # run from inside the project, the working folder is the project root
    inside = cli("check", "--format", "github", cwd=root / "python")
    assert inside.stdout.startswith("::error file=app/bad.py,line=3,")


def test_sarif_rules_carry_their_spec_and_the_real_home(project: Path, monkeypatch) -> None:
    from importlib import metadata

    class Meta:
        def __init__(self, urls: list[str]) -> None:
            self.urls = urls

        def get_all(self, key: str) -> list[str]:
            assert key == "Project-URL"
            return self.urls

    write(project, {"app/bad.py": SEED_READ})
    # metadata naming no home (the installed copy's may: pyproject's [project.urls])
    monkeypatch.setattr(metadata, "metadata", lambda name: Meta([]))
    doc = json.loads(cli("check", "--format", "sarif", cwd=project).stdout)
    driver = doc["runs"][0]["tool"]["driver"]
    assert "pypi.org" not in json.dumps(doc)  # no invented registry page
    assert "informationUri" not in driver
    for rule in driver["rules"]:
        spec = (REPO / "rules" / f"{rule['id']}.md").read_text()
        assert rule["help"]["markdown"] == spec
        assert "helpUri" not in rule

    urls = [
        "Issues, https://example.org/ctxlint/issues",
        "Repository, https://example.org/ctxlint/",
    ]
    monkeypatch.setattr(metadata, "metadata", lambda name: Meta(urls))
    doc = json.loads(cli("check", "--format", "sarif", cwd=project).stdout)
    driver = doc["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == "https://example.org/ctxlint"
    assert {r["id"]: r["helpUri"] for r in driver["rules"]} == {
        r.id: f"https://example.org/ctxlint/blob/main/rules/{r.id}.md" for r in load_rules()
    }


def test_pytest_plugin_says_ctx401_is_partial_without_ruff(project: Path) -> None:
    write(project, {"app/m.py": TWICE})
    (project / "conftest.py").write_text(
        "from ctxlint.rules import ctx401_accessor_binding as ctx401\n\n"
        "ctx401._ruff_command = lambda: None  # as if ruff were not installed\n"
    )
    out = _pytest(project, "--ctxlint")
    assert out.stdout.count("ctxlint: CTX401 accessor-binding is partial: ruff F811") == 1, (
        out.stdout
    )


def test_installing_ruff_is_not_answered_by_an_outcome_stored_without_it(
    project: Path, monkeypatch
) -> None:
    """The stored run outcome is keyed by what each rule depends on outside the
    tree (Rule.environment): once ruff can run, a warm run merges F811 as a cold one does."""
    write(project, {"app/m.py": TWICE})
    with monkeypatch.context() as m:
        m.setattr(ctx401, "_ruff_command", lambda: None)
        stored = cli("check", "--format", "json", cwd=project)
        assert "partial" in stored.stderr
    warm = cli("check", "--format", "json", cwd=project)
    cold = cli("check", "--format", "json", "--no-cache", cwd=project)
    assert "partial" not in warm.stderr
    assert warm.stdout == cold.stdout
    assert "ruff F811" in warm.stdout
