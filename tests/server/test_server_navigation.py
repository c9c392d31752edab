"""Navigation through a real LSP client (issue 37, item 5): hover, go to
definition, find references and workspace symbols served by `ctxlint server`
on a copy of examples/legacy_app, in LSP's terms (0-based lines, UTF-16
columns, file URIs), equal to what ctxlint.server.navigation answers on the
same tree, and from the editor's unsaved buffer."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import project_config
from lspclient import CONFIG, Serve, Session, uri
from lsprotocol import types

from ctxlint.engine.run import Engine
from ctxlint.program.config_index import config_index
from ctxlint.program.core import Program
from ctxlint.server import lsp_navigation, navigation
from ctxlint.server.diagnostics import utf16
from ctxlint.server.lsp import make_server
from ctxlint.server.lsp_navigation import code_points
from ctxlint.session import Request

READBACK = "examples/legacy_app/readback.py"
CONTEXT = "src/ctxrt/context.py"
PARALLEL = "src/ctxrt/fields/parallel.py"
EXEC = "src/ctxrt/fields/exec.py"
TP_DECL = "    tp_size: int = arg("


def at(text: str, needle: str, offset: int = 0) -> tuple[int, int]:
    """(line, column), 0-based, of `needle`'s first occurrence plus `offset`
    (code points: LSP's UTF-16 units where the line is ASCII up to there)."""
    start = text.index(needle) + offset
    return text.count("\n", 0, start), start - (text.rfind("\n", 0, start) + 1)


def position(text: str, needle: str, offset: int = 0) -> types.Position:
    line, column = at(text, needle, offset)
    return types.Position(line=line, character=column)


def doc(session: Session, rel: str) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=uri(session.root / rel))


async def hover(session: Session, rel: str, where: types.Position) -> str | None:
    found = await session.client.text_document_hover_async(
        types.HoverParams(text_document=doc(session, rel), position=where)
    )
    if found is None:
        return None
    assert isinstance(found.contents, types.MarkupContent)
    assert found.contents.kind == types.MarkupKind.Markdown
    return found.contents.value


async def references(
    session: Session, rel: str, where: types.Position, *, declaration: bool = True
) -> list[types.Location]:
    found = await session.client.text_document_references_async(
        types.ReferenceParams(
            text_document=doc(session, rel),
            position=where,
            context=types.ReferenceContext(include_declaration=declaration),
        )
    )
    assert found is not None
    return list(found)


def spot(session: Session, loc: types.Location) -> tuple[str, int, int, int, int]:
    r = loc.range
    rel = Path(loc.uri.removeprefix("file://")).relative_to(session.root).as_posix()
    return (rel, r.start.line, r.start.character, r.end.line, r.end.character)


@pytest.mark.asyncio
async def test_hover_and_definition_of_bag_reads(root: Path, session: Session) -> None:
    advertised = session.capabilities
    assert advertised.hover_provider and advertised.definition_provider
    assert advertised.references_provider and advertised.workspace_symbol_provider
    text = session.open(READBACK)
    read = "get_observability().log_level"
    shown = await hover(session, READBACK, position(text, read, len("get_observability().")))
    assert shown is not None
    decl = at((root / "src/ctxrt/fields/observability.py").read_text(), "    log_level:")[0]
    assert "**`observability.log_level`** — config leaf" in shown
    assert (
        "Declared in class `Observability` (ctxrt.fields.observability.Observability) "
        f"at `src/ctxrt/fields/observability.py:{decl + 1}`" in shown
    )
    assert "Here: a bag read through `get_observability()`." in shown
    # off a config name: no hover
    assert await hover(session, READBACK, position(text, "def server_info")) is None

    # `get_parallel().tp_size` -> `tp_size` in class Parallel
    context = (root / CONTEXT).read_text()
    where = position(context, "return get_parallel().tp_size", len("return get_parallel()."))
    found = await session.client.text_document_definition_async(
        types.DefinitionParams(text_document=doc(session, CONTEXT), position=where)
    )
    line = at((root / PARALLEL).read_text(), TP_DECL)[0]
    assert isinstance(found, list)
    assert [spot(session, loc) for loc in found] == [(PARALLEL, line, 4, line, len("    tp_size"))]


@pytest.mark.asyncio
async def test_references_equal_navigation_s_and_workspace_symbols(
    root: Path, serve: Serve
) -> None:
    config, rules = project_config(root, root / CONFIG)
    program = Engine(config, rules, jobs=1, use_cache=False, memo=False).run().program
    session = await serve()
    readback = session.open(READBACK)
    needle = "get_server_args().tp_size"
    where = position(readback, needle, len("get_server_args()."))
    line, column = at(readback, needle, len("get_server_args()."))
    for declaration in (True, False):
        served = await references(session, READBACK, where, declaration=declaration)
        wanted = navigation.references(
            program, READBACK, line + 1, column, include_declaration=declaration
        )
        assert len(served) == len(wanted) > 3
        # ASCII files: LibCST's code-point columns are LSP's UTF-16 ones
        assert sorted(spot(session, loc) for loc in served) == sorted(
            (w.path, w.span[0] - 1, w.span[1], w.span[2] - 1, w.span[3]) for w in wanted
        )
        decl = at((root / PARALLEL).read_text(), TP_DECL)[0]
        assert ((PARALLEL, decl) in {spot(session, loc)[:2] for loc in served}) == declaration

    symbols = await session.client.workspace_symbol_async(
        types.WorkspaceSymbolParams(query="moe_a2a")
    )
    assert symbols
    by_name = {s.name: s for s in symbols}
    backend = by_name["exec.moe.moe_a2a_backend"]
    assert isinstance(backend, types.SymbolInformation)
    line = at((root / EXEC).read_text(), "    moe_a2a_backend:")[0]
    assert spot(session, backend.location) == (EXEC, line, 4, line, len("    moe_a2a_backend"))
    assert backend.kind == types.SymbolKind.Field
    assert backend.container_name == "exec.moe"
    every = await session.client.workspace_symbol_async(types.WorkspaceSymbolParams(query=""))
    assert every is not None
    kinds = {s.name: s.kind for s in every}
    assert kinds["exec.moe"] == types.SymbolKind.Namespace
    assert kinds["parallel.tp_size"] == types.SymbolKind.Field
    assert len(every) == len(navigation.workspace_symbols(program, ""))


