"""CTX501 plugin-signature: base derivation (abstract, NotImplementedError,
configured, through re-exports), receivers of each shape, implementations
across modules, and the pins through the real CLI."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from helpers import cli, run_engine, write
from rulecase import assert_case

from ctxlint.program.signatures import (
    CallShape,
    accept_problems,
    call_problems,
    sig_text,
)

RULE = "CTX501"

BASE = {
    "app/plug/base.py": """\
import abc


class Algo(abc.ABC):
    @abc.abstractmethod
    def build(self, server_args, target, *, scoped=False) -> None: ...

    def run(self, tokens) -> list:
        return []
""",
    "app/plug/__init__.py": "from app.plug.base import Algo\n",
}

DISPATCH = {
    "annotated-parameter-through-reexport": """
        from app.plug import Algo

        def f(a: Algo, b: "Algo", c: "Algo | None", d: Algo | None) -> None:
            a.build(1, 2)
            a.build(1)  # expect
            b.build(1, 2, 3)  # expect
            c.build(1, 2, scope=True)  # expect
            d.build(server_args=1, target=2, scoped=True)
            a.run([1], 2)  # not a hook: concrete methods are not checked
        """,
    "self-and-super-in-subclass": """
        from app.plug.base import Algo

        class Mine(Algo):
            def build(self, server_args, target, *, scoped=False) -> None:
                super().build(server_args)  # expect

            def go(self) -> None:
                self.build(1, 2, scoped=True)
                self.build(1, 2, 3)  # expect
        """,
    "constructed-local-and-attribute": """
        from app.plug.base import Algo

        class Mine(Algo):
            def build(self, server_args, target, *, scoped=False) -> None:
                pass

        class Owner:
            algo: Algo

            def __init__(self, other: Algo) -> None:
                self.mine = Mine()
                self.other = other

            def go(self) -> None:
                self.algo.build()  # expect
                self.mine.build(1)  # expect
                self.other.build(1, 2, 3)  # expect

        def f() -> None:
            m = Mine()
            m.build(1, 2, bogus=1)  # expect
            m = object()
            m.build(1)  # rebound: no longer known
        """,
    "registry-and-type-parameter": """
        from typing import Dict, Type
        from app.plug.base import Algo

        REG: Dict[str, Type[Algo]] = {}

        def f(name: str, cls: type[Algo]) -> None:
            REG[name]().build(1)  # a call on a call: not a typed name
            algo = REG[name]()
            algo.build(1)  # expect
            other = REG.get(name)()
            other.build(1, 2, 3)  # expect
            made = cls()
            made.build()  # expect
        """,
    # issue 36 (sglang lang/interpreter.py:608): the call runs only under a test of
    # an attribute the base does not give its instances; a plugin that follows the
    # base raises AttributeError at the guard, never at the call
    "guarded-by-an-attribute-the-base-lacks": """
        from app.plug.base import Algo

        class Owner:
            def __init__(self, algo: Algo) -> None:
                self.algo = algo

            def go(self, a: Algo) -> None:
                if self.algo.is_chat:
                    self.algo.build(1, 2, spec=3)
                    if not a.streaming and self.algo.ready():
                        a.build(1)
                    else:
                        a.build(1, 2, 3)
                if self.algo.run([1]):  # `run` is the base's: a plugin passes the guard
                    self.algo.build(1)  # expect
                if a.is_chat or self.algo.is_chat:  # the right operand may not be read
                    self.algo.build(1)  # expect
                if self.other.is_chat:  # another receiver's attribute
                    self.algo.build(1)  # expect
        """,
    "unpacking-and-kwargs": """
        from app.plug.base import Algo

        def f(a: Algo, args: tuple, kw: dict) -> None:
            a.build(*args)
            a.build(**kw)
            a.build(1, *args, target=2)
            a.build(*args, bogus=1)  # expect
        """,
}


@pytest.mark.parametrize("name", sorted(DISPATCH))
def test_dispatch(project: Path, name: str) -> None:
    assert_case(project, RULE, DISPATCH[name], extra=BASE)


IMPLS = """
    from app.plug import Algo

    class Drops(Algo):
        def build(self, server_args) -> None:  # expect
            pass

    class Renames(Algo):
        def build(self, server_args, target, *, scope=False) -> None:  # expect
            pass

    class ExtraRequired(Algo):
        def build(self, server_args, target, extra, *, scoped=False) -> None:  # expect
            pass

    class RequiredKwonly(Algo):
        def build(self, server_args, target, *, scoped=False, k) -> None:  # expect
            pass

    class Fine(Algo):
        def build(self, server_args, target, extra=None, *, scoped=False, k=1) -> None:
            pass

    class Star(Algo):
        def build(self, *args, **kwargs) -> None:
            pass

    class Deep(Fine):
        def build(self, server_args, *, scoped=False) -> None:  # expect
            pass

    class Static(Algo):
        @staticmethod
        def build(server_args, target, *, scoped=False) -> None:
            pass
    """


USE = {
    "app/use.py": "from app.plug import Algo\n\n\ndef f(a: Algo) -> None:\n    a.build(1, 2, scoped=True)\n"
}


def test_implementations_across_modules(project: Path) -> None:
    assert_case(project, RULE, IMPLS, path="app/impls/all.py", extra={**BASE, **USE})


def test_optional_keyword_nobody_passes_constrains_nothing(project: Path) -> None:
    # the only dispatch passes no `scoped`: renaming it breaks no call
    source = IMPLS.replace(
        "def build(self, server_args, target, *, scope=False) -> None:  # expect",
        "def build(self, server_args, target, *, scope=False) -> None:",
    )
    positional = {"app/use.py": USE["app/use.py"].replace(", scoped=True", "")}
    assert_case(project, RULE, source, path="app/impls/all.py", extra={**BASE, **positional})


def test_a_hook_no_dispatch_calls_through_its_base_is_no_contract(project: Path) -> None:
    """Issue 36: a method that only raises NotImplementedError, never called
    through the base with the base's arguments (a model's `forward`, reached
    through `__call__` with each model's own arguments), pins nothing and
    constrains no implementation."""
    source = IMPLS.replace("  # expect", "")
    assert_case(project, RULE, source, path="app/impls/all.py", extra=BASE)
    sets = run_engine(project, select={RULE}).program.sets[RULE]
    assert sets["plugin bases"] == {
        "app.plug.base.Algo": {"build": "(self, server_args, target, *, scoped=False)"}
    }
    assert sets["dispatch sites"] == []


def test_a_dispatch_that_cannot_reach_an_implementation_does_not_check_it(
    project: Path,
) -> None:
    """The linear-attention backends of issue 36: a dispatch on a receiver typed
    as one subclass (a full-attention wrapper) says nothing of a sibling's hook."""
    write(
        project,
        {
            "app/back.py": """\
class Backend:
    def forward(self, q, k, v):
        raise NotImplementedError


class FullAttention(Backend):
    def forward(self, q, k, v):
        return q


class Linear(Backend):
    def forward(self, layer, batch, mixed_qkv):
        return layer


def full(b: FullAttention, q, k, v):
    return b.forward(q, k=k, v=v)
""",
        },
    )
    found = [f for f in run_engine(project, select={RULE}).findings if f.rule == RULE]
    assert found == []
    # through the base, the same dispatch reaches every implementation
    (project / "app/back.py").write_text(
        (project / "app/back.py").read_text().replace("b: FullAttention", "b: Backend")
    )
    found = [f for f in run_engine(project, select={RULE}).findings if f.rule == RULE]
    assert [(f.path, f.scope) for f in found] == [("app/back.py", "Linear.forward")]


