"""Which `if` tests are false before their process publishes: a call under one
does not run there (the ordered walk, program/ordered_reach.py, steps over it).

A value is false before publish when it is (program/flag_facts.py spells them):

- a falsy literal;
- a module-level flag that import time binds to falsy literals only, and that
  every function assigning it (`global FLAG; FLAG = value`) sets to a value
  that is falsy too or exists only once a bag read has run: a read of a
  published leaf (program.leaf_reads), or a parameter every call hands such a
  value (SGLang's `set_torch_symm_mem_all_reduce(get_exec().comm....)`). Until
  then the flag holds its import-time value; where it holds another, the process
  (or the one it forked from, whose context it shares) has published;
- a parameter the call hands such a value, or leaves to a falsy default; a
  local every binding of which is such a value (the parameter's handed one
  included: `if x is None: x = FLAG`);
- `self.attr`, where every `self.attr = ...` of the class, its bases and its
  subclasses binds such a value (the method asking: in the call it runs in).

The same values answer whether a guarded statement runs (`takes`): where a
publish sits only under `if` tests whose every conjunct is spelled
(program/flag_facts.py's GUARD), it runs in a call where each conjunct is true:
a truthy literal (`True`, a nonzero number, a non-empty string), a negation
(`not x`) of a value false before publish, or a parameter, local or `self.attr`
every binding of which is one (a parameter: as the call hands it, or its
literal default where the call leaves it out). A call's `**kw` of a local dict
built with literal keys (`dict(a=x)`, `{"a": x}`, used nowhere else) binds
those keywords; a function that forwards its own `*args, **kwargs`
(`super().__init__(*args, **kwargs)`) hands on what its caller bound, and
leaves what the caller left out to the callee's defaults.

Flow-insensitive and may-bind: a name bound twice is false only if both
values are. What the facts cannot see makes nothing false: a binding they do
not spell, a call of a call (`partial(f, flag=True)()`), another module's
`mod.FLAG = True` in a function, a caller the graph does not know (a setter's
name is a token, so a run parses every file that names it: `asked`). A call's
facts spell every argument it passes (none: it passes none), so a parameter it
leaves out takes its default. Known gaps: `setattr`, `globals()` and another
module's import-time `mod.FLAG = True` are not seen; a call through the class
(`Cls.meth(obj, ...)`) shifts its positional arguments by one.
"""

from __future__ import annotations

from collections.abc import Callable

from ctxlint.program.call_binding import (
    ABSENT,
    EMPTY,
    FORWARD,
    Context,
    binding,
    bound,
    star_params,
)
from ctxlint.program.call_model import GUARD, Event, EventKind
from ctxlint.program.calls import CallGraph, Func
from ctxlint.program.flag_facts import FALSY, HANDED, NOT, TRUTHY

# a setter whose name is shorter is not asked for by name (program.process_entries)
MIN_TOKEN = 8


