"""CTX705 flags-mirror-config: a flags leaf assigned exactly a bag leaf (through
locals, through the runtime's own slot) is a mirror; a derivation, a leaf written at
several sites, a bag that is not a leaf and an undeclared leaf are not."""

from __future__ import annotations

from pathlib import Path

from helpers import run_engine, write
from rulecase import assert_case

RULE = "CTX705"


def test_mirrors_in_every_shape_and_what_is_not_one(project: Path) -> None:
    assert_case(
        project,
        RULE,
        """
        from specrt.context import get_context, get_exec, get_flags, get_model

        def initialize_moe_config() -> None:
            flags = get_flags()
            exec_moe = get_exec().moe
            flags.moe.runner_backend = exec_moe.moe_runner_backend  # expect

        def initialize_dp_attention() -> None:
            dp = get_context().flags.dp
            dp.enabled = get_model().context_length  # expect

        def derived() -> None:
            get_flags().moe.initialized = bool(get_exec().moe.moe_runner_backend)
            get_flags().moe.initialized = get_exec().moe.moe_runner_backend or "auto"

        def not_a_leaf() -> None:
            get_flags().moe.initialized = get_exec().moe

        def not_declared() -> None:
            get_flags().moe.backend = get_exec().moe.moe_runner_backend
        """,
    )


def test_a_leaf_written_at_several_sites_is_state(project: Path) -> None:
    write(
        project,
        {
            "app/init.py": """\
from specrt.context import get_exec, get_flags


def initialize_moe_config() -> None:
    get_flags().moe.runner_backend = get_exec().moe.moe_runner_backend


def swap(backend: str) -> None:
    get_flags().moe.runner_backend = backend
""",
        },
    )
    out = run_engine(project, select={RULE})
    assert out.findings == []
    sets = out.program.sets[RULE]
    assert sets["leaves written with several values"] == ["moe.runner_backend"]
    assert sets["groups"] == {
        "dp": ["attn_dp_rank", "enabled"],
        "moe": ["initialized", "runner_backend"],
    }


def test_a_copy_from_the_parallel_tier_is_its_stage_flag_and_listed(project: Path) -> None:
    write(
        project,
        {
            "app/init.py": """\
from specrt.context import get_flags, get_parallel


def initialize_dp_attention(attn_dp_rank: int) -> None:
    dp = get_flags().dp
    parallel = get_parallel()
    dp.enabled = parallel.dp_size
    dp.attn_dp_rank = attn_dp_rank


def is_dp_attention_enabled() -> bool:
    return get_flags().dp.enabled
""",
        },
    )
    out = run_engine(project, select={RULE})
    assert out.findings == []
    sets = out.program.sets[RULE]
    assert sets["copied from the parallel tier (its stage's flags)"] == [
        "dp.enabled = get_parallel().dp_size"
    ]


def test_an_override_outside_tests_is_a_swap_and_one_in_a_test_is_not(project: Path) -> None:
    init = """\
from specrt.context import get_exec, get_flags


def initialize_moe_config() -> None:
    flags = get_flags().moe
    flags.runner_backend = get_exec().moe.moe_runner_backend
"""
    swap = """\
from specrt.context import get_flags


def draft_backend_context(backend: str) -> object:
    return get_flags().moe.override(runner_backend=backend)
"""
    test = """\
from specrt.context import get_flags


def test_draft() -> None:
    with get_flags().moe.override(runner_backend="triton"):
        pass
"""
    write(project, {"app/init.py": init, "tests/test_draft.py": test})
    out = run_engine(project, select={RULE})
    assert [(f.path, f.line) for f in out.findings] == [("app/init.py", 6)]
    write(project, {"app/swap.py": swap})
    out = run_engine(project, select={RULE})
    assert out.findings == []
    assert out.program.sets[RULE]["leaves written with several values"] == ["moe.runner_backend"]


def test_a_lazy_default_in_a_shim_is_not_a_second_writer(project: Path) -> None:
    assert_case(
        project,
        RULE,
        """
        from specrt.context import get_exec, get_flags

        def initialize_moe_config() -> None:
            get_flags().moe.runner_backend = get_exec().moe.moe_runner_backend  # expect

        def get_moe_runner_backend() -> str:
            moe = get_flags().moe
            if moe.runner_backend is None:
                moe.runner_backend = "auto"
            return moe.runner_backend
        """,
    )


def test_the_message_names_the_bag_leaf(project: Path) -> None:
    write(
        project,
        {
            "app/init.py": "from specrt.context import get_exec, get_flags\n\n\n"
            "def initialize_moe_config() -> None:\n"
            "    get_flags().moe.runner_backend = get_exec().moe.moe_runner_backend\n",
        },
    )
    (f,) = run_engine(project, select={RULE}).findings
    assert f.message.startswith(
        "`get_flags().moe.runner_backend` mirrors the bag leaf "
        "`get_exec().moe.moe_runner_backend` with no derivation"
    )
    assert f.data == {"field": "moe_runner_backend", "namespace": "exec.moe"}


def test_no_groups_checks_nothing_and_says_so(project: Path) -> None:
    ctx = project / "specrt/context.py"
    ctx.write_text(ctx.read_text().replace("def get_flags() -> Flags:", "def get_flags():"))
    write(
        project,
        {
            "app/init.py": "from specrt.context import get_exec, get_flags\n\n\n"
            "def initialize_moe_config() -> None:\n"
            "    get_flags().moe.runner_backend = get_exec().moe.moe_runner_backend\n",
        },
    )
    out = run_engine(project, select={RULE})
    assert out.findings == []
    from ctxlint.rules.ctx705_flags_mirror_config import RULE as rule

    assert "no flags groups" in (rule.partial(out.program.sets[RULE]) or "")


def test_the_same_bag_leaf_copied_by_two_inits_is_still_a_mirror(project: Path) -> None:
    assert_case(
        project,
        RULE,
        """
        from specrt.context import get_exec, get_flags

        def initialize_moe_config() -> None:
            get_flags().moe.runner_backend = get_exec().moe.moe_runner_backend  # expect

        def reinitialize_after_reload() -> None:
            moe = get_flags().moe
            moe.runner_backend = get_exec().moe.moe_runner_backend  # expect
        """,
    )


def test_a_local_is_what_its_last_binding_holds(project: Path) -> None:
    """Locals are the binding model's: a loop, `with` or walrus rebinding a name that
    held a bag leaf (or a flags group) leaves it holding something else."""
    assert_case(
        project,
        RULE,
        """
        from specrt.context import get_exec, get_flags

        def initialize_moe_config(backends: list[str], opened) -> None:
            backend = get_exec().moe.moe_runner_backend
            for backend in backends:
                get_flags().moe.runner_backend = backend
            moe = get_flags().moe
            with opened() as moe:
                moe.initialized = get_exec().moe.moe_runner_backend
            if (moe := get_flags().moe) is not None:
                moe.initialized = get_exec().moe.moe_runner_backend  # expect
        """,
    )