def test_an_override_that_only_raises_declines_the_hook(project: Path) -> None:
    """Issue 36 (0.5.23 `page_interleave_pool.py`, `unified_draft_pool.py`): an
    override whose body is only `raise NotImplementedError(...)` fails every call
    however it is made; its signature is no contract. One that does work first
    is an implementation, checked as any."""
    source = """\
class Pool:
    def load(self, cpu, indices, slot=None):
        raise NotImplementedError


class Dense(Pool):
    def load(self, cpu, indices, slot=None):
        return cpu


class Sparse(Pool):
    def load(self, cpu, indices):
        \"\"\"Not supported.\"\"\"
        raise NotImplementedError("sparse restore is unsupported")


def restore(pool: Pool, cpu, indices) -> None:
    pool.load(cpu, indices, slot=1)


def restore_sparse(pool: Sparse, cpu, indices) -> None:
    pool.load(cpu, indices, slot=1)
"""
    write(project, {"app/pool.py": source})
    found = [f for f in run_engine(project, select={RULE}).findings if f.rule == RULE]
    assert found == []
    logged = source.replace(
        '        raise NotImplementedError("sparse',
        '        print(cpu)\n        raise NotImplementedError("sparse',
    )
    (project / "app/pool.py").write_text(logged)
    found = [f for f in run_engine(project, select={RULE}).findings if f.rule == RULE]
    assert sorted((f.scope, f.span.line) for f in found) == [
        ("Sparse.load", 12),
        ("restore_sparse", 23),
    ]


def test_a_parameter_the_base_makes_optional_is_checked_at_the_dispatches(
    project: Path,
) -> None:
    """Issue 36 (HiCacheFile.get, AibrixKVCacheStorage.batch_get): an override
    requiring what the base defaults breaks only a dispatch that omits it; while
    every dispatch passes it, there is nothing to report."""
    base = """\
class Storage:
    def get(self, key, target=None):
        raise NotImplementedError

    def batch_get(self, keys, *, targets=None):
        raise NotImplementedError
"""
    impl = """\
from app.s import Storage


class File(Storage):
    def get(self, key, target):
        return target

    def batch_get(self, keys, *, targets):
        return targets
"""
    use = """\
from app.s import Storage


def load(s: Storage, key, target, keys) -> None:
    s.get(key, target)
    s.get(key, target=target)
    s.batch_get(keys, targets=[target])
"""
    write(project, {"app/s.py": base, "app/file.py": impl, "app/use.py": use})
    assert [f for f in run_engine(project, select={RULE}).findings if f.rule == RULE] == []
    write(project, {"app/use.py": use + "    s.get(key)\n    s.batch_get(keys)\n"})
    found = sorted(
        (f.scope, f.message, f.details)
        for f in run_engine(project, select={RULE}).findings
        if f.rule == RULE
    )
    assert [scope for scope, *_ in found] == ["File.batch_get", "File.get"]
    # the message says what; the details say where the dispatch is
    assert "(missing required keyword `targets`)" in found[0][1]
    assert "missing required keyword `targets` at the dispatch app/use.py:9" in found[0][2]
    assert "(missing required `target`)" in found[1][1]
    assert "missing required `target` at the dispatch app/use.py:8" in found[1][2]


