"""A real LSP client (pytest-lsp's) driving `ctxlint server` over stdio, on a
copy of examples/legacy_app (the workspace is the example's folder, whose
ctxlint.toml names the copied repository as the project root)."""

from __future__ import annotations

import asyncio
import atexit
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import from_fs_path
from pytest_lsp import ClientServerConfig, LanguageClient, make_test_lsp_client

REPO = Path(__file__).resolve().parents[2]
APP = "examples/legacy_app"
CONFIG = f"{APP}/ctxlint.toml"
BASELINE = "baselines/legacy_app.json"
SERVER = [sys.executable, "-m", "ctxlint.cli", "server"]


_PRISTINE: list[Path] = []  # the copy made once per test process, its cache warm


def _pristine() -> Path:
    if not _PRISTINE:
        base = Path(tempfile.mkdtemp(prefix="ctxlint-server-tests-"))
        atexit.register(shutil.rmtree, base, True)
        root = base / "repo"
        skip = shutil.ignore_patterns("__pycache__", "*.pyc")
        shutil.copytree(REPO / "src" / "ctxrt", root / "src" / "ctxrt", ignore=skip)
        shutil.copytree(REPO / APP, root / APP, ignore=skip)
        shutil.copy2(REPO / "examples" / "__init__.py", root / "examples" / "__init__.py")
        (root / "baselines").mkdir()
        shutil.copy2(REPO / BASELINE, root / BASELINE)
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        subprocess.run(  # the fact cache warm: each test's server starts from it
            [sys.executable, "-m", "ctxlint.cli", "check", "--config", CONFIG, "--jobs", "1", "."],
            cwd=root,
            capture_output=True,
            check=False,
        )
        _PRISTINE.append(root)
    return _PRISTINE[0]


def copy_legacy_app(root: Path) -> Path:
    """The runtime, the example and its baseline (as tests/test_legacy_app.py
    copies them), a git work tree, with a warm fact cache (a restored cache
    serves another copy: its keys are relative to the project)."""
    shutil.copytree(_pristine(), root, symlinks=True)
    return root


def uri(path: Path) -> str:
    return from_fs_path(str(path)) or ""


def batch(root: Path) -> dict[str, Any]:
    """`ctxlint check --no-cache --format json` on the tree as it is on disk (in this
    process: helpers.cli; the server under test is the subprocess)."""
    from helpers import cli

    done = cli(
        "check", "--no-cache", "--format", "json", "--config", CONFIG, "--jobs", "1", ".", cwd=root
    )
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def key(rule: str, line: int, status: str) -> tuple[str, int, str]:
    return (rule, line, status)


class Session:
    """One server, its client, and the diagnostics it has published."""

    def __init__(self, root: Path, client: LanguageClient) -> None:
        self.root, self.client = root, client
        self.versions: dict[str, int] = {}
        self.seen = 0  # the checks waited for so far

    def checks(self) -> int:
        """How many checks the server has logged ("ctxlint: checked ..." each)."""
        return sum(m.message.startswith("ctxlint: checked") for m in self.client.log_messages)

    async def settle(self, timeout: float = 120.0) -> None:
        """Wait until the server has checked after the last message (it logs one
        line per check, after publishing what changed)."""
        loop = asyncio.get_running_loop()
        until = loop.time() + timeout
        while self.checks() <= self.seen:
            if loop.time() > until:
                raise TimeoutError("the server did not check in time")
            await asyncio.sleep(0.02)
        self.seen = self.checks()

    async def quiet(self) -> None:
        """Settle, then again while more checks follow (an open, then an edit
        within the debounce, can be two checks)."""
        await self.settle()
        while True:
            await asyncio.sleep(0.3)
            if self.checks() <= self.seen:
                return
            await self.settle()

    def close(self, rel: str) -> None:
        self.versions.pop(rel, None)
        self.client.text_document_did_close(
            types.DidCloseTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri=uri(self.root / rel))
            )
        )

    def diagnostics(self, rel: str) -> list[types.Diagnostic]:
        return list(self.client.diagnostics.get(uri(self.root / rel), []))

    def all(self) -> dict[str, list[tuple[str, int, str]]]:
        """Project path -> its (rule, line, severity) keys, non-empty ones only."""
        out: dict[str, list[tuple[str, int, str]]] = {}
        for u, diags in self.client.diagnostics.items():
            rel = Path(u.removeprefix("file://")).relative_to(self.root).as_posix()
            keys = sorted(
                key(
                    str(d.code),
                    d.range.start.line + 1,
                    "new" if d.severity == types.DiagnosticSeverity.Error else "baselined",
                )
                for d in diags
                if d.code
            )
            if keys:
                out[rel] = keys
        return out

    def open(self, rel: str) -> str:
        text = (self.root / rel).read_text()
        self.versions[rel] = 1
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri(self.root / rel), language_id="python", version=1, text=text
                )
            )
        )
        return text

    def change(self, rel: str, text: str) -> None:
        self.versions[rel] = self.versions.get(rel, 0) + 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=uri(self.root / rel), version=self.versions[rel]
                ),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    def save(self, rel: str, text: str) -> None:
        (self.root / rel).write_text(text)
        self.client.text_document_did_save(
            types.DidSaveTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri=uri(self.root / rel))
            )
        )

    def watched(self, *changes: tuple[str, types.FileChangeType]) -> None:
        self.client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(
                changes=[types.FileEvent(uri=uri(self.root / rel), type=t) for rel, t in changes]
            )
        )


