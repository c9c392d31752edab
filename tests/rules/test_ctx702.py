"""CTX702 forward-state: get_forward() reads reached from thread and executor
targets started without the caller's context (through the call graph), and
sticky set() writes outside the pinned set of sticky names."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import cli, run_engine, write
from rulecase import assert_case

RULE = "CTX702"

READERS = """\
from specrt.context import get_forward


def multi_stream() -> bool:
    return get_forward().enable_multi_stream


def via_alias() -> bool:
    fwd = get_forward()
    return fwd.is_extend_in_batch
"""


def test_reads_reached_from_every_start_kind(project: Path) -> None:
    assert_case(
        project,
        RULE,
        """
        import asyncio
        import contextvars
        import functools
        import threading
        from concurrent.futures import ThreadPoolExecutor

        from specrt.context import get_forward

        def direct() -> bool:
            return get_forward().enable_multi_stream  # expect

        def helper() -> bool:
            fwd = get_forward()
            fwd.set("is_extend_in_batch", False)  # expect
            with fwd.scoped(enable_multi_stream=True):
                return fwd.is_extend_in_batch  # expect

        def through_helper(n: int) -> bool:
            return helper()

        def inline_only() -> bool:
            return get_forward().is_extend_in_batch

        def submitted() -> bool:
            return get_forward().enable_multi_stream  # expect

        def in_loop() -> bool:
            return get_forward().is_extend_in_batch  # expect

        def copied() -> bool:
            return get_forward().is_extend_in_batch

        class Worker:
            def __init__(self) -> None:
                self.pool = ThreadPoolExecutor(1)

            def start(self) -> None:
                self.pool.submit(self.work)

            def work(self) -> bool:
                return get_forward().enable_multi_stream  # expect

            def close(self) -> None:
                self.pool = None  # a later method's reset: start() still submits

        class Store:  # the pool parked after a `None` in __init__ (sglang 0.5.23)
            def __init__(self) -> None:
                self.pool: ThreadPoolExecutor | None = None

            def open(self) -> None:
                self.pool = ThreadPoolExecutor(1)

            def read(self) -> None:
                self.pool.submit(self.one)

            def one(self) -> bool:
                return get_forward().enable_multi_stream  # expect

            def shutdown(self) -> None:
                self.pool = None

        async def main() -> None:
            threading.Thread(target=direct).start()
            threading.Thread(target=functools.partial(through_helper, 1)).start()
            with ThreadPoolExecutor() as ex:
                ex.map(lambda n: submitted(), range(2))
            await asyncio.get_running_loop().run_in_executor(None, in_loop)
            ctx = contextvars.copy_context()
            threading.Thread(target=ctx.run, args=(copied,)).start()
            threading.Thread(target=contextvars.copy_context().run, args=(copied,)).start()
            await asyncio.to_thread(copied)
            inline_only()
        """,
    )


def test_reads_in_another_module_and_nested_targets(project: Path) -> None:
    write(project, {"app/readers.py": READERS})
    assert_case(
        project,
        RULE,
        """
        import threading

        from app import readers
        from app.readers import via_alias

        def spawn() -> None:
            def loop() -> None:
                readers.multi_stream()
            threading.Thread(target=loop, daemon=True).start()
            threading.Thread(target=via_alias).start()
        """,
    )
    out = run_engine(project, select={RULE})
    found = sorted((f.path, f.line) for f in out.findings if f.rule == RULE)
    assert found == [("app/readers.py", 5), ("app/readers.py", 10)]
    (msg,) = [f.details for f in out.findings if f.line == 5]
    assert "via spawn.loop -> multi_stream" in msg


def test_derived_sets(project: Path) -> None:
    write(
        project,
        {
            "app/readers.py": READERS,
            "app/batch.py": (
                "import threading\n\nfrom app.readers import multi_stream\n"
                "from specrt.context import get_forward\n\n\n"
                "def mark(extend: bool) -> None:\n"
                "    get_forward().set('is_extend_in_batch', extend)\n\n\n"
                "def spawn() -> None:\n"
                "    threading.Thread(target=multi_stream).start()\n"
            ),
        },
    )
    sets = run_engine(project, select={RULE}).program.sets[RULE]
    assert sets == {
        "forward tier": "specrt.context.get_forward",
        "thread starts": ["app/batch.py:12 Thread"],
        "reached from threads": 2,  # multi_stream and the accessor it calls
        "forward reads": 2,
        "sticky names": {"is_extend_in_batch": ["app.batch.mark"]},
    }


def test_no_forward_tier_is_a_note(project: Path) -> None:
    ctx = project / "specrt" / "context.py"
    ctx.write_text(ctx.read_text().replace("def get_forward()", "def get_forward_state()"))
    out = run_engine(project, select={RULE})
    assert out.program.sets[RULE] == {"forward tier": "(no get_forward() in specrt.context)"}


def test_sticky_names_are_pinned_by_baseline_update(project: Path) -> None:
    mark = (
        "from specrt.context import get_forward\n\n\n"
        "def mark(extend: bool) -> None:\n"
        "    get_forward().set('is_extend_in_batch', extend)\n"
    )
    write(project, {"app/batch.py": mark})

    def check() -> tuple[int, list[str]]:
        r = cli("check", "--strict", "--format", "json", "--no-cache", cwd=project)
        doc = json.loads(r.stdout)
        return r.returncode, [f["message"] for f in doc["findings"] if f["rule"] == RULE]

    rc, found = check()  # nothing pinned: every sticky set is outside the pinned set
    assert rc == 1 and len(found) == 1 and "`is_extend_in_batch`" in found[0]
    r = cli("baseline", "update", "--no-cache", cwd=project)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads((project / "ctxlint-baseline.json").read_text())
    assert doc["pins"][RULE] == {"sticky is_extend_in_batch": "app.batch.mark"}
    assert check() == (0, [])
    # a new sticky name is a finding until it is written with scoped(...)
    write(project, {"app/sp.py": mark.replace("is_extend_in_batch", "enable_multi_stream")})
    rc, found = check()
    assert rc == 1 and len(found) == 1 and "`enable_multi_stream`" in found[0]
    # a second setter of a pinned name changes the pin
    write(project, {"app/sp.py": mark.replace("def mark", "def mark_again")})
    rc, found = check()
    assert rc == 1 and len(found) == 1 and "changed: pinned" in found[0]
