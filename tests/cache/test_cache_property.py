"""Warm equals cold, whatever happened to the tree (issue 11).

Random sequences of edits (code and comments), copies, renames, deletions and
reverts to an earlier content, on a copy of examples/ (legacy_app with its
config, serving_app with the repository's), on part of the sglang 0.5.23
wheel (slow) and on a generated tree (several
packages, identical empty `__init__.py` files, copies of modules whose facts
depend on their module). After every step a cached `check --format json`
must give byte for byte what `--no-cache` gives. The short versions run in
the default suite (derandomized, so a failure reproduces); the long ones are
`slow` (random; hypothesis prints the steps of a failure).
"""

from __future__ import annotations

import itertools
import os
import shutil
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from unittest import mock

import pytest
from conftest import FIXTURE, REPO
from helpers import RECORD_WRITER, SEED_READER, UNUSED_SUPPRESSION, cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxlint.discover import sources

# Code a step appends to a module: each matters to some rule, and most of it
# resolves through the module's own name or package.
SNIPPETS = (
    "\n\ndef extra_{k}():\n    from {rt}.context import get_server_args\n\n"
    "    return get_server_args().tp_size\n",
    "\n\ndef start_{k}(args):\n    from {rt}.context import get_parallel, publish\n\n"
    '    size = get_parallel().tp_size\n    publish(args, role="w")\n    return size\n',
    "\n\ndef bump_{k}(server_args):\n    server_args.tp_size += 1\n",
    "\n\nfrom . import util as util_{k}\n\n\ndef via_{k}(server_args):\n"
    "    util_{k}.size_of()\n    return server_args\n",
    "\n\ndef calls_{k}(args):\n    return start_{k}(args)\n",
    "\n\nVALUE_{k} = 1  # ctxlint: ignore[CTX101] not needed\n",
    "\n\ndef broken_{k}(:\n",
)

UTIL = """\
from specrt.context import get_parallel


def size_of():
    return get_parallel().tp_size
"""

ENTRY = """\
from specrt.context import publish

from .util import size_of


def launch(server_args):
    n = size_of()
    publish(server_args, role="main")
    return n
"""

ABSOLUTE_ENTRY = """\
from specrt.context import publish

from app.util import size_of


def start(server_args):
    size_of()
    publish(server_args, role="w")
"""


def generated_tree(root: Path) -> tuple[Path, tuple[str, ...], str]:
    """specrt plus three packages: identical empty __init__.py files, the same
    modules copied into several packages (their findings differ by package)."""
    shutil.copytree(FIXTURE, root)
    files = {
        "app/util.py": UTIL,
        "app/entry.py": ENTRY,
        "app/seed.py": SEED_READER.format(n=1),
        "app/writer.py": RECORD_WRITER.format(n=2),
        "app/sub/util.py": UTIL,
        "app/sub/entry.py": ENTRY,
        "app/sub/unused.py": UNUSED_SUPPRESSION.format(n=3),
        "svc/entry.py": ENTRY,
        "svc/absentry.py": ABSOLUTE_ENTRY,
        "svc/clean.py": "VALUE = 1\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    for package in ("app", "app/sub", "svc"):
        (root / package / "__init__.py").write_text("")
    return root, (), "specrt"


def _copy(rel: str, root: Path) -> None:
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", ".ctxlint_cache")
    if (REPO / rel).is_dir():
        shutil.copytree(REPO / rel, root / rel, ignore=skip)
    else:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, root / rel)


def legacy_tree(root: Path) -> tuple[Path, tuple[str, ...], str]:
    for rel in ("src/ctxrt", "examples/legacy_app", "examples/__init__.py"):
        _copy(rel, root)
    _copy("baselines/legacy_app.json", root)
    return root, ("--config", "examples/legacy_app/ctxlint.toml", "."), "ctxrt"