def test_a_hook_declared_without_self_is_no_interface(project: Path) -> None:
    """Issue 36 (`EagleDraftWorkerBase.draft()`): an abstract placeholder with no
    `self` cannot be called on an instance at all; it pins no signature."""
    write(
        project,
        {
            "app/w.py": """\
import abc


class DraftBase(abc.ABC):
    @abc.abstractmethod
    def draft():
        pass

    @abc.abstractmethod
    def verify(self, batch):
        pass


class Draft(DraftBase):
    def draft(self, batch):
        return batch

    def verify(self, batch):
        return batch


def run(w: DraftBase, batch) -> None:
    w.draft(batch)
    w.verify(batch, 1)
""",
        },
    )
    out = run_engine(project, select={RULE})
    assert [(f.line, f.rule) for f in out.findings] == [(24, RULE)]  # verify's extra argument
    assert out.program.sets[RULE]["plugin bases"] == {
        "app.w.DraftBase": {"verify": "(self, batch)"}
    }


def test_base_catch_all_declares_no_contract(project: Path) -> None:
    base = """\
class Method:
    def apply(self, layer, *args, **kwargs):
        raise NotImplementedError
"""
    assert_case(
        project,
        RULE,
        """
        from app.m import Method

        class Linear(Method):
            def apply(self, layer, x, bias=None):
                return x

        class Moe(Method):
            def apply(self, layer, dispatch_output):
                return dispatch_output

        class Broken(Method):
            def apply(self):  # expect
                return None

        class Keyworded(Method):
            def apply(self, layer, metadata, **kwargs):  # the base's **kwargs may carry it
                return None

        def run(m: Method, layer, x) -> None:
            m.apply(layer, x, 1, bias=None, extra=2)
        """,
        extra={"app/m.py": base},
    )


def test_implementation_must_take_what_dispatch_passes(project: Path) -> None:
    base = """\
class Sampler:
    def sample(self, logits, temperature=1.0):
        raise NotImplementedError
"""
    assert_case(
        project,
        RULE,
        """
        from app.s import Sampler

        class A(Sampler):
            def sample(self, logits, temp=1.0):  # expect
                return 0

        class B(Sampler):
            def sample(self, logits, temperature=1.0):
                return 0

        def use(s: Sampler) -> None:
            s.sample([1], temperature=0.5)
        """,
        extra={"app/s.py": base},
    )


def test_derived_sets(project: Path) -> None:
    write(project, {**BASE, "app/impl.py": textwrap.dedent(IMPLS)})
    write(
        project,
        {
            "app/use.py": "from app.plug import Algo\n\n\ndef f(a: Algo) -> None:\n"
            "    a.build(1, 2)\n"
        },
    )
    sets = run_engine(project, select={RULE}).program.sets[RULE]
    assert sets["plugin bases"] == {
        "app.plug.base.Algo": {"build": "(self, server_args, target, *, scoped=False)"}
    }
    assert sets["implementations"]["app.impl.Deep"] == ["app.plug.base.Algo"]
    assert len(sets["implementations"]) == 8
    assert sets["dispatch sites"] == ["app/use.py:5 a.build(1, 2) -> app.plug.base.Algo.build"]
    assert sets["configured plugin bases not found"] == []


def test_declining_override_is_not_a_new_hook(project: Path) -> None:
    write(
        project,
        {
            "app/b.py": """\
class B:
    def f(self, x):
        raise NotImplementedError


class C(B):
    def f(self, x):
        raise NotImplementedError("C does not support f")

    def g(self):
        raise NotImplementedError
"""
        },
    )
    sets = run_engine(project, select={RULE}).program.sets[RULE]
    assert sets["plugin bases"] == {"app.b.B": {"f": "(self, x)"}, "app.b.C": {"g": "(self)"}}


def _configure(project: Path, extra: str) -> None:
    cfg = project / "pyproject.toml"
    cfg.write_text(cfg.read_text() + extra)


