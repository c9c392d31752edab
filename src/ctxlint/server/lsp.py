"""`ctxlint server`: the language server over stdio (pygls, lsprotocol).

It holds one project (server.project) resolved as `check` resolves it, from
the workspace folder (or a config given on the command line). Edits are
debounced, saves checked at once; after each check, every document whose
findings changed gets its diagnostics, and a document whose findings went
away gets an empty list. Checks run on the event loop's thread, one at a
time: the engine's worker pool (if a check starts one) is forked from here
and gone when the check returns.

Initialization options: `showBaselined` (default true: baselined findings
are hints; false hides them), `debounceMs` (default 200).
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import sys
import time
from collections.abc import Generator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.exceptions import JsonRpcContentModified, JsonRpcException, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, lsp_method
from pygls.uris import from_fs_path

from ctxlint import __version__, session
from ctxlint.core.errors import CtxlintError
from ctxlint.server import actions, lsp_navigation
from ctxlint.server.checking import collect_idle, load
from ctxlint.server.diagnostics import diagnostic, error_diagnostic, rule_links
from ctxlint.server.project import Project

# the files whose change means a new config (the config itself, the baseline),
# and Python files created, changed or deleted outside the editor
WATCHED = ("**/pyproject.toml", "**/ctxlint.toml", "**/.ctxlint.toml", "**/*.json", "**/*.py")


def path_of_uri(uri: str) -> str | None:
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else None


# seconds of quiet after a check before the navigation index is built
WARM_IDLE = 0.5


class Utf16Protocol(LanguageServerProtocol):
    """Positions in UTF-16 units only: the diagnostics, fixes and navigation
    count columns that way, and every client must accept it (LSP's default).
    pygls would otherwise take the client's first preference (UTF-8 in
    Neovim 0.10+, say) while ctxlint counted UTF-16."""

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams) -> Generator[Any, Any, Any]:
        if params.capabilities.general is not None:
            params.capabilities.general.position_encodings = [types.PositionEncodingKind.Utf16]
        return (yield from super().lsp_initialize(params))


class CtxlintServer(LanguageServer):
    def __init__(
        self, request: session.Request, *, use_cache: bool = True, jobs: int | None = None
    ) -> None:
        super().__init__("ctxlint", __version__, protocol_cls=Utf16Protocol)
        self.request = request
        self.use_cache = use_cache
        self.jobs = jobs
        self.project: Project | None = None
        self.show_baselined = True
        self.debounce = 0.2
        self.published: set[str] = set()  # paths whose last diagnostics were not empty
        self.plans: actions.Plans = {}  # the lazy code actions' plans, until the next change
        self._timer: asyncio.TimerHandle | None = None
        self._warm_timer: asyncio.Handle | None = None
        self._index_handle: asyncio.Handle | None = None  # the index built at once
        # kept between answers, for the project's root: each path's URI, and
        # what its columns need in LSP's terms (lsp_navigation.Texts)
        self.uris: dict[str, str] = {}
        self.columns: dict[str, tuple[str, lsp_navigation.Columns]] = {}

    # -- messages -------------------------------------------------------------------
    def log(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        self.window_log_message(types.LogMessageParams(type=kind, message=message))

    def uri(self, path: str) -> str:
        assert self.project is not None
        found = self.uris.get(path)
        if found is None:
            found = self.uris[path] = from_fs_path(str(self.project.root / path)) or ""
        return found

    # -- the project ----------------------------------------------------------------
    def open_project(self, folder: str | None) -> None:
        request = self.request
        if request.config is None and request.profile is None and folder is not None:
            request = session.Request(**(vars(request) | {"search_from": folder}))
        self.request = request
        self.plans.clear()
        self.uris.clear()
        self.columns.clear()
        try:
            setup = load(request)
        except CtxlintError as exc:
            self.project = None
            said = f"ctxlint: no project: {exc}"
            self.log(said, types.MessageType.Error)
            # and on the screen: in the log alone, an editor started at a monorepo's
            # root showed nothing at all, and nothing said why (hwalk)
            self.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Error, message=said)
            )
            return
        if self.project is None:
            self.project = Project(setup, use_cache=self.use_cache, jobs=self.jobs)
        else:
            self.project.reload(setup)

    def refresh(self, *, replay: bool = False, full: bool = False, done: str = "checked") -> None:
        """Check now, and publish what changed (`replay`, `full`: Project.refresh's);
        the log line says `done` (a client counts "ctxlint: checked" lines as
        the checks its edits caused, a layout edit's among them)."""
        self._timer = None
        project = self.project
        if project is None:
            return
        known = set(project.checker.failed)
        self.plans.clear()
        began = time.perf_counter()
        try:
            changed = project.refresh(replay=replay, full=full)
        except CtxlintError as exc:
            self.log(f"ctxlint: the check failed: {exc}", types.MessageType.Error)
            return
        except Exception as exc:  # a fault of the engine: said, and the last findings stay
            logging.exception("the check failed")
            self.log(
                f"ctxlint: internal error: {type(exc).__name__}: {exc} (please report it)",
                types.MessageType.Error,
            )
            return
        for rid, detail in sorted(project.checker.failed.items()):
            if rid not in known:
                self.log(
                    f"ctxlint: rule {rid} raised and is left out; the other rules' findings "
                    f"are shown (please report it):\n{detail}",
                    types.MessageType.Error,
                )
        for path in sorted(changed):
            self.publish(path)
        took = time.perf_counter() - began
        # queued before the log line goes out, so that a question the client
        # sends on reading it comes after the index the warm-up may build now
        self._warm_when_idle(project)
        if project.moved_only:
            self.log(
                f"ctxlint: {done} 1 file in {took:.3f} s; {len(changed)} documents changed; "
                "a layout edit: positions moved, nothing derived",
                types.MessageType.Log,
            )
            return
        checked = project.checked.result.files_checked if project.checked else 0
        memo = project.checker.resident.checks
        derived = "every rule" if memo is None else f"{len(memo.derived)} rules"
        how = f"{derived} derived again" if project.modelled else "a stored outcome replayed"
        self.log(
            f"ctxlint: {done} {checked} files in {took:.2f} s; "
            f"{len(changed)} documents changed; {how}",
            types.MessageType.Log,
        )

    def publish(self, path: str) -> None:
        project = self.project
        assert project is not None
        report = project.report(path)
        text = project.buffers.get(path)
        if text is None:
            try:
                text = (project.root / path).read_text(encoding="utf-8", errors="replace")
            except OSError:
                text = ""
        lines = text.splitlines()
        links = rule_links(project.rules)
        diags = [
            diagnostic(f, lines, links, self.uri)
            for f in report.findings
            if self.show_baselined or f.status == "new"
        ]
        diags += [error_diagnostic(e, lines) for e in report.errors]
        if diags:
            self.published.add(path)
        else:
            self.published.discard(path)
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=self.uri(path), diagnostics=diags)
        )

    def _warm_when_idle(self, project: Project) -> None:
        """Build what the next question needs: the program (when the last
        check replayed a stored outcome), else the navigation index (not
        after a layout edit: a question checks first), and the buffers'
        layouts, so that a first layout edit tokenizes little. Each runs on
        the event loop, and an edit arriving meanwhile waits behind it; an
        edit cancels it before it starts (its own check builds the program),
        and a question asked first builds what it needs itself.

        When the index is a moment's work (lsp_navigation.ready_soon: the
        check built the resolution model it reads, or the last index's answer
        of that model is carried and only the edited files' sites are built
        again), it is built at once, as soon as the loop is free: a question
        sent right after the diagnostics finds it built. The rest waits until
        the editor has been quiet a while (WARM_IDLE, counted from the end of
        that index when it is built at once): the program, the model
        after a check that changed what it reads, take seconds on sglang
        0.5.23, and the layouts and the cyclic GC's collection are for later."""

        def index() -> None:
            self._index_handle = None
            if project.current:
                lsp_navigation.warm(project)
            # the quiet is counted from here: an edit sent on the check's log
            # line is read in several turns of the loop after this, and a timer
            # due meanwhile (the index took longer than WARM_IDLE) would run
            # the collection first, which the edit's check would wait behind
            self._warm_timer = loop.call_later(WARM_IDLE, warm)

        def warm() -> None:
            self._warm_timer = None
            if not project.modelled:
                self.model()
                return
            if project.current:
                lsp_navigation.warm(project)
            project.prepare_layouts()
            collect_idle()  # the cycles the checks left (checking.settle)

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # called outside the server's loop: now
            warm()
            return
        if lsp_navigation.ready_soon(project):
            self._index_handle = loop.call_soon(index)
        else:
            self._warm_timer = loop.call_later(WARM_IDLE, warm)

    def model(self) -> None:
        """The program's facts held, for navigation and for the next edit's
        check to start from: a check again when the last one replayed a stored
        outcome, or after a layout edit moved a file's findings without one
        (its findings are the same; any difference is published)."""
        project = self.project
        if project is not None and not project.current:
            self.refresh(full=True, done="built the program of")

    def schedule(self, delay: float) -> None:
        for pending in (self._warm_timer, self._index_handle):
            if pending is not None:
                pending.cancel()
        self._warm_timer = self._index_handle = None
        if self._timer is not None:
            self._timer.cancel()
        self._timer = asyncio.get_running_loop().call_later(delay, self.refresh)

    def buffer(self, uri: str, *, closed: bool = False) -> str | None:
        """The project path of a document, its buffer taken from the workspace."""
        project = self.project
        file = path_of_uri(uri)
        if project is None or file is None:
            return None
        path = project.path_of(file)
        if path is None:
            return None
        self.plans.clear()  # the texts the fixes plan on changed
        if closed:
            project.close(path)
        else:
            project.edit(path, self.workspace.get_text_document(uri).source)
        return path


