"""The binding model (program.bindings) and the one annotation unwrapper
(facts.annotations), asked during the walk as rule visitors ask them."""

from __future__ import annotations

from typing import Any

import libcst as cst
import pytest
from modelcase import Probe, walk_file

from ctxlint.facts.annotations import unwrap
from ctxlint.program.bindings import Bindings, Receiver


def _code(exprs: list[cst.BaseExpression]) -> list[str]:
    return [cst.Module([]).code_for_node(e) for e in exprs]


@pytest.mark.parametrize(
    ("annotation", "instances", "factories", "registries"),
    [
        ("X", ["X"], [], []),
        ("a.X", ["a.X"], [], []),
        ("Optional[X]", ["X"], [], []),
        ("typing.Optional[X]", ["X"], [], []),
        ("X | None", ["X"], [], []),
        ("None | X", ["X"], [], []),
        ("Union[X, Y]", ["X", "Y"], [], []),
        ("X | Y", ["X", "Y"], [], []),
        ("'X | None'", ["X"], [], []),
        ('"Optional[X]"', ["X"], [], []),
        ("Annotated[X, 'meta']", ["X"], [], []),
        ("Final[X]", ["X"], [], []),
        ("ClassVar[Optional[X]]", ["X"], [], []),
        ("type[X]", [], ["X"], []),
        ("Type[X] | None", [], ["X"], []),
        ("dict[str, type[X]]", [], [], ["X"]),
        ("Dict[str, X]", [], [], []),  # a container of instances names no receiver type
        ("list[X]", [], [], []),
        ("None", [], [], []),
        ("'not python ('", [], [], []),
    ],
)
def test_unwrap(
    annotation: str, instances: list[str], factories: list[str], registries: list[str]
) -> None:
    named = unwrap(cst.parse_expression(annotation))
    assert _code(named.instances) == instances
    assert _code(named.factories) == factories
    assert _code(named.registries) == registries


def probe(source: str, ask: Any = None) -> list[Any]:
    """What the bindings part answers at each `probe(x)` of the source."""
    cls = type("P", (Probe,), {"ask": staticmethod(ask)} if ask else {})
    ctx, _ = walk_file("app/m.py", source, [("probe", cls)])
    return ctx.parts["probe"].seen


def kinds(source: str) -> list[tuple[str, tuple[str, ...]]]:
    return [
        (r.kind, r.binding.instances if r.binding else (r.cls or r.name or r.via,))
        for r in probe(source)
    ]


def test_parameters_locals_and_globals() -> None:
    found = kinds(
        """
        from app.base import Algo, Loader
        import app.other as other

        current: Loader = Loader()
        plain = 3


        def f(a: Algo, b: "Algo | None", c, *, d: type[Algo]) -> None:
            probe(a)
            probe(b)
            probe(c)
            e = Loader()
            probe(e)
            g = a
            probe(g)
            probe(current)
            probe(plain)
            probe(other)
            probe(Loader)
            probe(a.child)
        """
    )
    assert found == [
        ("local", ("app.base.Algo",)),
        ("local", ("app.base.Algo",)),
        ("local", ()),
        ("local", ("app.base.Loader",)),
        ("local", ("app.base.Algo",)),  # a copy of a typed name
        ("global", ("app.base.Loader",)),
        ("global", ()),
        ("name", ("app.other",)),  # an import: resolved by name
        ("name", ("app.base.Loader",)),
        ("other", ("app.base.Algo",)),  # an attribute of a local: its class is not told
    ]


def test_a_binding_holds_from_its_statement_on_and_the_value_first() -> None:
    found = kinds(
        """
        from app.base import Algo, Loader


        def f(x: Algo) -> None:
            probe(x)
            x = Loader(probe(x))
            probe(x)
            for x in range(3):
                probe(x)
        """
    )
    assert found == [
        ("local", ("app.base.Algo",)),
        ("local", ("app.base.Algo",)),  # the value is evaluated before the target binds
        ("local", ("app.base.Loader",)),
        ("local", ()),  # rebound by the loop: untyped
    ]


def test_scopes_closures_classes_and_global_declarations() -> None:
    found = kinds(
        """
        from app.base import Algo

        thing: Algo = Algo()


        class K:
            thing = 3  # a class attribute: methods do not see it

            def m(self) -> None:
                probe(thing)

                def inner() -> None:
                    probe(thing)

                inner()


        def g() -> None:
            global thing
            thing = 1
            probe(thing)
        """
    )
    assert found == [
        ("global", ("app.base.Algo",)),
        ("global", ("app.base.Algo",)),
        ("global", ()),  # `global thing` made the assignment rebind the module's name
    ]