def test_configured_plugin_base_without_abstract_methods(project: Path) -> None:
    write(
        project,
        {
            "app/reg.py": """\
class CustomSpecAlgo:
    def __init__(self, name):
        self.name = name

    def is_eagle(self) -> bool:
        return False

    def create_worker(self, server_args):
        return None

    def _private(self):
        pass
""",
            "app/use.py": """\
from typing import Union

from app.reg import CustomSpecAlgo


def f(algo: Union[CustomSpecAlgo, int], server_args) -> None:
    algo.create_worker(server_args, True)
    algo.is_eagle()
""",
        },
    )
    assert not run_engine(project, select={RULE}).findings
    _configure(project, 'plugin-bases = ["app.reg.CustomSpecAlgo", "app.nowhere.Gone"]\n')
    out = run_engine(project, select={RULE})
    assert [(f.path, f.line) for f in out.findings] == [("app/use.py", 7)]
    sets = out.program.sets[RULE]
    assert sets["plugin bases"] == {
        "app.reg.CustomSpecAlgo": {
            "create_worker": "(self, server_args)",
            "is_eagle": "(self)",
        }
    }
    assert sets["configured plugin bases not found"] == ["app.nowhere.Gone"]


def test_signature_text() -> None:
    p = [
        ["self", "po", None],
        ["a", "pk", None],
        ["b", "pk", "(1, 2)"],
        ["args", "va", None],
        ["k", "ko", "None"],
        ["kw", "vk", None],
    ]
    assert sig_text(p) == "(self, /, a, b=(1, 2), *args, k=None, **kw)"
    assert sig_text([["self", "pk", None], ["k", "ko", None]]) == "(self, *, k)"


def test_binding_helpers() -> None:
    params = [["a", "po", None], ["b", "pk", "1"], ["c", "ko", None]]
    call = CallShape(npos=1, star=False, kws=("a", "c"), dstar=False)
    assert call_problems(params, call) == ["unknown keyword `a`"]
    call = CallShape(npos=0, star=False, kws=(), dstar=False)
    assert call_problems(params, call) == [
        "missing required `a`",
        "missing required keyword `c`",
    ]
    base = [["x", "pk", None], ["y", "pk", "0"]]
    assert accept_problems([["x", "pk", None], ["y", "pk", None]], base, dispatched=False) == [
        "requires `y`, which the base makes optional"
    ]
    assert accept_problems([["x", "pk", None]], base, dispatched=False) == []
    assert accept_problems([], base, dispatched=False) == [
        "takes 0 positional arguments where the base passes 1"
    ]
    assert accept_problems([], base, dispatched=True) == []
    # once a dispatch is known, what it passes is checked call by call instead
    assert accept_problems([["x", "pk", None], ["y", "pk", None]], base, dispatched=True) == []
    # a base **kwargs may carry an extra parameter by keyword; a *args-less base
    # without it cannot
    kw_base = [["x", "pk", None], ["kw", "vk", None]]
    assert (
        accept_problems([["x", "pk", None], ["meta", "pk", None]], kw_base, dispatched=False) == []
    )
    assert accept_problems([["x", "pk", None], ["meta", "pk", None]], base, dispatched=False) == [
        "requires `meta`, which the base makes optional"
    ]
    assert accept_problems(
        [["x", "pk", None], ["y", "pk", "0"], ["meta", "pk", None]], base, dispatched=False
    ) == ["requires `meta`, which the base does not pass"]


# -- pins through the CLI -------------------------------------------------------------

PLUGIN = """\
import abc


class Algo(abc.ABC):
    @abc.abstractmethod
    def build(self, server_args, target) -> None: ...
"""
# the dispatch that makes Algo's hooks an interface (calls of hooks not yet there,
# or gone, are no dispatch)
PLUGIN_USE = {
    "app/use_plugin.py": "from app.plugin import Algo\n\n\ndef go(a: Algo) -> None:\n"
    "    a.build(server_args=1, target=2)\n    a.make()\n    a.probe()\n"
}


def _check(project: Path) -> tuple[int, list[dict]]:
    r = cli("check", "--strict", "--format", "json", "--no-cache", cwd=project)
    doc = json.loads(r.stdout)
    return r.returncode, [f for f in doc["findings"] if f["rule"] == RULE]


def test_pins_recorded_by_baseline_update_and_changes_fail_until_recorded(
    project: Path,
) -> None:
    write(project, {"app/plugin.py": PLUGIN, **PLUGIN_USE})
    # no CTX501 pins yet: nothing to enforce (see the spec's pin policy)
    rc, found = _check(project)
    assert rc == 0 and found == []

    r = cli("baseline", "update", "--no-cache", cwd=project)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads((project / "ctxlint-baseline.json").read_text())
    assert doc["pins"][RULE] == {"app.plugin.Algo.build": "(self, server_args, target)"}
    assert doc["entries"] == []
    assert _check(project) == (0, [])

    # drop a hook parameter: a finding at the hook until the baseline records it
    (project / "app/plugin.py").write_text(
        PLUGIN.replace("server_args, target", "server_args, *, target=None")
    )
    rc, found = _check(project)
    assert rc == 1
    (f,) = found
    assert f["path"] == "app/plugin.py" and f["line"] == 6
    assert (
        "pinned (self, server_args, target), now (self, server_args, *, target=None)"
        in (f["message"])
    )
    assert "ctxlint baseline update" in f["message"]

    r = cli("baseline", "update", "--no-cache", cwd=project)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads((project / "ctxlint-baseline.json").read_text())
    assert doc["pins"][RULE] == {"app.plugin.Algo.build": "(self, server_args, *, target=None)"}
    assert _check(project) == (0, [])

    # a new hook is not pinned yet; a removed one was pinned and is gone
    (project / "app/plugin.py").write_text(
        PLUGIN.replace("def build(self, server_args, target)", "def make(self)")
    )
    rc, found = _check(project)
    assert rc == 1
    messages = sorted(f["message"] for f in found)
    assert "app.plugin.Algo.build was pinned as" in messages[0]
    assert "app.plugin.Algo.make is not pinned" in messages[1]


