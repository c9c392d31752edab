"""What a fix run does to one file: node replacements, removals, import edits,
and the outcome of every site (fixed, or left with the reason)."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from ctxlint.fix.source import SourceFile

FIXED = "fixed"
LEFT = "left"
ROLLED_BACK = "rolled back"
REMOVED = "(removed)"  # what a site became when its statement went


@dataclass
class Site:
    rule: str
    path: str
    line: int
    column: int
    snippet: str
    scope: str
    status: str = LEFT
    reason: str = ""  # why it was left, or, for an unsafe fix, what changes
    unsafe: bool = False
    became: str = ""  # the rewritten spelling
    adds: str = ""  # the runtime accessor the rewrite calls that the fix adds (fix.added_accessors)
    # "function:parameter" whose calls elsewhere hand it a record: the parameter
    # goes only if every call in the project hands the published record (fix.param_chain)
    drops: str = ""


@dataclass
class FilePlan:
    src: SourceFile
    runtime_module: str
    sites: list[Site] = field(default_factory=list)
    replace: dict[int, cst.CSTNode] = field(default_factory=dict)  # id(original) -> new
    remove: set[int] = field(default_factory=set)  # id(statement line)
    add_names: dict[int, list[str]] = field(default_factory=dict)  # id(ImportFrom) -> names
    insert_after: dict[int, list[cst.BaseStatement]] = field(default_factory=dict)
    insert_before: dict[int, list[cst.BaseStatement]] = field(default_factory=dict)
    header_imports: list[str] = field(default_factory=list)  # new `from RUNTIME import ...`
    line_length: int = 88  # the project's (fix.line_length): a grown import is wrapped past it
    # seed accessor names (local) whose import goes if nothing uses them any more
    drop_if_unused: set[str] = field(default_factory=set)
    # the code of each import this plan wrapped: one the unused-import pass then
    # shortens goes back on one line if it fits (fix.unused)
    wrapped: set[str] = field(default_factory=set)
    freed: set[str] = field(default_factory=set)  # names a planned rename frees
    planned: set[str] = field(default_factory=set)  # accessors a module-level import will bind
    module_import: bool = False  # a new `from PACKAGE import MODULE` of the runtime module
    # id(Param) -> "function:parameter", a parameter to drop whose calls hand it
    # a record: decided across files after planning (fix.param_chain)
    chained: dict[int, str] = field(default_factory=dict)

    def fixed(self) -> list[Site]:
        return [s for s in self.sites if s.status == FIXED]

    def changes(self) -> bool:
        return bool(
            self.replace
            or self.remove
            or self.add_names
            or self.header_imports
            or self.module_import
        )


class _Apply(cst.CSTTransformer):
    """Replacements by node; removals and insertions where a body is rebuilt,
    so the blank lines and comments above a removed statement stay above what
    follows it."""

    def __init__(self, plan: FilePlan, within: set[int] | None = None) -> None:
        super().__init__()
        self.plan = plan
        self.within = within  # the nodes on the way to an edited one (None: every node)

    def on_visit(self, node: cst.CSTNode) -> bool:
        # a subtree holding no edit is left as it is, not rebuilt node by node
        return self.within is None or id(node) in self.within

    def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode) -> object:  # type: ignore[override]
        plan, key = self.plan, id(original)
        if key in plan.replace:
            return plan.replace[key]
        if key in plan.add_names and isinstance(updated, cst.ImportFrom):
            indent = plan.src.walk.span(original)[1] - 1
            grown = with_names(updated, plan.add_names[key])
            wrapped = fitted(grown, indent, plan.line_length)
            if wrapped is not grown:
                plan.wrapped.add(node_text(wrapped))
            return wrapped
        if isinstance(updated, (cst.IndentedBlock, cst.Module)):
            assert isinstance(original, (cst.IndentedBlock, cst.Module))
            body = self._body(list(original.body), list(updated.body))
            if isinstance(updated, cst.IndentedBlock) and not body:
                body = [cst.SimpleStatementLine([cst.Pass()])]
            return updated.with_changes(body=body)
        return updated

    def _body(self, original: list[cst.CSTNode], updated: list[cst.CSTNode]) -> list[cst.CSTNode]:
        plan = self.plan
        out: list[cst.CSTNode] = []
        carried: list[cst.EmptyLine] = []  # the leading lines of removed statements
        for old, new in zip(original, updated, strict=True):
            if id(old) in plan.remove:
                carried.extend(getattr(new, "leading_lines", ()))
                continue
            before = list(plan.insert_before.get(id(old), []))
            if before:
                carried.extend(getattr(new, "leading_lines", ()))
                new = new.with_changes(leading_lines=[])
            else:
                before = [new]
                new = None  # type: ignore[assignment]
            first = before[0]
            if carried and hasattr(first, "leading_lines"):
                own = list(first.leading_lines)
                if any(line.comment is None for line in own):  # it has its own blank lines
                    carried = [line for line in carried if line.comment is not None]
                before[0] = first.with_changes(leading_lines=[*carried, *own])
                carried = []
            out.extend(before)
            if new is not None:
                out.append(new)
            out.extend(plan.insert_after.get(id(old), []))
        return out


def apply(plan: FilePlan) -> str:
    """The file's new text."""
    tree = plan.src.tree
    if plan.header_imports:
        stmt = import_from(plan.runtime_module, plan.header_imports, plan.line_length)
        anchor, before = header_place(tree, plan.runtime_module)
        if anchor is None:
            plan.insert_after.setdefault(-1, []).append(stmt)
        elif before:
            plan.insert_before.setdefault(id(anchor), []).append(stmt)
        else:
            plan.insert_after.setdefault(id(anchor), []).append(stmt)
    if plan.module_import:  # `module.accessor` where the accessor's name is another's
        package, _, last = plan.runtime_module.rpartition(".")
        stmt = import_from(package, [last], plan.line_length)
        anchor, before = header_place(tree, package)
        if anchor is None:
            plan.insert_after.setdefault(-1, []).append(stmt)
        else:
            (plan.insert_before if before else plan.insert_after).setdefault(id(anchor), []).append(
                stmt
            )
    new = tree.visit(_Apply(plan, _ways_in(plan)))
    assert isinstance(new, cst.Module)
    if -1 in plan.insert_after:
        new = new.with_changes(body=[*plan.insert_after[-1], *new.body])
    return new.code