def test_receivers_self_super_and_self_attributes() -> None:
    found: list[Receiver] = probe(
        """
        class K(Base):
            def m(self) -> None:
                probe(self)
                probe(super())
                probe(self.algo)

                def closure() -> None:
                    probe(self)

            @classmethod
            def make(cls) -> None:
                probe(cls)

            @staticmethod
            def s(x) -> None:
                probe(x)
        """
    )
    assert [(r.kind, r.cls, r.flavor) for r in found] == [
        ("self", "app.m.K", "inst"),
        ("super", "app.m.K", "inst"),
        ("selfattr", "app.m.K", "inst"),
        ("self", "app.m.K", "inst"),  # a closure sees the method's self
        ("self", "app.m.K", "class"),
        ("local", None, "inst"),  # a static method has no self
    ]
    assert found[2].attr == "algo"


def test_value_types_of_factories_registries_and_dynamic_classes() -> None:
    def ask(model: Bindings, expr: cst.BaseExpression) -> tuple[list[str], list[str]]:
        return model.value_types(expr)

    found = probe(
        """
        from app.base import Algo, Platform, make

        REGISTRY: dict[str, type[Algo]] = {}


        def f(spec: type[Algo], name: str) -> None:
            probe(spec())
            probe(REGISTRY[name]())
            probe(REGISTRY.get(name)())
            probe(make())
            probe(type("Oot", (Platform,), {})())
            probe(spec)
            probe(name)
            probe(unknown)
        """,
        ask,
    )
    assert found == [
        (["app.base.Algo"], []),
        (["app.base.Algo"], []),
        (["app.base.Algo"], []),
        (["app.base.make"], []),  # a callee: the class index knows what it returns
        (["app.base.Platform"], []),
        ([], ["app.base.Algo"]),
        (["app.m.str"], []),  # names resolve as the file's import table says
        ([], []),
    ]


def test_watchers_are_told_every_binding_site_of_their_names() -> None:
    from ctxlint.facts.visitor import FileVisitor

    class Watch(FileVisitor):
        def __init__(self, ctx: Any) -> None:
            super().__init__(ctx)
            self.sites: list[tuple[str, str, str, str | None]] = []
            ctx.parts["bindings"].watch({"x"}, self.told)

        def told(self, site: Any) -> None:
            self.sites.append((site.kind, site.scope, site.scope_kind, site.target))

    ctx, _ = walk_file(
        "app/m.py",
        """
        import app.x as x
        from .other import x
        x = 1
        x: int = 2
        x += 1


        class x:
            x = 1

            def x(self, x) -> None:
                self.x = x
                y = 1
                f = lambda x: x
                [1 for x in ()]


        def g() -> None:
            global x
            x = 1
            for x in ():
                pass
            with open("f") as x:
                pass
            try:
                pass
            except E as x:
                pass
            if (x := 1):
                pass

            def x() -> None:
                pass
        """,
        [("watch", Watch)],
    )
    assert ctx.parts["watch"].sites == [
        ("import", "<module>", "module", "app.x"),
        ("import", "<module>", "module", "app.other.x"),
        ("assignment", "<module>", "module", None),
        ("annotated assignment", "<module>", "module", None),
        ("augmented assignment", "<module>", "module", None),
        ("class", "<module>", "module", None),
        ("assignment", "x", "class", None),  # a class attribute
        ("parameter", "x.x", "function", None),  # (a method is no name binding)
        ("assignment to an attribute", "x.x", "attribute", None),
        ("lambda parameter", "x.x.<lambda>", "function", None),
        ("comprehension target", "x.x.<comprehension>", "comprehension", None),
        ("assignment", "<module>", "module", None),  # `global x`
        ("for target", "<module>", "module", None),
        ("with target", "<module>", "module", None),
        ("except target", "<module>", "module", None),
        ("walrus", "<module>", "module", None),
        ("nested def", "<module>", "module", None),  # `global x` too
    ]


class Holding(Probe):
    """A question asked of the model: which names hold a `pool()` call (or such
    a name), and which `self` attributes were parked with one; at each
    `probe(x)`, what `x` holds in its scope (`here`) and as records look it up."""

    def __init__(self, ctx: Any) -> None:
        super().__init__(ctx)
        model = ctx.parts["bindings"]
        self.kinds: list[str] = []
        self.pools = model.track(self.holds, self.parks)

    def _pool(self, expr: Any) -> bool:
        from ctxlint.facts.context import dotted

        if isinstance(expr, cst.Call):
            return dotted(expr.func) == "pool"
        return isinstance(expr, cst.Name) and bool(self.pools.here(expr.value))

    def holds(self, bound: Any, before: Any) -> bool:
        self.kinds.append(bound.kind)
        return bound.value is not None and bound.kind != "with target" and self._pool(bound.value)

    def parks(self, bound: Any, before: Any) -> bool | None:
        return True if bound.value is not None and self._pool(bound.value) else before

    def visit_Call(self, node: Any) -> None:
        from ctxlint.facts.context import dotted

        if dotted(node.func) == "probe" and node.args:
            name = node.args[0].value.value
            self.seen.append((self.pools.here(name), self.pools.lookup(name)))


