"""CTX602 import-time-config: reads at import time, cached globals and memos,
legacy accessors (derived from deprecation marks), the removed `.config` hop;
what is not a config read (a method, a live handle); the derived sets."""

from __future__ import annotations

from pathlib import Path

from helpers import run_engine, write
from rulecase import assert_case

RULE = "CTX602"


def test_import_time_reads_in_every_import_time_place(project: Path) -> None:
    assert_case(
        project,
        RULE,
        """
        import specrt.context as rc
        from specrt.context import get_exec, get_parallel, get_server_args

        SEED = get_server_args()  # expect
        SIZES = [get_parallel().tp_size for _ in range(2)]  # expect
        LAZY = lambda: get_exec().attention_backend  # noqa: E731


        def deco(value: object) -> object:
            return lambda fn: fn


        class Plan:
            size = rc.get_parallel().dp_size  # expect

            @deco(get_exec().attention_backend)  # expect
            def method(self, n: int = get_parallel().tp_size) -> int:  # expect
                return n + get_parallel().tp_size


        def outer() -> None:
            def inner(n: int = get_parallel().tp_size) -> int:  # runs when outer does
                return n

            class Local:
                size = get_parallel().tp_size


        if __name__ == "__main__":
            print(get_parallel().tp_size)
        """,
    )


def test_a_method_or_a_live_handle_off_an_accessor_is_not_a_config_read(project: Path) -> None:
    assert_case(
        project,
        RULE,
        """
        import functools

        from specrt.context import get_parallel

        SCOPE = get_parallel().override(tp_size=1)  # a scoped override, not a read
        GROUP = get_parallel().tp_group  # a live handle, not a leaf of the bag
        SIZE = get_parallel().tp_size  # expect


        @functools.cache
        def comm() -> object:
            return get_parallel().tp_group, get_parallel().dp_size  # expect
        """,
    )


def test_globals_and_memos_that_keep_a_config_value(project: Path) -> None:
    assert_case(
        project,
        RULE,
        """
        from functools import cache, lru_cache

        from specrt.context import get_exec, get_schedule

        _LIMIT = None
        _BACKEND = None
        _BAG = None


        def limit() -> int:
            global _LIMIT, _BAG
            _LIMIT = get_schedule().max_running_requests + 1  # expect
            _BAG = get_exec()  # expect
            local = get_schedule().max_running_requests
            return local


        def not_global() -> None:
            _BACKEND = get_exec().attention_backend  # a local of the same name
            del _BACKEND


        @cache
        def memo() -> str:
            return get_exec().attention_backend  # expect


        @lru_cache
        def memo2() -> str:
            return get_exec().attention_backend  # expect


        @lru_cache(maxsize=4)
        def memo3(n: int) -> int:
            def later() -> int:
                return get_schedule().max_running_requests

            return n
        """,
    )


def test_a_global_computed_with_a_parameter_is_not_told_to_read_where_used(
    project: Path,
) -> None:
    """sglang 0.5.23's `update_deep_gemm_config(gpu_id)` fills
    `_IS_FIRST_RANK_ON_NODE = get_device().base_gpu_id == gpu_id`, and its use
    has no `gpu_id`: "read the accessor where the value is used" cannot be
    written there. The message leads with the design's per-runner rule
    ("threaded to consumers as arguments, never backfilled onto a shared
    object": every runner's init recomputes the global, so "later overrides are
    missed" is the weak half, kept in the details); the details name the
    parameter and hand the result down. A global from the accessor alone keeps
    the old remedy."""
    write(
        project,
        {
            "app/m.py": (
                "from specrt.context import get_parallel\n\n"
                "_FIRST = None\n_SIZE = None\n\n\n"
                "def update(rank: int, *, scale: int = 1) -> None:\n"
                "    global _FIRST, _SIZE\n"
                "    _FIRST = get_parallel().tp_size == rank\n"
                "    _SIZE = get_parallel().tp_size * 2\n"
            )
        },
    )
    paired, alone = sorted(run_engine(project, select={RULE}).findings, key=lambda f: f.line)
    assert paired.message == (
        "`get_parallel()` and a parameter of its filler backfill the module global `_FIRST`: "
        "a per-runner value is threaded to its users as arguments, never kept on a shared object"
    )
    assert paired.details.endswith(
        "it also misses later overrides and re-publishes of what the accessor answers."
    )
    assert len(paired.message) <= 200
    assert "`_FIRST` is computed from the accessor and `rank`" in paired.details
    assert "pass the result to its users as an argument" in paired.details
    assert "read the accessor where the value is used" not in paired.message + paired.details
    assert alone.message.endswith("read the accessor where the value is used")
    assert alone.details == ""


