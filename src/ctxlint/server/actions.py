"""Code actions: a quick fix per fixable finding (from `ctxlint fix`'s own
planner, labelled safe or unsafe), `source.fixAll.ctxlint` for the safe ones,
and "suppress with a reason", which writes the suppression comment and leaves
the reason to type. Every action is a workspace edit the client applies: the
server never writes the tree.

A client that resolves code actions (`codeAction.resolveSupport` naming
"edit") gets them lazily: titles and kinds at once, with what
`codeAction/resolve` needs in `data` (`Lazy`), and the planner runs only for
the action picked. Its run is `ctxlint fix` of the file, whole-program
checks (20 to 29 s for the first code action after an edit on sglang 0.5.23,
two busy cores), too dear to decide every title; so a lazy title says what
the fix may do: for a rule with both kinds
of fix (CTX101, CTX401) there is a "safe fix" and an "unsafe fix" title, each
resolved by the planner with `--unsafe` or without; a fix the planner leaves
is refused at resolve with its reason. What the planner said of a finding is
kept (`Plans`) until the next edit or check, and the titles follow it: after
one resolve they are the eager list's.
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
    unsafe: bool = False  # FIX: with --unsafe or not

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


# (path, fingerprint or EVERY, unsafe) -> whether the planner fixes it, for the
# texts and findings held now: the server clears it at every edit and check
Plans = dict[tuple[str, str, bool], bool]


class Refused(Exception):
    """A lazy action the planner does not make: why, in a sentence."""


class Gone(Refused):
    """A lazy action whose finding went away since it was listed."""


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


def _edit(
    uri: str, version: int | None, edits: list[types.TextEdit | types.SnippetTextEdit]
) -> types.WorkspaceEdit:
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


def _fix(
    project: Project, path: str, finding: Finding, unsafe: bool, plans: Plans
) -> tuple[str | None, list[str]]:
    """The file after `ctxlint fix` (with --unsafe or not) rewrites only this
    finding (None when it leaves it), and why it left what it left. What it
    did is kept in `plans`."""
    after, fixed, left = project.checker.fix(
        project.texts(),
        path,
        rules={finding.rule},
        unsafe=unsafe,
        only=lambda f: f.fingerprint == finding.fingerprint,
    )
    done = after if after is not None and fixed else None
    plans[(path, finding.fingerprint, unsafe)] = done is not None
    return done, left


def _kinds(project: Project, finding: Finding) -> list[bool]:
    """The finding's rule's kinds of fix, safe first, as `unsafe` flags."""
    kinds = project.checker.fixable().get(finding.rule, ())
    return [unsafe for unsafe in (False, True) if ("unsafe" if unsafe else "safe") in kinds]


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
    project: Project,
    path: str,
    uri: str,
    version: int | None,
    finding: Finding,
    text: str,
    plans: Plans,
) -> list[types.CodeAction]:
    """The finding's fix as `ctxlint fix` makes it, with its edit: a safe one,
    else (for a rule with unsafe fixes) an unsafe one; [] when it has none."""
    for unsafe in _kinds(project, finding):
        after, _left = _fix(project, path, finding, unsafe, plans)
        if after is not None:
            edit = _edit(uri, version, [text_edit(text, after)])
            return [quick_fix(finding, unsafe, edit=edit)]
    return []


def lazy_quick_fixes(
    project: Project, path: str, uri: str, finding: Finding, plans: Plans
) -> list[types.CodeAction]:
    """The finding's fixes, titles and kinds only, without the planner: each
    kind its rule has, less those the planner was seen to leave, and none
    after a safe one it was seen to make (then they are the eager list's)."""
    out = []
    for unsafe in _kinds(project, finding):
        known = plans.get((path, finding.fingerprint, unsafe))
        if known is not False:
            data = Lazy(FIX, uri, finding.fingerprint, unsafe).dump()
            out.append(quick_fix(finding, unsafe, data=data))
        if known:
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
    project: Project, path: str, uri: str, version: int | None, text: str, plans: Plans
) -> types.CodeAction | None:
    """Every safe fix of the file at once (`ctxlint fix` on it, without --unsafe)."""
    rules = _safe_rules(project, path)
    if not rules:
        return None
    after, fixed, _left = project.checker.fix(project.texts(), path, rules=rules, unsafe=False)
    plans[(path, EVERY, False)] = after is not None and bool(fixed)
    if after is None or not fixed:
        return None
    action = _fix_all_action(uri)
    action.edit, action.data = _edit(uri, version, [text_edit(text, after)]), None
    return action


def lazy_fix_all(project: Project, path: str, uri: str, plans: Plans) -> types.CodeAction | None:
    """source.fixAll.ctxlint, without the planner: when the file has findings
    of rules with safe fixes, unless the planner was seen to fix none."""
    if not _safe_rules(project, path) or plans.get((path, EVERY, False)) is False:
        return None
    return _fix_all_action(uri)


def resolve(
    project: Project,
    path: str,
    lazy: Lazy,
    version: int | None,
    text: str,
    plans: Plans,
    *,
    snippets: bool,
) -> types.WorkspaceEdit:
    """A lazy action's edit, as the eager action has it, made on the text and
    findings the server holds now; Refused when the planner does not make it
    or its finding went away."""
    uri = lazy.uri
    if lazy.action == EVERY:
        every = fix_all(project, path, uri, version, text, plans)
        if every is None or every.edit is None:
            raise Refused("`ctxlint fix` makes no safe fix in this file")
        return every.edit
    finding = next(
        (f for f in project.report(path).findings if f.fingerprint == lazy.fingerprint), None
    )
    if finding is None:
        raise Gone("its finding went away; ask for the code actions again")
    if lazy.action == SUPPRESS:
        edit = suppress(uri, version, finding, text, snippets).edit
        assert edit is not None
        return edit
    after, left = _fix(project, path, finding, lazy.unsafe, plans)
    if after is None:
        why = "; ".join(left) or "it has no rewrite for this finding"
        kind = "with" if lazy.unsafe else "without"
        raise Refused(f"`ctxlint fix` {kind} --unsafe leaves it: {why}")
    return _edit(uri, version, [text_edit(text, after)])