def serving_tree(root: Path) -> tuple[Path, tuple[str, ...], str]:
    for rel in ("src/ctxrt", "examples/serving_app", "examples/__init__.py", "pyproject.toml"):
        _copy(rel, root)
    _copy("baselines/ctxrt.json", root)
    return root, (), "ctxrt"


# A real tree, cut down so that an uncached run after every step stays short:
# the runtime context, the record and its resolution pipeline, and the
# managers and entrypoints that publish and read (about 220 files).
SGLANG_PARTS = (
    "__init__.py",
    "srt/runtime_context.py",
    "srt/server_args.py",
    "srt/environ.py",
    "srt/arg_groups",
    "srt/managers",
    "srt/entrypoints",
)


def sglang_part_tree(root: Path) -> tuple[Path, tuple[str, ...], str]:
    from wheels import sglang_tree

    wheel = sglang_tree() / "sglang"
    for part in SGLANG_PARTS:
        if (wheel / part).is_dir():
            shutil.copytree(wheel / part, root / "sglang" / part)
        else:
            (root / "sglang" / part).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(wheel / part, root / "sglang" / part)
    return root, ("--profile", "sglang", "."), "sglang.srt.runtime_context"


TREES: dict[str, Callable[[Path], tuple[Path, tuple[str, ...], str]]] = {
    "generated": generated_tree,
    "legacy_app": legacy_tree,
    "serving_app": serving_tree,
    "sglang": sglang_part_tree,
}


@dataclass
class Tree:
    root: Path
    args: tuple[str, ...]
    runtime: str
    history: dict[str, list[bytes]] = field(default_factory=dict)
    steps: itertools.count = field(default_factory=itertools.count)
    # Every write gets a timestamp of its own: with signatures trusted at once
    # (settled runs), two writes must never look alike to the stat layer.
    clock: itertools.count = field(default_factory=lambda: itertools.count(10**18, 10**6))

    def python_files(self) -> list[str]:
        return sorted(
            p.relative_to(self.root).as_posix()
            for p in self.root.rglob("*.py")
            if ".ctxlint_cache" not in p.parts
        )

    def runtime_files(self) -> set[str]:
        """Files no step deletes or renames (without them there is no vocabulary)."""
        prefix = self.runtime.replace(".", "/")
        return {p for p in self.python_files() if p.startswith((prefix, f"src/{prefix}"))}

    def write(self, rel: str, data: bytes) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        self.history.setdefault(rel, []).append(data)
        path.write_bytes(data)
        self.touch(rel)

    def touch(self, rel: str) -> None:
        now = next(self.clock)
        os.utime(self.root / rel, ns=(now, now))

    def check(self, *extra: str) -> tuple[int, str, str]:
        out = cli("check", "--format", "json", *extra, *self.args, cwd=self.root)
        return out.returncode, out.stdout, out.stderr


