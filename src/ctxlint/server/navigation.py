"""Navigation that knows the design: hover, go to definition, find references and
workspace symbols for config leaves and namespaces, answered from the program
model (program/config_index.py), never by importing the checked code.

Positions are LibCST's: line 1-based, column 0-based in code points; paths are
relative to the project root, as the program keeps them. The language server
turns them into LSP's (0-based lines, UTF-16 columns) and back.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxlint.program.config_index import (
    ACCESSOR,
    ACCESSOR_DEF,
    BAG_READ,
    DECLARATION,
    HOP,
    LEAF_NAME,
    NAMESPACE_CLASS,
    OVERRIDE,
    RECORD_READ,
    RETURNED,
    ROLE_ENTRY,
    ConfigIndex,
    Declaration,
    Site,
    config_index,
)
from ctxlint.program.core import Program


@dataclass(frozen=True, slots=True)
class Location:
    path: str
    span: tuple[int, int, int, int]  # line, col, end_line, end_col


# how a reference kind reads in a hover's tally, in this order
_TALLY = (
    (BAG_READ, "bag read"),
    (RECORD_READ, "record read"),
    (LEAF_NAME, "`config_leaf` literal"),
    (OVERRIDE, "override keyword"),
    ("declaration keyword", "declaration keyword"),
    (RETURNED, "returned declaration key"),
)
_HOLDERS = {
    "seed": "the seed record (`get_server_args()`)",
    "built": "a record built here",
    "annotated": "a name annotated as the record",
    "self": "the record's own class",
    "name": "a name the codebase's convention gives the record",
    "attr": "an attribute the codebase's convention gives the record",
}


def _site(program: Program, path: str, line: int, column: int) -> tuple[ConfigIndex, Site | None]:
    index = config_index(program)
    return index, index.at(path, line, column)


def hover(program: Program, path: str, line: int, column: int) -> str | None:
    """Markdown for the config leaf or namespace at the position, or None."""
    index, site = _site(program, path, line, column)
    if site is None:
        return None
    if site.field is not None:
        return _leaf_hover(index, site)
    return _namespace_hover(index, site)


def definition(program: Program, path: str, line: int, column: int) -> list[Location]:
    """A leaf's declaration (its field class's line, or its NS()-marked field);
    a namespace's field class (else its first marked field, else its accessor)."""
    index, site = _site(program, path, line, column)
    if site is None:
        return []
    if site.field is not None:
        leaf = index.leaves.get(site.field)
        decls = [leaf] if leaf is not None else index.declarations.get(site.field, [])
        return [Location(d.path, d.span) for d in decls]
    if site.namespace is None:
        return []
    ns = index.namespaces.get(site.namespace)
    if ns is not None and ns.site is not None:
        return [Location(*ns.site)]
    accessor = site.detail if site.kind == ACCESSOR else ns.accessor if ns else None
    found = index.accessor_sites.get(accessor or "")
    return [Location(*found)] if found else []


def references(
    program: Program, path: str, line: int, column: int, *, include_declaration: bool = True
) -> list[Location]:
    """Every place naming the leaf or namespace at the position: the declaration
    (unless left out), bag reads, record reads, `config_leaf` literals,
    override and declaration keywords, and the role table entries naming its
    (top) namespace; by path and position."""
    index, site = _site(program, path, line, column)
    if site is None:
        return []
    found = index.references(site)
    if not include_declaration:
        found = [s for s in found if s.kind not in (DECLARATION, NAMESPACE_CLASS, ACCESSOR_DEF)]
    return [Location(s.path, s.span) for s in found]


def workspace_symbols(program: Program, query: str) -> list[tuple[str, Location]]:
    """Config leaves (`exec.moe.moe_a2a_backend`) and namespaces (`exec.moe`)
    whose dotted name holds the query's characters in order (case ignored),
    substring matches first, each at its declaration (a namespace's field class,
    or its first marked field)."""
    index = config_index(program)
    found: list[tuple[str, Location]] = []
    for name, leaf in index.leaves.items():
        if leaf.namespace:
            found.append((f"{leaf.namespace}.{name}", Location(leaf.path, leaf.span)))
    for ns in index.namespaces.values():
        if ns.site is not None:
            found.append((ns.path, Location(*ns.site)))
    wanted = query.lower()
    matched = [(name, loc) for name, loc in found if _subsequence(wanted, name.lower())]
    return sorted(matched, key=lambda m: (wanted not in m[0].lower(), m[0], m[1].path))


