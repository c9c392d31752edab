"""The side part "config_sites": where one file names a config leaf or a namespace.

Navigation (program/config_index.py, the server's hover, definition and
references) asks where a field is declared and who names it. The answers are
positions, so they cost a positions pass: this part runs beside the record
tracker (program.parts.SIDE), and no rule reads it, so no rule's round answer
depends on a line moving. Per file it keeps, with spans:

- declarations: the annotated fields (and `Derived` leaves) of the record, its
  bases, its field classes (a class with `_NS_PATH`) and any class whose fields
  carry `NS("path")` markers: type, default, help, `resolvable=True`;
- bag reads: `get_<ns>()[.sub].leaf`, also through a function-local name bound
  to a bag (`moe = get_exec().moe`), every hop with its span;
- record reads: `<record holder>.field` and `getattr(<holder>, "field")`, with
  the record tracker's verdict on the holder (the index decides a plain name by
  the codebase's convention, as the record rules do);
- string literals handed alone to a call (`config_leaf("tp_size")`), and call
  keywords (`override(source, tp_size=2)`), naming a field, with the callee's
  simple name: the index decides which callees read or write leaves;
- keys naming a field in a dict a function returns (`return {"page_size": 16}`):
  what a registered model override or a post-process pass declares;
- what the index derives those callees from: the functions handing their own
  parameter (or `**` parameter) on to a call, and the runtime module's public
  functions taking `**` (and where it defines the bag accessors);
- role tables: module-level `{"role": None | {"ns", ...}}` mappings, each
  namespace string with its span; the runtime module's upper-case imports
  (a table defined elsewhere).
"""

from __future__ import annotations

from typing import Any

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext, dotted, string_value
from ctxlint.facts.declarations import (
    DERIVED_MARKER,
    class_namespace,
    class_statements,
    field_marker,
    field_name,
)
from ctxlint.facts.visitor import FileVisitor
from ctxlint.program.binding_values import VALUE_KINDS, Bound
from ctxlint.program.bindings import KEY as BINDINGS
from ctxlint.program.holders import HolderKind

KEY = "config_sites"
_ANNOTATED = ("A", "Annotated")  # `A[type, help, Arg(...), NS(...)]` (SGLang's alias)
_SET_CALLS = ("frozenset", "set")
_MAX_TEXT = 200  # a default or help longer than this is cut (a fact, not a document)


def _text(ctx: FileContext, node: cst.CSTNode) -> str:
    """The node's code on one line, its comments left out (a fact never holds a
    comment's text: facts.code_digest)."""
    text = ctx.snippet(node)
    return text if len(text) <= _MAX_TEXT else text[: _MAX_TEXT - 3] + "..."


def _type_and_help(ctx: FileContext, ann: cst.BaseExpression) -> tuple[str, str | None]:
    """The declared type (the first element of `A[...]`/`Annotated[...]`) and the
    help: a string in that metadata, or `help=` of a call there (`Arg(help=...)`)."""
    if (
        isinstance(ann, cst.Subscript)
        and (dotted(ann.value) or "").rpartition(".")[2] in _ANNOTATED
        and ann.slice
    ):
        first, *meta = ann.slice
        help_text = None
        for el in meta:
            value = el.slice.value if isinstance(el.slice, cst.Index) else None
            if value is None:
                continue
            help_text = help_text or string_value(value) or _help_keyword(value)
        first_value = first.slice.value if isinstance(first.slice, cst.Index) else first.slice
        return _text(ctx, first_value), help_text
    return _text(ctx, ann), None


def _help_keyword(node: cst.CSTNode) -> str | None:
    if isinstance(node, cst.Call):
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value in ("help", "doc"):
                return string_value(arg.value)
    return None


def _default(value: cst.BaseExpression) -> tuple[cst.BaseExpression, str | None]:
    """The default a field's value gives, and its help: a call that takes `help=`
    (ctxrt's `arg(1, help=...)`) holds the default as its first argument or
    `default=`; any other value is the default itself."""
    if isinstance(value, cst.Call):
        help_text = _help_keyword(value)
        if help_text is not None:
            for arg in value.args:
                if (arg.keyword is None and not arg.star) or (
                    arg.keyword is not None and arg.keyword.value == "default"
                ):
                    return arg.value, help_text
    return value, None


def _resolvable(small: cst.CSTNode) -> bool:
    """`resolvable=True` on a call in the declaration, or `{"resolvable": True}`."""
    stack: list[cst.CSTNode] = [small]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Arg) and node.keyword is not None:
            if node.keyword.value == "resolvable" and _is_true(node.value):
                return True
        if isinstance(node, cst.DictElement) and string_value(node.key) == "resolvable":
            if _is_true(node.value):
                return True
        stack.extend(node.children)
    return False