def step(tree: Tree, data: st.DataObject) -> str:
    """One random change to the tree; returns what it did (hypothesis prints it)."""
    k = next(tree.steps)
    files = tree.python_files()
    movable = sorted(set(files) - tree.runtime_files())
    kinds = ["comment", "code", "copy", "revert"] + (["rename", "delete"] if movable else [])
    kind = data.draw(st.sampled_from(kinds), label="kind")
    if kind in ("rename", "delete"):
        rel = data.draw(st.sampled_from(movable), label="file")
    else:
        rel = data.draw(st.sampled_from(files), label="file")
    path = tree.root / rel
    text = path.read_bytes()
    if kind == "comment":
        note = f"# note {k}".encode()
        where = data.draw(st.sampled_from(["top", "end", "line"]), label="where")
        lines = text.splitlines(keepends=True)
        if where == "line" and lines:  # after a line: a trailing comment, or a longer one
            i = data.draw(st.integers(0, len(lines) - 1), label="line")
            body = lines[i].rstrip(b"\r\n")
            lines[i] = body + b"  " + note + lines[i][len(body) :]
            tree.write(rel, b"".join(lines))
            return f"comment after line {i + 1} of {rel}"
        tree.write(rel, note + b"\n" + text if where == "top" else text + note + b"\n")
        return f"comment {where} {rel}"
    if kind == "code":
        snippet = data.draw(st.sampled_from(SNIPPETS), label="snippet")
        tree.write(rel, text + snippet.format(k=k, rt=tree.runtime).encode())
        return f"code {rel}: {snippet.splitlines()[2].strip()}"
    if kind == "revert":
        earlier = tree.history.get(rel, [])[:-1]
        if not earlier:
            return f"revert {rel}: nothing earlier"
        old = data.draw(st.sampled_from(earlier), label="earlier")
        tree.write(rel, old)
        return f"revert {rel}"
    if kind == "delete":
        path.unlink()
        return f"delete {rel}"
    # copy or rename: into a folder that holds Python files, or a new package
    # whose __init__.py is a copy of an existing one (identical bytes)
    folders = sorted({str(Path(f).parent) for f in files if Path(f).parent != Path(".")})
    folder = data.draw(st.sampled_from([*folders, "new package"]), label="into")
    if folder == "new package":
        base = data.draw(st.sampled_from(folders), label="under")
        folder = f"{base}/pkg_{k}"
        inits = [f for f in files if f.endswith("__init__.py")]
        init = data.draw(st.sampled_from(inits), label="init")
        tree.write(f"{folder}/__init__.py", (tree.root / init).read_bytes())
    target = f"{folder}/{Path(rel).stem}_{k}.py"
    if kind == "copy":
        tree.write(target, text)
        return f"copy {rel} -> {target}"
    os.rename(path, tree.root / target)  # inode and mtime travel with the file
    return f"rename {rel} -> {target}"


def warm_equals_cold(
    make: Callable[[Path], tuple[Path, tuple[str, ...], str]],
    where: Path,
    data: st.DataObject,
    steps: int,
) -> None:
    tree = Tree(*make(where / "tree"))
    for rel in tree.python_files():
        tree.history[rel] = [(tree.root / rel).read_bytes()]
        tree.touch(rel)
    jobs = data.draw(st.sampled_from(["1", "2"]), label="jobs")
    settled = data.draw(st.booleans(), label="signatures trusted at once")
    patch: AbstractContextManager[object] = (
        mock.patch.object(sources, "RACY_NS", -(10**19)) if settled else nullcontext()
    )
    with patch:
        for n in range(steps + 1):
            if n:
                data.draw(st.just(step(tree, data)), label=f"step {n}")
            warm = tree.check("--jobs", jobs)
            cold = tree.check("--no-cache", "--jobs", "1")
            assert warm == cold, f"after step {n}"
            assert warm[0] in (0, 1, 2)


COMMON = {
    "deadline": None,
    "database": None,
    "suppress_health_check": [HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
}


@settings(max_examples=3, derandomize=True, **COMMON)
@given(data=st.data())
def test_warm_equals_cold_on_a_generated_tree(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    warm_equals_cold(generated_tree, tmp_path_factory.mktemp("gen"), data, steps=6)


@settings(max_examples=1, derandomize=True, **COMMON)
@given(data=st.data())
def test_warm_equals_cold_on_legacy_app(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    warm_equals_cold(legacy_tree, tmp_path_factory.mktemp("legacy"), data, steps=4)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(TREES))
def test_warm_equals_cold_long(tmp_path_factory: pytest.TempPathFactory, name: str) -> None:
    # the sglang tree: one example of 8 steps (an uncached run after each is ~20 s)
    examples = {"generated": 6, "sglang": 1}.get(name, 3)

    @settings(max_examples=examples, **COMMON)
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        steps = 8 if name == "sglang" else 12
        warm_equals_cold(TREES[name], tmp_path_factory.mktemp(name), data, steps=steps)

    run()
