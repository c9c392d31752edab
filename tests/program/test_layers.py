"""The import layers hold: `lint-imports` (import-linter) passes on the contracts
in pyproject.toml's [tool.importlinter], and it does catch an import across them."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[2]


def lint_imports(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real command on the tree at root, its src/ first on the import path."""
    script = Path(sys.executable).with_name("lint-imports")
    command = str(script) if script.exists() else shutil.which("lint-imports")
    assert command is not None, "import-linter is not installed (the dev extra)"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(root / "src"), env.get("PYTHONPATH", "")])
    env["COLUMNS"] = "300"  # rich wraps its report at the terminal width: one chain a line
    return subprocess.run(
        [command, "--no-cache", *args],  # no cache folder left in the tree
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def plant_import(tmp_path: Path, module: str, line: str) -> Path:
    """A copy of src/ and pyproject.toml under tmp_path, with `line` appended to
    src/ctxlint/MODULE: the tree an import-linter contract must catch."""
    shutil.copytree(REPO / "src", tmp_path / "src", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", tmp_path)
    path = tmp_path / "src/ctxlint" / module
    path.write_text(path.read_text() + f"\n{line}\n")
    return tmp_path


def assert_caught_apart(
    tmp_path: Path, module: str, line: str, contract_id: str, chain: str
) -> None:
    """`line` planted in src/ctxlint/MODULE breaks the contract, whose report
    names the chain, while the layers (which allow the import) stay kept."""
    plant_import(tmp_path, module, line)
    planted = lint_imports(tmp_path, "--contract", contract_id)
    assert planted.returncode == 1, planted.stdout + planted.stderr
    assert chain in planted.stdout
    layered = lint_imports(tmp_path, "--contract", "layers")
    assert layered.returncode == 0, layered.stdout + layered.stderr


def top_level_modules() -> set[str]:
    """Every top-level package and module of ctxlint, as a contract names them."""
    return {
        f"ctxlint.{p.stem}"
        for p in (REPO / "src" / "ctxlint").iterdir()
        if (p.is_dir() and (p / "__init__.py").exists())
        or (p.suffix == ".py" and p.name != "__init__.py")
    }


def contract(contract_id: str) -> dict[str, Any]:
    """The import-linter contract of that id in pyproject.toml."""
    with (REPO / "pyproject.toml").open("rb") as f:
        contracts = tomllib.load(f)["tool"]["importlinter"]["contracts"]
    (found,) = [c for c in contracts if c["id"] == contract_id]
    return found


def test_lint_imports_passes() -> None:
    proc = lint_imports(REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 broken" in proc.stdout


def test_the_phases_are_layered() -> None:
    """cli over report over session over engine and baseline ... over core: the
    check session broke the circle cli -> report.audit -> cli."""
    proc = lint_imports(REPO, "--contract", "layers")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "each layer imports only the layers below it KEPT" in proc.stdout


def test_an_import_between_two_rules_breaks_the_independence_contract(tmp_path: Path) -> None:
    """The `ctxlint.rules.*` wildcard expands to each rule module: one rule
    importing another is reported, and the runtime stays apart from the linter."""
    rules = sorted(p.stem for p in (REPO / "src/ctxlint/rules").glob("ctx*.py"))
    first, second = rules[0], rules[-1]
    plant_import(tmp_path, f"rules/{first}.py", f"from ctxlint.rules import {second}  # planted")

    planted = lint_imports(tmp_path, "--contract", "rules-independent")
    assert planted.returncode == 1, planted.stdout + planted.stderr
    assert f"- ctxlint.rules.{first} -> ctxlint.rules.{second}" in planted.stdout

    apart = lint_imports(tmp_path, "--contract", "runtime-independent")
    assert apart.returncode == 0, apart.stdout + apart.stderr
    assert "the runtime and the linter are independent KEPT" in apart.stdout


def test_only_the_registry_imports_a_rule(tmp_path: Path) -> None:
    """A rule is a leaf: report/, fix/ and the rest ask the program model or a
    rule hook, never a rule module. The layers allow report/ to import rules/
    (it sits above them); the rules-are-leaves contract does not."""
    assert_caught_apart(
        tmp_path,
        "report/roles.py",
        "from ctxlint.rules import ctx302_role_namespace",
        "rules-are-leaves",
        "ctxlint.report.roles -> ctxlint.rules.ctx302_role_namespace",
    )


def test_the_rules_are_leaves_contract_covers_every_other_package() -> None:
    """Its source modules are every top-level package and module of ctxlint but
    the rules: a new package is under the contract from its first import."""
    leaves = contract("rules-are-leaves")
    every = top_level_modules()
    assert set(leaves["source_modules"]) == every - {"ctxlint.rules"}
    assert leaves["forbidden_modules"] == ["ctxlint.rules"]


def test_only_the_session_starts_the_engine(tmp_path: Path) -> None:
    """One run sequence: the fix, the audit and the front ends run the engine
    through ctxlint.session. The layers allow report/ to import the engine (it
    sits above it); the one-run-sequence contract does not."""
    assert_caught_apart(
        tmp_path,
        "report/audit/trees.py",
        "from ctxlint.engine.run import Engine",
        "one-run-sequence",
        "ctxlint.report.audit.trees -> ctxlint.engine.run",
    )


def test_the_one_run_sequence_contract_covers_every_other_package() -> None:
    """Its source modules are every top-level package and module of ctxlint but
    the session and the engine: a new front end is under it from its first import."""
    sequence = contract("one-run-sequence")
    every = top_level_modules()
    assert set(sequence["source_modules"]) == every - {"ctxlint.session", "ctxlint.engine"}


def test_the_bench_runs_the_engine_through_the_session() -> None:
    """bench/ is outside the package import-linter reads: its imports are read here."""
    entry = {"ctxlint.engine.run", "ctxlint.engine.start"}
    found = []
    for path in sorted((REPO / "bench").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module in entry:
                found.append(f"{path.name}: from {node.module}")
            elif isinstance(node, ast.ImportFrom) and node.module == "ctxlint.engine":
                found += [
                    f"{path.name}: {a.name}" for a in node.names if a.name in ("run", "start")
                ]
            elif isinstance(node, ast.Import):
                found += [f"{path.name}: {a.name}" for a in node.names if a.name in entry]
    assert not found
