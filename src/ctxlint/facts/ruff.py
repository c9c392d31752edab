"""ruff as a helper tool: where it is, what identifies it, and its F811
("redefinition of unused name") reports as records, never display text.

It lives with the facts (facts/*.py is part of the code version every stored
outcome is keyed by): a change to how its reports are read is a cache miss."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxlint.facts.suppression_comments import comments

TIMEOUT_S = 120
_NAME = re.compile(r"`([^`]+)`")
# A comment ruff reads: a noqa directive (for a line or the file, flake8's
# spelling too) or a `ruff:` one (ignore, disable, enable), in any case.
DIRECTIVE = re.compile(r"noqa|ruff\s*:", re.IGNORECASE)


# Texts that stand in for files (path -> text): the language server's editor
# buffers, which ruff reads on stdin in place of the files on disk.
BUFFERS: ContextVar[Mapping[str, str]] = ContextVar("ctxlint_ruff_buffers", default={})  # noqa: B039


@dataclass(frozen=True, order=True)
class F811:
    """One F811 report: where, the name redefined, and ruff's own sentence."""

    path: str  # relative to the root ruff ran in
    row: int
    col: int
    name: str
    message: str  # "Redefinition of unused `x` from line 1"

    def __str__(self) -> str:
        return f"{self.path}:{self.row}:{self.col}: {self.message}"


def directives(text: str) -> list[tuple[int, str]]:
    """(line, text) of the comments in `text` that ruff reads: what it reports
    depends on them as on the code."""
    lowered = text.lower()
    if "noqa" not in lowered and "ruff" not in lowered:
        return []
    return comments(text, DIRECTIVE)


def command() -> list[str] | None:
    """How to run ruff here (its executable, else `python -m ruff`), or None."""
    exe = shutil.which("ruff")
    if exe:
        return [exe]
    if importlib.util.find_spec("ruff") is not None:
        return [sys.executable, "-m", "ruff"]
    return None


def identity(cmd: list[str] | None) -> str:
    """What identifies this ruff (its path, size and mtime: a stat is cheap,
    a version call is not), for keys of outcomes that depend on its reports."""
    if cmd is None:
        return "ruff: none"
    spec = importlib.util.find_spec("ruff") if len(cmd) > 1 else None
    exe = cmd[0] if len(cmd) == 1 else str(getattr(spec, "origin", "") or "")
    try:
        st = os.stat(exe)
    except OSError:
        return f"ruff: {exe}"
    return f"ruff: {exe} {st.st_size} {st.st_mtime_ns}"


# Each file's F811 items from ruff's last run over it, by (root, ruff, path,
# the text's hash): F811 is a per-file check (no config: --isolated), so a
# resident front end's next run starts ruff only for the candidates whose
# text changed (an edit elsewhere starts none). Only the last call's are kept.
_KNOWN: dict[tuple[str, ...], list[dict[str, Any]]] = {}


def _text_key(
    root: str | Path, cmd: list[str], ruff: str, held: Mapping[str, str], path: str
) -> tuple[str, ...] | None:
    """The key of `path`'s text as ruff reads it now (the buffer, else the file);
    None where the file cannot be read (ruff says what it says of it: not kept)."""
    if path in held:
        data = held[path].encode("utf-8")
    else:
        try:
            data = (Path(root) / path).read_bytes()
        except OSError:
            return None
    digest = hashlib.blake2b(data, digest_size=16).hexdigest()
    return (str(root), *cmd, ruff, path, digest)


def texts_key(root: str | Path, paths: list[str], cmd: list[str] | None) -> str | None:
    """A digest of `paths`' texts as ruff would read them now (the buffers, else
    the files) and of the ruff that would: what its reports on them depend on
    (a resident's check memo replays CTX401 by it). None where one cannot be read."""
    ruff = identity(cmd)
    held = BUFFERS.get()
    h = hashlib.blake2b(ruff.encode(), digest_size=16)
    for path in paths:
        key = _text_key(root, cmd or [], ruff, held, path)
        if key is None:
            return None
        h.update("\0".join(key).encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def f811(
    root: str | Path, paths: list[str], names: set[str], cmd: list[str] | None
) -> tuple[str, list[F811]]:
    """(status, reports) of F811 on `names` in `paths`; the status says whether
    ruff ran ("ran on N file(s)", "not run: ...", "unavailable: ..."). A file
    whose text ruff's last run here read gives that run's reports."""
    global _KNOWN
    if not paths:
        return "not run: no file binds an accessor name twice", []
    if cmd is None:
        return "unavailable: ruff is not installed (it is a dependency: `pip install ruff`)", []
    held = BUFFERS.get()
    ruff = identity(cmd)
    keys = {p: k for p in paths if (k := _text_key(root, cmd, ruff, held, p)) is not None}
    by_path = {p: _KNOWN[k] for p, k in keys.items() if k in _KNOWN}
    todo = [p for p in paths if p not in by_path]
    if todo:
        ran = _run(root, todo, held, cmd)
        if isinstance(ran, str):
            return ran, []
        for p in todo:
            items = ran.pop(p, [])
            by_path[p] = items
            # kept only where the file still has the text hashed before ruff read it
            # (and ruff named every file it reported by a path asked: else none)
            if p in keys and _text_key(root, cmd, ruff, held, p) == keys[p]:
                _KNOWN[keys[p]] = items
        for path, items in ran.items():  # (a path ruff named otherwise: a link)
            by_path[path] = items
            _KNOWN.clear()
    _KNOWN = {k: _KNOWN[k] for k in keys.values() if k in _KNOWN}  # (this call's only)
    found: set[F811] = set()
    for path, items in by_path.items():
        for item in items:
            m = _NAME.search(item.get("message", ""))
            if item.get("code") != "F811" or m is None or m.group(1) not in names:
                continue
            loc = item["location"]
            found.add(
                F811(path, loc["row"], loc["column"], m.group(1), item["message"].split(":")[0])
            )
    return f"ran on {len(paths)} file(s)", sorted(found)


def _run(
    root: str | Path, paths: list[str], held: Mapping[str, str], cmd: list[str]
) -> dict[str, list[dict[str, Any]]] | str:
    """ruff's items per path (as `_relative` names it), or why it did not run."""
    args = [*cmd, "check", "--select", "F811", "--output-format", "json", "--no-cache"]
    args += ["--isolated", "--exit-zero"]
    on_disk = [p for p in paths if p not in held]
    # (the arguments, the text on stdin): the files on disk at once, each buffer apart
    runs = [([*args, "--", *on_disk], None)] if on_disk else []
    runs += [([*args, "--stdin-filename", p, "-"], held[p]) for p in paths if p in held]
    out: dict[str, list[dict[str, Any]]] = {}
    for argv, text in runs:
        try:
            done = subprocess.run(
                argv,
                cwd=root,
                input=text,
                capture_output=True,
                text=True,
                timeout=TIMEOUT_S,
                check=False,
            )
            items = json.loads(done.stdout or "[]")
        except (OSError, subprocess.TimeoutExpired, json.JSONDecodeError) as exc:
            return f"unavailable: ruff failed ({type(exc).__name__})"
        if done.returncode != 0:
            return f"unavailable: ruff exited {done.returncode}"
        for item in items:
            out.setdefault(_relative(root, item["filename"]), []).append(item)
    return out


def _relative(root: str | Path, filename: str) -> str:
    try:
        return Path(filename).resolve().relative_to(Path(root).resolve()).as_posix()
    except ValueError:
        return filename
