"""Code actions: a quick fix per fixable finding (from `ctxlint fix`'s own
planner, labelled safe or unsafe), `source.fixAll.ctxlint` for the safe ones,
and "suppress with a reason", which writes the suppression comment and leaves
the reason to type. Every action is a workspace edit the client applies: the
server never writes the tree."""

from __future__ import annotations

from lsprotocol import types

from ctxlint.core.findings import Finding
from ctxlint.server.diagnostics import utf16
from ctxlint.server.project import Project

FIX_ALL = "source.fixAll.ctxlint"
# where the reason goes: a snippet's placeholder when the client takes snippets
REASON = "${1:reason}"


def text_edit(before: str, after: str) -> types.TextEdit:
    """One edit turning `before` into `after`: the lines between their common
    head and tail (the rest of the buffer, its marks and folds, stay put)."""
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while (
        tail < min(len(old), len(new)) - head
        and old[len(old) - 1 - tail] == new[len(new) - 1 - tail]
    ):
        tail += 1
    return types.TextEdit(
        range=types.Range(
            start=types.Position(line=head, character=0),
            end=types.Position(line=len(old) - tail, character=0),
        ),
        new_text="".join(new[head : len(new) - tail]),
    )


def _edit(uri: str, version: int | None, edits: list[types.TextEdit]) -> types.WorkspaceEdit:
    return types.WorkspaceEdit(
        document_changes=[
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(
                    uri=uri, version=version
                ),
                edits=list(edits),
            )
        ]
    )


def quick_fixes(
    project: Project, path: str, uri: str, version: int | None, finding: Finding, text: str
) -> list[types.CodeAction]:
    """The finding's fix as `ctxlint fix` makes it: a safe one, else (for a
    rule with unsafe fixes) an unsafe one, labelled so; [] when it has none."""
    kinds = project.checker.fixable().get(finding.rule, ())
    out: list[types.CodeAction] = []
    for unsafe in (False, True):
        if ("unsafe" if unsafe else "safe") not in kinds:
            continue
        after, fixed = project.checker.fix(
            project.texts(),
            path,
            rules={finding.rule},
            unsafe=unsafe,
            only=lambda f: f.fingerprint == finding.fingerprint,
        )
        if after is None or not fixed:
            continue
        label = "unsafe fix" if unsafe else "safe fix"
        out.append(
            types.CodeAction(
                title=f"Fix {finding.rule} ({label}): {finding.snippet}",
                kind=types.CodeActionKind.QuickFix,
                edit=_edit(uri, version, [text_edit(text, after)]),
                is_preferred=not unsafe,
            )
        )
        break
    return out


def suppress(
    uri: str, version: int | None, finding: Finding, text: str, snippets: bool
) -> types.CodeAction:
    """`# ctxlint: ignore[RULE] ` at the end of the finding's first line, the
    reason left to type (a placeholder where the client takes snippets;
    otherwise CTX001 reports the missing reason until it is written)."""
    lines = text.splitlines()
    row = finding.line - 1
    line = lines[row] if 0 <= row < len(lines) else ""
    at = types.Position(line=row, character=utf16(line, len(line)))
    comment = f"  # ctxlint: ignore[{finding.rule}] "
    where = types.Range(start=at, end=at)
    edit: types.TextEdit | types.SnippetTextEdit
    if snippets:
        edit = types.SnippetTextEdit(range=where, snippet=types.StringValue(value=comment + REASON))
    else:
        edit = types.TextEdit(range=where, new_text=comment)
    return types.CodeAction(
        title=f"Suppress {finding.rule} on this line with a reason",
        kind=types.CodeActionKind.QuickFix,
        edit=types.WorkspaceEdit(
            document_changes=[
                types.TextDocumentEdit(
                    text_document=types.OptionalVersionedTextDocumentIdentifier(
                        uri=uri, version=version
                    ),
                    edits=[edit],
                )
            ]
        ),
    )


def fix_all(
    project: Project, path: str, uri: str, version: int | None, text: str
) -> types.CodeAction | None:
    """Every safe fix of the file at once (`ctxlint fix` on it, without --unsafe)."""
    rules = {r for r, kinds in project.checker.fixable().items() if "safe" in kinds}
    mine = {f.rule for f in project.report(path).findings}
    if not rules & mine:
        return None
    after, fixed = project.checker.fix(project.texts(), path, rules=rules & mine, unsafe=False)
    if after is None or not fixed:
        return None
    return types.CodeAction(
        title="Fix all safely fixable ctxlint findings",
        kind=FIX_ALL,
        edit=_edit(uri, version, [text_edit(text, after)]),
    )