def test_tracked_values_follow_every_binding_at_one_time() -> None:
    ctx, _ = walk_file(
        "app/m.py",
        """
        p = pool()
        q = p


        def f(p):
            probe(p)  # the parameter shadows the module's p
            probe(q)  # the module's q: f never binds it
            p = p  # after the value: still the parameter's (not a pool)
            probe(p)
            p = pool()
            p = probe(p) or p  # the value is read before the name is bound again
            probe(p)
            a, p = pool(), pool()  # a target that unpacks: nothing known
            probe(p)
            with pool() as p:  # what __enter__ returns: not the pool
                probe(p)
            for p in ():
                probe(p)
            global q
            q = 1


        def g():
            probe(q)  # the module's q was bound again inside f
            probe(p)  # g binds p below: not the module's (Python's local rule)
            p = 1


        class C:
            def m(self):
                self.w = pool()
                self.x = 1
        """,
        [("probe", Holding)],
    )
    visitor = ctx.parts["probe"]
    assert visitor.seen == [
        (False, False),
        (None, True),
        (False, False),
        (True, True),  # inside `p = probe(p) or p`
        (False, False),
        (False, False),
        (False, False),
        (False, False),
        (None, False),
        (None, None),
    ]
    assert visitor.kinds == [
        "assignment",  # p
        "assignment",  # q
        "def",
        "parameter",
        "assignment",
        "assignment",
        "assignment",
        "assignment",  # a
        "assignment",  # p
        "with target",
        "for target",
        "assignment",  # global q
        "def",
        "assignment",  # g's p
        "class",
        "parameter",  # self (a method is no name binding)
    ]
    assert visitor.pools.attrs == {"C": {"w": True}}
    assert visitor.pools.names["<module>"] == {
        "p": True,
        "q": False,
        "f": False,
        "g": False,
        "C": False,
    }


_LOCALS_CASE = """
def outer(a, /, b=1, *args, c, **kw):
    x = 1
    y: int = 2
    z += 1
    (p, [q, *r]) = s
    for i, j in pairs:
        pass
    with open(f) as (fh, other), lock:
        pass
    try:
        pass
    except E as err:
        pass
    if (w := f()):
        pass
    import os.path, json as js
    from m import n, o as oo
    del gone
    global g
    nonlocal nl
    [t for t in xs if (u := t)]
    lambda lam: (lam_inner := 1)

    def inner(hidden=(dflt := 1)):
        never = 1

    @deco(dec := 2)
    class K:
        attr = 1
"""


def test_function_locals_reads_the_tree_as_libcsts_visit_did_without_it(monkeypatch) -> None:
    """The names a function binds (program.function_locals), read by the facts
    walk's reading of the tree, are LibCST's visit's over every def of this
    repository's code; and LibCST's visit (which rebuilds each node) is not
    called."""
    from pathlib import Path

    from ctxlint.program.function_locals import LocalNames, function_locals

    def seen(node: cst.CSTNode) -> tuple[set[str], set[str], set[str]]:
        by_visit = LocalNames()
        node.visit(by_visit)
        return by_visit.bound, by_visit.globals, by_visit.module_globals

    class Defs(cst.CSTVisitor):
        def __init__(self) -> None:
            self.found: list[cst.FunctionDef] = []

        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            self.found.append(node)

    root = Path(__file__).resolve().parents[2] / "src" / "ctxlint" / "program"
    defs = Defs()
    cst.parse_module(_LOCALS_CASE).visit(defs)
    for path in sorted(root.glob("b*.py")) + sorted(root.glob("f*.py")):
        cst.parse_module(path.read_text()).visit(defs)
    assert len(defs.found) > 100
    expected = [seen(node) for node in defs.found]
    case = expected[0]
    assert {"a", "b", "args", "c", "kw", "x", "y", "z", "p", "q", "r", "i", "j"} <= case[0]
    assert {"fh", "other", "err", "w", "os", "js", "n", "oo", "gone", "u", "inner", "K"} <= case[0]
    assert not {"t", "lam", "lam_inner", "never", "attr"} & case[0]
    assert case[1:] == ({"g", "nl"}, {"g"})

    def no_visit(self, visitor):  # type: ignore[no-untyped-def]
        raise AssertionError("LibCST's visit")

    monkeypatch.setattr(cst.CSTNode, "visit", no_visit)
    for node, want in zip(defs.found, expected, strict=True):
        got = function_locals(node)
        assert (got.bound, got.globals, got.module_globals) == want, node.name.value