def test_a_gone_hook_is_reported_in_its_base_class_file(project: Path) -> None:
    """Not at the first plugin base of the tree (a new user's pin landed in an
    unrelated file, where --changed-since and annotations never look)."""
    other = PLUGIN.replace("class Algo", "class Early").replace("def build", "def early")
    two_hooks = PLUGIN + "\n    @abc.abstractmethod\n    def probe(self) -> None: ...\n"
    write(project, {"app/aaa.py": other, "app/plugin.py": two_hooks, **PLUGIN_USE})
    r = cli("baseline", "update", "--no-cache", cwd=project)
    assert r.returncode == 0, r.stdout + r.stderr
    (project / "app/plugin.py").write_text(
        two_hooks.replace(
            "    @abc.abstractmethod\n    def build(self, server_args, target) -> None: ...\n", ""
        )
    )
    rc, found = _check(project)
    assert rc == 1
    (f,) = found
    assert "app.plugin.Algo.build was pinned as" in f["message"]
    assert f["path"] == "app/plugin.py"


def test_objects_typed_by_return_annotations(project: Path) -> None:
    """The design's shape: `from_string` returns `Union[Builtin, CustomSpecAlgo]`,
    and the dispatch calls whatever it got with the built-in's argument list."""
    registry = """\
from typing import Union


class CustomSpecAlgo:
    def create_worker(self, server_args):
        return None


class Builtin:
    @classmethod
    def from_string(cls, name) -> Union["Builtin", CustomSpecAlgo]:
        return cls()

    def create_worker(self, server_args, draft=False):
        return None


def lookup(name) -> "CustomSpecAlgo | None":
    return None
"""
    _configure(project, 'plugin-bases = ["app.reg.CustomSpecAlgo"]\n')
    assert_case(
        project,
        RULE,
        """
        from app import reg

        class Scheduler:
            def __init__(self, name) -> None:
                self.algo = reg.Builtin.from_string(name)

            @property
            def custom(self) -> reg.CustomSpecAlgo:
                return reg.lookup("x")

            def init(self, server_args) -> None:
                self.algo.create_worker(server_args, draft=True)  # expect
                self.custom.create_worker(server_args, 1)  # expect

        def f(server_args) -> None:
            algo = reg.lookup("x")
            algo.create_worker()  # expect
            algo.create_worker(server_args)
        """,
        extra={"app/reg.py": registry},
    )


def test_isinstance_narrows_and_keyword_dispatch_needs_no_positional_slot(project: Path) -> None:
    base = """\
class Finalize:
    def complete(self):
        raise NotImplementedError


class Processor:
    async def process(self, image_data, audio_data, text, **kwargs):
        raise NotImplementedError
"""
    assert_case(
        project,
        RULE,
        """
        from typing import Union
        from app.b import Finalize, Processor

        class Sum:
            def complete(self, value):
                return value

        class Stream:
            owed: Union[Sum, Finalize, None] = None

            def done(self, v) -> None:
                if isinstance(self.owed, Sum):
                    self.owed.complete(v)
                elif self.owed is not None:
                    self.owed.complete()
                    self.owed.complete(v)  # expect

        class Audio(Processor):
            async def process(self, audio_data, text, **kwargs):
                return None

        class Strict(Processor):
            async def process(self, audio_data, text):  # expect
                return None

        async def run(p: Processor) -> None:
            await p.process(image_data=None, audio_data=1, text="t", extra=2)
        """,
        extra={"app/b.py": base},
    )


HYBRID = """\
class Backend:
    def forward(self, q, k, v, layer, batch, save=True, **kwargs):
        raise NotImplementedError


class LinearBase(Backend):
    pass


class Full(Backend):
    def forward(self, q, k, v, layer, batch, save=True, **kwargs):
        return q


class Linear(LinearBase):
    def forward(self, layer, batch, mixed_qkv, **kwargs):
        return mixed_qkv


class Hybrid(Backend):
    def __init__(self, full: Backend, linear: LinearBase) -> None:
        self.full = full
        self.linear = linear

    def forward(self, q, k, v, layer, batch, save=True, mixed_qkv=None, **kwargs):
        if layer.full:
            return self.full.forward(q, k, v, layer, batch, save, **kwargs)
        return self.linear.forward(
            q=q, k=k, v=v, layer=layer, batch=batch, save=save, mixed_qkv=mixed_qkv
        )
"""


