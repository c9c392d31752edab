"""The class index (program.classes): facts per file, resolution through
re-exports, Python's C3 MRO, method lookup, subclasses, instances, attribute
types; and the rules' class questions answered by it."""

from __future__ import annotations

from pathlib import Path

from helpers import run_engine, write
from modelcase import program_of, walk_file
from rulecase import assert_case

from ctxlint.program.classes import ClassIndex, c3_merge, class_index

DIAMOND = {
    "pkg/__init__.py": "from pkg.base import A\n",
    "pkg/base.py": """
        class A:
            def hook(self, x): ...

            def where(self) -> str: ...


        class B(A):
            pass


        class C(A):
            def where(self) -> str: ...
        """,
    "pkg/leaf.py": """
        from pkg.base import B, C


        class D(B, C):
            pass
        """,
}


def test_c3_mro_differs_from_the_left_first_walk_in_a_diamond() -> None:
    index = ClassIndex(program_of(DIAMOND))
    # Python: D, B, C, A (the left-first walk gave D, B, A, C)
    assert index.mro("pkg.leaf.D") == ("pkg.leaf.D", "pkg.base.B", "pkg.base.C", "pkg.base.A")
    # so `D().where` is C's, not A's
    assert index.definer("pkg.leaf.D", "where") == "pkg.base.C"
    assert index.definer("pkg.leaf.D", "hook") == "pkg.base.A"
    assert index.definer("pkg.leaf.D", "where", skip_self=True) == "pkg.base.C"
    assert index.definer("pkg.base.C", "where", skip_self=True) == "pkg.base.A"
    assert index.definer("pkg.base.B", "nothing") is None


def test_c3_merge_is_pythons() -> None:
    # the textbook example (Python's documentation of its MRO)
    o = ["O"]
    f, e, d = ["F", *o], ["E", *o], ["D", *o]
    c = ["C", *c3_merge([d, f, ["D", "F"]])]  # type: ignore[misc]
    b = ["B", *c3_merge([d, e, ["D", "E"]])]  # type: ignore[misc]
    a = ["A", *c3_merge([b, c, ["B", "C"]])]  # type: ignore[misc]
    assert a == ["A", "B", "C", "D", "E", "F", "O"]
    assert c3_merge([["X", "Y"], ["Y", "X"]]) is None  # Python raises TypeError


def test_an_inconsistent_order_falls_back_to_the_left_first_walk() -> None:
    index = ClassIndex(
        program_of(
            {
                "m.py": """
                    class X: ...
                    class Y(X): ...
                    class Z(X, Y): ...
                    """
            }
        )
    )
    assert index.mro("m.Z") == ("m.Z", "m.X", "m.Y")


def test_a_cycle_ends() -> None:
    index = ClassIndex(program_of({"m.py": "class P(Q): ...\nclass Q(P): ...\n"}))
    assert index.mro("m.P") == ("m.P", "m.Q")


def test_resolution_through_reexports_and_its_limits() -> None:
    index = ClassIndex(
        program_of(
            {
                **DIAMOND,
                "api/__init__.py": "from pkg import A as Alias\nfrom api.loop import loop\n",
                "api/loop.py": "from api import loop\n",
            }
        )
    )
    assert index.resolve("pkg.A") == "pkg.base.A"  # pkg/__init__ re-exports it
    assert index.resolve("api.Alias") == "pkg.base.A"  # two hops, renamed
    assert index.resolve("pkg.base.A") == "pkg.base.A"
    assert index.resolve("pkg.Nope") is None  # pkg imports no Nope
    assert index.resolve("api.loop.loop") is None  # a cycle of re-exports ends
    assert index.resolve("torch.Tensor") is None  # never parsed


