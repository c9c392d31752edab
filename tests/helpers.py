"""Run the engine in-process on a project folder (no CLI, no cache)."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import site
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ctxlint.config.settings import Config, find_config, load_config
from ctxlint.engine.registry import load_rules
from ctxlint.engine.run import Engine, RunOutput
from ctxlint.program.rule import Rule
from ctxlint.session import Setup


def run_engine(
    root: Path,
    *,
    jobs: int = 1,
    use_cache: bool = False,
    select: set[str] | None = None,
    memo: bool = True,
) -> RunOutput:
    config, rules = project_config(root)
    return Engine(config, rules, jobs=jobs, use_cache=use_cache, selected=select, memo=memo).run()


def project_config(root: Path, config_path: Path | None = None) -> tuple[Config, list[Rule]]:
    """The config found for `root` (or `config_path`, checking `root`), loaded
    with every rule's options, and the rules."""
    rules = load_rules()
    cfg_path = config_path or find_config(root)
    assert cfg_path is not None
    config = load_config(
        cfg_path,
        root=root if config_path else None,
        rule_ids=[r.id for r in rules],
        rule_options={k: v for r in rules for k, v in r.options.items()},
    )
    return config, rules


def project_setup(root: Path, *, jobs: int = 1, use_cache: bool = False) -> Setup:
    """A session setup of the project at `root` (project_config), every rule selected."""
    from ctxlint.session import Request, RunOptions

    config, rules = project_config(root)
    request = Request(run=RunOptions(jobs=jobs, use_cache=use_cache))
    return Setup(config, [], rules, rules, request=request)


def see_our_packages(python: Path) -> None:
    """Let the venv of `python` import this interpreter's packages (ctxlint's
    dependencies, pip), after its own site-packages, with a .pth file.
    `--system-site-packages` would give it the base interpreter's packages: inside
    a user's venv that is the bare Python, without libcst or pathspec. A folder
    named in a .pth file is not scanned for .pth files itself, so an editable
    install of ctxlint there stays out of the venv."""
    here = [
        p
        for p in (*site.getsitepackages(), site.getusersitepackages())
        if Path(p).is_dir() and p in sys.path
    ]
    assert here, f"no site-packages folder on {sys.path}"
    query = "import sysconfig; print(sysconfig.get_path('purelib'))"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    where = subprocess.run(
        [str(python), "-c", query], env=env, capture_output=True, text=True, check=True
    )
    (Path(where.stdout.strip()) / "_ctxlint_test_deps.pth").write_text("\n".join(here) + "\n")


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        for parent in path.relative_to(root).parents:
            init = root / parent / "__init__.py"
            if parent != Path(".") and not init.exists():
                init.write_text("")
        path.write_text(text)


# -- appended for the engine/CLI suite ---------------------------------------------


@dataclass
class CliResult:
    returncode: int
    stdout: str
    stderr: str


def cli(*args: str, cwd: Path) -> CliResult:
    """`ctxlint ARGS` in-process (fast): main() with `cwd` as the working folder
    and stdout/stderr captured. Use conftest.run_cli for the real subprocess."""
    from ctxlint.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = main(list(args))
            except SystemExit as exc:  # argparse: --version, usage errors
                rc = exc.code if isinstance(exc.code, int) else 2
    finally:
        os.chdir(old)
    return CliResult(rc, out.getvalue(), err.getvalue())


SEED_READER = """\
from specrt.context import get_server_args


def read_{n}() -> int:
    return get_server_args().tp_size + {n}
"""

RECORD_WRITER = """\
from specrt.record import ServerArgs


def write_{n}(server_args: ServerArgs) -> None:
    server_args.dp_size = {n}
"""

UNUSED_SUPPRESSION = """\
from specrt.context import get_parallel


def size_{n}() -> int:
    return get_parallel().tp_size  # ctxlint: ignore[CTX101] no longer needed
"""


# One suppression naming four rules, none of which finds anything on its line:
# four CTX001 findings with one snippet, told apart by their occurrence index,
# so the order of the rule ids decides which fingerprint each message gets.
MULTI_RULE_SUPPRESSION = """\
from specrt.context import get_parallel


def many_{n}() -> int:
    return get_parallel().tp_size  # ctxlint: ignore[CTX301, CTX202, CTX201, CTX101] stale
"""


def populate(root: Path, n: int = 12, *, multi_rule: int = 0) -> dict[str, str]:
    """Write `n` modules under app/ with CTX101, CTX201 and CTX001 findings
    (one kind per module, in rotation) plus some clean modules, and
    `multi_rule` modules with a four-rule unused suppression; returns them."""
    kinds = (SEED_READER, RECORD_WRITER, UNUSED_SUPPRESSION)
    files = {f"app/mod{i:02d}.py": kinds[i % 3].format(n=i) for i in range(n)}
    files.update({f"app/clean{i}.py": f"VALUE_{i} = {i}\n" for i in range(3)})
    files.update(
        {f"app/multi{i}.py": MULTI_RULE_SUPPRESSION.format(n=i) for i in range(multi_rule)}
    )
    write(root, files)
    return files


# A package with its own record class of the record's name (SGLang's
# multimodal_gen has its own ServerArgs, outside the contract): its
# `server_args` parameters are that record, not the contract's.
RIVAL = {
    "specrt/mmgen/args.py": "class ServerArgs:\n    tp_size: int = 1\n",
    "specrt/mmgen/entry.py": """\
from specrt.mmgen.args import ServerArgs


def launch(server_args: ServerArgs) -> None:
    pass


def serve(server_args: ServerArgs) -> None:
    pass
""",
}


# bytecode is no source; and a copy of a package another test process is importing
# could list a .pyc's temporary file that is renamed away before it is copied
NO_BYTECODE = shutil.ignore_patterns("__pycache__", "*.pyc")


def in_repository(root: Path) -> Path:
    """`root` made a git work tree: a copied example whose config names its
    repository as root (`root = "../.."`) needs one (docs/untrusted-trees.md)."""
    import subprocess

    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root