def _subsequence(wanted: str, name: str) -> bool:
    it = iter(name)
    return all(ch in it for ch in wanted)


# -- the hover texts --------------------------------------------------------------
def _leaf_hover(index: ConfigIndex, site: Site) -> str:
    vocab = index.program.vocab
    name = site.field
    assert name is not None
    leaf = index.leaves.get(name)
    ns = leaf.namespace if leaf else site.namespace or vocab.fields.get(name) or ""
    derived = name in vocab.derived_leaves
    title = f"{ns}.{name}" if ns else name
    what = "derived config leaf" if derived else "config leaf" if ns else "record field"
    out = [f"**`{title}`** — {what}"]
    if leaf is not None:
        out.append(_declaration_block(leaf))
        out.append(_declared_in(index, leaf))
        if leaf.help:
            out.append(leaf.help)
    else:
        out.append(f"No declaration of `{name}` among the files the program holds.")
    spelling = _spelling(index, ns, name)
    if spelling:
        out.append(f"Read it as `{spelling}`.")
    out.append(_resolution_line(index, name, leaf, derived))
    if ns:
        out.append(_roles_line(index, ns))
    out.append(_here(site, spelling, leaf))
    out.append(_tally(index, name))
    return "\n\n".join(x for x in out if x)


def _declaration_block(leaf: Declaration) -> str:
    if leaf.derived is not None:
        text = f"{leaf.field} = Derived(fn={leaf.derived})" if leaf.derived else leaf.field
        return f"```python\n{text}\n```"
    typed = f": {leaf.type}" if leaf.type else ""
    default = f" = {leaf.default}" if leaf.default is not None else ""
    return f"```python\n{leaf.field}{typed}{default}\n```"


def _declared_in(index: ConfigIndex, leaf: Declaration) -> str:
    cls = leaf.cls.rpartition(".")[2]
    where = f"`{leaf.path}:{leaf.span[0]}`"
    if not leaf.namespace:
        how = "no namespace places it"
    elif leaf.marker:
        how = f'its `NS("{leaf.namespace}")` marker places it'
    else:
        how = f"the class's `_NS_PATH = {leaf.namespace!r}` places it"
    return f"Declared in class `{cls}` ({leaf.cls}) at {where}; {how}."


def _spelling(index: ConfigIndex, ns: str, name: str) -> str | None:
    if not ns:
        return None
    info = index.namespaces.get(ns)
    top_acc = info.accessor if info else None
    if top_acc is None:
        return None
    subs = "".join(f".{s}" for s in ns.split(".")[1:])
    return f"{top_acc}(){subs}.{name}"


def _resolution_line(index: ConfigIndex, name: str, leaf: Declaration | None, derived: bool) -> str:
    if derived:
        return "Derived: computed at publish from other leaves; resolution does not declare it."
    sites = index.by_field.get(name, ())
    declared = sum(1 for s in sites if s.kind == "declaration keyword")
    returned = sum(1 for s in sites if s.kind == RETURNED)
    decl = index.declaration_function
    parts = []
    if leaf is not None and leaf.resolvable:
        parts.append("Resolvable: declared `resolvable=True` (on the declaration whitelist)")
    else:
        parts.append("Not declared resolvable")
    if decl:
        parts.append(
            f"`{decl}(...)` names it at {_n(declared, 'site')}"
            if declared
            else f"no `{decl}(...)` names it"
        )
    if returned:
        parts.append(f"a registered override or pass returns it at {_n(returned, 'site')}")
    return "; ".join(parts) + "."


def _n(count: int, what: str) -> str:
    return f"{count} {what}{'s' if count != 1 else ''}"


