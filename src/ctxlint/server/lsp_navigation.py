"""Navigation over LSP: hover, go to definition, find references and workspace
symbols, answered by `ctxlint.server.navigation` from the program of the
server's last check (the editor's buffers in place of their files).

navigation speaks LibCST's positions (line 1-based, column 0-based in code
points) and project paths; LSP speaks 0-based lines, UTF-16 columns and file
URIs. The UTF-16 side is diagnostics.utf16, as the diagnostics count it.
Handlers run on the event loop's thread, as checks do, so a question never
meets a program half rebuilt.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from lsprotocol import types

from ctxlint.discover.sources import content_hash
from ctxlint.program.calls import KEY as CALLS
from ctxlint.program.config_index import INDEX, config_index
from ctxlint.program.core import Program
from ctxlint.program.resolution import KEY as RESOLUTION
from ctxlint.server import navigation
from ctxlint.server.diagnostics import utf16

if TYPE_CHECKING:
    from ctxlint.server.lsp import CtxlintServer
    from ctxlint.server.project import Project


def code_points(line: str, units: int) -> int:
    """A UTF-16 offset into `line` as a code-point column (utf16's inverse; an
    offset inside a surrogate pair or past the end lands on the next character)."""
    counted = 0
    for column, ch in enumerate(line):
        if counted >= units:
            return column
        counted += 2 if ord(ch) > 0xFFFF else 1
    return len(line)


# A file's columns in LSP's terms, by the content hash the last check read:
# None where its text is ASCII (a UTF-16 column is the code-point column), else
# its lines that are not ASCII, by 0-based row (the others count alike)
Columns = dict[int, str] | None


class Texts:
    """The positions of the project's files as the last check read them (an
    open buffer's last text that parsed, else the file on disk) in LSP's
    terms. What a file's columns need is kept in `known` (the server's, kept
    between answers) under the content hash the check read, so that a
    question naming places in a hundred files (the references of a leaf)
    reads and splits no file it met before; a file not known is read once."""

    def __init__(self, project: Project, known: dict[str, tuple[str, Columns]]) -> None:
        self.project = project
        self.known = known
        self.hashes = project.checker.resident.hashes  # path -> the content checked

    def columns(self, path: str) -> Columns:
        checked = self.hashes.get(path)
        hit = self.known.get(path)
        if hit is not None and hit[0] == checked:
            return hit[1]
        text = self.project.good.get(path)
        try:
            data = (
                text.encode("utf-8")
                if text is not None
                else self.project.root.joinpath(path).read_bytes()
            )
        except (OSError, UnicodeError):
            data = b""
        if text is None and not data.isascii():
            text = data.decode("utf-8", errors="replace")
        found: Columns = None
        if text is not None and not text.isascii():
            found = {row: line for row, line in enumerate(text.splitlines()) if not line.isascii()}
        if checked is not None and content_hash(data) == checked:
            self.known[path] = (checked, found)  # (else: changed since the check)
        return found

    def position(self, path: str, line: int, column: int) -> types.Position:
        """A LibCST position (line 1-based, code-point column 0-based) in LSP's terms."""
        row = max(line - 1, 0)
        wide = self.columns(path)
        if wide is None or row not in wide:
            return types.Position(line=row, character=column)
        return types.Position(line=row, character=utf16(wide[row], column))

    def location(self, ls: CtxlintServer, loc: navigation.Location) -> types.Location:
        line, column, end_line, end_column = loc.span
        return types.Location(
            uri=ls.uri(loc.path),
            range=types.Range(
                start=self.position(loc.path, line, column),
                end=self.position(loc.path, end_line, end_column),
            ),
        )


