"""CTX703 flags-owner: groups derived from the runtime's flags tier, owners derived
from the writes, every write shape (alias, chain, setattr, the runtime's own
slot), the lazy-default and scoped exemptions, and groups with no owner."""

from __future__ import annotations

from pathlib import Path

from helpers import run_engine, write
from rulecase import assert_case

RULE = "CTX703"

# specrt's flags tier: groups moe (runner_backend, initialized) and dp
# (enabled, attn_dp_rank); see tests/fixtures/specrt/specrt/context.py.
OWNER = """\
from specrt.context import get_flags


def initialize_moe_config() -> None:
    moe = get_flags().moe
    moe.runner_backend = "auto"
    moe.initialized = True
"""


def test_writes_outside_the_owner_in_every_shape(project: Path) -> None:
    assert_case(
        project,
        RULE,
        """
        from specrt import context
        from specrt.context import get_context, get_flags

        def swap(backend: str) -> None:
            get_flags().moe.runner_backend = backend  # expect
            flags = get_flags()
            moe = flags.moe
            moe.runner_backend += "x"  # expect
            context.get_flags().moe.runner_backend = "a"  # expect
            moe = object()
            moe.runner_backend = "not flags any more"

        def reset() -> None:  # each writing one leaf: none writes all of them
            flags = get_flags()
            flags.moe.initialized = False  # expect
            setattr(flags.moe, "initialized", True)  # expect
            get_context().flags.moe.initialized = True  # expect

        def typo() -> None:
            get_flags().moe.backend = "triton"  # expect

        def reads_are_fine() -> str:
            return get_flags().moe.runner_backend
        """,
        extra={"app/owner.py": OWNER},
    )


def test_lazy_defaults_and_scoped_writes_are_not_materialisation(project: Path) -> None:
    assert_case(
        project,
        RULE,
        """
        from specrt.context import get_flags

        def get_backend() -> str:
            moe = get_flags().moe
            if moe.runner_backend is None:
                moe.runner_backend = "auto"
            elif moe.initialized:
                moe.runner_backend = "elif is not the lazy branch"  # expect
            else:
                moe.runner_backend = "nor is else"  # expect
            return moe.runner_backend

        def scoped(backend: str) -> None:
            moe = get_flags().moe
            saved = moe.runner_backend
            moe.runner_backend = backend
            try:
                pass
            finally:
                moe.runner_backend = saved

        def half_scoped() -> None:
            moe = get_flags().moe
            moe.initialized = False  # expect
            try:
                moe.runner_backend = "x"
            finally:
                moe.runner_backend = None

        def in_tests() -> None:
            with get_flags().moe.override(runner_backend="triton"):
                pass

        class BackendOverride:  # an install/restore pair across methods
            def install(self, backend: str) -> None:
                self._prev = get_flags().moe.runner_backend
                self._other = None
                get_flags().moe.runner_backend = backend  # expect

            def restore(self) -> None:
                get_flags().moe.runner_backend = self._prev

            def restore_another_leaf(self) -> None:
                get_flags().moe.initialized = self._prev  # expect

            def restore_what_was_not_saved(self) -> None:
                get_flags().moe.runner_backend = self._other  # expect
        """,
        extra={"app/owner.py": OWNER},
    )


def test_owner_by_assigning_the_group_object(project: Path) -> None:
    write(
        project,
        {
            "app/owner.py": """\
from specrt.context import MoeFlags, get_flags


def initialize_moe_config() -> None:
    get_flags().moe = MoeFlags()


def elsewhere() -> None:
    get_flags().moe.initialized = True
""",
        },
    )
    out = run_engine(project, select={RULE})
    assert [(f.path, f.line) for f in out.findings] == [("app/owner.py", 9)]
    sets = out.program.sets[RULE]
    assert sets["owners"]["moe"] == ["app.owner.initialize_moe_config"]


def test_a_group_without_an_owner_is_one_finding_at_its_class(project: Path) -> None:
    """No one init and no one module writes every leaf: rivals across modules."""
    write(
        project,
        {
            "app/dp.py": """\
from specrt.context import get_flags


def initialize_dp_attention(enabled: bool) -> None:
    get_flags().dp.enabled = enabled
""",
            "app/rank.py": """\
from specrt.context import get_flags


def set_rank(rank: int) -> None:
    get_flags().dp.attn_dp_rank = rank
""",
            "app/moe.py": OWNER,
            "app/draft.py": "from specrt.context import get_flags\n\n\ndef also_everything() -> None:\n"
            + "    get_flags().moe.runner_backend = 'x'\n    get_flags().moe.initialized = True\n",
        },
    )
    out = run_engine(project, select={RULE})
    found = sorted((f.path, f.line, f.message) for f in out.findings)
    assert [(p, line) for p, line, _ in found] == [
        ("specrt/context.py", 6),
        ("specrt/context.py", 11),
    ]
    assert "2 functions each write all of its leaves" in found[0][2]  # MoeFlags
    assert "written piecemeal by 2 functions" in found[1][2]  # DpFlags
    dp = next(f for f in out.findings if f.line == 11)
    assert "app.rank.set_rank: attn_dp_rank" in dp.details
    sets = out.program.sets[RULE]
    assert sets["owners"] == {"dp": [], "moe": []}
    assert "owning modules" not in sets