def _is_true(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "True"


def _derived_call(value: cst.BaseExpression | None) -> cst.Call | None:
    if (
        isinstance(value, cst.Call)
        and (dotted(value.func) or "").rpartition(".")[2] == DERIVED_MARKER
    ):
        return value
    return None


def namespace_set(expr: cst.BaseExpression) -> list[cst.BaseExpression] | bool | None:
    """The string nodes of `{...}` / `frozenset({...})` / `set([...])`; None for
    `None` (the full tree); False for any other shape."""
    if isinstance(expr, cst.Name) and expr.value == "None":
        return None
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name):
        if expr.func.value not in _SET_CALLS or len(expr.args) > 1:
            return False
        if not expr.args:
            return []
        expr = expr.args[0].value
    if isinstance(expr, (cst.Set, cst.List, cst.Tuple)):
        out: list[cst.BaseExpression] = []
        for el in expr.elements:
            if not isinstance(el, cst.Element) or string_value(el.value) is None:
                return False
            out.append(el.value)
        return out
    return False


class ConfigSites(FileVisitor):
    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        vocab = ctx.vocab
        assert vocab is not None
        self.fields = set(vocab.fields) | set(vocab.derived_leaves)
        self.namespaces = set(vocab.namespaces)
        self.accessors = {vocab.qualified(a): a for a in vocab.bag_accessors}
        self.accessor_names = set(vocab.bag_accessors)
        self.bag_of = dict(vocab.bag_accessors)
        self.declaring = {*vocab.record_classes, *vocab.field_classes}
        self.runtime = ctx.module == vocab.runtime_module
        self.decls: list[dict[str, Any]] = []
        self.classes: dict[str, dict[str, Any]] = {}
        self.bags: list[dict[str, Any]] = []
        self.records: list[dict[str, Any]] = []
        self.literals: list[dict[str, Any]] = []
        self.keywords: list[dict[str, Any]] = []
        self.handoffs: dict[str, list[str]] = {}  # function -> callees it hands a parameter
        self.forwards: dict[str, list[str]] = {}  # function -> callees it hands `**param`
        self.star_defs: set[str] = set()  # runtime module: public functions taking `**`
        self.accessor_defs: dict[str, Any] = {}  # runtime module: bag accessor -> its def
        self.tables: dict[str, dict[str, Any]] = {}
        self.returns: list[dict[str, Any]] = []  # keys naming a field in a returned dict
        self._inner: set[int] = set()  # attribute nodes read as part of a longer chain
        self._params: list[tuple[str, set[str], str | None]] = []  # open functions
        # a function's locals holding a bag (`ns = get_exec()`) -> its namespace
        self._bags = ctx.parts[BINDINGS].track(self._holds_bag)
        self._pending: list[tuple[dict[str, Any], str | None, str]] = []  # self.X holders

    # -- declarations --------------------------------------------------------
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        qual = f"{self.ctx.module}.{self.ctx.qualname}"
        module = self.ctx.module_node
        namespace = class_namespace(node)
        statements = class_statements(node)
        marked = any(isinstance(s, cst.AnnAssign) and field_marker(s) for s in statements)
        if qual not in self.declaring and namespace is None and not marked:
            return
        self.classes[qual] = {"span": self.ctx.anchor(node.name), "ns": namespace}
        for small in statements:
            name = field_name(small, module)
            value: cst.BaseExpression | None = None
            target: cst.BaseExpression | None = None
            if name is not None:
                assert isinstance(small, cst.AnnAssign)
                target, value = small.target, small.value
                type_text, help_text = _type_and_help(self.ctx, small.annotation.annotation)
                marker = field_marker(small)
            elif (
                isinstance(small, cst.Assign)
                and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name)
                and _derived_call(small.value)
            ):
                target, value = small.targets[0].target, small.value
                name, type_text, help_text, marker = target.value, "", None, False
            else:
                continue
            derived = _derived_call(value)
            decl: dict[str, Any] = {
                "cls": qual,
                "name": name,
                "span": self.ctx.anchor(target),
                "type": type_text,
            }
            if derived is not None:
                fn = next(
                    (a.value for a in derived.args if a.keyword is None or a.keyword.value == "fn"),
                    None,
                )
                decl["derived"] = _text(self.ctx, fn) if fn is not None else ""
                help_text = help_text or _help_keyword(derived)
            elif value is not None:
                default, called_help = _default(value)
                decl["default"] = _text(self.ctx, default)
                help_text = help_text or called_help
            if help_text:
                decl["help"] = help_text[:_MAX_TEXT]
            if isinstance(marker, str):
                decl["ns"] = marker
            if _resolvable(small):
                decl["resolvable"] = True
            self.decls.append(decl)

    # -- functions: their parameters and local bag names -----------------------
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        q = f"{self.ctx.module}.{self.ctx.qualname}"
        p = node.params
        params = {x.name.value for x in (*p.posonly_params, *p.params, *p.kwonly_params)}
        star = p.star_kwarg.name.value if p.star_kwarg is not None else None
        self._params.append((q, params, star))
        name = node.name.value
        scopes = self.ctx.scopes  # (this function's own scope is pushed already)
        top_level = len(scopes) == 2 or (len(scopes) == 3 and scopes[1].kind == "class")
        if self.runtime and star is not None and top_level and not name.startswith("_"):
            self.star_defs.add(name)  # a function or method, not a decorator's inner wrapper
        if self.runtime and len(self.ctx.scopes) == 2 and name in self.accessor_names:
            self.accessor_defs[name] = self.ctx.anchor(node.name)

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._params.pop()

    def _holds_bag(self, bound: Bound, before: Any) -> str | None:
        """The namespace a function's local now holds the bag of (not a leaf)."""
        if not self._params or bound.kind not in VALUE_KINDS or bound.value is None:
            return None
        chain = self._chain(bound.value)
        return chain[2] if chain is not None and chain[3] is None else None

    # -- bag reads -------------------------------------------------------------
    def _chain(
        self, expr: cst.BaseExpression
    ) -> tuple[Any, list[list[Any]], str, list[Any] | None] | None:
        """(accessor fact, namespace hops, namespace reached, leaf hop or None) of
        `get_ns().sub.leaf` or `local.sub.leaf`; None for anything else."""
        attrs: list[cst.Attribute] = []
        base = expr
        while type(base) is cst.Attribute:
            attrs.append(base)
            base = base.value
        acc: Any
        if type(base) is cst.Call:
            func = base.func
            tail = func.attr.value if type(func) is cst.Attribute else dotted(func)
            if tail not in self.accessor_names or base.args:
                return None
            accessor = self.accessors.get(self.ctx.resolve(func) or "")
            if accessor is None:
                return None
            name_node = func.attr if type(func) is cst.Attribute else func
            acc = [accessor, self.ctx.anchor(name_node)]
            ns = self.bag_of[accessor]
        elif type(base) is cst.Name and self._params:
            ns = self._bags.here(base.value)
            if ns is None:
                return None
            acc = None
        else:
            return None
        hops: list[list[Any]] = []
        leaf = None
        for a in reversed(attrs):
            name = a.attr.value
            if f"{ns}.{name}" in self.namespaces:
                ns = f"{ns}.{name}"
                hops.append([name, self.ctx.anchor(a.attr)])
                continue
            if name in self.fields:
                leaf = [name, self.ctx.anchor(a.attr)]
            break
        return acc, hops, ns, leaf

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if id(node) in self._inner:  # a hop of a bag read already kept
            return
        base = node.value
        while type(base) is cst.Attribute:
            base = base.value
        if type(base) is cst.Call or (type(base) is cst.Name and self._aliased(base)):
            found = self._chain(node)
            if found is not None:
                acc, hops, ns, leaf = found
                self.bags.append({"acc": acc, "base": ns, "hops": hops, "leaf": leaf})
                inner = node.value  # one read: its inner hops are not reads again
                while type(inner) is cst.Attribute:
                    self._inner.add(id(inner))
                    inner = inner.value
                self._inner.add(id(inner))
                return
        if node.attr.value in self.fields:
            self._record_read(node, node.value, node.attr.value)

    def _aliased(self, name: cst.Name) -> bool:
        return bool(self._params) and self._bags.here(name.value) is not None

    def _record_read(self, node: cst.CSTNode, base: cst.BaseExpression, name: str) -> None:
        tracker = self.ctx.records
        if tracker is None:
            return
        holder = tracker.holder(base)
        if holder is None:
            return
        if holder.kind is HolderKind.RECEIVER:  # `self.f` inside the record's own classes
            cls = self.ctx.enclosing_class()
            if f"{self.ctx.module}.{cls}" not in self.declaring:
                return
        fact = holder.fact()
        span_node = node.attr if isinstance(node, cst.Attribute) else node
        read = {"f": name, "span": self.ctx.anchor(span_node), "h": fact}
        self.records.append(read)
        if holder.kind is HolderKind.SELF_ATTR:
            self._pending.append((read, holder.cls, holder.name or ""))

    # -- calls: a literal leaf name, keywords, hand-offs -------------------------
    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        callee = (
            func.attr.value
            if type(func) is cst.Attribute
            else func.value
            if type(func) is cst.Name
            else None
        )
        if callee is None:
            return
        # a bare bag accessor call, not followed by an attribute (`bag = get_exec()`)
        if callee in self.accessor_names and not node.args and id(node) not in self._inner:
            accessor = self.accessors.get(self.ctx.resolve(func) or "")
            if accessor is not None:
                name_node = func.attr if type(func) is cst.Attribute else func
                acc = [accessor, self.ctx.anchor(name_node)]
                self.bags.append({"acc": acc, "base": self.bag_of[accessor], "hops": []})
        args = node.args
        positional = [a for a in args if a.keyword is None and not a.star]
        if self._params:
            q, params, star = self._params[-1]
            for a in args:
                if a.star == "**" and star is not None and type(a.value) is cst.Name:
                    if a.value.value == star:
                        self._add(self.forwards, q, callee)
            if len(positional) == 1 and type(positional[0].value) is cst.Name:
                if positional[0].value.value in params:
                    self._add(self.handoffs, q, callee)
        if callee == "getattr" and len(positional) >= 2:
            name = string_value(positional[1].value)
            if name in self.fields:
                self._record_read(node, positional[0].value, name)  # type: ignore[arg-type]
            return
        if len(args) == 1 and positional:
            literal = string_value(positional[0].value)
            if literal in self.fields:
                self.literals.append(
                    {"f": literal, "span": self.ctx.anchor(positional[0].value), "callee": callee}
                )
        for a in args:
            if a.keyword is not None and a.keyword.value in self.fields:
                self.keywords.append(
                    {"f": a.keyword.value, "span": self.ctx.anchor(a.keyword), "callee": callee}
                )

    @staticmethod
    def _add(table: dict[str, list[str]], q: str, callee: str) -> None:
        found = table.setdefault(q, [])
        if callee not in found:
            found.append(callee)

    def visit_Return(self, node: cst.Return) -> None:
        """`return {"page_size": 16}` / `return dict(page_size=16)`: what a
        registered model override or a post-process pass declares."""
        value = node.value
        if not self._params or value is None:
            return
        keys: list[tuple[str | None, cst.CSTNode]] = []
        if isinstance(value, cst.Dict):
            keys = [
                (string_value(e.key), e.key)
                for e in value.elements
                if isinstance(e, cst.DictElement)
            ]
        elif (
            isinstance(value, cst.Call)
            and isinstance(value.func, cst.Name)
            and value.func.value == "dict"
        ):
            keys = [(a.keyword.value, a.keyword) for a in value.args if a.keyword is not None]
        for key, at in keys:
            if key in self.fields:
                self.returns.append(
                    {"f": key, "span": self.ctx.anchor(at), "fn": self._params[-1][0]}
                )

    # -- role tables -------------------------------------------------------------
    def _table(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        if len(self.ctx.scopes) != 1 or value is None or not isinstance(target, cst.Name):
            return
        expr = value
        if isinstance(expr, cst.Call) and len(expr.args) == 1 and expr.args[0].keyword is None:
            expr = expr.args[0].value  # MappingProxyType({...})
        if not isinstance(expr, cst.Dict) or not expr.elements:
            return
        roles: dict[str, Any] = {}
        for el in expr.elements:
            if not isinstance(el, cst.DictElement):
                return
            role = string_value(el.key)
            members = namespace_set(el.value)
            if role is None or members is False:
                return
            names = (
                None
                if members is None
                else [[string_value(m), self.ctx.anchor(m)] for m in members]  # type: ignore[union-attr]
            )
            roles[role] = {"span": self.ctx.anchor(el.key), "ns": names}
        self.tables[target.value] = {"span": self.ctx.anchor(target), "roles": roles}

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) == 1:
            self._table(node.targets[0].target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._table(node.target, node.value)

    # -- output ----------------------------------------------------------------
    def finish(self) -> Any:
        tracker = self.ctx.records
        for read, cls, attr in self._pending:  # `self.X`: known once the class is
            if tracker is not None:
                read["h"] = tracker.settle({"k": HolderKind.SELF_ATTR.value, "cls": cls, "n": attr})
        out: dict[str, Any] = {
            key: value
            for key, value in (
                ("decls", self.decls),
                ("classes", self.classes),
                ("bags", self.bags),
                ("records", self.records),
                ("literals", self.literals),
                ("keywords", self.keywords),
                ("returns", self.returns),
                ("handoffs", self.handoffs),
                ("forwards", self.forwards),
                ("star_defs", sorted(self.star_defs)),
                ("accessor_defs", self.accessor_defs),
                ("tables", self.tables),
            )
            if value
        }
        if self.runtime:  # constants it imports: where a table defined elsewhere comes from
            out["imports"] = {k: v for k, v in self.ctx.imports.items() if k.isupper()}
        return out or None