def _at(
    ls: CtxlintServer, uri: str, where: types.Position
) -> tuple[Program, Texts, str, int, int] | None:
    """The program, the texts and the question's place as navigation takes it
    (path, line 1-based, code-point column), or None off the project or before
    the first check."""
    from ctxlint.server.lsp import path_of_uri  # lsp imports this module

    ls.model()  # a replayed start holds findings, not the facts asked here
    project = ls.project
    file = path_of_uri(uri)
    if project is None or project.checked is None or file is None:
        return None
    if not built(project):  # said: the warm-up after a check should have built it
        ls.log("ctxlint: the navigation index is built for a question", types.MessageType.Log)
    path = project.path_of(file)
    if path is None:
        return None
    texts = Texts(project, ls.columns)
    lines = ls.workspace.get_text_document(uri).lines  # where the client's position is
    text = lines[where.line].rstrip("\r\n") if where.line < len(lines) else ""
    column = code_points(text, where.character)
    return project.checked.out.program, texts, path, where.line + 1, column


def ready_soon(project: Project) -> bool:
    """Whether the config index is all that is left to build for navigation,
    and a moment's work: the check built the resolution model it reads (the
    rules that ask it ran again), or the last index's answer of that model
    holds for this program (index_carry: the facts it is derived from are the
    same), so that only the edited files' sites are built again; not the
    seconds the call graph and the resolution model take after a check that
    replayed the rules asking them, of a program whose facts they read changed."""
    if project.checked is None or not project.current:
        return False
    program = project.checked.out.program
    if all(program.built(key) for key in (CALLS, RESOLUTION)):
        return True
    held = project.nav.held
    return held is not None and held.key is not None and held.key == project.nav.key(program)


def built(project: Project) -> bool:
    """Whether the config index of the program held is built."""
    return project.checked is not None and project.checked.out.program.built(INDEX)


def warm(project: Project) -> None:
    """Build the config index now, after a check, so that the first question
    after an edit does not wait for it; a fault is logged, and the question
    will meet it again (and answer with an error) rather than end the server."""
    if project.checked is None:
        return
    try:
        config_index(project.checked.out.program)
    except Exception:
        logging.exception("the config index could not be built")


def register(server: CtxlintServer) -> None:
    """Add the four navigation features (pygls advertises each as a capability)."""

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: CtxlintServer, params: types.HoverParams) -> types.Hover | None:
        found = _at(ls, params.text_document.uri, params.position)
        if found is None:
            return None
        program, _texts, path, line, column = found
        text = navigation.hover(program, path, line, column)
        if text is None:
            return None
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text))

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    def definition(
        ls: CtxlintServer, params: types.DefinitionParams
    ) -> list[types.Location] | None:
        found = _at(ls, params.text_document.uri, params.position)
        if found is None:
            return None
        program, texts, path, line, column = found
        return [
            texts.location(ls, loc) for loc in navigation.definition(program, path, line, column)
        ]

    @server.feature(types.TEXT_DOCUMENT_REFERENCES)
    def references(ls: CtxlintServer, params: types.ReferenceParams) -> list[types.Location] | None:
        found = _at(ls, params.text_document.uri, params.position)
        if found is None:
            return None
        program, texts, path, line, column = found
        locations = navigation.references(
            program,
            path,
            line,
            column,
            include_declaration=params.context.include_declaration,
        )
        return [texts.location(ls, loc) for loc in locations]

    @server.feature(types.WORKSPACE_SYMBOL)
    def workspace_symbol(
        ls: CtxlintServer, params: types.WorkspaceSymbolParams
    ) -> list[types.SymbolInformation] | None:
        ls.model()
        project = ls.project
        if project is None or project.checked is None:
            return None
        program = project.checked.out.program
        namespaces = config_index(program).namespaces
        texts = Texts(project, ls.columns)
        out = []
        for name, loc in navigation.workspace_symbols(program, params.query):
            ns = namespaces.get(name)
            is_namespace = ns is not None and ns.site == (loc.path, loc.span)
            out.append(
                types.SymbolInformation(
                    name=name,
                    kind=types.SymbolKind.Namespace if is_namespace else types.SymbolKind.Field,
                    location=texts.location(ls, loc),
                    container_name=name.rpartition(".")[0] or None,
                )
            )
        return out
