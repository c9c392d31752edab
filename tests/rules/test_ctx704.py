"""CTX704 moe-communicator-width: the aliased group, its handles, width functions and
collectives are derived from the code; a configured size read beside a collective on
that group is reported, and so is `size > 1` where the runtime binds an enabled leaf."""

from __future__ import annotations

from pathlib import Path

from helpers import run_engine, write
from rulecase import assert_case

RULE = "CTX704"

FIELDS = """\
class Parallel:
    _NS_PATH = "parallel"
    tp_size: int = 1
    moe_dp_size: int = 1
    attn_cp_size: int = 1
    dcp_size: int = 1


class Model:
    _NS_PATH = "model"
    model_path: str = ""
"""
RECORD = """\
from specrt.fields import Model, Parallel


class ServerArgs(Parallel, Model):
    pass
"""
STATE = """\
from specrt.context import get_parallel

_ATTN_CP = None
_MOE_DP = None
_TP = None


def initialize_model_parallel(attn_cp: object, moe_dp: object) -> None:
    global _ATTN_CP, _MOE_DP
    if get_parallel().attn_cp_size == get_parallel().tp_size:
        _ATTN_CP = _TP  # equal widths: no hazard (SGLang 0.5.17)
    else:
        _ATTN_CP = attn_cp
    if get_parallel().attn_cp_size > get_parallel().moe_dp_size:
        _MOE_DP = _ATTN_CP
    else:
        _MOE_DP = moe_dp


def get_moe_dp_group() -> object:
    return _MOE_DP


def get_tp_group() -> object:
    return _TP


def get_attn_cp_size() -> int:
    return get_parallel().attn_cp_group.world_size
"""
GROUPS = """\
from app.state import get_moe_dp_group
from specrt.context import get_parallel


def get_moe_cp_group() -> object:
    return get_moe_dp_group()


def get_moe_cp_size() -> int:
    return get_parallel().moe_dp_group.world_size


def moe_gather(out: list, inp: list) -> None:
    get_moe_cp_group().all_gather_into_tensor(out, inp)
"""
BASE = {
    "specrt/fields.py": FIELDS,
    "specrt/record.py": RECORD,
    "app/state.py": STATE,
    "app/groups.py": GROUPS,
}


def test_size_reads_beside_a_collective_on_the_aliased_group(project: Path) -> None:
    assert_case(
        project,
        RULE,
        """
        from app import state
        from app.groups import get_moe_cp_group, moe_gather
        from app.state import get_tp_group
        from specrt.context import get_parallel

        def through_a_helper(inp: list) -> list:
            out = inp * get_parallel().moe_dp_size  # expect
            moe_gather(out, inp)
            return out

        def on_the_handle_through_a_local(inp: list) -> None:
            parallel = get_parallel()
            n = parallel.moe_dp_size  # expect
            parallel.moe_dp_group.all_reduce(inp * n)

        def on_a_group_function(inp: list) -> None:
            get_moe_cp_group().broadcast(inp * get_parallel().moe_dp_size)  # expect

        def on_the_module_global(inp: list) -> None:
            state._MOE_DP.all_reduce(inp * get_parallel().moe_dp_size)

        def another_group_is_sized_by_its_leaf(inp: list) -> None:
            get_tp_group().all_reduce(inp * get_parallel().tp_size)

        def an_alias_at_equal_width(inp: list) -> None:
            get_parallel().attn_cp_group.all_reduce(inp * get_parallel().attn_cp_size)

        def no_collective_here() -> int:
            return get_parallel().tp_size // get_parallel().moe_dp_size

        def the_width_function(inp: list) -> list:
            from app.groups import get_moe_cp_size
            out = inp * get_moe_cp_size()
            moe_gather(out, inp)
            return out
        """,
        extra=BASE,
    )


def test_derived_sets_and_the_message(project: Path) -> None:
    write(
        project,
        {
            **BASE,
            "app/layer.py": "from app.groups import moe_gather\n"
            "from specrt.context import get_parallel\n\n\n"
            "def f(inp: list) -> None:\n"
            "    moe_gather(inp * get_parallel().moe_dp_size, inp)\n",
        },
    )
    out = run_engine(project, select={RULE})
    sets = out.program.sets[RULE]
    assert sets["aliased groups"] == {"moe_dp": "app.state._MOE_DP = _ATTN_CP"}
    assert sets["group functions"] == {
        "app.groups.get_moe_cp_group": "moe_dp",
        "app.state.get_moe_dp_group": "moe_dp",
    }
    assert sets["width functions"] == {"moe_dp": ["app.groups.get_moe_cp_size"]}
    (f,) = out.findings
    assert (f.path, f.line) == ("app/layer.py", 6)
    assert (
        "ask `get_moe_cp_size()`" in f.message and "`get_moe_cp_size` is in app.groups" in f.details
    )


def test_dcp_size_tests_where_the_runtime_binds_an_enabled_leaf(project: Path) -> None:
    assert_case(
        project,
        RULE,
        """
        from specrt.context import get_parallel

        def a() -> bool:
            return get_parallel().dcp_size > 1  # expect

        def b() -> bool:
            p = get_parallel()
            return 1 < p.dcp_size  # expect

        def not_the_test(n: int) -> bool:
            return get_parallel().dcp_size > 2 or get_parallel().tp_size > 1

        def not_the_bag(runner: object) -> bool:
            return runner.dcp_size > 1
        """,
        extra={
            **BASE,
            "specrt/widths.py": "def widths_of(cfg) -> dict:\n"
            "    return dict(dcp_enabled=cfg.dcp_size > 1, n=cfg.tp_size)\n",
        },
    )
    out = run_engine(project, select={RULE})
    assert out.program.sets[RULE]["enabled leaves"] == {"dcp_size": "dcp_enabled"}
    assert "read `get_parallel().dcp_enabled`" in out.findings[0].message
    assert "read `p.dcp_enabled`" in out.findings[1].message


