"""What a function raises, for the vocabulary's pre-publish errors (facts/vocab_errors.py).

Read off the schema round's functions and methods: the exception classes a
body raises itself (`raise X(...)`, `raise X`, `raise X(...) from e`; a bare
`raise` re-raises what something else raised and names nothing), the methods
of its own class it calls on its receiver (`self._read(name)`), and, for a
small function (an accessor), the methods it calls on a named object
(`_CONTEXT.config_bag("exec")`, wherever in the body: ctxrt's accessors call
it in an `except KeyError:` of a fast path). Nested defs, classes and lambdas
run elsewhere and are left out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import dotted

# how many statements an accessor's body has at most (as declarations._return_paths)
SMALL = 8


def _nodes(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Everything under `node` that runs with it (nested scopes left out), as a stack."""
    stack = list(node.children)
    while stack:
        current = stack.pop()
        if isinstance(current, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        yield current
        stack.extend(current.children)


def raised(fn: cst.FunctionDef, name_of: Callable[[str], str]) -> list[str]:
    """The classes `fn`'s body raises, as `name_of` qualifies a dotted name, sorted."""
    return raised_and_self_calls(fn, name_of)[0]


def raised_and_self_calls(
    fn: cst.FunctionDef, name_of: Callable[[str], str]
) -> tuple[list[str], list[str]]:
    """What `raised` answers, and the methods `fn` calls on its receiver
    (`self.m(...)`, a method's first parameter), sorted: one pass over the body."""
    params = (*fn.params.posonly_params, *fn.params.params)
    me = params[0].name.value if params else None
    raises: set[str] = set()
    calls: set[str] = set()
    for node in _nodes(fn.body):
        if isinstance(node, cst.Raise) and node.exc is not None:
            exc = node.exc.func if isinstance(node.exc, cst.Call) else node.exc
            name = dotted(exc)
            if name is not None:
                raises.add(name_of(name))
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            value = node.func.value
            if isinstance(value, cst.Name) and value.value == me:
                calls.add(node.func.attr.value)
    return sorted(raises), sorted(calls)


def object_calls(fn: cst.FunctionDef) -> list[str]:
    """`obj.method` of each call on a named object in a small function's body
    (`_CONTEXT.config_bag`, `get_context().bag`), in order, once each."""
    body = fn.body
    if not isinstance(body, cst.IndentedBlock) or len(body.body) > SMALL:
        return []
    out: list[str] = []
    for node in _nodes(body):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            head = node.func.value
            if isinstance(head, cst.Call) and not head.args:  # `get_context().bag`
                inner = dotted(head.func)
                path = f"{inner}().{node.func.attr.value}" if inner else None
            else:
                path = dotted(node.func)
            if path is not None and path not in out:
                out.append(path)
    return out


def exception_namer(
    module: str, imports: dict[str, str], local_defs: set[str]
) -> Callable[[str], str]:
    """How a module names a raised class: imported or defined there qualified,
    else as written (a builtin: `ValueError`)."""

    def name_of(name: str) -> str:
        head, _, rest = name.partition(".")
        if head in imports:
            return imports[head] + (f".{rest}" if rest else "")
        return f"{module}.{name}" if head in local_defs else name

    return name_of


def method_raises(cls: cst.ClassDef, name_of: Callable[[str], str]) -> dict[str, list[str]]:
    """Method of `cls` -> what it raises, itself or through the methods of the
    class it calls on its receiver; only methods that raise something."""
    raises: dict[str, list[str]] = {}
    calls: dict[str, list[str]] = {}
    body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ()
    for stmt in body:
        if isinstance(stmt, cst.FunctionDef):
            raises[stmt.name.value], calls[stmt.name.value] = raised_and_self_calls(stmt, name_of)
    return closed_over_self(raises, calls)


def closed_over_self(
    raises: dict[str, list[str]], calls: dict[str, list[str]]
) -> dict[str, list[str]]:
    """Method -> what it raises itself or through the methods of its class it calls
    on its receiver (transitively); only methods that raise something."""
    out: dict[str, list[str]] = {}
    for method in calls.keys() | raises.keys():
        seen, todo, found = {method}, [method], set()
        while todo:
            m = todo.pop()
            found.update(raises.get(m, ()))
            for c in calls.get(m, ()):
                if c not in seen:
                    seen.add(c)
                    todo.append(c)
        if found:
            out[method] = sorted(found)
    return dict(sorted(out.items()))