def make_server(
    request: session.Request, *, use_cache: bool = True, jobs: int | None = None
) -> CtxlintServer:
    server = CtxlintServer(request, use_cache=use_cache, jobs=jobs)
    _lifecycle(server)
    _documents(server)
    _code_actions(server)
    lsp_navigation.register(server)  # hover, definition, references, workspace symbols
    return server


def _lifecycle(server: CtxlintServer) -> None:
    """initialize (the options, the project) and initialized (the first check,
    the watched files)."""

    @server.feature(types.INITIALIZE)
    def initialize(ls: CtxlintServer, params: types.InitializeParams) -> None:
        options: dict[str, Any] = params.initialization_options or {}
        if isinstance(options, dict):
            ls.show_baselined = bool(options.get("showBaselined", True))
            ls.debounce = float(options.get("debounceMs", 200)) / 1000
        folder = None
        if params.workspace_folders:
            folder = path_of_uri(params.workspace_folders[0].uri)
        elif params.root_uri:
            folder = path_of_uri(params.root_uri)
        elif params.root_path:
            folder = params.root_path
        ls.open_project(folder)

    @server.feature(types.INITIALIZED)
    def initialized(ls: CtxlintServer, _params: types.InitializedParams) -> None:
        # the watch is asked for first, so that a client reading the first
        # diagnostics has it (and a config edit during the first check counts)
        watch = ls.client_capabilities.workspace
        changes = watch.did_change_watched_files if watch else None
        if changes and changes.dynamic_registration:
            _watch_config(ls)
        # the whole project's diagnostics, before any document opens: from the
        # stored outcome when a warm `ctxlint check` left one for this tree
        ls.refresh(replay=True)


