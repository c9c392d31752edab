"""Top-level declarations of a module: the raw material of the vocabulary.

Only the module body and class bodies are read (no traversal of function
bodies), so this is cheap enough to run on every file the vocabulary needs.
"""

from __future__ import annotations

from typing import Any

from ctxlint.filecontext import dotted, module_imports, string_value
from ctxlint.lazy_libcst import cst

PROPERTY_DECORATORS = {"property", "functools.cached_property", "cached_property"}


def _annotation_text(node: cst.Annotation | None, module: cst.Module) -> str | None:
    if node is None:
        return None
    ann = node.annotation
    text = string_value(ann)
    if text is not None:
        return text.strip()
    return dotted(ann) or module.code_for_node(ann)


def _return_strings(fn: cst.FunctionDef) -> list[str]:
    """String literals inside `return` expressions (a bag accessor names its namespace)."""
    found: list[str] = []

    class Collect(cst.CSTVisitor):
        def visit_Return(self, node: cst.Return) -> None:
            if node.value is None:
                return
            for sub in _iter(node.value):
                value = string_value(sub) if isinstance(sub, cst.BaseExpression) else None
                if value is not None:
                    found.append(value)

    body = fn.body
    if isinstance(body, cst.IndentedBlock) and len(body.body) <= 8:  # accessors are tiny
        body.visit(Collect())
    return found


def _iter(node: cst.CSTNode) -> Any:
    yield node
    for child in node.children:
        yield from _iter(child)


def _required_params(params: cst.Parameters) -> int:
    n = sum(1 for p in (*params.posonly_params, *params.params) if p.default is None)
    n += sum(1 for p in params.kwonly_params if p.default is None)
    return n


def field_name(small: cst.BaseSmallStatement, module_node: cst.Module) -> str | None:
    """The field an annotated class-body statement declares (`x: int = 1`; not a ClassVar)."""
    if not isinstance(small, cst.AnnAssign) or not isinstance(small.target, cst.Name):
        return None
    ann = dotted(small.annotation.annotation) or ""
    if ann.endswith("ClassVar") or module_node.code_for_node(
        small.annotation.annotation
    ).startswith(("ClassVar", "typing.ClassVar")):
        return None
    return small.target.value


def class_statements(cls: cst.ClassDef) -> list[cst.BaseSmallStatement]:
    """The simple statements directly in a class body (no methods' bodies)."""
    body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ()
    return [small for s in body if isinstance(s, cst.SimpleStatementLine) for small in s.body]


def class_namespace(cls: cst.ClassDef) -> str | None:
    """The namespace a class declares with `_NS_PATH = "a.b"` (a literal only; the last wins)."""
    namespace = None
    for small in class_statements(cls):
        if isinstance(small, cst.Assign) and any(
            isinstance(t.target, cst.Name) and t.target.value == "_NS_PATH" for t in small.targets
        ):
            namespace = string_value(small.value) or namespace
    return namespace


def _class_facts(cls: cst.ClassDef, module_node: cst.Module, resolve: Any) -> dict[str, Any]:
    fields = [
        name
        for small in class_statements(cls)
        if (name := field_name(small, module_node)) is not None
    ]
    properties: list[str] = []
    methods: list[str] = []
    body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ()
    for stmt in body:
        if isinstance(stmt, cst.FunctionDef):
            decorators = {dotted(d.decorator) or "" for d in stmt.decorators}
            names = {d.rpartition(".")[2] for d in decorators}
            if (
                decorators & PROPERTY_DECORATORS
                or "cached_property" in names
                or any(d.endswith(".setter") for d in decorators)
            ):
                if stmt.name.value not in properties:
                    properties.append(stmt.name.value)
            else:
                methods.append(stmt.name.value)
    return {
        "bases": [r for r in (resolve(a.value) for a in cls.bases) if r],
        "ns_path": class_namespace(cls),
        "fields": fields,
        "properties": properties,
        "methods": methods,
    }


def schema_facts(module_node: cst.Module, module: str, is_package: bool) -> dict[str, Any]:
    imports = module_imports(module_node, module, is_package)
    local_defs: set[str] = set()
    for stmt in module_node.body:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            local_defs.add(stmt.name.value)

    def resolve(expr: cst.BaseExpression) -> str | None:
        name = dotted(expr)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        if head in imports:
            return imports[head] + (f".{rest}" if rest else "")
        return f"{module}.{name}"

    functions: dict[str, Any] = {}
    classes: dict[str, Any] = {}
    lists: dict[str, list[str]] = {}
    for stmt in module_node.body:
        if isinstance(stmt, cst.FunctionDef):
            functions[stmt.name.value] = {
                "required": _required_params(stmt.params),
                "returns": _annotation_text(stmt.returns, module_node),
                "return_strings": _return_strings(stmt),
            }
        elif isinstance(stmt, cst.ClassDef):
            classes[stmt.name.value] = _class_facts(stmt, module_node, resolve)
        elif isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, (cst.Assign, cst.AnnAssign)) and isinstance(
                    small.value, (cst.List, cst.Tuple)
                ):
                    targets = (
                        [t.target for t in small.targets]
                        if isinstance(small, cst.Assign)
                        else [small.target]
                    )
                    names = [resolve(e.value) for e in small.value.elements]
                    for t in targets:
                        if isinstance(t, cst.Name):
                            lists[t.value] = [n for n in names if n]
    return {"imports": imports, "functions": functions, "classes": classes, "lists": lists}
