"""program.unset_flags (with program.flag_facts): which `if` tests are false
before publish, and the ordered walk stepping over the calls under them, on a
real program built from sources."""

from __future__ import annotations

import shutil
import textwrap

import pytest
from conftest import FIXTURE
from helpers import run_engine, write

from ctxlint.program.calls import CallGraph, call_graph
from ctxlint.program.leaf_reads import leaf_reads
from ctxlint.program.ordered_reach import OrderedReach

APP = {
    "app/flags.py": """
        from specrt.context import get_exec

        SYMM = False
        LOUD = None
        SHADOWED = False
        if SHADOWED is None:
            SHADOWED = True

        def set_symm(enable):
            global SYMM
            SYMM = enable

        def set_loud(enable):
            global LOUD
            LOUD = enable

        def configure():
            set_symm(get_exec().kernel.attention_backend)
            set_loud(get_exec().kernel.attention_backend)

        def configure_loud_by_hand():
            set_loud(True)

        GATE = False

        def set_gate(enable):
            global GATE
            GATE = enable

        def configure_gate():
            set_gate(get_exec().kernel.attention_backend)

        FORCED = False

        def set_forced(enable):
            global FORCED
            FORCED = enable

        def configure_forced():
            set_forced(get_exec().kernel.attention_backend)
        """,
    # names no token of the rule: parsed because the walk asked for the setter
    "app/by_hand.py": """
        from app.flags import set_gate

        def open_gate():
            set_gate(True)
        """,
    "app/groups.py": """
        from specrt.context import get_model, publish
        from app import flags

        def read():
            return get_model().context_length

        class Group:
            def __init__(self, ranks, use_symm=None, loud=False):
                if use_symm is None:
                    use_symm = flags.SYMM
                self.use_symm = use_symm
                if self.use_symm and len(ranks) > 1:
                    read()
                if loud:
                    read()

        class Base:
            def __init__(self, use=None):
                self.use = use
                if self.use:
                    read()

        class Sub(Base):
            def enable(self):
                self.use = True

        def base_plain():
            Base()

        def force():
            flags.FORCED = True  # another module's write of the flag

        class Counter:
            def __init__(self, on=None):
                self.on = on
                if self.on:
                    read()

            def bump(self):
                self.on += 1

        def counted():
            Counter()

        def make(flag):
            if flag:
                read()

        def mixed(flag):
            flag = flag or compute()
            if flag:
                read()

        def compute():
            return 1

        def shadowed():
            if flags.SHADOWED:
                read()

        def loud():
            if flags.LOUD:
                read()

        def gated(server_args):
            if flags.GATE:  # the rule's walk asks about the flag: its setter is a token
                read()
            publish(server_args, role="worker")

        def plain():
            Group([0, 1])

        def asked():
            Group([0, 1], use_symm=True)

        def loud_group():
            Group([0, 1], None, False)

        def loud_group_on():
            Group([0, 1], loud=1)

        def made_false():
            make(False)

        def made_none():
            make(flag=None)

        def mixed_false():
            mixed(False)

        def each(flag):
            return [make(flag) for flag in (1, 2)]

        def each_false():
            each(False)
        """,
}
G = "app.groups"


@pytest.fixture(scope="module")
def order(tmp_path_factory: pytest.TempPathFactory) -> OrderedReach:
    root = tmp_path_factory.mktemp("flags") / "proj"
    shutil.copytree(FIXTURE, root)
    write(root, {k: textwrap.dedent(v) for k, v in APP.items()})
    program = run_engine(root).program
    leaves = leaf_reads(program)
    graph: CallGraph = call_graph(program)
    return OrderedReach(graph, finds=leaves.fails_unpublished, reads=leaves.reads)


def test_a_flag_only_a_bag_read_sets_is_unset_before_publish(order: OrderedReach) -> None:
    flags = order.flags
    assert flags.unset("app.flags.SYMM")  # every write hands it get_exec()...
    assert not flags.unset("app.flags.LOUD")  # one caller hands it True
    assert not flags.unset("app.flags.SHADOWED")  # import time binds it True too
    assert not flags.unset("app.flags.configure")  # no flag at all
    # a caller in a file holding none of the rule's tokens: its setter's name is one
    assert {"set_symm", "set_loud"} <= flags.asked
    assert not flags.unset("app.flags.GATE")
    assert not flags.unset("app.flags.FORCED")  # `flags.FORCED = True` in app.groups


def test_the_walk_steps_over_calls_under_a_false_test(order: OrderedReach) -> None:
    def reads(name: str) -> bool:
        return order.first(f"{G}.{name}")[0] is not None

    # the constructor leaves use_symm to None -> the unset flag; loud to False
    assert not reads("plain")
    assert not reads("loud_group")  # positional None and False
    assert reads("asked")  # handed True: the communicator runs
    assert reads("loud_group_on")
    assert not reads("made_false") and not reads("made_none")
    assert reads("mixed_false")  # rebound to what a call returns: not known false
    assert reads("each_false")  # the comprehension's `flag` is not the parameter
    assert reads("shadowed") and reads("loud")
    # the same callee, asked without a call's context: its parameters unknown
    assert order.first(f"{G}.make")[0] is not None


def test_an_attribute_a_subclass_sets_is_not_false(order: OrderedReach) -> None:
    init = f"{G}.Base.__init__"
    found = order.flags._attr(order.graph.funcs[init], "use")
    assert sorted(found) == [(init, "n:use"), (f"{G}.Sub.enable", "+")]
    assert not order.flags.falsy(init, "a:use", frozenset({"use"}))
    assert order.first(f"{G}.base_plain")[0] is not None
    assert order.first(f"{G}.counted")[0] is not None  # `self.on += 1` binds it too
    # Group's attribute has one binding, in its constructor: false in its context
    assert order.flags.falsy(f"{G}.Group.__init__", "a:use_symm", frozenset({"use_symm"}))


def test_a_context_keeps_only_the_parameters_a_test_asks(order: OrderedReach) -> None:
    flags = order.flags
    assert flags.relevant(f"{G}.Group.__init__") == {"use_symm", "loud"}  # ranks: no test
    assert flags.relevant(f"{G}.make") == {"flag"}
    assert flags.relevant(f"{G}.plain") == frozenset()  # no parameter
    assert flags.relevant("app.flags.set_symm") == frozenset()  # writes a flag, tests none
