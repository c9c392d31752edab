"""Code actions: a quick fix per fixable finding (from `ctxlint fix`'s own
planner, labelled safe or unsafe), `source.fixAll.ctxlint` for the safe ones,
and "suppress with a reason", which writes the suppression comment and leaves
the reason to type. Every action is a workspace edit the client applies: the
server never writes the tree.

A client that resolves code actions (`codeAction.resolveSupport` naming
"edit") gets them lazily: titles and kinds, with what `codeAction/resolve`
needs in `data` (`Lazy`). The planner still says which findings it rewrites
and how safely, so the titles are those of the eager list, but the check of
the rewritten program (`ctxlint fix`'s second check, the dear part) and the
edit wait for the one action the user picks.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from lsprotocol import types

from ctxlint.core.findings import Finding
from ctxlint.server.diagnostics import utf16
from ctxlint.server.project import Project

FIX_ALL = "source.fixAll.ctxlint"
# where the reason goes: a snippet's placeholder when the client takes snippets
REASON = "${1:reason}"

# the lazy actions, as CodeAction.data names them
FIX, SUPPRESS, EVERY = "fix", "suppress", "fixAll"


@dataclass(frozen=True)
class Lazy:
    """What codeAction/resolve needs to make an action's edit: the action, its
    document, the finding (by fingerprint: the edit is made on the text and
    findings the server holds when it is resolved) and, for a fix, its kind."""

    action: str  # FIX, SUPPRESS or EVERY
    uri: str
    fingerprint: str = ""  # FIX and SUPPRESS
    unsafe: bool = False  # FIX: the kind of fix the title promised

    def dump(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def load(cls, data: Any) -> Lazy | None:
        """The data a client sent back; None when it is not ours."""
        if not isinstance(data, dict) or data.get("action") not in (FIX, SUPPRESS, EVERY):
            return None
        uri, fingerprint, unsafe = data.get("uri"), data.get("fingerprint", ""), data.get("unsafe")
        if not (isinstance(uri, str) and isinstance(fingerprint, str) and isinstance(unsafe, bool)):
            return None
        return cls(data["action"], uri, fingerprint, unsafe)


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


def _edit(uri: str, version: int | None, edits: list[Any]) -> types.WorkspaceEdit:
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


def fixed_text(
    project: Project, path: str, finding: Finding, unsafe: bool, *, verify: bool = True
) -> str | None:
    """The file after `ctxlint fix` (with --unsafe or not) rewrites only this
    finding; None when it leaves it. `verify=False`: as planned, before the
    check of the rewritten program that could roll it back."""
    after, fixed = project.checker.fix(
        project.texts(),
        path,
        rules={finding.rule},
        unsafe=unsafe,
        only=lambda f: f.fingerprint == finding.fingerprint,
        verify=verify,
    )
    return after if after is not None and fixed else None


def fix_of(
    project: Project, path: str, finding: Finding, *, verify: bool = True
) -> tuple[bool, str] | None:
    """(unsafe, the text after) of the finding's fix as `ctxlint fix` makes it:
    a safe one, else (for a rule with unsafe fixes) an unsafe one; None when
    it has none."""
    kinds = project.checker.fixable().get(finding.rule, ())
    for unsafe in (False, True):
        if ("unsafe" if unsafe else "safe") in kinds:
            after = fixed_text(project, path, finding, unsafe, verify=verify)
            if after is not None:
                return unsafe, after
    return None


def quick_fix(
    finding: Finding, unsafe: bool, *, edit: types.WorkspaceEdit | None = None, data: Any = None
) -> types.CodeAction:
    label = "unsafe fix" if unsafe else "safe fix"
    return types.CodeAction(
        title=f"Fix {finding.rule} ({label}): {finding.snippet}",
        kind=types.CodeActionKind.QuickFix,
        edit=edit,
        is_preferred=not unsafe,
        data=data,
    )


def quick_fixes(
    project: Project, path: str, uri: str, version: int | None, finding: Finding, text: str
) -> list[types.CodeAction]:
    """The finding's fix with its edit: [] when it has none."""
    found = fix_of(project, path, finding)
    if found is None:
        return []
    unsafe, after = found
    return [quick_fix(finding, unsafe, edit=_edit(uri, version, [text_edit(text, after)]))]


