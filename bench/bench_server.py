#!/usr/bin/env python3
"""Benchmark `ctxlint server` on the unpacked sglang==0.5.23 wheel: issue 37's rows.

On a scratch copy of the wheel's `sglang/` checked with bench/sglang.toml (as
bench_sglang.py makes it), through a real LSP client (pygls's) over stdio:

- start to first diagnostics, cache warm: the server started, initialized,
  until its first check has published (a batch `ctxlint check` warms the
  cache first, and the warm batch run is timed beside it);
- a new statement inside `run_scheduler_process` (on CTX301's call paths),
  sent as an unsaved edit, until the check after it has published every
  document whose findings changed: median and p95 over `--edits` edits;
- a comment edit, the same way (`--edits` of them), and a blank line added
  between two definitions (`--edits`, at places spread over the file): both
  answered by moving the findings, no check (docs/server.md);
- the server's resident memory (VmRSS) after edit 20 and after edit 200;
- hover, definition and references on a `get_parallel().tp_size` read in
  scheduler.py (references: every place across the tree that names the
  field): the first question after the edits, then the median of 5 each;
- beside them, batch `ctxlint check` warm, and after the same statement edit
  written to disk; and `ctxlint check` with `ctxlint server --daemon` up,
  after the same edit written to disk (median of 5 edits).

The server runs with `debounceMs: 0` (an edit is checked as soon as it
arrives: the rows time the check, not the debounce; an editor adds 200 ms by
default). The check after an edit is done when the server logs its
"ctxlint: checked" line, which it sends after the check's publishDiagnostics.

    python bench/bench_server.py [--edits 20] [--memory-edits 200] [--json OUT]
    python bench/bench_server.py --tree T --config C --target REL   # another tree

A script, not a test: on sglang it runs for minutes (and a cold cache for
more). Exit 0 always.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import importlib.util
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.uris import from_fs_path

HERE = Path(__file__).resolve().parent
MiB = 1024**2


def _bench_sglang() -> Any:
    return _bench_module("bench_sglang")


def _bench_module(name: str) -> Any:
    """Another bench script of this folder, loaded by its path (bench/ is no package)."""
    spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def entry_edit_point(text: str) -> tuple[int, int]:
    """(line, indent) of the first statement of `run_scheduler_process`."""
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef) and node.name == "run_scheduler_process":
            return node.body[0].lineno, node.body[0].col_offset
    raise SystemExit("bench: no run_scheduler_process in the target file")


def blank_line_places(text: str, count: int) -> list[int]:
    """The places bench_layout_edits.py adds its blank lines at (one definition
    of the places, so the two benches time the same edits)."""
    return _bench_module("bench_layout_edits").blank_line_places(text, count)  # type: ignore[no-any-return]


def with_statements(text: str, line: int, indent: int, i: int) -> str:
    """`text` with i + 1 new statements before `line`: each edit's facts differ
    from every earlier one's, so none is replayed (as bench_sglang.py edits)."""
    lines = text.splitlines(keepends=True)
    new = f"{' ' * indent}_ctxlint_bench_edit = {i}\n" * (i + 1)
    return "".join([*lines[: line - 1], new, *lines[line - 1 :]])