@pytest.mark.asyncio
async def test_an_unsaved_edit_moves_a_reference(root: Path, session: Session) -> None:
    """References follow the buffer, not the file; a line holding a character
    outside the BMP (two UTF-16 units) is counted in UTF-16 both ways."""
    text = session.open(READBACK)
    await session.settle()
    parallel = (root / PARALLEL).read_text()
    decl = position(parallel, TP_DECL, len("    "))
    old = at(text, "get_server_args().tp_size")[0]
    before = {spot(session, loc)[:2] for loc in await references(session, PARALLEL, decl)}
    assert (READBACK, old) in before

    added = 'def tp_now() -> str:\n    return "😀" + str(get_server_args().tp_size)\n\n\n'
    head = "def server_info"
    edited = text.replace(head, added + head, 1)
    session.change(READBACK, edited)
    await session.settle()
    after = {spot(session, loc) for loc in await references(session, PARALLEL, decl)}
    moved = at(edited, "get_server_args().tp_size,")[0]
    assert moved == old + 4
    assert (READBACK, old) not in {s[:2] for s in after}
    assert (READBACK, moved) in {s[:2] for s in after}
    # the new read: 😀 is one code point and two UTF-16 units
    line, column = at(edited, "get_server_args().tp_size)", len("get_server_args()."))
    assert (READBACK, line, column + 1, line, column + 1 + len("tp_size")) in after
    shown = await hover(session, READBACK, types.Position(line=line, character=column + 1))
    assert shown is not None and "**`parallel.tp_size`**" in shown
    # the unit before it is the dot (taken as a code point column, it is `t`)
    assert await hover(session, READBACK, types.Position(line=line, character=column)) is None
    assert (root / READBACK).read_text() == text  # nothing written


@pytest.mark.asyncio
async def test_positions_are_utf16_whatever_the_client_prefers(serve: Serve) -> None:
    """A client that prefers UTF-8 (Neovim 0.10+) is told UTF-16, the unit the
    diagnostics, fixes and navigation count in."""
    session = await serve(encodings=["utf-8", "utf-16"])
    assert session.capabilities.position_encoding == types.PositionEncodingKind.Utf16


def test_utf16_columns_and_back() -> None:
    line = 'x = "😀é" + y'
    assert [utf16(line, c) for c in range(len(line) + 1)][:8] == [0, 1, 2, 3, 4, 5, 7, 8]
    for column in range(len(line) + 1):
        assert code_points(line, utf16(line, column)) == column
    assert code_points(line, 6) == 6  # inside the surrogate pair: the next character
    assert code_points(line, 99) == len(line)


def test_the_index_is_built_after_each_check(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Right after a check, once its diagnostics are out (lsp.py's hook), not
    at the first question."""
    events: list[tuple[str, object]] = []

    def index(program: Program) -> object:
        events.append(("index", program))
        return config_index(program)

    monkeypatch.setattr(lsp_navigation, "config_index", index)
    server = make_server(Request(config=str(root / CONFIG)), use_cache=False, jobs=1)
    # no client: what would go to it is kept in order
    for name in ("window_log_message", "text_document_publish_diagnostics"):
        monkeypatch.setattr(server, name, lambda params, name=name: events.append((name, params)))
    server.open_project(None)
    server.refresh()
    assert server.project is not None and server.project.checked is not None
    program = server.project.checked.out.program
    assert [e for e in events if e[0] == "index"] == [("index", program)]
    # after every diagnostic is out, before the check's log line (a client
    # asking on reading it finds the index built)
    kinds = [e[0] for e in events]
    published = [i for i, k in enumerate(kinds) if k == "text_document_publish_diagnostics"]
    assert published and max(published) < kinds.index("index")
    assert kinds[kinds.index("index") + 1 :] == ["window_log_message"]


def test_a_warm_start_still_navigates(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server started on a tree its cache already holds: a stored outcome
    would be replayed with no per-file facts, and every question answer nothing."""
    counts = []
    for _start in range(2):  # the second start finds the first one's cache
        server = make_server(Request(config=str(root / CONFIG)), use_cache=True, jobs=1)
        for name in ("window_log_message", "text_document_publish_diagnostics"):
            monkeypatch.setattr(server, name, lambda params: None)
        server.open_project(None)
        server.refresh()
        assert server.project is not None and server.project.checked is not None
        counts.append(len(navigation.workspace_symbols(server.project.checked.out.program, "")))
    assert counts[0] > 0 and counts[1] == counts[0]