def test_methods_have_signatures_decorators_and_abstractness() -> None:
    index = ClassIndex(
        program_of(
            {
                "m.py": """
                    import abc


                    class Base(abc.ABC, metaclass=abc.ABCMeta):
                        @abc.abstractmethod
                        def build(self, a, /, b=1, *rest, key, flag=False, **kw) -> None: ...

                        def todo(self) -> None:
                            "Not yet."
                            raise NotImplementedError

                        @staticmethod
                        def make() -> "Base": ...

                        @property
                        def size(self) -> int:
                            return 1
                    """
            }
        )
    )
    cls = index.classes["m.Base"]
    assert cls.bases == ["abc.ABC"]
    assert "abc.ABCMeta" not in cls.bases  # a metaclass is no base
    build = cls.methods["build"]
    assert build.params == [
        ["self", "po", None],
        ["a", "po", None],
        ["b", "pk", "1"],
        ["rest", "va", None],
        ["key", "ko", None],
        ["flag", "ko", "False"],
        ["kw", "vk", None],
    ]
    assert (build.flavor, build.abstract, build.decorators) == (
        "inst",
        "decorator",
        ["abstractmethod"],
    )
    assert cls.methods["todo"].abstract == "raise"
    assert cls.methods["make"].flavor == "static"
    assert cls.methods["make"].returns == ["m.Base"]
    assert build.span[0] == 7  # anchored at the name
    assert index.where["m.Base"] == ("m.py", "Base")


def test_lookup_answers_yes_maybe_no() -> None:
    index = ClassIndex(
        program_of(
            {
                "m.py": """
                    import torch
                    from m2 import Local


                    class Own:
                        def get(self): ...


                    class Lib(torch.nn.Module):
                        pass


                    class Meta(metaclass=torch.Meta):
                        pass


                    class Mine(Local):
                        pass
                    """,
                "m2.py": "class Local: ...\n",
            }
        )
    )
    assert index.defines("m.Own", "get") == "yes"
    assert index.defines("m.Own", "put") == "no"
    assert index.defines("m.Lib", "put") == "maybe"  # torch's Module may define it
    assert index.defines("m.Meta", "put") == "no"  # a metaclass's methods are the class's
    assert index.defines("m.Mine", "put") == "no"  # every ancestor is in the tree


def test_subclasses_are_transitive_and_in_index_order() -> None:
    index = ClassIndex(program_of(DIAMOND))
    assert index.subclasses("pkg.base.A") == ["pkg.base.B", "pkg.base.C", "pkg.leaf.D"]
    assert index.subclasses("pkg.base.C") == ["pkg.leaf.D"]
    assert index.subclasses("pkg.leaf.D") == []


def test_instances_of_classes_factories_and_module_globals() -> None:
    index = ClassIndex(
        program_of(
            {
                **DIAMOND,
                "m.py": """
                    from pkg import A
                    from pkg.base import B


                    def make() -> "B | None":
                        return None


                    class Factory:
                        @classmethod
                        def build(cls) -> A: ...


                    class Sub(Factory):
                        pass


                    current = B()
                    typed: A = make()
                    lower = make()
                    gone = B()
                    gone = 1
                    """,
            }
        )
    )
    assert index.instances("pkg.A") == ["pkg.base.A"]  # a class, through a re-export
    assert index.instances("m.make") == ["pkg.base.B"]  # a function's return annotation
    assert index.instances("m.Sub.build") == ["pkg.base.A"]  # an inherited classmethod's
    assert index.instances("m.nothing") == []
    assert index.instance("m.current") == "pkg.base.B"
    assert index.instance("m.typed") == "pkg.A"  # as annotated
    assert index.instance("m.lower") is None  # only a construction makes an instance
    assert index.instance("m.gone") is None  # rebound


def test_attribute_types_come_from_annotations_constructions_and_properties() -> None:
    index = ClassIndex(
        program_of(
            {
                "m.py": """
                    from pkg.base import A, B


                    class Holder:
                        declared: "A | None"

                        def __init__(self, given: B, other) -> None:
                            self.built = B()
                            self.given = given
                            self.other = other
                            self.noted: A = other

                        @property
                        def prop(self) -> A: ...


                    class Child(Holder):
                        def __init__(self) -> None:
                            self.built = A()
                    """
            }
        )
    )
    attrs = index.classes["m.Holder"].attrs
    assert attrs == {
        "declared": ["pkg.base.A"],
        "built": ["pkg.base.B"],
        "given": ["pkg.base.B"],
        "noted": ["pkg.base.A"],
        "prop": ["pkg.base.A"],
    }
    assert index.attr_types("m.Child", "built") == ["pkg.base.A"]  # the nearest class's
    assert index.attr_types("m.Child", "given") == ["pkg.base.B"]  # inherited
    assert index.attr_types("m.Child", "other") == []


def test_exports_are_the_module_import_table() -> None:
    _, facts = walk_file("pkg/__init__.py", "from .base import A\nimport os.path\n")
    assert facts["classes"] == {"exports": {"A": "pkg.base.A", "os": "os"}}