def _roles_line(index: ConfigIndex, ns: str) -> str:
    table = index.role_table
    if table is None:
        return "No role table derived: every role reads every namespace."
    named, full = table.readers(ns)
    top = ns.partition(".")[0]
    restricted = sorted(r for r, s in table.roles.items() if s is not None and top not in s)
    out = f"Roles that may read `{top}` (`{table.name.rpartition('.')[2]}`): "
    out += ", ".join([*(f"`{r}`" for r in named), *(f"`{r}` (full tree)" for r in full)]) or "none"
    if restricted:
        out += f"; not: {', '.join(f'`{r}`' for r in restricted)}"
    return out + "."


def _here(site: Site, spelling: str | None, leaf: Declaration | None) -> str:
    if site.kind == RECORD_READ:
        holder = _HOLDERS.get(site.detail, site.detail)
        tail = f"; the resolved value is `{spelling}`" if spelling else ""
        return f"Here: a read off {holder}: it answers with the operator's input{tail}."
    if site.kind == BAG_READ:
        through = f" through `{site.detail}()`" if site.detail else ""
        if leaf is not None and leaf.namespace and site.namespace != leaf.namespace:
            return (
                f"Here: a read of `{site.field}` off the `{site.namespace}` bag{through}, but "
                f"`{leaf.namespace}` declares it: the read raises AttributeError; read "
                f"`{spelling}`."
            )
        return f"Here: a bag read{through}."
    if site.kind == LEAF_NAME:
        return f'Here: a name-driven read, `{site.detail}("{site.field}")`.'
    if site.kind in (OVERRIDE, "declaration keyword"):
        return f"Here: a keyword of `{site.detail}(...)`, which writes the leaf by name."
    if site.kind == RETURNED:
        return f"Here: a key `{site.detail}` returns, which resolution declares."
    return ""


def _tally(index: ConfigIndex, name: str) -> str:
    sites = index.by_field.get(name, ())
    counts = {kind: 0 for kind, _ in _TALLY}
    files: set[str] = set()
    for s in sites:
        if s.kind in counts:
            counts[s.kind] += 1
            files.add(s.path)
    parts = [
        f"{n} {label}{'s' if n != 1 else ''}"
        for (kind, label), n in zip(_TALLY, counts.values(), strict=True)
        if n
    ]
    if not parts:
        return "No reads or writes by name in the program."
    return f"Named by {', '.join(parts)} in {len(files)} file{'s' if len(files) != 1 else ''}."


def _namespace_hover(index: ConfigIndex, site: Site) -> str | None:
    ns = site.namespace
    if ns is None:
        return None
    info = index.namespaces.get(ns)
    leaves = sorted(n for n, d in index.leaves.items() if d.namespace == ns)
    subs = sorted(p for p in index.namespaces if p.startswith(ns + "."))
    head = f"**namespace `{ns}`**"
    if info and info.accessor:
        bag = f"{info.accessor}()" + "".join(f".{s}" for s in ns.split(".")[1:])
        head += f" — bag `{bag}`"
    out = [head]
    if info and info.cls and info.site:
        out.append(
            f"Declared by class `{info.cls}` at `{info.site[0]}:{info.site[1][0]}` (`_NS_PATH`)."
        )
    elif info and info.site:
        out.append(
            f'Declared by `NS("{ns}")` markers, the first at `{info.site[0]}:{info.site[1][0]}`.'
        )
    listed = ", ".join(f"`{n}`" for n in leaves[:12]) + (
        f", … ({len(leaves)} in all)" if len(leaves) > 12 else ""
    )
    if leaves:
        out.append(f"Leaves: {listed}.")
    if subs:
        out.append("Sub-namespaces: " + ", ".join(f"`{s}`" for s in subs) + ".")
    out.append(_roles_line(index, ns))
    if site.kind == ROLE_ENTRY:
        out.append(f"Here: the role table's entry for `{site.detail}`.")
    elif site.kind == HOP:
        out.append(f"Here: the sub-namespace hop `.{site.detail}`.")
    return "\n\n".join(out)