# (path, fingerprint or EVERY) -> what the planner said of it: kept until the
# next edit or check (the server clears it), so that a client asking at every
# cursor move (a light bulb) plans each finding once
Plans = dict[tuple[str, str], Any]


def lazy_quick_fixes(
    project: Project, path: str, uri: str, finding: Finding, plans: Plans
) -> list[types.CodeAction]:
    """The finding's fix, its title and kind only: the planner says whether it
    rewrites the finding and how safely; the rewrite's check and the edit wait
    for codeAction/resolve."""
    key = (path, finding.fingerprint)
    if key not in plans:
        found = fix_of(project, path, finding, verify=False)
        plans[key] = None if found is None else found[0]
    unsafe = plans[key]
    if unsafe is None:
        return []
    return [quick_fix(finding, unsafe, data=Lazy(FIX, uri, finding.fingerprint, unsafe).dump())]


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
    action = lazy_suppress(uri, finding)
    action.edit, action.data = _edit(uri, version, [edit]), None
    return action


def lazy_suppress(uri: str, finding: Finding) -> types.CodeAction:
    return types.CodeAction(
        title=f"Suppress {finding.rule} on this line with a reason",
        kind=types.CodeActionKind.QuickFix,
        data=Lazy(SUPPRESS, uri, finding.fingerprint).dump(),
    )


def _safe_rules(project: Project, path: str) -> set[str]:
    """The rules with safe fixes that have findings in the file."""
    rules = {r for r, kinds in project.checker.fixable().items() if "safe" in kinds}
    return rules & {f.rule for f in project.report(path).findings}


def _fix_all_action(uri: str) -> types.CodeAction:
    return types.CodeAction(
        title="Fix all safely fixable ctxlint findings",
        kind=FIX_ALL,
        data=Lazy(EVERY, uri).dump(),
    )


def fix_all(
    project: Project, path: str, uri: str, version: int | None, text: str
) -> types.CodeAction | None:
    """Every safe fix of the file at once (`ctxlint fix` on it, without --unsafe)."""
    rules = _safe_rules(project, path)
    if not rules:
        return None
    after, fixed = project.checker.fix(project.texts(), path, rules=rules, unsafe=False)
    if after is None or not fixed:
        return None
    action = _fix_all_action(uri)
    action.edit, action.data = _edit(uri, version, [text_edit(text, after)]), None
    return action


def lazy_fix_all(project: Project, path: str, uri: str, plans: Plans) -> types.CodeAction | None:
    """source.fixAll.ctxlint when the planner rewrites a safe fix of the file."""
    key = (path, EVERY)
    if key not in plans:
        rules = _safe_rules(project, path)
        after, fixed = (
            project.checker.fix(project.texts(), path, rules=rules, unsafe=False, verify=False)
            if rules
            else (None, [])
        )
        plans[key] = after is not None and bool(fixed)
    return _fix_all_action(uri) if plans[key] else None


def resolve(
    project: Project,
    path: str,
    lazy: Lazy,
    version: int | None,
    text: str,
    *,
    snippets: bool,
) -> types.WorkspaceEdit | None:
    """A lazy action's edit, as the eager action has it: made on the text and
    findings the server holds now. None when it no longer applies (its
    finding went away, or the check of the rewrite rolled it back)."""
    uri = lazy.uri
    if lazy.action == EVERY:
        every = fix_all(project, path, uri, version, text)
        return every.edit if every is not None else None
    finding = next(
        (f for f in project.report(path).findings if f.fingerprint == lazy.fingerprint), None
    )
    if finding is None:
        return None
    if lazy.action == SUPPRESS:
        return suppress(uri, version, finding, text, snippets).edit
    after = fixed_text(project, path, finding, lazy.unsafe)
    return None if after is None else _edit(uri, version, [text_edit(text, after)])
