"""program.records: the one "is this expression a record holder" classifier that
CTX201, CTX202 and CTX102 ask, on each holder form, during a real traversal."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
from helpers import run_engine

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.extract import extract_file
from ctxlint.facts.visitor import FileVisitor
from ctxlint.program.bindings import Bindings
from ctxlint.program.records import Holder, HolderKind, RecordTracker


class Probe(FileVisitor):
    """Classifies the argument of every `probe(expr)` call where it stands,
    and settles `self.X` once the file is complete (as the rules do)."""

    def __init__(self, ctx: Any) -> None:
        super().__init__(ctx)
        self.seen: list[tuple[str, Holder | None]] = []

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == "probe":
            arg = node.args[0].value
            self.seen.append((self.ctx.snippet(arg), self.ctx.records.holder(arg)))

    def finish(self) -> Any:
        rec = self.ctx.records
        return [
            [text, None if h is None else h.kind.value, None if h is None else h.name]
            + ([rec.settle(h.fact())["k"]] if h is not None else [None])
            for text, h in self.seen
        ]


CODE = """
import copy
import dataclasses

from specrt.context import get_server_args
from specrt.record import ServerArgs

SEED = get_server_args()


def f(server_args, sa: ServerArgs, n: int, runner, opaque: object):
    probe(get_server_args())
    alias = get_server_args()
    probe(alias)
    probe(SEED)
    probe(ServerArgs())
    built = ServerArgs()
    probe(built)
    probe(sa)
    local: ServerArgs = make()
    probe(local)
    probe(server_args)
    probe(opaque)
    probe(n)
    probe(copy.deepcopy(alias))
    dup = copy.deepcopy(alias)
    probe(dup)
    edited = dataclasses.replace(server_args, tp_size=2)
    probe(edited)
    probe(runner.server_args)
    probe(make())


class Worker:
    def __init__(self, server_args):
        self.seed = get_server_args()
        self.args: ServerArgs = server_args

    def run(self):
        probe(self)
        probe(self.seed)
        probe(self.args)
        probe(self.other)


def g(server_args):
    server_args = 1
    probe(server_args)
"""

# (expression, holder kind, its name, what the rules store once settled)
EXPECTED = [
    ["get_server_args()", "seed", None, "seed"],
    ["alias", "seed", None, "seed"],
    ["SEED", "seed", None, "seed"],
    ["ServerArgs()", "built", None, "built"],
    ["built", "built", None, "built"],  # a name bound to a new record holds it
    ["sa", "annotated", "sa", "annotated"],
    ["local", "annotated", "local", "annotated"],
    ["server_args", "name", "server_args", "name"],  # the convention decides, in check()
    ["opaque", "name", "opaque", "name"],  # `object` claims nothing about the type
    ["n", None, None, None],  # annotated with another concrete type
    # a copy call is not itself a holder (CTX202 reports the call; the copy is bound)
    ["copy.deepcopy(alias)", None, None, None],
    ["dup", "seed", None, "seed"],  # a copy of the seed holds the seed
    ["edited", "name", "server_args", "name"],  # a copy of a handed record
    ["runner.server_args", "attr", "server_args", "attr"],
    ["make()", None, None, None],
    ["self", "self", "self", "self"],  # the receiver: a holder only in the record class
    ["self.seed", "selfattr", "seed", "seed"],  # parked seed, known at the class's end
    ["self.args", "selfattr", "args", "annotated"],
    ["self.other", "selfattr", "other", "attr"],
    ["server_args", "name", "server_args", "name"],  # rebound: still a name to the rules
]


@pytest.fixture
def classified(project: Path) -> list[list[Any]]:
    path = project / "app" / "forms.py"
    path.write_text(textwrap.dedent(CODE).lstrip("\n"))
    vocab = run_engine(project, select={"CTX201"}).program.vocab
    out = extract_file(
        "app/forms.py",
        "app.forms",
        path.read_bytes(),
        vocab.to_json(),
        [("bindings", Bindings), ("records", RecordTracker), ("probe", Probe)],
    )
    assert "error" not in out, out
    return out["facts"]["probe"]


def test_each_holder_form_is_classified(classified: list[list[Any]]) -> None:
    assert classified == EXPECTED


def test_holder_facts_are_what_the_rules_store() -> None:
    assert Holder(HolderKind.SEED).fact() == {"k": "seed"}
    assert Holder(HolderKind.NAME, "args").fact() == {"k": "name", "n": "args"}
    assert Holder(HolderKind.SELF_ATTR, "sa", "Worker").fact() == {
        "k": "selfattr",
        "cls": "Worker",
        "n": "sa",
    }
    # ATTR keeps what it is read off for CTX102's message, not in the shared facts
    assert Holder(HolderKind.ATTR, "server_args", via="runner").fact() == {
        "k": "attr",
        "n": "server_args",
    }