def _watch_config(ls: CtxlintServer) -> None:
    """The config and the baseline: read again when they change."""
    watchers = [types.FileSystemWatcher(glob_pattern=g) for g in WATCHED]
    params = types.RegistrationParams(
        registrations=[
            types.Registration(
                id="ctxlint-config",
                method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=watchers),
            )
        ]
    )

    def answered(future: Any) -> None:
        if future.exception() is not None:  # the client refused: editor edits still count
            message = f"ctxlint: config files are not watched: {future.exception()}"
            ls.log(message, types.MessageType.Warning)

    ls.client_register_capability(params).add_done_callback(answered)


def _documents(server: CtxlintServer) -> None:
    """Buffers opened, changed, saved and closed, and files changed outside."""

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: CtxlintServer, params: types.DidOpenTextDocumentParams) -> None:
        if ls.buffer(params.text_document.uri) is not None:
            ls.schedule(0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: CtxlintServer, params: types.DidChangeTextDocumentParams) -> None:
        if ls.buffer(params.text_document.uri) is not None:
            ls.schedule(ls.debounce)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: CtxlintServer, params: types.DidSaveTextDocumentParams) -> None:
        if ls.buffer(params.text_document.uri) is not None:
            ls.schedule(0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: CtxlintServer, params: types.DidCloseTextDocumentParams) -> None:
        if ls.buffer(params.text_document.uri, closed=True) is not None:
            ls.schedule(0)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched(ls: CtxlintServer, params: types.DidChangeWatchedFilesParams) -> None:
        project = ls.project
        config = project.setup.config if project is not None else None
        names = {"pyproject.toml", "ctxlint.toml", ".ctxlint.toml"}
        if project is not None:
            project.changed_outside()  # the next refresh checks, whatever the buffers
        for change in params.changes:
            file = path_of_uri(change.uri)
            if file is None:
                continue
            if Path(file).name in names or (
                config is not None and config.baseline and Path(file) == Path(config.baseline)
            ):
                ls.log(f"ctxlint: {file} changed: the config is read again")
                ls.open_project(None)  # found again as at the start
                break
        ls.schedule(0)  # a file created, deleted or renamed outside the editor too