def test_the_index_is_built_once_per_file_set(project: Path) -> None:
    program = program_of(DIAMOND)
    first = class_index(program)
    assert class_index(program) is first
    program.files["x.py"] = {"module": "x", "facts": {}}  # a later prefilter round
    assert class_index(program) is not first


# -- the rules on the index ----------------------------------------------------------
def test_ctx501_dispatch_follows_c3(project: Path) -> None:
    """D(B, C) with C overriding A's hook: `d.hook(...)` binds C's override (the
    left-first walk found A's abstract hook first and checked the call against it)."""
    write(
        project,
        {
            "app/base.py": (
                "import abc\n\n\n"
                "class A(abc.ABC):\n"
                "    @abc.abstractmethod\n"
                "    def hook(self, x) -> None: ...\n\n\n"
                "class B(A):\n"
                "    pass\n\n\n"
                "class C(A):\n"
                "    def hook(self, x, y) -> None: ...\n\n\n"
                "class D(B, C):\n"
                "    pass\n\n\n"
                "def run(d: D) -> None:\n"
                "    d.hook(1)\n\n\n"
                "def use(a: A) -> None:  # the dispatch through A: its hook is an interface\n"
                "    a.hook(1)\n"
            )
        },
    )
    out = run_engine(project, select={"CTX501"})
    found = [(f.line, f.message) for f in out.findings]
    # C.hook(x, y) needs y: the call of the override on a D raises TypeError
    assert len(found) == 2, found
    assert found[0][0] == 14 and "requires `y`, which the base does not pass" in found[0][1]
    assert found[1][0] == 22 and "call of A hook override `C.hook`" in found[1][1]


def test_ctx301_call_graph_methods_follow_c3(project: Path) -> None:
    """`d.plan()` on a D(B, C) runs C's override, which reads a bag before
    the publish (the left-first walk resolved it to A's, which reads nothing)."""
    assert_case(
        project,
        "CTX301",
        """
        from specrt.context import get_memory, publish

        class A:
            def plan(self):
                return 0

        class B(A):
            pass

        class C(A):
            def plan(self):
                return get_memory().mem_fraction_static

        class D(B, C):
            pass

        def run(sa):
            d = D()
            d.plan()  # expect
            publish(sa, role="scheduler")
        """,
    )


ATTRIBUTES = {
    "pkg/__init__.py": "",
    "pkg/a.py": """
        import abc
        import enum


        class Base(abc.ABC):
            kind = "base"
            limit: int

            class Inner:
                pass

            def __init__(self) -> None:
                self.ready, *self.rest = (True, 1)
                self.count += 1

            @property
            def name(self) -> str:
                return ""


        class Chat(Base):
            def __init__(self) -> None:
                self.is_chat = True


        class Lazy:
            def __getattr__(self, name):
                return None


        class Color(enum.Enum):
            RED = 1


        class Outside(somewhere.Thing):
            pass
        """,
}


def test_has_attribute_counts_every_way_a_class_defines_a_name() -> None:
    index = ClassIndex(program_of(ATTRIBUTES))
    base, chat = "pkg.a.Base", "pkg.a.Chat"
    for name in ("kind", "limit", "Inner", "ready", "rest", "count", "name", "__init__"):
        assert index.has_attribute(base, name) is True, name
    assert index.has_attribute(base, "is_chat") is False  # only the subclass adds it
    assert index.has_attribute(chat, "is_chat") is True
    assert index.has_attribute(chat, "kind") is True  # inherited
    # abc.ABC gives an instance `object`'s dunders and `_abc_impl` (ABCMeta's
    # `register` is the class's, not an instance's): a fixed answer, not the
    # running interpreter's (which depends on what this process imported)
    assert index.has_attribute(base, "__class__") is True
    assert index.has_attribute(base, "_abc_impl") is True
    assert index.has_attribute(base, "register") is False
    assert index.has_attribute("pkg.a.Color", "RED") is True
    # enum.Enum is not told (its constructor sets instance attributes)
    assert index.has_attribute("pkg.a.Color", "__members__") is None
    assert index.has_attribute("pkg.a.Color", "is_chat") is None
    assert index.has_attribute("pkg.a.Lazy", "is_chat") is None  # `__getattr__`: any name
    assert index.has_attribute("pkg.a.Outside", "is_chat") is None  # an unknown ancestor