def test_one_module_writing_every_leaf_owns_the_group(project: Path) -> None:
    """SGLang's `flags.dp`: `initialize_dp_attention_flags` and the runtime updates
    beside it in `layers/dp_attention.py`: the subsystem's own lifecycle, no rival
    owners; a write from another module is reported at the write."""
    write(
        project,
        {
            "app/dp.py": """\
from specrt.context import get_flags


def initialize_dp_attention(enabled: bool) -> None:
    get_flags().dp.enabled = enabled


def set_rank(rank: int) -> None:
    get_flags().dp.attn_dp_rank = rank


def reset_rank() -> None:
    get_flags().dp.attn_dp_rank = 0
""",
            "app/moe.py": OWNER
            + "\n\ndef also_everything() -> None:\n"
            + "    get_flags().moe.runner_backend = 'x'\n    get_flags().moe.initialized = True\n",
            "app/elsewhere.py": """\
from specrt.context import get_flags


def scale_up() -> None:
    get_flags().dp.enabled = True
""",
        },
    )
    out = run_engine(project, select={RULE})
    assert [(f.path, f.line) for f in out.findings] == [("app/elsewhere.py", 5)]
    assert "outside its owning module `app.dp`" in out.findings[0].message
    sets = out.program.sets[RULE]
    assert sets["owners"] == {"dp": [], "moe": []}
    assert sets["owning modules"] == {"dp": "app.dp", "moe": "app.moe"}


def test_a_clear_to_the_default_under_the_leaf_is_no_rival(project: Path) -> None:
    """SGLang's `flags.capture`: seeded at publish, cleared in warmup when the
    model cannot compile (`if <leaf>: <leaf> = <its default>`): one owner, and
    the clear is neither a rival nor a write outside it."""
    write(
        project,
        {
            "app/owner.py": OWNER,
            "app/warmup.py": """\
from specrt.context import get_flags


def warmup(can_compile: bool) -> None:
    moe = get_flags().moe
    if moe.initialized and moe.runner_backend:
        if not can_compile:
            moe.initialized = False
            moe.runner_backend = None
    if moe.initialized or can_compile:
        moe.initialized = False  # expect: not a clear (an `or` guards it)
    if moe.runner_backend:
        moe.initialized = False  # expect: another leaf is tested
    if moe.initialized:
        moe.initialized = True  # expect: not the default
""",
        },
    )
    out = run_engine(project, select={RULE})
    assert [(f.path, f.line) for f in out.findings] == [
        ("app/warmup.py", 11),
        ("app/warmup.py", 13),
        ("app/warmup.py", 15),
    ]
    sets = out.program.sets[RULE]
    assert sets["owners"]["moe"] == ["app.owner.initialize_moe_config"]
    assert sets["clear writes"] == [
        "moe.initialized in app.warmup.warmup (app/warmup.py:8)",
        "moe.runner_backend in app.warmup.warmup (app/warmup.py:9)",
    ]


def test_derived_sets(project: Path) -> None:
    write(
        project,
        {
            "app/owner.py": OWNER
            + "\n\ndef get_backend() -> str:\n    moe = get_flags().moe\n"
            + "    if moe.runner_backend is None:\n        moe.runner_backend = 'auto'\n"
            + "    return moe.runner_backend\n"
        },
    )
    sets = run_engine(project, select={RULE}).program.sets[RULE]
    assert sets == {
        "flags root": "specrt.context.Flags",
        "groups": {"dp": ["attn_dp_rank", "enabled"], "moe": ["initialized", "runner_backend"]},
        "owners": {"dp": [], "moe": ["app.owner.initialize_moe_config"]},
        "materialised leaves": {"dp": [], "moe": ["initialized", "runner_backend"]},
        "lazy default writes": ["moe.runner_backend in app.owner.get_backend (app/owner.py:13)"],
    }


def test_the_runtime_module_slot_and_a_flags_class_in_another_module(project: Path) -> None:
    """ctxrt's shape: the groups live in their own module the accessor's
    annotation names, and the runtime module writes its own `self.flags`."""
    write(
        project,
        {
            "specrt/flags.py": """\
class CaptureFlags:
    capturing: bool = False


class Flags:
    capture: CaptureFlags = CaptureFlags()
""",
            "specrt/context.py": (project / "specrt/context.py")
            .read_text()
            .replace("def get_flags() -> Flags:", "def get_flags() -> RtFlags:")
            .replace(
                "class RuntimeContext:",
                "from specrt.flags import Flags as RtFlags\n\n\nclass RuntimeContext:",
            )
            + "\n\ndef begin_capture() -> None:\n    _CONTEXT.flags.capture.capturing = True\n",
            "app/capture.py": """\
from specrt.context import get_flags


def capture_graphs() -> None:
    get_flags().capture.capturing = True
    get_flags().capture.capturing = False
""",
        },
    )
    out = run_engine(project, select={RULE})
    sets = out.program.sets[RULE]
    assert sets["flags root"] == "specrt.flags.Flags"
    assert sets["groups"] == {"capture": ["capturing"]}
    assert sets["owners"] == {"capture": []}
    (f,) = out.findings
    assert (f.path, "2 functions each write all") == (
        "specrt/flags.py",
        f.message[f.message.index("2 functions") :][:26],
    )


def test_no_flags_tier_checks_less_and_says_so(project: Path) -> None:
    ctx = project / "specrt/context.py"
    ctx.write_text(ctx.read_text().replace("def get_flags() -> Flags:", "def get_flags():"))
    write(project, {"app/owner.py": OWNER})
    out = run_engine(project, select={RULE})
    assert out.findings == []
    from ctxlint.rules.ctx703_flags_owner import RULE as rule

    assert "no flags groups" in (rule.partial(out.program.sets[RULE]) or "")
    # no accessor at all: a codebase without a flags tier has nothing to own
    ctx.write_text(ctx.read_text().replace("def get_flags():", "def flags_of():"))
    out = run_engine(project, select={RULE})
    assert out.findings == [] and rule.partial(out.program.sets[RULE]) is None