def _code_actions(server: CtxlintServer) -> None:
    """Quick fixes, suppressions and source.fixAll.ctxlint; lazily (their edits
    made by codeAction/resolve) for a client that resolves edits."""

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[types.CodeActionKind.QuickFix, actions.FIX_ALL],
            resolve_provider=True,
        ),
    )
    def code_action(
        ls: CtxlintServer, params: types.CodeActionParams
    ) -> list[types.CodeAction] | None:
        project = ls.project
        uri = params.text_document.uri
        file = path_of_uri(uri)
        if project is None or file is None:
            return None
        path = project.path_of(file)
        if path is None:
            return None
        document = ls.workspace.get_text_document(uri)
        text, version = document.source, document.version
        lazy = _resolves_edits(ls)
        wanted = params.context.only
        out: list[types.CodeAction] = []
        if wanted is None or any(k in (types.CodeActionKind.QuickFix, "quickfix") for k in wanted):
            snippets = _snippets(ls)
            for f in _in_range(project.report(path).findings, params.range):
                if lazy:
                    out += actions.lazy_quick_fixes(project, path, uri, f, ls.plans)
                    out.append(actions.lazy_suppress(uri, f))
                else:
                    out += actions.quick_fixes(project, path, uri, version, f, text, ls.plans)
                    out.append(actions.suppress(uri, version, f, text, snippets))
        # only when asked for by kind (on save, a "source action" menu): it is a
        # `ctxlint fix` of the whole file, too dear for every cursor move
        if wanted is not None and any(
            str(k) == actions.FIX_ALL or actions.FIX_ALL.startswith(f"{k}.") for k in wanted
        ):
            if lazy:
                every = actions.lazy_fix_all(project, path, uri, ls.plans)
            else:
                every = actions.fix_all(project, path, uri, version, text, ls.plans)
            if every is not None:
                out.append(every)
        return out

    @server.feature(types.CODE_ACTION_RESOLVE)
    def resolve(ls: CtxlintServer, action: types.CodeAction) -> types.CodeAction:
        """A lazy action's edit, made on the text and findings held now."""
        lazy = actions.Lazy.load(action.data)
        project = ls.project
        file = path_of_uri(lazy.uri) if lazy is not None else None
        path = project.path_of(file) if project is not None and file is not None else None
        if lazy is None or project is None or path is None:
            raise JsonRpcInvalidParams("ctxlint: not a code action of this server")
        document = ls.workspace.get_text_document(lazy.uri)
        try:
            action.edit = actions.resolve(
                project,
                path,
                lazy,
                document.version,
                document.source,
                ls.plans,
                snippets=_snippets(ls),
            )
        except actions.Refused as exc:
            code = (
                JsonRpcContentModified.CODE
                if isinstance(exc, actions.Gone)
                else int(types.LSPErrorCodes.RequestFailed)
            )
            raise JsonRpcException(f"ctxlint: {action.title}: {exc}", code=code) from None
        action.data = None
        return action


def _resolves_edits(ls: CtxlintServer) -> bool:
    """Whether the client asks codeAction/resolve for an action's edit."""
    document = ls.client_capabilities.text_document
    asked = document.code_action if document else None
    support = asked.resolve_support if asked else None
    return support is not None and "edit" in support.properties


def _snippets(ls: CtxlintServer) -> bool:
    ws = ls.client_capabilities.workspace
    edit = ws.workspace_edit if ws else None
    return bool(edit and getattr(edit, "snippet_edit_support", False))


def _in_range(findings: Any, where: types.Range) -> list[Any]:
    """The findings on the lines of `where` (0-based, LSP's)."""
    first, last = where.start.line + 1, where.end.line + 1
    return [f for f in findings if f.span.line <= last and f.span.end_line >= first]


def serve(request: session.Request, *, use_cache: bool = True, jobs: int | None = None) -> int:
    """Serve over stdio until the client exits or stdin closes.

    The protocol gets its own copies of the two descriptors, and sys.stdin and
    sys.stdout are pointed away from them: the thread reading the client holds
    its file's lock while it waits, and a worker the engine's pool forks closes
    sys.stdin as it starts (multiprocessing does), which would wait on that
    lock forever; a stray print would corrupt the protocol.
    """
    stdin = os.fdopen(os.dup(sys.stdin.fileno()), "rb")
    stdout = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdin = open(os.devnull, encoding="utf-8")
    sys.stdout = sys.stderr
    # The command line keeps the cyclic GC off for its one run (cli.main.run);
    # a resident server must collect between checks, or every check's cycles
    # stay (the engine still pauses it during each check)
    gc.enable()
    server = make_server(request, use_cache=use_cache, jobs=jobs)
    server.start_io(stdin, stdout)
    return 0