class UnsetFlags:
    def __init__(self, graph: CallGraph, reads: Callable[[Event], bool] | None = None) -> None:
        self.graph = graph
        self.reads = reads  # a bag read that fails before publish (None: none is known)
        self.writes: dict[str, list[tuple[str, str]]] = {}  # flag -> (function, value)
        self.attrs: dict[str, list[tuple[str, str, str]]] = {}  # attr -> (function, class, value)
        for q, fn in graph.funcs.items():
            if fn.flags is None:
                continue
            for flag, values in fn.flags.globals.items():
                self.writes.setdefault(flag, []).extend((q, v) for v in values)
            if fn.cls is not None:
                for attr, values in fn.flags.attrs.items():
                    self.attrs.setdefault(attr, []).extend((q, fn.cls, v) for v in values)
        self._unset: dict[str, bool] = {}
        # attributes some test spells (`if self.attr`): only their bindings matter
        self.tested = {
            s[2:]
            for fn in graph.funcs.values()
            for e in fn.events
            for s in map(_bare, e.when)
            if s.startswith("a:")
        }
        self._relevant: dict[str, Context] = {}
        # the flag setters whose every caller was asked: their names are tokens,
        # so that a run parses every file calling one (Rule.more_tokens)
        self.asked: set[str] = set()

    # -- the walk's questions ------------------------------------------------------
    def skips(self, q: str, event: Event, ctx: Context = EMPTY) -> bool:
        """The event sits under an `if` test false before publish (in this call of `q`)."""
        return any(self.falsy(q, s, ctx) for s in event.when)

    def takes(self, q: str, event: Event, ctx: Context = EMPTY) -> bool:
        """The event runs in this call of `q`: it sits only under `if` tests
        (GUARD) and every conjunct of them is true there."""
        return GUARD in event.when and all(s == GUARD or self.truthy(q, s, ctx) for s in event.when)

    def handed(self, q: str, event: Event, ctx: Context, target: str) -> Context:
        """What the call `event` of `q` (in the context `ctx`) hands the
        parameters of `target` that matter there (see Context)."""
        callee = self.graph.funcs.get(target)
        relevant = self.relevant(target)
        if callee is None or not relevant:
            return EMPTY
        values = binding(event, callee, self.graph.funcs.get(q), ctx, relevant)
        out: set[str] = set()
        for p in relevant:
            v = values.get(p)
            if v == ABSENT:
                out.add(ABSENT + p)
            elif v is not None and self.falsy(q, v, ctx):
                out.add(p)
            elif v is not None and self.truthy(q, v, ctx):
                out.add(TRUTHY + p)
        return frozenset(out)

    def relevant(self, q: str) -> Context:
        """The parameters of `q` whose value a test of `q` (or of a callee it
        hands them to) asks: the only ones a call's context keeps, so that a
        function is walked again only for a context that can change its answer."""
        if q in self._relevant:
            return self._relevant[q]
        self._relevant[q] = EMPTY  # a recursion hands nothing on (fewer steps skipped)
        fn = self.graph.funcs.get(q)
        if fn is None or fn.flags is None:
            return EMPTY
        matter = {s[2:] for e in fn.events for s in map(_bare, e.when) if s.startswith("n:")}
        for attr, values in fn.flags.attrs.items():
            if attr in self.tested:
                matter.update(v[2:] for v in values if v.startswith("n:"))
        stars = star_params(fn)
        handed_on: set[str] = set()  # names the function's `*`/`**` parameter hands on
        for e, targets in zip(fn.events, self.graph.edges[q], strict=True):
            for t in targets if e.args else ():
                callee, wanted = self.graph.funcs[t], self.relevant(t)
                values = binding(e, callee, fn, None, wanted) if wanted else {}
                for v in values.values():
                    if v.startswith("n:"):
                        matter.add(v[2:])
                    elif v.startswith(FORWARD):
                        handed_on.add(v[1:])
                if values and "*" in stars and f"*n:{stars['*']}" in e.args:
                    handed_on.add("*")  # its `*args` handed on: empty or not, it matters
        if "*" not in stars:
            handed_on.discard("*")
        if "**" not in stars:
            handed_on = handed_on & {"*"}
        todo = list(matter)
        while todo:  # a local the test reads, bound to another name of `q`
            for v in fn.flags.names.get(todo.pop(), ()):
                if v.startswith("n:") and v[2:] not in matter:
                    matter.add(v[2:])
                    todo.append(v[2:])
        found = frozenset(p for p in fn.params if p in matter) | handed_on
        self._relevant[q] = found
        return found

    # -- values ----------------------------------------------------------------------
    def falsy(self, q: str, value: str, ctx: Context, seen: frozenset[str] = EMPTY) -> bool:
        return self._is(False, q, value, ctx, seen)

    def truthy(self, q: str, value: str, ctx: Context, seen: frozenset[str] = EMPTY) -> bool:
        """`value` is true in this call of `q`: a truthy literal, the negation of a
        value false before publish, or a name every binding of which is true."""
        return self._is(True, q, value, ctx, seen)

    def _is(self, true: bool, q: str, value: str, ctx: Context, seen: frozenset[str]) -> bool:
        """`value` is `true` (truthy) or not (falsy) in this call of `q`: its literal,
        the other answer of what it negates, an unset module flag (falsy only), a
        name every binding of which is (a handed one as the call hands it), an
        attribute every assignment of which is."""
        if value == (TRUTHY if true else FALSY):
            return True
        if value.startswith(NOT):
            return self._is(not true, q, value[1:], ctx, seen)
        if not true and value.startswith("g:"):
            return self.unset(value[2:])
        fn = self.graph.funcs.get(q)
        if fn is None or fn.flags is None or value in seen:
            return False
        seen = seen | {value}
        if value.startswith("n:"):
            name = value[2:]
            values = fn.flags.names.get(name, ())
            handed = (TRUTHY + name if true else name) in ctx
            return bool(values) and all(
                handed if v == HANDED else self._is(true, q, v, ctx, seen) for v in values
            )
        if value.startswith("a:"):
            found = self._attr(fn, value[2:])
            return bool(found) and all(
                self._is(true, f, v, ctx if f == q else EMPTY, seen) for f, v in found
            )
        return False

    def unset(self, flag: str) -> bool:
        """A module-level flag falsy until a bag read has run (see the module doc)."""
        if flag not in self._unset:
            self._unset[flag] = False  # a cycle of flags proves nothing
            self._unset[flag] = flag in self.graph.falsy and all(
                self._settles(q, v, EMPTY) for q, v in self.writes.get(flag, ())
            )
        return self._unset[flag]

    def _settles(self, q: str, value: str, seen: frozenset[str]) -> bool:
        """`value`, assigned in `q`, is falsy, or exists only once a bag read has run."""
        if value == FALSY:
            return True
        if value.startswith("g:"):
            return self.unset(value[2:])
        if value.startswith("!"):
            accessor, _, member = value[1:].partition(":")
            read = Event(EventKind.READ, accessor=accessor, member=member or None)
            return self.reads is not None and self.reads(read)
        fn = self.graph.funcs.get(q)
        if not value.startswith("n:") or fn is None or fn.flags is None or value in seen:
            return False
        name, seen = value[2:], seen | {value}
        values = fn.flags.names.get(name, ())
        return bool(values) and all(
            self._handed_settles(q, name) if v == HANDED else self._settles(q, v, seen)
            for v in values
        )

    def _handed_settles(self, q: str, name: str) -> bool:
        """Every call into `q` the graph knows hands parameter `name` a value that
        settles (a falsy default counts where a call leaves it out)."""
        g = self.graph
        fn = g.funcs[q]
        short = (
            (fn.cls or q).rpartition(".")[2] if q.endswith(".__init__") else q.rpartition(".")[2]
        )
        if len(short) < MIN_TOKEN:
            return False  # a short name is in every other file: its callers are not all parsed
        self.asked.add(short)
        calls = [
            (c, e)
            for c in sorted(g.callers.get(q, ()))
            for e, ts in zip(g.funcs[c].events, g.edges[c], strict=True)
            if q in ts
        ]
        if not calls:
            return False
        for c, event in calls:
            value = dict(bound(event, fn)).get(name)
            if value is None or not self._settles(c, value, EMPTY):
                return False
        return True

    # -- arguments and attributes ------------------------------------------------------
    def _attr(self, fn: Func, attr: str) -> list[tuple[str, str]]:
        """Every `self.attr = value` of `fn`'s class, its bases and subclasses."""
        assert fn.cls is not None
        index = self.graph.index
        related = {*self.graph.mro(fn.cls), *index.subclasses(fn.cls)}
        return [(f, v) for f, cls, v in self.attrs.get(attr, ()) if cls in related]


def _bare(spelled: str) -> str:
    return spelled.lstrip(NOT)