def test_the_receivers_declared_kind_decides_the_dispatches_an_override_answers(
    project: Path,
) -> None:
    """Issue 36 (0.5.23's GDN/KDA linear-attention backends): the hybrid
    backend dispatches its linear side through `self.linear`, declared as the
    subclass `LinearBase`, and its full side through `self.full`, declared as
    the base. A `LinearBase` implementation answers to the first; the
    positional full-attention call is not its contract."""
    write(project, {"app/back.py": HYBRID})
    found = [f for f in run_engine(project, select={RULE}).findings if f.rule == RULE]
    assert found == []
    # declared as the base, the linear dispatch is every implementation's
    # (and the positional full-attention call then binds `Linear` too)
    (project / "app/back.py").write_text(HYBRID.replace("linear: LinearBase", "linear: Backend"))
    found = [f for f in run_engine(project, select={RULE}).findings if f.rule == RULE]
    assert [(f.scope, f.span.line) for f in found] == [("Linear.forward", 16)]
    assert "6 positional arguments" in found[0].message
    # the linear kind's own dispatch still binds its implementations
    narrow = "def forward(self, layer, batch, q=None, k=None, v=None, mixed_qkv=None):"
    (project / "app/back.py").write_text(
        HYBRID.replace("def forward(self, layer, batch, mixed_qkv, **kwargs):", narrow)
    )
    found = [f for f in run_engine(project, select={RULE}).findings if f.rule == RULE]
    assert [(f.scope, f.span.line) for f in found] == [("Linear.forward", 16)]
    assert "unknown keyword `save`" in found[0].message


KERNELS = """\
class MoEBase:
    def apply(self, layer, dispatch_output):
        raise NotImplementedError


class Fused(MoEBase):
    def apply(self, layer, dispatch_output):
        return layer


class Kernel(MoEBase):
    def apply(self, quant_info, hidden, expert_tokens, scale=None):
        return hidden


class Layer:
    def __init__(self, quant_method: MoEBase) -> None:
        self.quant_method = quant_method

    def forward(self, x):
        return self.quant_method.apply(layer=self, dispatch_output=x)


class Scheme:
    def __init__(self) -> None:
        self.kernel = Kernel()


def setup(layer, scheme: Scheme) -> None:
    layer.w13_kernel, layer.w2_kernel = Kernel(), scheme.kernel


def run(layer, info, x, tokens):
    w13 = layer.w13_kernel
    hidden = w13.apply(info, x, tokens, scale=None)
    return layer.w2_kernel.apply(info, hidden, tokens)
"""


@pytest.mark.parametrize(
    ("edit", "found"),
    [
        ((), []),
        # an object of it handed to an attribute the base's dispatch reads
        (("    w13 = ", "    layer.quant_method = layer.w2_kernel\n    w13 = "), [12]),
        (("w13 = layer.w13_kernel", "w13 = layer.w13_kernel\n    w13.apply(layer, x)"), [12]),
        (
            (
                "        self.kernel = Kernel()",
                "        kernel = Kernel()\n        self.kernel = kernel",
            ),
            [12],
        ),
        # its own calls fit the base as well: nothing tells the interfaces apart
        (("hidden = w13.apply(info, x, tokens, scale=None)", "hidden = w13.apply(info, x)"), [12]),
    ],
)
def test_a_method_called_with_its_own_arguments_is_another_interface(
    project: Path, edit: tuple[str, ...], found: list[int]
) -> None:
    """Issue 36 (0.5.23's NPU MoE kernels): `Kernel` derives from the MoE
    method base, but every object of it is built into `w13_kernel`/`w2_kernel`
    (the scheme's `kernel` copied there), whose readers call `apply` with the
    kernel's own arguments: the base's `apply(layer=..., dispatch_output=...)`
    dispatch through `quant_method` is not its contract."""
    assert not edit or edit[0] in KERNELS
    source = KERNELS.replace(*edit) if edit else KERNELS
    write(project, {"app/moe.py": source})
    out = run_engine(project, select={RULE})
    got = [f for f in out.findings if f.rule == RULE]
    assert [f.span.line for f in got if f.scope == "Kernel.apply"] == found
    slots = ["*.w13_kernel", "*.w2_kernel", "app.moe.Scheme.kernel"]
    other = {} if found else {"app.moe.Kernel.apply": slots}
    assert out.program.sets[RULE]["other interfaces of a hook's name"] == other


CONTROLLER = """\
class HostPool:
    def backup(self, device, indices):
        raise NotImplementedError


class HostPoolGroup:
    def backup(self, device, indices, transfers=None):
        return indices


class Controller:
    def __init__(self, allocator, host: HostPool, size: int = 1) -> None:
        self.host = host


class HybridController(Controller):
    def __init__(self, allocator, host, size: int = 1) -> None:
        super().__init__(allocator, host=host, size=size)

    def write(self, device, indices):
        self.host.backup(device, indices, transfers=[])


def build(allocator, entries):
    group = HostPoolGroup()
    return HybridController(allocator, group, 4)


def build_again(allocator):
    return HybridController(allocator, host=HostPoolGroup())
"""