def batch_keys(report: dict[str, Any]) -> dict[str, list[tuple[str, int, str]]]:
    out: dict[str, list[tuple[str, int, str]]] = {}
    for f in report["findings"]:
        out.setdefault(f["path"], []).append(key(f["rule"], f["line"], f["status"]))
    return {p: sorted(v) for p, v in out.items()}


# lspfixtures.py's `serve` fixture: `await serve(*args, **options)` is start(root, ...)
Serve = Callable[..., Awaitable[Session]]


async def start(
    root: Path,
    *args: str,
    options: dict[str, Any] | None = None,
    command: list[str] | None = None,
    snippets: bool = False,
    encodings: list[str] | None = None,
    resolve: bool = False,
) -> Session:
    """The server started on `root`'s copy of the example, initialized, its first
    diagnostics in. `resolve`: the client asks codeAction/resolve for an
    action's edit (as Neovim 0.7+ and VS Code do), so the server's code
    actions come lazily."""
    registered: list[types.Registration] = []

    def make_client() -> LanguageClient:
        client = make_test_lsp_client()

        @client.feature(types.CLIENT_REGISTER_CAPABILITY)
        def register(params: types.RegistrationParams) -> None:
            registered.extend(params.registrations)

        return client

    config = ClientServerConfig(
        server_command=[*(command or SERVER), *args], client_factory=make_client
    )
    client = await config.start()
    assert isinstance(client, LanguageClient)
    folder = root / APP
    initialized = await client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(
                general=types.GeneralClientCapabilities(position_encodings=encodings)
                if encodings
                else None,
                text_document=types.TextDocumentClientCapabilities(
                    code_action=types.CodeActionClientCapabilities(
                        data_support=True,
                        resolve_support=types.ClientCodeActionResolveOptions(properties=["edit"]),
                    )
                )
                if resolve
                else None,
                workspace=types.WorkspaceClientCapabilities(
                    did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(
                        dynamic_registration=True
                    ),
                    workspace_edit=types.WorkspaceEditClientCapabilities(
                        document_changes=True, snippet_edit_support=snippets
                    ),
                ),
            ),
            workspace_folders=[types.WorkspaceFolder(uri=uri(folder), name="legacy_app")],
            initialization_options={"debounceMs": 50, **(options or {})},
        )
    )
    session = Session(root, client)
    session.registered = registered
    session.capabilities = initialized.capabilities  # what the server advertised
    await session.settle()
    return session


async def stop(session: Session) -> None:
    await session.client.shutdown_session()
    await session.client.stop()


def offset(text: str, pos: types.Position) -> int:
    """An LSP position's index in `text` (ASCII text: UTF-16 units are characters)."""
    lines = text.splitlines(keepends=True)
    return sum(len(line) for line in lines[: pos.line]) + pos.character


def apply(text: str, action: types.CodeAction) -> str:
    """The text after the action's edit, as a client applies it (one document)."""
    assert action.edit is not None and action.edit.document_changes
    (change,) = action.edit.document_changes
    assert isinstance(change, types.TextDocumentEdit)
    for edit in sorted(change.edits, key=lambda e: offset(text, e.range.start), reverse=True):
        new = edit.new_text if isinstance(edit, types.TextEdit) else edit.snippet.value
        text = text[: offset(text, edit.range.start)] + new + text[offset(text, edit.range.end) :]
    return text