class Server:
    """The server under a pygls client, and a clock on its checks."""

    def __init__(self, command: list[str], folder: Path) -> None:
        self.command, self.folder = command, folder
        self.client = LanguageClient("ctxlint-bench", "1")
        self.checks = 0
        self.check_times: list[float] = []
        self.version = 0

        @self.client.feature(types.WINDOW_LOG_MESSAGE)
        def log(params: types.LogMessageParams) -> None:
            if params.message.startswith("ctxlint: checked"):
                self.checks += 1
                self.check_times.append(time.perf_counter())
            elif params.type in (types.MessageType.Error, types.MessageType.Warning):
                print(params.message, file=sys.stderr)

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(params: types.PublishDiagnosticsParams) -> None:
            pass

    async def checked(self, after: int, timeout: float = 900) -> float:
        """Wait for check number `after + 1`; the clock time it ended."""
        until = time.monotonic() + timeout
        while self.checks <= after:
            if time.monotonic() > until:
                raise TimeoutError("the server did not check in time")
            await asyncio.sleep(0.002)
        return self.check_times[after]

    async def start(self) -> float:
        began = time.perf_counter()
        await self.client.start_io(*self.command)
        await self.client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                workspace_folders=[
                    types.WorkspaceFolder(uri=from_fs_path(str(self.folder)) or "", name="t")
                ],
                initialization_options={"debounceMs": 0},
            )
        )
        self.client.initialized(types.InitializedParams())
        return await self.checked(0) - began

    @property
    def pid(self) -> int:
        server = self.client._server
        assert server is not None
        return server.pid

    async def open(self, path: Path, text: str) -> None:
        before = self.checks
        self.version = 1
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=from_fs_path(str(path)) or "", language_id="python", version=1, text=text
                )
            )
        )
        await self.checked(before)

    async def edit(self, path: Path, text: str) -> float:
        """Seconds from the change sent to the end of the check after it."""
        before = self.checks
        self.version += 1
        began = time.perf_counter()
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=from_fs_path(str(path)) or "", version=self.version
                ),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
        return await self.checked(before) - began

    async def ask(self, method: str, path: Path, where: tuple[int, int]) -> tuple[float, Any]:
        """Seconds to answer `textDocument/<method>` at (line, column), 0-based."""
        doc = types.TextDocumentIdentifier(uri=from_fs_path(str(path)) or "")
        pos = types.Position(line=where[0], character=where[1])
        began = time.perf_counter()
        if method == "hover":
            got: Any = await self.client.text_document_hover_async(
                types.HoverParams(text_document=doc, position=pos)
            )
        elif method == "definition":
            got = await self.client.text_document_definition_async(
                types.DefinitionParams(text_document=doc, position=pos)
            )
        else:
            got = await self.client.text_document_references_async(
                types.ReferenceParams(
                    text_document=doc,
                    position=pos,
                    context=types.ReferenceContext(include_declaration=True),
                )
            )
        return time.perf_counter() - began, got

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()


def batch(config: Path, tree: Path) -> float:
    began = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "ctxlint.cli", "check", "--config", str(config), str(tree)],
        capture_output=True,
        check=False,
    )
    return time.perf_counter() - began


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


async def measure(
    args: argparse.Namespace, tree: Path, config: Path, target: Path
) -> dict[str, Any]:
    rows: dict[str, Any] = {}
    original = target.read_text(encoding="utf-8")
    line, indent = entry_edit_point(original)
    batch(config, tree)  # the cache warm (cold on a first run: minutes)
    rows["batch check, warm"] = batch(config, tree)
    target.write_text(with_statements(original, line, indent, 0), encoding="utf-8")
    rows["batch check, after the statement edit"] = batch(config, tree)
    target.write_text(original, encoding="utf-8")
    batch(config, tree)  # warm again on the tree as it is

    command = [sys.executable, "-m", "ctxlint.cli", "server", "--config", str(config), str(tree)]
    server = Server(command, tree)
    rows["server start to first diagnostics, cache warm"] = await server.start()
    try:
        await server.open(target, original)
        edits = [
            await server.edit(target, with_statements(original, line, indent, i))
            for i in range(args.edits)
        ]
        rows["statement edit in run_scheduler_process: median"] = statistics.median(edits)
        rows["statement edit in run_scheduler_process: p95"] = p95(edits)
        await server.edit(target, original)
        # layout edits (server.layout_edits): answered by moving the findings
        comments = [
            await server.edit(target, original + f"# a comment, {i}\n") for i in range(args.edits)
        ]
        rows["comment edit: median"] = statistics.median(comments)
        text = original + f"# a comment, {args.edits - 1}\n"
        blanks = []
        for shift, at in enumerate(blank_line_places(original, args.edits)):
            lines = text.splitlines(keepends=True)
            text = "".join([*lines[: at + shift], "\n", *lines[at + shift :]])
            blanks.append(await server.edit(target, text))
        rows["blank line added between definitions: median"] = statistics.median(blanks)
        await server.edit(target, original)
        memory: dict[int, int] = {}
        for i in range(args.memory_edits):
            await server.edit(target, with_statements(original, line, indent, i % 40))
            if i + 1 in (20, args.memory_edits):
                memory[i + 1] = rss(server.pid)
        rows["resident memory after 20 edits (MiB)"] = memory.get(20, 0) / MiB
        rows[f"resident memory after {args.memory_edits} edits (MiB)"] = (
            memory.get(args.memory_edits, 0) / MiB
        )
        await server.edit(target, original)
        rows.update(await navigation(server, target, original))
    finally:
        await server.stop()
    rows.update(daemon(config, tree, target, original, line, indent))
    return rows