def _ways_in(plan: FilePlan) -> set[int] | None:
    """The ids of the nodes from the module down to each edited node's parent
    (a rewrite then visits those, not the whole tree: a third of planning a
    large file); None, to visit everything, when the file's walk has not
    placed them all."""
    src = plan.src
    if "walk" not in vars(src):  # no node was located in this file
        return None
    parents, root = src.walk.parents, id(src.tree)
    edited = {*plan.replace, *plan.remove, *plan.add_names, *plan.insert_after, *plan.insert_before}
    edited.discard(-1)  # the module's own head
    out = {root}
    for key in edited:
        while key != root:
            parent = parents.get(key)
            if parent is None:
                return None
            key = id(parent)
            if key in out:
                break
            out.add(key)
    return out


def header_place(tree: cst.Module, module: str) -> tuple[cst.CSTNode | None, bool]:
    """Where a new `from MODULE import ...` goes: among the header's imports of
    the same top-level package, in sorted place (isort's), else after the
    header's last import (or its docstring). (statement, before it?)"""
    anchor = header_anchor(tree)
    top = module.partition(".")[0]
    for stmt in tree.body:
        if stmt is anchor:
            break
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        first = stmt.body[0]
        name = ""
        if isinstance(first, cst.ImportFrom) and first.module is not None and not first.relative:
            name = cst.Module([]).code_for_node(first.module)
        if name.partition(".")[0] == top and name > module:
            return stmt, True
    same = [
        stmt
        for stmt in tree.body
        if isinstance(stmt, cst.SimpleStatementLine)
        and isinstance(stmt.body[0], cst.ImportFrom)
        and stmt.body[0].module is not None
        and cst.Module([]).code_for_node(stmt.body[0].module).partition(".")[0] == top
    ]
    if anchor is not None and same and isinstance(anchor, cst.SimpleStatementLine):
        first = anchor.body[0]
        if isinstance(first, cst.ImportFrom) and first.module is not None:
            if cst.Module([]).code_for_node(first.module) > module:
                return anchor, True
        return same[-1], False
    return anchor, False


def import_from(module: str, names: list[str], limit: int) -> cst.SimpleStatementLine:
    line: cst.SimpleStatementLine = cst.parse_statement(  # type: ignore[assignment]
        f"from {module} import {', '.join(sorted(set(names)))}\n"
    )
    stmt = line.body[0]
    assert isinstance(stmt, cst.ImportFrom)
    return line.with_changes(body=[fitted(stmt, 0, limit)])