def test_legacy_accessors_are_derived_from_deprecation_marks(project: Path) -> None:
    write(
        project,
        {
            "specrt/legacy.py": (
                "from typing_extensions import deprecated\n\n\n"
                '@deprecated("read get_parallel().pp_size")\n'
                "def get_pp_size() -> int:\n    return 1\n\n\n"
                "def get_fine() -> int:\n    return 1\n"
            ),
        },
    )
    context = project / "specrt" / "context.py"
    context.write_text("from specrt.legacy import get_fine, get_pp_size\n" + context.read_text())
    assert_case(
        project,
        RULE,
        """
        from specrt import context
        from specrt.context import get_fine, get_pp_size, get_tp_size
        from specrt.legacy import get_pp_size as direct


        def sizes() -> list[int]:
            return [
                get_tp_size(),  # expect
                context.get_tp_size(),  # expect
                get_pp_size(),  # expect
                get_fine(),
                direct(),  # the defining module's name: not re-exported by the runtime
            ]
        """,
    )
    sets = run_engine(project, select={RULE}).program.sets[RULE]
    assert [s.split(":")[0] for s in sets["legacy accessors"]] == [
        "specrt.context.get_pp_size",
        "specrt.context.get_tp_size",
    ]
    assert sets["legacy accessors"][0].endswith("(@deprecated; re-exported by specrt.context)")
    assert sets["legacy accessors"][1].endswith("(warns DeprecationWarning)")


def test_the_config_hop_only_where_the_namespace_has_no_config(project: Path) -> None:
    fields = project / "specrt" / "fields.py"
    text = fields.read_text()
    assert 'class Model:\n    _NS_PATH = "model"\n' in text
    fields.write_text(
        text.replace(
            'class Model:\n    _NS_PATH = "model"\n',
            'class Model:\n    _NS_PATH = "model"\n    config: str = ""\n',
        )
    )
    assert_case(
        project,
        RULE,
        """
        from specrt.context import get_model, get_parallel


        def read() -> tuple[object, object]:
            return get_parallel().config.tp_size, get_model().config  # expect
        """,
    )


def test_the_sets_name_every_config_accessor(project: Path) -> None:
    sets = run_engine(project, select={RULE}).program.sets[RULE]
    assert sets["config accessors"] == [
        "specrt.context.get_exec",
        "specrt.context.get_memory",
        "specrt.context.get_model",
        "specrt.context.get_parallel",
        "specrt.context.get_schedule",
        "specrt.context.get_server_args",
    ]
    assert sets["memo decorators"] == ["functools.cache", "functools.lru_cache"]


def test_a_derived_leaf_is_config_and_a_rank_is_not(project: Path) -> None:
    fields = project / "specrt" / "fields.py"
    text = fields.read_text()
    head = 'class Parallel:\n    _NS_PATH = "parallel"\n'
    assert head in text
    fields.write_text(
        "def Derived(fn: str = '', doc: str = '') -> object:\n    return fn\n\n\n"
        + text.replace(
            head,
            head
            + '    attn_tp_size = Derived(fn="specrt.sizes.attn_tp")\n'
            + '    tp_rank = Derived(doc="a runtime field: publish fills it in")\n',
        )
    )
    assert_case(
        project,
        RULE,
        """
        import functools

        from specrt.context import get_parallel


        @functools.cache
        def widths() -> tuple[int, int]:
            return get_parallel().attn_tp_size, get_parallel().tp_rank  # expect
        """,
    )


def test_a_memo_that_builds_an_object_says_the_object_keeps_the_first_values(
    project: Path,
) -> None:
    """sglang 0.5.23 `MiniMaxM2QKRMSNorm._get_comm`: an `lru_cache` that sizes a
    `CustomAllReduceV2` from two schedule leaves and parks it in a class map."""
    write(
        project,
        {
            "app/comm.py": """\
class AllReduce:
    def __init__(self, max_push_size: int) -> None:
        self.max_push_size = max_push_size
""",
            "app/norm.py": """\
from functools import lru_cache

from specrt.context import get_exec, get_schedule


def helper(n: int) -> int:
    return n


class Norm:
    COMM_MAP: dict = {}

    @lru_cache
    @staticmethod
    def _get_comm(occupancy: int) -> int:
        from app.comm import AllReduce

        size = max(get_schedule().max_running_requests, occupancy)
        Norm.COMM_MAP[0] = AllReduce(max_push_size=helper(size))
        return 0


@lru_cache(maxsize=1)
def backend() -> str:
    return str(get_exec().attention_backend)


@lru_cache(maxsize=4)
def init_op(group, hidden: int) -> int:
    import torch

    world = get_exec().attention_backend
    torch.distributed.register_group("op", group.cpu_group)
    helper(hidden)
    return world
""",
        },
    )
    found = sorted(
        (f.line, f.message, f.details)
        for f in run_engine(project, select={RULE}).findings
        if f.rule == RULE
    )
    assert [line for line, _, _ in found] == [18, 25, 32]  # the decorator's call runs once
    built, plain, effects = found[0][1], found[1][1], found[2][1]
    assert "`_get_comm`, memoised process-wide, which builds `AllReduce`" in built
    assert "keeps the first publish's values" in built
    # specrt has no `reset_context`: nothing shows that a reset misses the memo
    assert "reset_context()" not in built + found[0][2]
    assert "drop the memo" not in built  # one object per call would replace the shared one
    # reads and a builtin type's conversion only: dropping the memo changes nothing else
    assert "builds" not in plain and "drop the memo" in plain  # a function is no class
    # sglang 0.5.23 `init_mori_op` (moriep.py:352): the memo registers a process
    # group and builds the op; without it that would run again for every dispatcher
    assert "drop the memo" not in effects and "pass the value in as an argument" in effects
    assert "`torch.distributed.register_group()`, `helper()`" in found[2][2]
    # the message names the remedy, the details where to read and why not drop it
    assert found[2][2].startswith("Read the accessor outside `init_op` and pass the value in")


