"""Top-level declarations of a module: the raw material of the vocabulary.

Only the module body and class bodies are read (no traversal of function
bodies), so this is cheap enough to run on every file the vocabulary needs.
"""

from __future__ import annotations

from typing import Any

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.annotations import instance_names
from ctxlint.facts.context import dotted, module_imports, string_value
from ctxlint.facts.raise_sites import exception_namer, method_raises, object_calls, raised

PROPERTY_DECORATORS = {"property", "functools.cached_property", "cached_property"}
# The design's per-field namespace marker: `NS("exec.moe")`, in `Annotated[...]`
# metadata or in `field(metadata=...)` (for a class that cannot use `_NS_PATH`).
NS_MARKER = "NS"
# The design's computed leaf: `name = Derived(fn=...)` in a namespace's field
# class, computed at publish and stored as an ordinary bag leaf (see _computes).
DERIVED_MARKER = "Derived"


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
    """`node` and everything under it, in source order. A stack, not nested
    generators: each item of a `yield from` chain passes through every frame
    above it, which made a 3,000-term expression quadratic (52 M calls)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def expr_path(expr: cst.BaseExpression) -> str | None:
    """`a.b`, `f().b`, `a.m("x")` (a literal argument kept) for a chain of names,
    zero-argument calls and one-literal calls; None for anything else."""
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        head = expr_path(expr.value)
        return f"{head}.{expr.attr.value}" if head else None
    if isinstance(expr, cst.Call):
        head = expr_path(expr.func)
        if head is None:
            return None
        if not expr.args:
            return f"{head}()"
        if len(expr.args) == 1 and expr.args[0].keyword is None and not expr.args[0].star:
            literal = string_value(expr.args[0].value)
            if literal is not None:
                return f"{head}({literal!r})"
    return None


def _return_paths(fn: cst.FunctionDef) -> list[str]:
    """What a small function returns, as `expr_path`s (an accessor is tiny)."""
    body = fn.body
    if not isinstance(body, cst.IndentedBlock) or len(body.body) > 8:
        return []
    found: list[str] = []
    for stmt in body.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Return) and small.value is not None:
                    path = expr_path(small.value)
                    if path is None and isinstance(small.value, cst.Call):
                        callee = dotted(small.value.func)  # `return ServerArgs(tp_size=2)`
                        path = f"{callee}(...)" if callee else None
                    if path is not None:
                        found.append(path)
    return found


def ns_markers(node: cst.CSTNode) -> list[str | None]:
    """The paths of `NS(...)` calls anywhere under `node` (None: not a literal)."""
    out: list[str | None] = []
    for sub in _iter(node):
        if isinstance(sub, cst.Call) and (dotted(sub.func) or "").rpartition(".")[2] == NS_MARKER:
            args = sub.args
            out.append(string_value(args[0].value) or None if len(args) == 1 else None)
    return out


def field_marker(small: cst.AnnAssign) -> str | bool:
    """A field's `NS("path")`: in its annotation, or in `field(metadata=...)`;
    True for a marker whose path is not a literal, False for none."""
    found = ns_markers(small.annotation.annotation)
    if not found and isinstance(small.value, cst.Call):
        for arg in small.value.args:
            if arg.keyword is not None and arg.keyword.value == "metadata":
                found = ns_markers(arg.value)
    if not found:
        return False
    return found[0] or True


DEPRECATION_CATEGORIES = {"DeprecationWarning", "PendingDeprecationWarning"}


def deprecation_mark(fn: cst.FunctionDef) -> str | None:
    """How a function marks itself deprecated in the code, or None: a
    `@deprecated(...)` decorator (typing_extensions, warnings), or a
    `warn(..., DeprecationWarning)` call in its body (any import spelling)."""
    for d in fn.decorators:
        head = d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator
        if (dotted(head) or "").rpartition(".")[2] == "deprecated":
            return "@deprecated"
    for sub in _iter(fn.body):
        if not (isinstance(sub, cst.Call) and (dotted(sub.func) or "").endswith("warn")):
            continue
        for i, arg in enumerate(sub.args):
            category = (dotted(arg.value) or "").rpartition(".")[2]
            if category in DEPRECATION_CATEGORIES and (
                (arg.keyword is None and i == 1)
                or (arg.keyword is not None and arg.keyword.value == "category")
            ):
                return f"warns {category}"
    return None


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


def _computes(call: cst.Call) -> bool:
    """A `Derived(fn=...)` computes its leaf from config at publish; one without a
    function (SGLang's ranks and groups: `tp_rank = Derived(doc=...)`) is a
    runtime field that publish or distributed init fills in, not config."""
    return any(
        (a.keyword is None and not a.star) or (a.keyword is not None and a.keyword.value == "fn")
        for a in call.args
    )


def _class_facts(
    cls: cst.ClassDef,
    module_node: cst.Module,
    resolve: Any,
    lines: dict[str, cst.CSTNode],
    exception: Any,
) -> dict[str, Any]:
    fields: list[str] = []
    ns_fields: dict[str, str] = {}  # field -> its NS("path") marker
    unreadable: list[str] = []  # namespace declarations that are not literals
    if class_namespace(cls) is None and any(
        isinstance(small, cst.Assign)
        and any(
            isinstance(t.target, cst.Name) and t.target.value == "_NS_PATH" for t in small.targets
        )
        for small in class_statements(cls)
    ):
        unreadable.append("_NS_PATH is not a literal")
    # annotated attribute or property -> the classes its annotation names (instance_names)
    attr_types: dict[str, list[str]] = {}
    for small in class_statements(cls):
        name = field_name(small, module_node)
        if name is None:
            continue
        assert isinstance(small, cst.AnnAssign)
        fields.append(name)
        attr_types[name] = instance_names(small.annotation)
        marker = field_marker(small)
        if marker is True:  # a marker the vocabulary cannot read
            unreadable.append(f"{name}: NS(...) without a literal path")
            lines[f"{cls.name.value}.{name}"] = small
        elif marker and name not in ns_fields:
            ns_fields[name] = marker
            lines[f"{cls.name.value}.{name}"] = small
    lines[cls.name.value] = cls.name
    properties: list[str] = []
    inputs: dict[str, list[str]] = {}  # property -> what it reads off the record
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
                    inputs[stmt.name.value] = _property_inputs(stmt)
                attr_types.setdefault(stmt.name.value, instance_names(stmt.returns))
            else:
                methods.append(stmt.name.value)
    derived = [
        t.target.value
        for small in class_statements(cls)
        if isinstance(small, cst.Assign)
        and isinstance(small.value, cst.Call)
        and (dotted(small.value.func) or "").rpartition(".")[2] == DERIVED_MARKER
        and _computes(small.value)
        for t in small.targets
        if isinstance(t.target, cst.Name)
    ]
    return {
        "bases": [r for r in (resolve(a.value) for a in cls.bases) if r],
        "derived": derived,
        "ns_path": class_namespace(cls),
        "fields": fields,
        "ns_fields": ns_fields,
        "ns_unreadable": unreadable,
        "attr_types": {k: v for k, v in attr_types.items() if v},
        "properties": properties,
        "property_inputs": {k: v for k, v in inputs.items() if v},
        "methods": methods,
        # method -> what it raises, itself or through its receiver's methods
        "raises": method_raises(cls, exception),
    }


def _property_inputs(fn: cst.FunctionDef) -> list[str]:
    """What a computed member reads, in order, so a missing accessor can be
    named with its inputs: `self.f` (`m()` for a method it calls), a member read
    off a call handed `self` (`resolved_view(self).page_size`), and a literal
    `getattr(x, "name")` (a model config's attribute). Private slots (`_cache`)
    are the property's own memo, not inputs."""
    found: list[str] = []
    called: set[int] = set()

    def add(name: str) -> None:
        if not name.startswith("_") and name not in found:
            found.append(name)

    def is_self(e: cst.BaseExpression) -> bool:
        return isinstance(e, cst.Name) and e.value == "self"

    class Reads(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            func = node.func
            if isinstance(func, cst.Attribute) and is_self(func.value):
                called.add(id(func))
                add(func.attr.value + "()")

        def leave_Call(self, node: cst.Call) -> None:  # after what its arguments read
            func = node.func
            if isinstance(func, cst.Name) and func.value == "getattr" and len(node.args) >= 2:
                name = string_value(node.args[1].value)
                if name and not is_self(node.args[0].value):
                    add(name)

        def visit_Attribute(self, node: cst.Attribute) -> None:
            base = node.value
            if id(node) in called:
                return
            if is_self(base) or (
                isinstance(base, cst.Call) and any(is_self(a.value) for a in base.args)
            ):
                add(node.attr.value)

    fn.body.visit(Reads())
    return found


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

    exception = exception_namer(module, imports, local_defs)
    functions: dict[str, Any] = {}
    classes: dict[str, Any] = {}
    lists: dict[str, list[str]] = {}
    values: dict[str, str] = {}  # module global -> what it is bound to (`expr_path`)
    lines: dict[str, cst.CSTNode] = {}  # name -> node, for "where it came from"
    for stmt in module_node.body:
        if isinstance(stmt, cst.FunctionDef):
            functions[stmt.name.value] = {
                "required": _required_params(stmt.params),
                "returns": _annotation_text(stmt.returns, module_node),
                "returns_names": instance_names(stmt.returns),
                "return_strings": _return_strings(stmt),
                "return_paths": _return_paths(stmt),
                "deprecated": deprecation_mark(stmt),
                "raises": raised(stmt, exception),
                "object_calls": object_calls(stmt),
            }
            lines[stmt.name.value] = stmt.name
        elif isinstance(stmt, cst.ClassDef):
            classes[stmt.name.value] = _class_facts(stmt, module_node, resolve, lines, exception)
        elif isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if (
                    isinstance(small, cst.Assign)
                    and len(small.targets) == 1
                    and isinstance(small.targets[0].target, cst.Name)
                ):
                    value = small.value
                    # `_CONTEXT = RuntimeContext(...)`: the class it instantiates
                    path = expr_path(value.func) if isinstance(value, cst.Call) else None
                    path = f"{path}(...)" if path else expr_path(value)
                    if path is not None:
                        name = small.targets[0].target.value
                        values[name] = path
                        lines.setdefault(name, small)
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
    from ctxlint.facts.positions import spans  # imports LibCST: only when a file is walked

    where = spans(module_node, lines.values()) if lines else {}
    return {
        "imports": imports,
        "functions": functions,
        "classes": classes,
        "lists": lists,
        "values": values,
        "lines": {name: where[node][0] for name, node in sorted(lines.items())},
    }
