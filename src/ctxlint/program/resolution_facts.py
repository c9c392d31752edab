"""The part "resolution": what one file says about the resolution pipeline.

Resolution declares into a stash on the record and reads through views; the
whole-program side (program.resolution) derives the declaration function, the
stash, the views and the pipeline from these facts. Per file, the visitor keeps:

- `consts`: module-level string constants (a stash slot named by a constant);
- `getattr_classes`: classes defining `__getattr__` (a view's shape);
- `returns`: per function, the qualified callees of the calls it returns;
- `decorators`: per function, the qualified callees of its decorators;
- `decorator_like`: functions returning a parameter or a function they define;
- `param_calls`: per function that calls one of its own parameters, the
  qualified callees of the call arguments it hands that parameter;
- `handed`: calls handing a function by name as an argument (callee, refs);
  `local_handed`: the functions that handed a name that can name no function
  (a local, an attribute of a parameter), which is not kept;
- `stash`: writes and reads of a private slot of an object
  (`x.__dict__[K]`, `getattr(x, "_k")`, `x._k`), with how it is written;
- `reads`: direct reads of a record field off a parameter (`p.field`, a literal
  `getattr(p, "field")`), each marked when it is the receiver of an in-place
  edit (`p.field.a = ...`, `p.field[k] = ...`, `p.field.append(...)`, or a
  local bound to part of it edited so); `writes`: assignments of one
  (`p.field = ...`);
- `view_bindings`: `name = f(...)`, for the conventional view binding.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import MODULE_SCOPE, FileContext, dotted, string_value
from ctxlint.facts.typed import site
from ctxlint.facts.visitor import FileVisitor
from ctxlint.program.binding_values import VALUE_KINDS, Bound
from ctxlint.program.bindings import KEY as BINDINGS
from ctxlint.program.classes import signature
from ctxlint.program.resolution import KEY
from ctxlint.program.resolution_schema import (
    FieldAccess,
    Handed,
    ResolutionFileFacts,
    StashWrite,
)
from ctxlint.program.signatures import sig_text

__all__ = ["KEY", "ResolutionFacts"]
MUTATORS = ("append", "extend", "insert")
# the built-in containers' in-place methods: a call of one edits its receiver
EDITING_METHODS = frozenset(
    {
        *MUTATORS,
        *("remove", "pop", "clear", "sort", "reverse"),
        *("update", "setdefault", "popitem"),
        *("add", "discard", "difference_update", "intersection_update"),
        "symmetric_difference_update",
    }
)
SETATTRS = ("setattr", "object.__setattr__")


@dataclass
class _Fn:
    qual: str
    params: dict[str, bool]  # parameter -> annotated with the record class
    receiver: str | None
    scope: str  # its qualname in the module (the binding model's scope key)
    signature: str  # its parameter list as written (`(server_args, source, **fields)`)


def _slot_key(expr: cst.BaseExpression | None, ctx: FileContext) -> str | None:
    """A slot named by a literal (`"_x"`) or a constant (`@pkg.mod.NAME`)."""
    if expr is None:
        return None
    lit = string_value(expr)
    if lit is not None:
        return lit if lit.startswith("_") and not lit.startswith("__") else None
    if isinstance(expr, (cst.Name, cst.Attribute)):
        q = ctx.resolve(expr)
        return f"@{q}" if q else None
    return None


class ResolutionFacts(FileVisitor):
    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        vocab = ctx.vocab
        assert vocab is not None
        self.fields = set(vocab.fields)
        self.stack: list[_Fn] = []
        self.getattr_classes: list[str] = []
        self.returns: dict[str, list[str]] = {}
        self.decorators: dict[str, list[str]] = {}
        self.decorator_like: list[str] = []  # functions returning a parameter or a nested def
        self.param_calls: dict[str, list[str]] = {}
        self.handed: list[Handed] = []
        self.local_handed: list[str] = []  # functions that handed a name naming no program code
        self.stash: list[StashWrite] = []
        # the parameter list of each function writing a stash: a hint naming the
        # declaration function is rendered from the signature this tree declares
        self.signatures: dict[str, str] = {}
        self.slot_reads: list[tuple[str | None, str]] = []  # (function, slot) read
        self.record_classes = set(vocab.record_classes)
        self.reads: list[FieldAccess] = []
        self.writes: list[FieldAccess] = []
        self.view_bindings: list[tuple[str, str]] = []
        self.targets: set[int] = set()  # Attribute nodes being assigned
        self.edited: set[int] = set()  # nodes an in-place edit goes through
        self.edited_names: set[tuple[str, str]] = set()  # (function scope, local) edited
        self.aliased: dict[int, str] = {}  # node of a chain bound to a local -> the local
        self.read_aliases: dict[int, tuple[str, str]] = {}  # read index -> (scope, local)
        # the record's methods: their calls in running order, and the loops open
        self.record_calls: dict[str, list[str]] = {}
        self.loops: list[int] = []  # per function on the stack: loops open in it
        bindings = ctx.parts[BINDINGS]
        self.arguments = bindings.track(self._holds_argument)  # still the parameter's value
        self.slots = bindings.track(self._holds_slot)  # locals holding a private slot
        self.constants = bindings.track(self._holds_string)  # module names holding a string

    def _q(self, local: str) -> str:
        return f"{self.ctx.module}.{local}"

    @property
    def in_record(self) -> bool:
        cls = self.ctx.enclosing_class()
        return cls is not None and self._q(cls) in self.record_classes

    def _fn(self) -> _Fn | None:
        if not self.stack or self.ctx.scope.kind != "function":
            return None
        return self.stack[-1]

    def _holder(self, expr: cst.BaseExpression) -> str | None:
        """The parameter (or receiver) `expr` names, while it still holds the argument."""
        fn = self._fn()
        if fn is None or not isinstance(expr, cst.Name):
            return None
        name = expr.value
        if self._rebound(fn, name):
            return None
        if name in fn.params or name == fn.receiver:
            return name
        return None

    def _rebound(self, fn: _Fn, name: str) -> bool:
        """The function bound `name` again since it was handed (False: a
        parameter's own binding; None: not bound in it, as a closure's `self`)."""
        return self.arguments.get(fn.scope, name) is False

    # -- what bindings hold (asked by the binding model) -----------------------
    def _holds_argument(self, bound: Bound, before: Any) -> bool:
        return bound.kind == "parameter"

    def _holds_string(self, bound: Bound, before: Any) -> str | None:
        """The string a module-level name was last assigned (a stash slot can be
        named by a constant); kept through other bindings."""
        value = bound.value
        if self.stack or value is None or bound.kind not in ("assignment", "annotated assignment"):
            return before
        lit = string_value(value)
        return lit if lit is not None else before

    def _holds_slot(self, bound: Bound, before: Any) -> tuple[str | None, str] | None:
        """(the parameter it was read off, the slot) for a local bound to a
        private slot (`stash = getattr(x, "_k") or []`); kept once bound."""
        value = bound.value
        if self._fn() is None or value is None or bound.kind not in VALUE_KINDS:
            return before
        slot = self._slot(value.left if isinstance(value, cst.BooleanOperation) else value)
        return slot if slot is not None else before

    # -- scopes ------------------------------------------------------------
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
        if any(isinstance(s, cst.FunctionDef) and s.name.value == "__getattr__" for s in body):
            self.getattr_classes.append(self._q(self.ctx.qualname))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        scope = self.ctx.scope
        qual = self._q(scope.qualname)
        p = node.params
        records = self.ctx.records
        params = {
            x.name.value: x.annotation is not None
            and records is not None
            and records.is_record_annotation(x.annotation.annotation)
            for x in (*p.posonly_params, *p.params, *p.kwonly_params)
            if x.name.value != scope.self_name
        }
        receiver = scope.self_name if scope.class_qualname and len(self.ctx.scopes) >= 2 else None
        sig = sig_text(signature(p, self.ctx.module_node.code_for_node))
        self.stack.append(_Fn(qual, params, receiver, scope.qualname, sig))
        self.loops.append(0)
        if receiver is not None and self.in_record and self.ctx.scopes[-2].kind == "class":
            self.record_calls[qual] = []
        decos = []
        for d in node.decorators:
            expr = d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator
            q = self.ctx.resolve(expr) if isinstance(expr, (cst.Name, cst.Attribute)) else None
            if q:
                decos.append(q)
        if decos:
            self.decorators[qual] = decos

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.stack.pop()
        self.loops.pop()

    # -- loops: a read in one may run after any call of the loop -------------------
    def visit_For(self, node: cst.For) -> None:
        if self.loops:
            self.loops[-1] += 1

    def leave_For(self, node: cst.For) -> None:
        if self.loops:
            self.loops[-1] -= 1

    def visit_While(self, node: cst.While) -> None:
        if self.loops:
            self.loops[-1] += 1

    def leave_While(self, node: cst.While) -> None:
        if self.loops:
            self.loops[-1] -= 1

    def leave_Call(self, node: cst.Call) -> None:
        """A record method's calls, in the order they run (arguments first)."""
        fn = self._fn()
        calls = self.record_calls.get(fn.qual) if fn is not None else None
        if calls is None:
            return
        func = node.func
        receiver = fn.receiver  # type: ignore[union-attr]
        if any(self._hands_code(a.value, receiver) for a in node.args):
            calls.append("?")  # a function handed on may run anywhere (`map(self._h, x)`)
        elif (
            isinstance(func, cst.Attribute)
            and isinstance(func.value, cst.Name)
            and func.value.value == receiver
        ):
            calls.append(f"self:{func.attr.value}")
        elif self._on_field(func, receiver):
            calls.append("field")  # a method of a field's value: data, not resolution
        elif isinstance(func, (cst.Name, cst.Attribute)):
            calls.append(self.ctx.resolve(func) or "?")
        else:
            calls.append("?")

    def _on_field(self, func: cst.BaseExpression, receiver: str | None) -> bool:
        """`self.field.m` (`self.field.a.m`): a method of a field's value."""
        node = func
        while isinstance(node, cst.Attribute) and isinstance(node.value, cst.Attribute):
            node = node.value
        return (
            node is not func
            and isinstance(node, cst.Attribute)
            and isinstance(node.value, cst.Name)
            and node.value.value == receiver
            and node.attr.value in self.fields
        )

    def _hands_code(self, arg: cst.BaseExpression, receiver: str | None) -> bool:
        """An argument that may be a function of the program: `self.m` (no field),
        or a name that can name program code."""
        if isinstance(arg, cst.Attribute) and isinstance(arg.value, cst.Name):
            if arg.value.value == receiver:
                return arg.attr.value not in self.fields
        if isinstance(arg, (cst.Name, cst.Attribute)) and dotted(arg) != receiver:
            q = self.ctx.resolve(arg)
            return q is not None and self.ctx.may_name_program_code(q)
        return isinstance(arg, cst.Lambda)

    # -- in-place edits: what a store, `del` or mutator call goes through ----------
    def _edit_through(self, node: cst.BaseExpression) -> None:
        """Mark `node` and the chain under it (`a.b[c].d` down to `a`) as edited in
        place; a local at its root is edited too (its binding may be a field's part)."""
        while isinstance(node, (cst.Attribute, cst.Subscript)):
            self.edited.add(id(node))
            node = node.value
        self.edited.add(id(node))  # `getattr(p, "field")` at the root
        fn = self._fn()
        if fn is not None and isinstance(node, cst.Name):
            self.edited_names.add((fn.scope, node.value))

    def _edited_target(self, target: cst.BaseExpression) -> None:
        if isinstance(target, (cst.Attribute, cst.Subscript)):
            self._edit_through(target.value)  # the target itself is a write

    def _alias(self, name: str, value: cst.BaseExpression | None) -> None:
        """`name = p.field.part`: the nodes of the chain, for a later edit of `name`."""
        node = value
        while isinstance(node, (cst.Attribute, cst.Subscript)):
            self.aliased[id(node)] = name
            node = node.value
        if node is not None and node is not value:
            self.aliased[id(node)] = name

    def visit_Del(self, node: cst.Del) -> None:
        targets = node.target.elements if isinstance(node.target, cst.Tuple) else ()
        for t in [e.value for e in targets] or [node.target]:
            self._edited_target(t)

    # -- assignments: field writes, stash slots, view bindings ---------------------
    def _assigned(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        self._edited_target(target)
        if isinstance(target, cst.Name) and self._fn() is not None:
            self._alias(target.value, value)
        if isinstance(target, cst.Attribute):
            self.targets.add(id(target))
            self._write_attr(target, value)
            return
        if isinstance(target, cst.Subscript):
            slot = self._slot(target)
            if slot is not None:
                self._stash(target, slot[1], self._assign_kind(value, slot[1]), slot[0])
            return
        fn = self._fn()
        # what a name then holds is the binding model's (_holds_argument, _holds_slot,
        # _holds_string)
        if fn is None or not isinstance(target, cst.Name) or not isinstance(value, cst.Call):
            return
        if isinstance(value.func, (cst.Name, cst.Attribute)):
            callee = self.ctx.resolve(value.func)
            if callee:
                self.view_bindings.append((target.value, callee))

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self._assigned(t.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._assigned(node.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._edited_target(node.target)
        slot = self._slot(node.target)
        if slot is not None:
            self._stash(node, slot[1], "append", slot[0])
        elif isinstance(node.target, cst.Attribute):
            self.targets.add(id(node.target))

    def _write_attr(self, target: cst.Attribute, value: cst.BaseExpression | None) -> None:
        holder = self._holder(target.value)
        name = target.attr.value
        if holder is not None and name in self.fields:
            self.writes.append(
                FieldAccess(self.stack[-1].qual, holder, name, site(self.ctx, target))
            )
        slot = self._slot(target)
        if slot is not None:
            self._stash(target, slot[1], self._assign_kind(value, slot[1]), slot[0])

    def _assign_kind(self, value: cst.BaseExpression | None, key: str) -> str:
        """`init` for an empty container or a copy of the slot itself, else `assign`."""
        if isinstance(value, (cst.List, cst.Tuple)) and not value.elements:
            return "init"
        if isinstance(value, cst.Call) and dotted(value.func) in ("list", "tuple") and value.args:
            inner = value.args[0].value
            found = self._slot(inner.left if isinstance(inner, cst.BooleanOperation) else inner)
            if found is not None and found[1] == key:
                return "init"
        if isinstance(value, cst.Call) and dotted(value.func) == "list" and not value.args:
            return "init"
        if isinstance(value, cst.Name):
            fn = self._fn()
            if fn is not None and (self.slots.get(fn.scope, value.value) or (None, ""))[1] == key:
                return "init"  # `stash = getattr(x, slot) or []; x.slot = stash`
        return "assign"

    # -- slots -------------------------------------------------------------
    def _slot(self, expr: cst.BaseExpression) -> tuple[str | None, str] | None:
        """(holder parameter or None, slot key) when `expr` is a private slot of an object."""
        if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Attribute):
            if expr.value.attr.value == "__dict__" and len(expr.slice) == 1:
                index = expr.slice[0].slice
                key = _slot_key(index.value, self.ctx) if isinstance(index, cst.Index) else None
                if key is not None:
                    return self._holder(expr.value.value), key
            return None
        if isinstance(expr, cst.Call) and dotted(expr.func) == "getattr":
            args = [a.value for a in expr.args if a.keyword is None and not a.star]
            if len(args) >= 2:
                key = _slot_key(args[1], self.ctx)
                if key is not None:
                    return self._holder(args[0]), key
            return None
        if (
            isinstance(expr, cst.Call)
            and isinstance(expr.func, cst.Attribute)
            and expr.func.attr.value == "get"
            and isinstance(expr.func.value, cst.Attribute)
            and expr.func.value.attr.value == "__dict__"
            and expr.args
        ):
            key = _slot_key(expr.args[0].value, self.ctx)
            if key is not None:
                return self._holder(expr.func.value.value), key
            return None
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):
            name = expr.attr.value
            if not name.startswith("_") or name.startswith("__"):
                return None
            fn = self._fn()
            if fn is not None and expr.value.value == fn.receiver and not self.in_record:
                return None  # an object's own private state, not a record's slot
            return self._holder(expr.value), name
        if isinstance(expr, cst.Name):
            fn = self._fn()
            if fn is not None:
                return self.slots.get(fn.scope, expr.value)
        return None

    def _stash(self, node: cst.CSTNode, key: str, how: str, holder: str | None) -> None:
        fn = self._fn()
        where = fn.qual if fn else None
        if how == "read":  # only which slots a function reads: no site
            if (where, key) not in self.slot_reads:
                self.slot_reads.append((where, key))
            return
        self.stash.append(StashWrite(where, key, how, holder, site(self.ctx, node)))
        if fn is not None:
            self.signatures[fn.qual] = fn.signature

    # -- calls and reads ---------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        fn = self._fn()
        name = dotted(func) if isinstance(func, (cst.Name, cst.Attribute)) else None
        if isinstance(func, cst.Attribute) and func.attr.value in MUTATORS:
            slot = self._slot(func.value)
            if slot is not None:
                self._stash(node, slot[1], "append", slot[0])
        if isinstance(func, cst.Attribute) and func.attr.value in EDITING_METHODS:
            self._edit_through(func.value)
        args = [a for a in node.args if not a.star]
        positional = [a.value for a in args if a.keyword is None]
        if (name in SETATTRS or (name or "").endswith(".__setattr__")) and len(positional) >= 3:
            key = _slot_key(positional[1], self.ctx)
            holder = self._holder(positional[0])
            field_name = string_value(positional[1])
            if key is not None:
                self._stash(node, key, self._assign_kind(positional[2], key), holder)
            elif holder is not None and field_name in self.fields and name == "setattr":
                self.writes.append(
                    FieldAccess(self.stack[-1].qual, holder, field_name, site(self.ctx, node))
                )
        if name == "getattr" and len(positional) >= 2:
            key = _slot_key(positional[1], self.ctx)
            if key is not None:
                self._stash(node, key, "read", self._holder(positional[0]))
            holder = self._holder(positional[0])
            field_name = string_value(positional[1])
            if holder is not None and field_name in self.fields:
                self._read(node, holder, field_name)
        if fn is None:
            return
        # a parameter called with calls as arguments (a pass runner hands a view)
        if (
            isinstance(func, cst.Name)
            and func.value in fn.params
            and not self._rebound(fn, func.value)
        ):
            handed = [
                q
                for a in positional
                if isinstance(a, cst.Call) and isinstance(a.func, (cst.Name, cst.Attribute))
                if (q := self.ctx.resolve(a.func))
            ]
            self.param_calls.setdefault(fn.qual, []).extend(handed or ["?"])
        refs = [
            q
            for a in args
            if isinstance(a.value, (cst.Name, cst.Attribute)) and self._holder(a.value) is None
            if (q := self.ctx.resolve(a.value)) and dotted(a.value) not in fn.params
        ]
        callee = self.ctx.resolve(func) if name else None
        if refs and callee:
            self.handed.append(Handed(fn.qual, callee, tuple(refs)))

    def visit_Subscript(self, node: cst.Subscript) -> None:
        slot = self._slot(node)
        if slot is not None:
            self._stash(node, slot[1], "read", slot[0])

    def _read(self, node: cst.CSTNode, holder: str, name: str) -> None:
        fn = self.stack[-1]
        kind = "recv" if holder == fn.receiver else "ann" if fn.params.get(holder) else "name"
        edits = id(node) in self.edited
        local = self.aliased.get(id(node))
        if local is not None and not edits:  # settled once the file is walked
            self.read_aliases[len(self.reads)] = (fn.scope, local)
        calls = self.record_calls.get(fn.qual)
        before = len(calls) if calls is not None and not self.loops[-1] else -1
        where = site(self.ctx, node)
        self.reads.append(FieldAccess(fn.qual, holder, name, where, kind, edits, before))

    def visit_Return(self, node: cst.Return) -> None:
        fn = self._fn()
        value = node.value
        if fn is not None and isinstance(value, cst.Name):
            # a decorator: returns its parameter, or the function it defines
            scope_node = self.ctx.scope.node
            body = getattr(getattr(scope_node, "body", None), "body", ())
            nested = {s.name.value for s in body if isinstance(s, cst.FunctionDef)}
            if value.value in fn.params or value.value in nested:
                if fn.qual not in self.decorator_like:
                    self.decorator_like.append(fn.qual)
            return
        if fn is None or not isinstance(value, cst.Call):
            return
        if isinstance(value.func, (cst.Name, cst.Attribute)):
            q = self.ctx.resolve(value.func)
            if q:
                self.returns.setdefault(fn.qual, []).append(q)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if id(node) in self.targets or node.attr.value not in self.fields:
            return
        holder = self._holder(node.value)
        if holder is not None:
            self._read(node, holder, node.attr.value)

    def _keep_program_names(self) -> None:
        """Keep the handed names that can name program code (most are locals:
        `f(x)` hands `x`); the functions that handed one of the others are
        listed (`local_handed`): the tokens the pipeline's first layer asked
        for them, the module's own and its packages', are still asked."""
        kept: list[Handed] = []
        local: set[str] = set()
        for h in self.handed:
            refs = tuple(r for r in h.refs if self.ctx.may_name_program_code(r))
            if len(refs) < len(h.refs):
                local.add(h.fn)
            if refs:
                kept.append(h if len(refs) == len(h.refs) else Handed(h.fn, h.callee, refs))
        self.handed = kept
        self.local_handed = sorted(local)
        # `x = f(...)` is a view binding only when `f` is a view function
        self.view_bindings = [b for b in self.view_bindings if self.ctx.may_name_program_code(b[1])]

    def finish(self) -> ResolutionFileFacts | None:
        self._keep_program_names()
        for i, alias in self.read_aliases.items():  # `x = p.field.part` ... `x.y = ...`
            if alias in self.edited_names:
                self.reads[i] = replace(self.reads[i], edits=True)
        module = self.constants.names.get(MODULE_SCOPE, {})
        facts = ResolutionFileFacts(
            {name: lit for name, lit in module.items() if lit is not None},
            tuple(self.getattr_classes),
            {q: tuple(v) for q, v in self.returns.items()},
            {q: tuple(v) for q, v in self.decorators.items()},
            tuple(self.decorator_like),
            {q: tuple(v) for q, v in self.param_calls.items()},
            tuple(self.handed),
            tuple(self.local_handed),
            tuple(self.stash),
            dict(self.signatures),
            tuple(self.slot_reads),
            tuple(self.reads),
            tuple(self.writes),
            tuple(self.view_bindings),
            {q: tuple(c) for q, c in self.record_calls.items() if c},
        )
        return None if facts == ResolutionFileFacts() else facts
