"""The README as a new user reads it: its two commands, its links, the configs it
names, and docs/design.md, the design it points to, with every rule placed."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from helpers import see_our_packages

from ctxlint.engine.registry import load_rules

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
INSTALL_AND_CHECK = "python3 -m pip install -e . && ctxlint check --strict"
TEST_COMMAND = """python3 -m pip install -e '.[dev]' && python3 -m pytest -m "slow or not slow\""""


def _first_commands() -> list[str]:
    block = README[
        README.index("```bash") + len("```bash") : README.index("```", README.index("```bash") + 7)
    ]
    return [line.split("  #")[0].strip() for line in block.strip().splitlines()]


def test_the_first_command_installs_the_linter_alone_and_checks() -> None:
    assert _first_commands() == [INSTALL_AND_CHECK, TEST_COMMAND]
    # .ci/run runs exactly the README's test command
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    assert ci[-1] == TEST_COMMAND


def test_every_relative_link_and_named_config_exists() -> None:
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README)
    relative = [t for t in links if "://" not in t]
    assert relative, "the README links its docs"
    for target in relative:
        path = (REPO / target).resolve()
        assert path.is_relative_to(REPO), f"{target} is outside the repository"
        assert path.exists(), target
    for config in re.findall(r"--config\s+(\S+\.toml)", README):
        if config.startswith("/"):
            continue
        assert (REPO / config).is_file(), f"the README names {config}, which does not exist"


def test_the_per_release_totals_are_the_pinned_ones() -> None:
    """The README's SGLang figures are the slow test's pins, not an older run's."""
    import json

    pins = json.loads((REPO / "tests/data/sglang_history_pins.json").read_text())
    said = dict(
        (release, int(n.replace(",", "")))
        for n, release in re.findall(r"([\d,]+) on (0\.5\.\d+)", " ".join(README.split()))
    )
    assert said == {release: sum(p["counts"].values()) for release, p in pins.items()}


def test_the_history_page_shows_the_pinned_totals() -> None:
    """docs/sglang-history.md is generated; a count that moved on purpose (and was
    re-pinned) must be regenerated there too, or the page shows an older run."""
    import json

    pins = json.loads((REPO / "tests/data/sglang_history_pins.json").read_text())
    page = (REPO / "docs" / "sglang-history.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (0\.5\.\d+) \| \d \|.*\| (\d+) \|$", page, re.M)
    shown = {release: int(total) for release, total in rows}
    assert shown == {release: sum(p["counts"].values()) for release, p in pins.items()}


def test_design_doc_places_every_rule() -> None:
    design = (REPO / "docs" / "design.md").read_text(encoding="utf-8")
    assert "runtime-context-design.md" not in README
    assert "](docs/design.md)" in README
    for rule in load_rules():
        assert f"**{rule.id} {rule.name}**" in design, rule.id


@pytest.mark.slow  # a git clone and a private virtualenv: about half a minute
def test_the_first_command_passes_on_a_fresh_clone(tmp_path: Path) -> None:
    """`pip install .` (what `-e .` installs, without touching the shared
    installation) into a fresh virtualenv, then `ctxlint check --strict` in a
    fresh clone of this commit. The virtualenv sees the machine's packages for
    the dependencies only (this interpreter's, which may be a venv's): no index is
    needed."""
    if shutil.which("git") is None:
        pytest.skip("needs git")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True)
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    py = env_dir / "bin" / "python"
    see_our_packages(py)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    pip = [sys.executable, "-m", "pip", "--python", str(py), "install", "--quiet"]
    done = subprocess.run(
        [*pip, "--no-deps", "--no-build-isolation", "--no-index", str(clone)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    where = subprocess.run(
        [str(py), "-c", "import ctxlint; print(ctxlint.__file__)"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert Path(where.stdout.strip()).is_relative_to(env_dir), where.stdout
    check = subprocess.run(
        [str(env_dir / "bin" / "ctxlint"), "check", "--strict"],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert check.returncode == 0, check.stdout[-2000:] + check.stderr[-2000:]


def test_the_changelog_has_the_version_the_pre_commit_snippet_pins() -> None:
    """A user pins a release: the README's `rev:` is the package's version as a
    tag, and CHANGELOG.md (Keep a Changelog) has that version and an Unreleased
    section above it."""
    from ctxlint import __version__

    revs = re.findall(r"^\s*rev: (\S+)", README, flags=re.MULTILINE)
    assert revs == [f"v{__version__}"]
    changelog = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## \[([^\]]+)\]", changelog, flags=re.MULTILINE)
    assert headings[:2] == ["Unreleased", __version__]
    assert f"[{__version__}]: " in changelog and "[Unreleased]: " in changelog