READ = "self.tp_size = get_parallel().tp_size"


async def navigation(server: Server, target: Path, text: str) -> dict[str, Any]:
    """Hover, definition and references on the `tp_size` of READ."""
    start = text.index(READ) + len(READ) - len("tp_size")
    where = (text.count("\n", 0, start), start - text.rfind("\n", 0, start) - 1)
    rows: dict[str, Any] = {}
    for method in ("hover", "definition", "references"):
        first, got = await server.ask(method, target, where)
        if not got:
            print(f"bench: {method} at {where} answered nothing", file=sys.stderr)
        found = len(got) if isinstance(got, list | tuple) else int(got is not None)
        rows[f"{method} of tp_size: first ({found} answers)"] = first
        again = [(await server.ask(method, target, where))[0] for _ in range(5)]
        rows[f"{method} of tp_size: median"] = statistics.median(again)
    return rows


def daemon(
    config: Path, tree: Path, target: Path, original: str, line: int, indent: int
) -> dict[str, Any]:
    """`ctxlint check` answered by `ctxlint server --daemon`, after the
    statement edit written to disk (median of 5 edits), and warm."""
    cli = [sys.executable, "-m", "ctxlint.cli"]
    where = ["--config", str(config), str(tree)]
    subprocess.run([*cli, "server", "--daemon", "start", *where], check=True, cwd=tree)
    try:
        batch(config, tree)  # the daemon's first answer after its start
        times = []
        for i in range(5):
            target.write_text(with_statements(original, line, indent, 100 + i), encoding="utf-8")
            times.append(batch(config, tree))
        target.write_text(original, encoding="utf-8")
        batch(config, tree)
        warm = statistics.median(batch(config, tree) for _ in range(3))
    finally:
        target.write_text(original, encoding="utf-8")
        subprocess.run([*cli, "server", "--daemon", "stop", *where], check=False, cwd=tree)
    return {
        "check with the daemon up, after the statement edit: median": statistics.median(times),
        "check with the daemon up, warm": warm,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edits", type=int, default=20)
    parser.add_argument("--memory-edits", type=int, default=200)
    parser.add_argument("--tree", type=Path, help="a tree to check instead of sglang 0.5.23")
    parser.add_argument("--config", type=Path, help="its config (with --tree)")
    parser.add_argument("--target", help="the file with run_scheduler_process (with --tree)")
    parser.add_argument("--json", type=Path, help="write the rows there too")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ctxlint-bench-server-") as scratch:
        if args.tree:
            tree, config, target = args.tree, args.config, args.tree / args.target
        else:
            sg = _bench_sglang()
            work = Path(scratch)
            tree = sg.scratch_copy(sg.fetch_tree(Path.home() / ".cache/ctxlint/wheels"), work)
            config = sg.bench_config(HERE / "sglang.toml", work)
            target = tree / "sglang/srt/managers/scheduler.py"
        rows = asyncio.run(measure(args, tree, config, target))
    width = max(len(k) for k in rows)
    for name, value in rows.items():
        unit = "" if "MiB" in name else " s"
        print(f"{name:<{width}}  {value:8.3f}{unit}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