def test_the_memo_remedy_fits_the_message_on_the_wheels_longest_names(project: Path) -> None:
    """sglang 0.5.23's `_dp_tp_moe_masks_pad_rows` and 0.5.17's
    `_enable_qwen35_fused_ar_quant` made the "does more than read" message 207
    characters: at most 200 (tests/rules/test_rule_specs.py's MAX_MESSAGE), the
    where and why in the details."""
    write(
        project,
        {
            "app/masks.py": """\
from functools import lru_cache

from specrt.context import get_parallel


def get_bool_env_var(name: str) -> bool:
    return bool(name)


@lru_cache(maxsize=1)
def _dp_tp_moe_masks_pad_rows() -> bool:
    return get_parallel().tp_size > 1 and get_bool_env_var("X")
"""
        },
    )
    (found,) = [f for f in run_engine(project, select={RULE}).findings if f.rule == RULE]
    assert len(found.message) <= 200, (len(found.message), found.message)
    assert found.message.endswith("pass the value in as an argument (the memo's key)")
    assert found.details.startswith(
        "Read the accessor outside `_dp_tp_moe_masks_pad_rows` and pass the value in"
    ), found.details
    assert "Keep the memo: `_dp_tp_moe_masks_pad_rows` also calls `get_bool_env_var()`" in (
        found.details
    )


RESET_RUNTIME = """

class _Tiers:
    resources = Resources()


_TIERS = _Tiers()


def reset_context() -> None:
    _CONTEXT.server_args = None
    _TIERS.resources = Resources()
{clear}"""

HANDLES = """\
from functools import lru_cache

from specrt.context import get_parallel, get_schedule


class AllReduce:
    def __init__(self, size: int) -> None:
        self.size = size


@lru_cache
def get_comm(occupancy: int) -> int:
    comm = AllReduce(max(get_schedule().max_running_requests, occupancy))  # line 13
    return comm.size


@lru_cache(maxsize=4)
def init_op(group, hidden: int):
    import mori

    world = get_parallel().tp_size  # line 21
    mori.shmem.init(group.cpu_group)
    op = mori.ops.DispatchOp(world, hidden)
    return op


@lru_cache
def sizes() -> int:
    return max(get_schedule().max_running_requests, 1)  # line 29
"""


def _handle_findings(project: Path, clear: str = "") -> list[tuple[int, str, str]]:
    context = project / "specrt" / "context.py"
    context.write_text(context.read_text() + RESET_RUNTIME.format(clear=clear))
    write(project, {"app/handles.py": HANDLES})
    return sorted(
        (f.line, f.message, f.details)
        for f in run_engine(project, select={RULE}).findings
        if f.rule == RULE
    )


def test_a_memo_building_a_handle_leads_with_the_reset_it_outlives(project: Path) -> None:
    """sglang 0.5.23's `init_mori_op`, `init_mori_epv2_op` (moriep.py:352, :646)
    and `MiniMaxM2QKRMSNorm._get_comm` (minimax_m2.py:434): a `functools` memo
    builds a process-level handle (a parsed class, or one outside the tree that
    it hands back) from an accessor. That release's `reset_context()` installs a
    fresh resources tier (`_CONTEXT.resources = Resources()`) and clears no memo,
    so after a reset and re-publish the memo hands back the old handle: the
    message leads with that, the details name a `get_resources()` entry."""
    found = _handle_findings(project)
    assert [line for line, _, _ in found] == [13, 21, 29]
    (_, comm, comm_fix), (_, op, op_fix), (_, plain, _) = found
    assert comm.startswith("`reset_context()` does not clear the `functools` memo `get_comm`")
    assert "hands back the `AllReduce` built from the old `get_schedule()` values" in comm
    assert "hands back the `DispatchOp` built from the old `get_parallel()` values" in op
    assert "keep `DispatchOp` in a `get_resources()` entry" in op_fix
    assert "pass the values `get_comm` reads in as its arguments" in comm_fix
    # a memo that builds nothing keeps its message: no handle to keep in the tier
    assert "reset_context()" not in plain and "builds" not in plain


def test_a_memo_the_reset_clears_is_no_handle_it_outlives(project: Path) -> None:
    """Where `reset_context()` calls the memo's `cache_clear()`, the reset does
    not miss it: the message keeps the override and re-publish it does miss."""
    clear = "    from app.handles import get_comm\n\n    get_comm.cache_clear()\n"
    found = _handle_findings(project, clear)
    comm, op = found[0][1], found[1][1]
    assert "reset_context()" not in comm and "which builds `AllReduce`" in comm
    assert op.startswith("`reset_context()` does not clear the `functools` memo `init_op`")
