"""A seed alias that is a parameter defaulting to the seed:

    def spec_need_hidden_states(server_args=None):
        if server_args is None:
            server_args = get_server_args()
        return not server_args.enable_multi_layer_eagle

It is the seed wherever no call hands a record in. When no call in the project
passes one (every other mention of the function is an import, its `def`, or a
call with no arguments), its reads are rewritten as a plain alias's, and the
`if` and the parameter go: a caller outside the project that still passes a
record then fails loudly instead of being ignored.

Where calls do hand it something (here, or in another file), the parameter
goes too under --unsafe when every one of them hands the published record
(SGLang 0.5.19's `get_alloc_len_per_decode()`): the file is planned as if it
went, and the sites say which parameter (`Site.drops`); whether every call
hands the published record, and the edits at those calls, are decided across
files after planning (fix.param_chain), which plans the file again with the
reason where they do not.
"""

from __future__ import annotations

import libcst as cst

from ctxlint.fix.context import FixContext
from ctxlint.fix.param_chain import without_params
from ctxlint.fix.plan import FIXED, FilePlan, Site
from ctxlint.fix.reads import UNSAFE

NOTE = (
    "; the parameter `{name}`, which no call in the project passes, goes with its "
    "`if {name} is None` (a caller that passes a record now fails loudly)"
)
CHAINED = (
    "; the parameter `{name}`, which every call in the project hands the published "
    "record, goes with its `if {name} is None`"
)


def _is_none(expr: cst.BaseExpression | None) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"


def _none_test(node: cst.If, name: str) -> bool:
    """`if name is None:` with nothing else in the test."""
    test = node.test
    return (
        isinstance(test, cst.Comparison)
        and isinstance(test.left, cst.Name)
        and test.left.value == name
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, cst.Is)
        and _is_none(test.comparisons[0].comparator)
    )


def seed_default(
    plan: FilePlan, param: cst.Param, assigns: list[tuple[cst.Assign, cst.CSTNode]]
) -> tuple[cst.FunctionDef, list[cst.If]] | None:
    """(the function, the `if name is None: name = <seed>()` statements) when
    `param` defaults to None and every assignment is alone in such an `if`."""
    fn = plan.src.parent(plan.src.parent(param))  # Param -> Parameters -> FunctionDef
    if not isinstance(fn, cst.FunctionDef) or not _is_none(param.default):
        return None
    guards: list[cst.If] = []
    for _, line in assigns:
        block = plan.src.parent(line)
        guard = plan.src.parent(block) if isinstance(block, cst.IndentedBlock) else None
        if not (
            isinstance(guard, cst.If)
            and guard.orelse is None
            and len(block.body) == 1  # type: ignore[union-attr]
            and _none_test(guard, param.name.value)
            and plan.src.parent(plan.src.parent(guard)) is fn
        ):
            return None
        guards.append(guard)
    return fn, guards


def passed_by_a_caller(plan: FilePlan, fn: cst.FunctionDef, ctx: FixContext) -> str | None:
    """Where a call may hand the function an argument (why the parameter stays),
    or None: a module-level function whose every mention is its `def`, an
    import, or a call with no arguments, in this file and every other. "" (with
    --unsafe): calls with arguments here, or mentions in another file, whose
    arguments fix.param_chain weighs across files."""
    name = fn.name.value
    if not isinstance(plan.src.parent(fn), cst.Module):
        if ctx.unsafe and method_of(plan, fn) is not None:
            return ""  # its calls are `self.name(...)` in its class: fix.param_chain
        return f"`{name}` is a method (its calls are not followed)"
    handed = False  # a call here hands an argument
    for node in _names(plan.src.tree, name):
        up = plan.src.parent(node)
        if isinstance(up, cst.Attribute) and up.attr is node:
            node, up = up, plan.src.parent(up)
        plain = (
            (isinstance(up, cst.FunctionDef) and up is fn)
            or isinstance(up, cst.ImportAlias)
            or (isinstance(up, cst.Call) and up.func is node and not up.args)
        )
        if not plain and ctx.unsafe and isinstance(up, cst.Call) and up.func is node:
            handed = True
            continue
        if not plain:
            return f"`{name}` is named other than as a call with no arguments (line {plan.src.line(node)})"
    # a line that is no import and names the function other than as `name()`
    no_import = r"(?m)^(?![ \t]*from[ \t]|[ \t]*import[ \t])"
    if ctx.named_elsewhere([rf"{no_import}.*\b{name}\b(?!\(\))"], plan.src.path):
        if not ctx.unsafe:
            return f"`{name}` is named in another file other than as a call with no arguments"
        handed = True
    return "" if handed else None


def method_of(plan: FilePlan, fn: cst.FunctionDef) -> str | None:
    """The module-level class `fn` is a plain method of (no decorator, `self`
    first), else None."""
    block = plan.src.parent(fn)
    cls = plan.src.parent(block) if isinstance(block, cst.IndentedBlock) else None
    params = fn.params.posonly_params or fn.params.params
    if (
        isinstance(cls, cst.ClassDef)
        and isinstance(plan.src.parent(cls), cst.Module)
        and not fn.decorators
        and params
        and params[0].name.value == "self"
    ):
        return cls.name.value
    return None


def checked(
    plan: FilePlan, param: cst.Param, assigns: list[tuple[cst.Assign, cst.CSTNode]], ctx: FixContext
) -> list[cst.If] | str:
    """The `if name is None` statements to remove with `param`, or why it stays
    (not that shape, or a call may pass it). A parameter whose calls hand it
    something is planned to go, pending fix.param_chain (`plan.chained`)."""
    name = param.name.value
    shape = seed_default(plan, param, assigns) if assigns else None
    if shape is None:
        return f"the alias `{name}` is not only `{name} = <seed accessor>()`"
    if not ctx.unsafe:  # a signature change: never a safe fix
        return f"the parameter `{name}` would go: {UNSAFE}"
    why = passed_by_a_caller(plan, shape[0], ctx)
    if why == "":
        cls = method_of(plan, shape[0])
        marker = f"{cls + '.' if cls else ''}{shape[0].name.value}:{name}"
        refused = ctx.refused.get((plan.src.path, marker))
        if refused is not None:
            return refused
        plan.chained[id(param)] = marker
        return shape[1]
    return why or shape[1]


def drop(plan: FilePlan, param: cst.Param, sites: list[Site]) -> None:
    """The parameter goes with its reads' rewrite: a signature change, so unsafe."""
    if any(s.status != FIXED for s in sites):  # the rewrite was given up
        plan.chained.pop(id(param), None)
        return
    params = plan.src.parent(param)
    assert isinstance(params, cst.Parameters)
    plan.replace[id(params)] = without_params(params, params, {id(param)})
    marker = plan.chained.get(id(param), "")
    note = CHAINED if marker else NOTE
    for s in sites:
        s.unsafe, s.drops = True, marker
        s.reason = (s.reason or "the value is the seed's, as before") + note.format(
            name=param.name.value
        )


def _names(tree: cst.Module, name: str) -> list[cst.Name]:
    found: list[cst.Name] = []

    class Collect(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            if node.value == name:
                found.append(node)

    tree.visit(Collect())
    return found
