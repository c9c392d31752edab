"""Layout edits through a real LSP client: a comment or blank line added between
statements is answered by moving the findings (no check), everything else
by the full check, and after each edit every document's diagnostics (ranges,
messages, related locations, severities) equal `ctxlint check --no-cache` on
the same text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lspclient import APP, Session, batch, uri
from lsprotocol import types

SCHEDULER = f"{APP}/scheduler.py"
MODEL_RUNNER = f"{APP}/model_runner.py"
MOVED = "a layout edit: positions moved"

Key = tuple[Any, ...]


def served(session: Session) -> set[Key]:
    """Every diagnostic the server holds, whole: path, code, range, message,
    severity, and the related location a finding names."""
    out: set[Key] = set()
    for address, diags in session.client.diagnostics.items():
        rel = Path(address.removeprefix("file://")).relative_to(session.root).as_posix()
        for d in diags:
            r = d.range
            related = d.related_information[-1].location if d.related_information else None
            out.add(
                (
                    rel,
                    str(d.code),
                    (r.start.line, r.start.character, r.end.line, r.end.character),
                    d.message,
                    int(d.severity or 0),
                    (
                        Path(related.uri.removeprefix("file://"))
                        .relative_to(session.root)
                        .as_posix(),
                        related.range.start.line,
                    )
                    if related
                    else None,
                )
            )
    return out


def batched(report: dict[str, Any]) -> set[Key]:
    """The batch check's findings as the server's diagnostics say them."""
    out: set[Key] = set()
    for f in report["findings"]:
        related = f.get("data", {}).get("related")
        where = None
        if related:
            path, _, line = related.rpartition(":")
            where = (path, int(line) - 1)
        message = f["message"] + (f"\n{f['details']}" if f.get("details") else "")
        out.add(
            (
                f["path"],
                f["rule"],
                (f["line"] - 1, f["column"] - 1, f["end_line"] - 1, f["end_column"] - 1),
                message,
                1 if f["status"] == "new" else 4,
                where,
            )
        )
    return out


async def step(session: Session, rel: str, text: str) -> bool:
    """Send `text` for `rel`; whether the server answered it as a layout edit,
    having checked that its diagnostics equal the batch check's."""
    session.change(rel, text)
    await session.settle()
    last = [
        m.message for m in session.client.log_messages if m.message.startswith("ctxlint: checked")
    ]
    (session.root / rel).write_text(text)
    assert served(session) == batched(batch(session.root))
    return MOVED in last[-1]


def lines_with(text: str, at: int, added: str) -> str:
    """`added` inserted before 1-based line `at`."""
    lines = text.splitlines(keepends=True)
    return "".join([*lines[: at - 1], added, *lines[at - 1 :]])


@pytest.mark.asyncio
async def test_comments_and_blank_lines_move_the_findings_exactly(
    root: Path,
    session: Session,
) -> None:
    text = session.open(SCHEDULER)
    runner = session.open(MODEL_RUNNER)
    await session.quiet()
    # a comment appended: nothing moves
    text += "# the end of the scheduler\n"
    assert await step(session, SCHEDULER, text)
    # a blank and a comment line above `use_triton_moe`: its findings move down
    before = {d.range.start.line for d in session.diagnostics(SCHEDULER)}
    text = lines_with(text, 57, "\n# flags the Triton runner wants\n")
    assert await step(session, SCHEDULER, text)
    after = {d.range.start.line for d in session.diagnostics(SCHEDULER)}
    assert after != before and max(after) == max(before) + 2
    # a blank line above the read CTX301 quotes from scheduler.py: that
    # finding's text and related location move with model_runner.py
    runner = lines_with(runner, 10, "\n")
    assert await step(session, MODEL_RUNNER, runner)
    quoted = [d for d in session.diagnostics(SCHEDULER) if d.code == "CTX301"]
    assert quoted and "model_runner.py:19" in quoted[0].message
    # navigation answers from a program with the moved file's facts at their
    # new lines (the layout edit left them stale: the question checks first)
    leaf = "config_leaf('max_running_requests')"
    row = next(i for i, line in enumerate(text.splitlines()) if leaf in line)
    column = text.splitlines()[row].index(leaf) + len("config_leaf('")
    found = await session.client.text_document_references_async(
        types.ReferenceParams(
            text_document=types.TextDocumentIdentifier(uri=uri(root / SCHEDULER)),
            position=types.Position(line=row, character=column),
            context=types.ReferenceContext(include_declaration=False),
        )
    )
    assert found and any(
        loc.uri == uri(root / SCHEDULER) and loc.range.start.line == row for loc in found
    )
    # the next check after layout edits (code this time) equals the batch too
    text = text.replace("    get_flags().dp.enabled = False\n", "")
    assert not await step(session, SCHEDULER, text)


@pytest.mark.asyncio
async def test_edits_the_facts_can_see_take_the_full_check(session: Session) -> None:
    text = session.open(SCHEDULER)
    await session.quiet()
    # a comment inside a multi-line call: facts render bracketed code as written
    call = "            self.target, self.spec, self.num_draft_tokens, input_ids, max_new_tokens\n"
    text = text.replace(call, call.rstrip("\n") + "  # the runner and its draft\n")
    assert not await step(session, SCHEDULER, text)
    # a `#` inside a docstring: the string changed, not a comment
    doc = "    flags set by hand, outside the inits that own them."
    text = text.replace(doc, "    flags set by hand  # outside the inits that own them.")
    assert not await step(session, SCHEDULER, text)
    # a suppression added: the finding on its line goes
    read = "    get_flags().dp.enabled = False\n"
    text = text.replace(read, read.rstrip("\n") + "  # ctxlint: ignore[CTX703] the example's\n")
    assert not await step(session, SCHEDULER, text)
    assert all(d.range.start.line != 60 for d in session.diagnostics(SCHEDULER))
    # indentation changed: a body moved into a block
    body = '    get_flags().moe.runner_backend = "triton"\n'
    text = text.replace(body, "    if True:\n    " + body)
    assert not await step(session, SCHEDULER, text)
