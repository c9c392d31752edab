"""A built, non-editable ctxlint carries its rule specs (rules/*.md in the
repository, ctxlint/rules/<ID>.md in the package) and its project URLs:
`explain`, `rules` and SARIF's rule help work from a wheel, away from the source."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from helpers import see_our_packages

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from ctxlint.engine.registry import SPEC_DIR, load_rules

REPO = Path(__file__).resolve().parents[1]
# What a build reads (the sdist's content: pyproject, setup.py, MANIFEST.in)
BUILD_INPUTS = ("src", "rules", "pyproject.toml", "setup.py", "MANIFEST.in", "README.md")
SEED_READ = "from specrt.context import get_server_args\n\nX = get_server_args().tp_size\n"


def _run(*cmd: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    # no PYTHONPATH: the source tree must not stand in for the installed package
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["COLUMNS"] = "200"
    proc = subprocess.run(
        [str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    return proc


def _repository_url() -> str:
    urls = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["urls"]
    return urls["Repository"].rstrip("/")


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel built from the sdist of a copy of the build inputs, installed into a
    fresh venv that sees this interpreter's dependencies; its bin folder."""
    tmp = tmp_path_factory.mktemp("packaging")
    tree = tmp / "tree"
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", ".ctxlint_cache", "*.egg-info")
    for name in BUILD_INPUTS:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, tree / name, ignore=skip)
        else:
            shutil.copy(source, tree / name)
    # the sdist first (PEP 517's hook, as a build frontend calls it), then the
    # wheel from the unpacked sdist: MANIFEST.in must have carried the specs
    dist = tmp / "dist"
    hook = f"from setuptools import build_meta; print(build_meta.build_sdist({str(dist)!r}))"
    sdist = _run(sys.executable, "-c", hook, cwd=tree)
    assert sdist.returncode == 0, sdist.stdout + sdist.stderr
    with tarfile.open(dist / sdist.stdout.split()[-1]) as tar:
        # the "data" filter exists from 3.11.4 (Debian 12's python3 is 3.11.2); the
        # archive is the one just built, so without it nothing unsafe is let through
        if hasattr(tarfile, "data_filter"):
            tar.extractall(tmp / "unpacked", filter="data")
        else:
            tar.extractall(tmp / "unpacked")
    (unpacked,) = (tmp / "unpacked").iterdir()
    pip = (sys.executable, "-m", "pip")
    built = _run(*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", dist, unpacked, cwd=tmp)
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = dist.glob("ctxlint-*.whl")
    with zipfile.ZipFile(wheel) as z:
        packaged = sorted(n for n in z.namelist() if n.endswith(".md"))
    assert packaged == [f"ctxlint/rules/{r.id}.md" for r in load_rules()]

    venv = tmp / "venv"
    made = _run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=tmp)
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    see_our_packages(python)
    # this interpreter's pip, run by the venv's python, installs into the venv
    done = _run(python, "-m", "pip", "install", "-q", "--no-deps", wheel, cwd=tmp)
    assert done.returncode == 0, done.stdout + done.stderr
    where = _run(python, "-c", "import ctxlint; print(ctxlint.__file__)", cwd=tmp)
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout + where.stderr
    return venv / "bin"


def test_explain_reads_the_packaged_spec(installed: Path, tmp_path: Path) -> None:
    out = _run(installed / "ctxlint", "explain", "CTX101", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    # the spec's sections, not the module docstring (explain's fallback without one)
    spec = (SPEC_DIR / "CTX101.md").read_text()
    headings = [line.lstrip("# ").strip() for line in spec.splitlines() if line.startswith("## ")]
    assert headings, "CTX101.md has no sections"
    for heading in headings:
        assert heading in out.stdout


def test_rules_lists_every_rule(installed: Path, tmp_path: Path) -> None:
    out = _run(installed / "ctxlint", "rules", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    listed = [line.split()[1] for line in out.stdout.splitlines() if line.startswith("│ CTX")]
    assert listed == [r.id for r in load_rules()]


def test_sarif_rule_help_comes_with_the_package(installed: Path, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    shutil.copytree(REPO / "tests/fixtures/specrt", project)
    (project / "app").mkdir()
    (project / "app/__init__.py").write_text("")
    (project / "app/bad.py").write_text(SEED_READ)
    out = _run(installed / "ctxlint", "check", "--format", "sarif", cwd=project)
    assert out.returncode == 1, out.stderr
    driver = json.loads(out.stdout)["runs"][0]["tool"]["driver"]
    home = _repository_url()
    assert driver["informationUri"] == home
    assert [r["id"] for r in driver["rules"]] == [r.id for r in load_rules()]
    for rule in driver["rules"]:
        assert rule["help"]["markdown"] == (SPEC_DIR / f"{rule['id']}.md").read_text()
        assert rule["helpUri"] == f"{home}/blob/main/rules/{rule['id']}.md"