def test_a_local_is_the_bag_while_its_last_binding_says_so(project: Path) -> None:
    """The names bound to the parallel bag are the binding model's: an annotated
    local holds it, a loop rebinding the name holds something else."""
    assert_case(
        project,
        RULE,
        """
        from specrt.context import get_parallel

        def annotated() -> bool:
            p: object = get_parallel()
            return p.dcp_size > 1  # expect

        def rebound(runners: list) -> bool:
            p = get_parallel()
            for p in runners:
                return p.dcp_size > 1
            return False
        """,
        extra={
            **BASE,
            "specrt/widths.py": "def widths_of(cfg) -> dict:\n"
            "    return dict(dcp_enabled=cfg.dcp_size > 1, n=cfg.tp_size)\n",
        },
    )


def test_a_property_of_the_runtime_binds_an_enabled_leaf(project: Path) -> None:
    write(
        project,
        {
            **BASE,
            "specrt/topology.py": "class Parallel:\n    dcp_size = 1\n\n"
            "    @property\n    def dcp_enabled(self) -> bool:\n"
            "        def getter() -> bool:\n            return self.dcp_size > 1\n\n"
            "        return getter()\n",
            "app/x.py": "from specrt.context import get_parallel\n\n\n"
            "def f() -> bool:\n    return get_parallel().dcp_size > 1\n",
        },
    )
    out = run_engine(project, select={RULE})
    assert out.program.sets[RULE]["enabled leaves"] == {"dcp_size": "dcp_enabled"}
    assert [(f.path, f.line) for f in out.findings] == [("app/x.py", 5)]


def test_a_property_answering_anything_else_binds_no_leaf(project: Path) -> None:
    """sglang 0.5.17's `dcp_enabled` is False while the DCP group is missing, so
    `dcp_size > 1` is not what it answers: no leaf, no finding."""
    write(
        project,
        {
            **BASE,
            "specrt/topology.py": "class Parallel:\n    dcp_size = 1\n    group = None\n\n"
            "    @property\n    def dcp_enabled(self) -> bool:\n"
            "        def getter() -> bool:\n"
            "            if self.group is None:\n                return False\n"
            "            return self.dcp_size > 1\n\n"
            "        return self._v('dcp_enabled', getter)\n",
            "app/x.py": "from specrt.context import get_parallel\n\n\n"
            "def f() -> bool:\n    return get_parallel().dcp_size > 1\n",
        },
    )
    out = run_engine(project, select={RULE})
    assert out.program.sets[RULE]["enabled leaves"] == {}
    assert out.findings == []
    # the same getter without the guard binds it
    write(
        project,
        {
            "specrt/topology.py": (project / "specrt/topology.py")
            .read_text()
            .replace("            if self.group is None:\n                return False\n", "")
        },
    )
    out = run_engine(project, select={RULE})
    assert out.program.sets[RULE]["enabled leaves"] == {"dcp_size": "dcp_enabled"}
    assert [(f.path, f.line) for f in out.findings] == [("app/x.py", 5)]


def test_no_aliased_group_checks_nothing_and_says_so(project: Path) -> None:
    write(
        project,
        {
            **BASE,
            "app/state.py": STATE.replace("_MOE_DP = _ATTN_CP", "_MOE_DP = attn_cp"),
            "app/layer.py": "from app.groups import moe_gather\n"
            "from specrt.context import get_parallel\n\n\n"
            "def f(inp: list) -> None:\n"
            "    moe_gather(inp * get_parallel().moe_dp_size, inp)\n",
        },
    )
    out = run_engine(project, select={RULE})
    assert out.findings == []
    from ctxlint.rules.ctx704_moe_communicator_width import RULE as rule

    # nothing aliased: said in the derived sets, not as a warning on every run
    assert "no aliased process group" in out.program.sets[RULE]["note"]
    assert rule.partial(out.program.sets[RULE]) is None


def test_ctxrt_shapes_a_table_entry_alias_and_get_world_size(project: Path) -> None:
    """ctxrt's topology aliases an entry of its group table, and its width function
    asks torch.distributed, after a docstring and an import."""
    write(
        project,
        {
            **BASE,
            "app/state.py": "def build(parts: dict) -> dict:\n"
            "    joined = dict(parts)\n"
            "    if 'moe_dp' not in joined:\n"
            "        joined['moe_dp'] = joined['attn_cp']\n"
            "    return joined\n",
            "app/groups.py": "from specrt.context import get_parallel\n\n\n"
            "def get_moe_cp_size() -> int:\n"
            '    """The MoE communicator\'s width."""\n'
            "    import torch.distributed as dist\n\n"
            "    return dist.get_world_size(get_parallel().moe_dp_group)\n",
            "app/layer.py": "from specrt.context import get_parallel\n\n\n"
            "def f(inp: list) -> None:\n"
            "    get_parallel().moe_dp_group.all_reduce(inp * get_parallel().moe_dp_size)\n",
        },
    )
    out = run_engine(project, select={RULE})
    sets = out.program.sets[RULE]
    assert sets["aliased groups"] == {"moe_dp": 'app.state.joined["moe_dp"] = joined["attn_cp"]'}
    assert sets["width functions"] == {"moe_dp": ["app.groups.get_moe_cp_size"]}
    assert [(f.path, f.line) for f in out.findings] == [("app/layer.py", 5)]