def node_text(node: cst.CSTNode) -> str:
    """A node's source text, outside any module (param_chain quotes arguments with it)."""
    return cst.Module([]).code_for_node(node)


def _laid_out(stmt: cst.ImportFrom, wrap: bool) -> cst.ImportFrom:
    """`stmt` (not a star import) written again: on one line, or parenthesized one
    name a line with a trailing comma (isort's and ruff's wrapping)."""
    assert not isinstance(stmt.names, cst.ImportStar)
    head = "." * len(stmt.relative) + (node_text(stmt.module) if stmt.module is not None else "")
    names = [node_text(a.with_changes(comma=cst.MaybeSentinel.DEFAULT)) for a in stmt.names]
    body = "(\n" + "".join(f"    {n},\n" for n in names) + ")" if wrap else ", ".join(names)
    line = cst.parse_statement(f"from {head} import {body}\n")
    assert isinstance(line, cst.SimpleStatementLine) and isinstance(line.body[0], cst.ImportFrom)
    return line.body[0]


def one_line(stmt: cst.ImportFrom, indent: int, limit: int) -> cst.ImportFrom:
    """`stmt` (in parentheses) on one line, when that fits `limit` at `indent`."""
    if isinstance(stmt.names, cst.ImportStar):
        return stmt
    flat = _laid_out(stmt, wrap=False)
    return flat if indent + len(node_text(flat)) <= limit else stmt


def fitted(stmt: cst.ImportFrom, indent: int, limit: int) -> cst.ImportFrom:
    """`stmt`, or, when on one line at `indent` it passes `limit` columns, the
    same import wrapped (`_laid_out`). An import already in parentheses keeps
    its layout."""
    if isinstance(stmt.names, cst.ImportStar) or stmt.lpar is not None:
        return stmt
    if indent + len(node_text(stmt)) <= limit:
        return stmt
    return _laid_out(stmt, wrap=True)


def header_anchor(tree: cst.Module) -> cst.CSTNode | None:
    """The statement a new module-level import goes after: the last import of
    the module's header (before its first def, class or other code), else its
    docstring."""
    anchor = None
    for i, stmt in enumerate(tree.body):
        if isinstance(stmt, cst.SimpleStatementLine):
            if all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body):
                anchor = stmt
                continue
            if i == 0 and isinstance(stmt.body[0], cst.Expr):  # the docstring
                anchor = stmt
                continue
        elif isinstance(stmt, cst.If) and anchor is not None:  # `if TYPE_CHECKING:` imports
            continue
        break
    return anchor


def with_names(stmt: cst.ImportFrom, names: list[str]) -> cst.ImportFrom:
    """`stmt` importing `names` too: in sorted place when its names are sorted
    (isort's order), else at the end; the commas keep the statement's style."""
    if isinstance(stmt.names, cst.ImportStar):
        return stmt
    aliases = list(stmt.names)
    have = {a.evaluated_alias or a.evaluated_name for a in aliases}
    new = [n for n in sorted(set(names)) if n not in have]
    if not new:
        return stmt
    current = [a.evaluated_name for a in aliases]
    comma = next(
        (a.comma for a in aliases[:-1] if isinstance(a.comma, cst.Comma)),
        cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")),
    )
    last_comma = aliases[-1].comma
    merged = [*aliases, *(cst.ImportAlias(name=cst.Name(n)) for n in new)]
    if current == sorted(current):
        merged.sort(key=lambda a: a.evaluated_name)
    out = [a.with_changes(comma=comma) for a in merged[:-1]]
    out.append(merged[-1].with_changes(comma=last_comma))
    return stmt.with_changes(names=out)


def without_names(stmt: cst.ImportFrom, names: set[str]) -> cst.ImportFrom | None:
    """`stmt` less the aliases binding `names`; None when nothing is left."""
    if isinstance(stmt.names, cst.ImportStar):
        return stmt
    aliases = list(stmt.names)
    kept = [a for a in aliases if (a.evaluated_alias or a.evaluated_name) not in names]
    if not kept:
        return None
    if len(kept) == len(aliases):
        return stmt
    kept[-1] = kept[-1].with_changes(comma=aliases[-1].comma)
    return stmt.with_changes(names=kept)