@pytest.mark.parametrize(
    ("edit", "found"),
    [
        ((), []),
        # one construction hands something not known to be built
        (
            ("HybridController(allocator, host=HostPoolGroup())", "HybridController(allocator, x)"),
            [21],
        ),
        # a subclass of the declared base handed: the declaration holds
        (("class HostPoolGroup:", "class HostPoolGroup(HostPool):"), [21]),
        # the attribute set again elsewhere
        (
            (
                "    def write(self, device, indices):\n",
                "    def write(self, device, indices):\n        self.host = device\n",
            ),
            [22],
        ),
        # the parameter not handed on to the `__init__` that sets it
        (("host=host, size=size", "host=None, size=size"), [21]),
    ],
)
def test_a_receiver_set_from_a_parameter_every_construction_hands_another_class(
    project: Path, edit: tuple[str, ...], found: list[int]
) -> None:
    """Issue 36 (0.5.17's `HybridCacheController.start_writing`): the
    controller's `host` is declared `HostPool` in the base `__init__`, but the
    subclass hands its own parameter on and every construction of the subclass
    passes a `HostPoolGroup` it built: the call is no dispatch through
    `HostPool`."""
    assert not edit or edit[0] in CONTROLLER
    source = CONTROLLER.replace(*edit) if edit else CONTROLLER
    write(project, {"app/ctl.py": source})
    got = [f for f in run_engine(project, select={RULE}).findings if f.rule == RULE]
    assert [f.span.line for f in got] == found


POOLS = """\
class KVCache:
    def get_cpu_copy(self, indices, mamba_indices=None, req_pool_index=None):
        raise NotImplementedError()


class MHAPool(KVCache):
    def get_cpu_copy(self, indices, mamba_indices=None, req_pool_index=None):
        return indices


class KOnlyPool(MHAPool):
    pass


class IndexKPool(KVCache):
    def get_cpu_copy(self, indices):
        return indices


class SparsePool(KVCache):
    def __init__(self, size, main_pool_cls=MHAPool, index_k_pool_cls=KOnlyPool, sparse=True):
        self.main_pool = main_pool_cls(size)
        self.index_k_pool: KOnlyPool | None = index_k_pool_cls(size) if sparse else None

    def get_cpu_copy(self, indices, mamba_indices=None, req_pool_index=None):
        return self.main_pool.get_cpu_copy(indices)


class Nvfp4Pool(SparsePool):
    def __init__(self, **kwargs):
        super().__init__(**kwargs, index_k_pool_cls=IndexKPool)

    def get_cpu_copy(self, indices, mamba_indices=None, req_pool_index=None):
        return self.index_k_pool.get_cpu_copy(indices)


class Allocator:
    def __init__(self, kvcache: KVCache) -> None:
        self._kvcache = kvcache

    def backup(self, indices, slot):
        return self._kvcache.get_cpu_copy(indices, mamba_indices=None, req_pool_index=slot)
"""


@pytest.mark.parametrize(
    ("edit", "found"),
    [
        ((), []),
        # built by its name somewhere too: it may be any `KVCache` receiver's
        (
            (
                "    def backup(",
                "    def spare(self):\n        return IndexKPool(4)\n\n    def backup(",
            ),
            [16],
        ),
        # the subclass does not fix the class object (it may come in `kwargs`)
        (("**kwargs, index_k_pool_cls=IndexKPool", "**kwargs"), [16]),
        # the attribute set again elsewhere
        (
            (
                "    def get_cpu_copy(self, indices, mamba_indices=None, req_pool_index=None):\n"
                "        return self.index_k_pool",
                "    def drop(self):\n        self.index_k_pool = None\n\n"
                "    def get_cpu_copy(self, indices, mamba_indices=None, req_pool_index=None):\n"
                "        return self.index_k_pool",
            ),
            [16],
        ),
    ],
)
def test_a_class_built_through_a_class_object_handed_to_init_is_held_apart(
    project: Path, edit: tuple[str, str] | tuple[()], found: list[int]
) -> None:
    """Issue 36 (0.5.23's MiniMax index-K pool): `IndexKPool` is built only as
    `self.index_k_pool = index_k_pool_cls(...)`, the class object handed by
    `Nvfp4Pool`'s `super().__init__`; those receivers dispatch with its own
    arguments, and the allocator's `self._kvcache: KVCache` never holds it."""
    assert not edit or edit[0] in POOLS
    source = POOLS.replace(*edit) if edit else POOLS
    write(project, {"app/pools.py": source})
    got = [f for f in run_engine(project, select={RULE}).findings if f.rule == RULE]
    assert [(f.scope, f.span.line) for f in got] == [("IndexKPool.get_cpu_copy", n) for n in found]


ATTN_IMPLS = """\
class AttentionImpl:
    def forward(self, query, key, value, attn_metadata):
        raise NotImplementedError


class FlashImpl(AttentionImpl):
    def forward(self, query, key, value, attn_metadata=None, return_softmax_lse=False):
        return query


class AiterImpl(AttentionImpl):
    def forward(self, query, key, value, attn_metadata=None):
        return query


class Layer:
    def __init__(self, impl: AttentionImpl) -> None:
        self.impl = impl

    def ring(self, q, k, v):
        return self.impl.forward(q, k, v, attn_metadata=None, return_softmax_lse=True)

    def plain(self, q, k, v, meta):
        return self.impl.forward(q, k, v, meta)
"""


