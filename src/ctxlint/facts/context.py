"""Per-file state shared by every rule visitor during the one traversal.

The dispatcher keeps the scope stack and the import table current, so a rule
visitor asks "what does this name resolve to" and "where am I" instead of
re-deriving it; spans are resolved once, after the walk, only when some rule
anchored a node.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ctxlint.core.lazy_libcst import cst

if TYPE_CHECKING:
    from ctxlint.facts.splice import Kept
    from ctxlint.facts.vocab import Vocabulary

MODULE_SCOPE = "<module>"


@dataclass(slots=True)
class Scope:
    kind: str  # "module" | "class" | "function"
    name: str
    qualname: str
    node: cst.CSTNode | None
    imports: dict[str, str] = field(default_factory=dict)  # local imports in functions
    self_name: str | None = None  # first parameter of a method
    class_qualname: str | None = None  # enclosing class of a method


class Anchor:
    """A span placeholder filled in after the traversal (positions cost a pass)."""

    __slots__ = ("node", "span")

    def __init__(self, node: cst.CSTNode) -> None:
        self.node = node
        self.span: list[int] = [0, 0, 0, 0]

    def to_json(self) -> list[int]:
        return self.span


class Snippet:
    """A snippet placeholder (FileContext.snippet's text) filled in after the
    traversal: the span pass generates the module's code anyway, and takes the
    text of these nodes from it instead of a codegen of each node."""

    __slots__ = ("node", "text")

    def __init__(self, node: cst.CSTNode) -> None:
        self.node = node
        self.text = ""

    def to_json(self) -> str:
        return self.text


class LineAnchor(Anchor):
    """An Anchor that keeps only the line (a fact that orders code, not a site)."""

    __slots__ = ()

    def to_json(self) -> int:  # type: ignore[override]
        return self.span[0]


def dotted(expr: cst.BaseExpression) -> str | None:
    """`a.b.c` for a Name/Attribute chain, else None."""
    # exact types (LibCST has no subclasses of these): on the walk's hottest
    # path, where an isinstance that fails costs an ABC __instancecheck__
    attribute, name = cst.Attribute, cst.Name
    parts: list[str] = []
    while type(expr) is attribute:
        parts.append(expr.attr.value)  # type: ignore[attr-defined]
        expr = expr.value  # type: ignore[attr-defined]
    if type(expr) is name:
        parts.append(expr.value)  # type: ignore[attr-defined]
        return ".".join(reversed(parts))
    return None


def string_value(expr: cst.BaseExpression) -> str | None:
    """The value of a plain (non f-) string literal, else None."""
    if isinstance(expr, cst.SimpleString):
        value = expr.evaluated_value
        return value if isinstance(value, str) else None
    if isinstance(expr, cst.ConcatenatedString):
        value = expr.evaluated_value
        return value if isinstance(value, str) else None
    return None


class Texts:
    """Snippets' texts by id() with the node (an id names one object only
    while it lives): those `known` from the last extraction of a kept module
    (a node of the statements a splice kept: the same text), and those
    `told` in this one, for the next."""

    __slots__ = ("known", "told")

    def __init__(self, known: dict[int, tuple[Any, str]] | None = None) -> None:
        self.known = known or {}
        self.told: dict[int, tuple[Any, str]] = {}


class FileContext:
    def __init__(
        self,
        *,
        path: str,
        module: str,
        is_package: bool,
        module_node: cst.Module,
        vocab: Vocabulary | None,
        text: str = "",
    ) -> None:
        self.path = path
        self.text = text  # the source, for what the walk skips (comments)
        self.module = module
        self.is_package = is_package
        self.module_node = module_node
        self.vocab = vocab
        self.imports: dict[str, str] = module_imports(module_node, module, is_package)
        if vocab is not None:  # `from RUNTIME import *` binds the accessors it defines
            for name, target in star_accessors(module_node, module, is_package, vocab).items():
                self.imports.setdefault(name, target)
        self.scopes: list[Scope] = [Scope("module", "", MODULE_SCOPE, module_node)]
        self.module_defs: set[str] = set()  # the defs and classes at module level, so far
        self.anchors: list[Anchor] = []
        self.snippets: list[Snippet] = []  # filled in with the spans (resolve_anchors)
        self.texts = Texts()  # snippets' texts: the last extraction's, and this one's
        self.records: Any = None  # the RecordTracker, set by the extractor
        self.parts: dict[str, Any] = {}  # program model part key -> its visitor, this file

    # -- scopes -----------------------------------------------------------
    @property
    def scope(self) -> Scope:
        return self.scopes[-1]

    @property
    def qualname(self) -> str:
        return self.scopes[-1].qualname

    def in_function(self) -> bool:
        return self.scopes[-1].kind == "function"

    def enclosing_class(self) -> str | None:
        """Qualname of the class whose method we are in (directly or nested)."""
        for s in reversed(self.scopes):
            if s.class_qualname is not None:
                return s.class_qualname
            if s.kind == "class":
                return s.qualname
        return None

    def push(self, node: cst.CSTNode) -> None:
        outer = self.scopes[-1]
        name = node.name.value  # type: ignore[attr-defined]
        qual = name if outer.kind == "module" else f"{outer.qualname}.{name}"
        if outer.kind == "module":
            self.module_defs.add(name)
        if isinstance(node, cst.ClassDef):
            self.scopes.append(Scope("class", name, qual, node))
            return
        assert isinstance(node, cst.FunctionDef)
        self_name = class_qual = None
        if outer.kind == "class":
            params = node.params.posonly_params or node.params.params
            decorators = {dotted(d.decorator) for d in node.decorators}
            if params and "staticmethod" not in decorators:
                self_name = params[0].name.value
            class_qual = outer.qualname
        elif outer.kind == "function":
            # a closure inside a method still sees the method's `self`
            self_name, class_qual = outer.self_name, outer.class_qualname
        self.scopes.append(Scope("function", name, qual, node, {}, self_name, class_qual))

    def pop(self) -> None:
        self.scopes.pop()

    # -- names ------------------------------------------------------------
    def add_local_import(self, node: cst.Import | cst.ImportFrom) -> None:
        if len(self.scopes) > 1:
            self.scopes[-1].imports.update(import_bindings(node, self.module, self.is_package))

    def resolve(self, expr: cst.BaseExpression) -> str | None:
        """Qualified name of a Name/Attribute chain through the import tables.

        A name defined in this module resolves to `module.name`; a name the file
        neither imports nor could define at module level resolves to None.
        """
        name = dotted(expr)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        for scope in reversed(self.scopes[1:]):
            if head in scope.imports:
                target = scope.imports[head]
                return f"{target}.{rest}" if rest else target
        if head in self.imports:
            target = self.imports[head]
            return f"{target}.{rest}" if rest else target
        return f"{self.module}.{name}"

    def may_name_program_code(self, qualified: str) -> bool:
        """Whether a name `resolve` gave can name a function or class of the
        program. Under this module (`module.x...`) it can only when `x` is a
        def or class at module level: a local, a parameter's attribute or a
        builtin is qualified with the module for want of an import, and no
        function, class or import table of the program answers to it. A
        package's `__init__` keeps them all (importing a submodule binds its
        name there). Final once the walk ends: a def may follow its use."""
        if self.is_package or not qualified.startswith(self.module + "."):
            return True
        return qualified[len(self.module) + 1 :].partition(".")[0] in self.module_defs

    # -- output -----------------------------------------------------------
    def anchor(self, node: cst.CSTNode, kind: type[Anchor] = Anchor) -> Anchor:
        a = kind(node)
        self.anchors.append(a)
        return a

    def snippet(self, node: cst.CSTNode) -> str:
        """The node's code on one line, its comments left out: a fact never holds a
        comment's text, so a comment edited alone leaves a file's facts (and the
        finding's fingerprint) as they were (facts.code_digest)."""
        key = id(node)
        known = self.texts.known.get(key)
        if known is None or known[0] is not node:
            module = self.module_node
            state = _comment_free()(
                default_indent=module.default_indent, default_newline=module.default_newline
            )
            node._codegen(state)
            known = (node, " ".join("".join(state.tokens).split()))
        self.texts.told[key] = known
        return known[1]

    def snippet_later(self, node: cst.CSTNode) -> Snippet:
        """`snippet(node)`, written when the walk ends: for a fact that is only
        encoded, never read, during the walk (a site's)."""
        s = Snippet(node)
        self.snippets.append(s)
        return s

    def site(self, node: cst.CSTNode, **extra: Any) -> dict[str, Any]:
        """A fact that can become a finding: `extra`, and where `node` is (its
        scope, its one-line snippet, its span once the walk ends)."""
        return {
            **extra,
            "scope": self.qualname,
            "snippet": self.snippet_later(node),
            "span": self.anchor(node),
        }

    def resolve_anchors(self, kept: Kept | None = None) -> None:
        """Fill in the anchors' spans and the snippets' texts: from a codegen of
        the module, or mostly from the last extraction's, for a kept module
        spliced (facts.placed)."""
        if not self.anchors and not self.snippets:
            return
        nodes, texts = [a.node for a in self.anchors], [s.node for s in self.snippets]
        if kept is not None:
            from ctxlint.facts.placed import place  # LibCST internals

            found, said = place(kept, nodes, texts)
        else:
            from ctxlint.facts.positions import spans_and_texts  # LibCST internals

            found, said = spans_and_texts(self.module_node, nodes, texts)
        for a in self.anchors:
            a.span[:] = found[a.node]
            a.node = None  # type: ignore[assignment]  # release the tree
        for s in self.snippets:
            s.text = said[id(s.node)]
            s.node = None  # type: ignore[assignment]


def _package_of(module: str, is_package: bool) -> str:
    return module if is_package else module.rpartition(".")[0]


def _absolute(node: cst.ImportFrom, module: str, is_package: bool) -> str:
    level = len(node.relative)
    target = dotted(node.module) if node.module is not None else ""
    if level == 0:
        return target or ""
    base = _package_of(module, is_package)
    for _ in range(level - 1):
        base = base.rpartition(".")[0]
    return f"{base}.{target}" if base and target else (base or target or "")


def import_bindings(
    node: cst.Import | cst.ImportFrom, module: str, is_package: bool
) -> dict[str, str]:
    """Local name -> qualified target for one import statement."""
    out: dict[str, str] = {}
    if isinstance(node, cst.Import):
        for alias in node.names:
            full = dotted(alias.name) or ""
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                out[alias.asname.name.value] = full
            else:
                head = full.partition(".")[0]
                out[head] = head
        return out
    source = _absolute(node, module, is_package)
    if isinstance(node.names, cst.ImportStar):
        return out
    for alias in node.names:
        name = dotted(alias.name) or ""
        local = name
        if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
            local = alias.asname.name.value
        out[local] = f"{source}.{name}" if source else name
    return out


def _blocks(stmt: cst.BaseStatement) -> Any:
    """The indented blocks of a compound statement that runs at import time."""
    if isinstance(stmt, cst.If):
        yield stmt.body
        if isinstance(stmt.orelse, cst.If):
            yield from _blocks(stmt.orelse)
        elif stmt.orelse is not None:
            yield stmt.orelse.body
    elif isinstance(stmt, (cst.Try, cst.TryStar)):
        yield stmt.body
        for handler in stmt.handlers:
            yield handler.body
        for extra in (stmt.orelse, stmt.finalbody):
            if extra is not None:
                yield extra.body
    elif isinstance(stmt, cst.With):
        yield stmt.body


def _walk_module_level(body: Any) -> Any:
    """Small statements executed at import time, through if/try/with blocks."""
    for stmt in body:
        if isinstance(stmt, cst.SimpleStatementLine):
            yield from stmt.body
        else:
            for block in _blocks(stmt):
                if isinstance(block, cst.IndentedBlock):
                    yield from _walk_module_level(block.body)
                else:  # a one-line block: `if x: import y`
                    yield from block.body


def star_accessors(
    module_node: cst.Module, module: str, is_package: bool, vocab: Vocabulary
) -> dict[str, str]:
    """The runtime's accessors a module-level `from RUNTIME import *` binds (every
    public name of the runtime module; the vocabulary knows its accessors)."""
    for small in _walk_module_level(module_node.body):
        if (
            isinstance(small, cst.ImportFrom)
            and isinstance(small.names, cst.ImportStar)
            and _absolute(small, module, is_package) == vocab.runtime_module
        ):
            names = [*vocab.seed_accessors, *vocab.bag_accessors]
            # as `from RUNTIME import name` would bind each
            return {n: f"{vocab.runtime_module}.{n}" for n in names if not n.startswith("_")}
    return {}


def module_imports(module_node: cst.Module, module: str, is_package: bool) -> dict[str, str]:
    out: dict[str, str] = {}
    for small in _walk_module_level(module_node.body):
        if isinstance(small, (cst.Import, cst.ImportFrom)):
            out.update(import_bindings(small, module, is_package))
    return out


@functools.cache
def _comment_free() -> type[Any]:
    """A codegen state that drops what comments write (made on first use: LibCST)."""

    from libcst._nodes.internal import CodegenState  # what Module.code_for_node uses

    class CommentFree(CodegenState):
        def after_codegen(self, node: cst.CSTNode) -> None:
            if type(node) is cst.Comment:  # its one token: its text
                self.tokens.pop()

    return CommentFree