@pytest.mark.parametrize(
    ("edit", "tail"),
    [
        (
            (),
            (
                "in-tree `AiterImpl.forward` (attn.py:12) would raise TypeError here if the receiver holds it, as would a plugin"
            ),
        ),
        # every in-tree implementation takes the keyword: only a plugin fails
        (
            ("value, attn_metadata=None):", "value, attn_metadata=None, **kw):"),
            ": a plugin following the base signature raises TypeError here",
        ),
    ],
)
def test_a_misfit_dispatch_names_the_in_tree_implementations_it_breaks(
    project: Path, edit: tuple[str, str] | tuple[()], tail: str
) -> None:
    """Issue 36 (0.5.23's `return_softmax_lse` ring calls): where in-tree
    implementations lack what the dispatch passes, the message names them;
    "a plugin" alone only where none fails."""
    source = ATTN_IMPLS.replace(*edit) if edit else ATTN_IMPLS
    assert not edit or edit[0] in ATTN_IMPLS
    write(project, {"app/attn.py": source})
    got = [f for f in run_engine(project, select={RULE}).findings if f.rule == RULE]
    assert [(f.span.line, f.message.endswith(tail)) for f in got] == [(21, True)], got
    assert ("would raise TypeError here too, if held: AiterImpl.forward" in got[0].details) == bool(
        not edit
    )


def test_a_dispatch_whose_positionals_shift_says_what_is_left_unbound(project: Path) -> None:
    """Issue 36 (0.5.23's `VideoSparseAttentionImpl.forward`): the override puts
    `gate_compress` before `attn_metadata`, so the dispatch's fourth positional
    binds `gate_compress` and leaves `attn_metadata` unbound; the base has an
    `attn_metadata`, so "which the base does not pass" would misread it."""
    shifted = ATTN_IMPLS.replace(
        "    def forward(self, query, key, value, attn_metadata=None):",
        "    def forward(self, query, key, value, gate_compress, attn_metadata):",
    )
    write(project, {"app/attn.py": shifted})
    got = [f for f in run_engine(project, select={RULE}).findings if f.scope == "AiterImpl.forward"]
    assert [f.message for f in got] == [
        "`AiterImpl.forward` does not accept what the plugin base `AttentionImpl.forward` is "
        "called with (the dispatch passes four positionals; the override's fifth parameter, "
        "`attn_metadata`, is left unbound)"
    ]
    assert "which the base does not pass" not in got[0].details


@pytest.mark.parametrize(
    ("built", "held"),
    [
        # the default where a construction hands nothing, the class object where it does
        (
            "SparsePool(4)\nSparsePool(4, index_k_pool_cls=IndexKPool)\n",
            ["IndexKPool", "KOnlyPool"],
        ),
        # handed something that is no class of the tree
        ("SparsePool(4, index_k_pool_cls=make)\n", []),
        # an unpacking may hand it anything
        ("SparsePool(4, **options)\n", []),
        # no construction by name: what builds it is not known
        ("", []),
    ],
)
def test_an_attribute_built_by_a_class_object_parameter_holds_what_is_handed(
    project: Path, built: str, held: list[str]
) -> None:
    """`self.index_k_pool = index_k_pool_cls(...)`: what it holds is built of the
    class object every construction hands (or the parameter's default), and
    `Nvfp4Pool`'s `super().__init__(..., index_k_pool_cls=IndexKPool)` fixes it
    for every `Nvfp4Pool`, however that is built."""
    from ctxlint.program.plugin_dispatch import plugin_graph

    write(project, {"app/pools.py": POOLS + "\n\n" + built})
    graph = plugin_graph(run_engine(project, select={RULE}).program)
    assert graph.handed("app.pools.Nvfp4Pool", "index_k_pool") == ["app.pools.IndexKPool"]
    expected = [f"app.pools.{c}" for c in held]
    assert graph.handed("app.pools.SparsePool", "index_k_pool") == expected


def test_a_class_held_apart_is_not_named_at_a_misfit_dispatch(project: Path) -> None:
    """The index pool is held only as `index_k_pool`: a misfit dispatch through an
    allocator's `KVCache` names the in-tree pools it breaks, not that one."""
    extra = """
    def get_key_buffer(self, layer_id):
        raise NotImplementedError()
"""
    source = POOLS.replace(
        "class MHAPool(KVCache):\n",
        "class MHAPool(KVCache):\n    def get_key_buffer(self, layer_id):\n        return 1\n\n",
    )
    source = source.replace(
        "class IndexKPool(KVCache):\n",
        "class IndexKPool(KVCache):\n    def get_key_buffer(self, layer_id):\n        return 2\n\n",
    )
    source = source.replace("class KVCache:\n", "class KVCache:" + extra + "\n")
    source += "\n    def key(self, layer_id, scale):\n        return self._kvcache.get_key_buffer(layer_id, scale)\n"
    write(project, {"app/pools.py": source})
    got = [f for f in run_engine(project, select={RULE}).findings if f.rule == RULE]
    assert [f.message.split("): ", 1)[1] for f in got] == [
        "in-tree `MHAPool.get_key_buffer` (pools.py:10) would raise TypeError here if the receiver holds it, as would a plugin"
    ]
