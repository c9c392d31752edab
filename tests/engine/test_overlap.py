"""The parent's own work while the pool parses (issue 14): core.pool's `idle`
hook, and the engine decoding cached facts (engine.decoding) while a worker
parses an edited file."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest
from helpers import run_engine, write

from ctxlint.core import pool
from ctxlint.engine import decoding
from ctxlint.engine import run as engine

SEED = "from specrt.context import get_server_args\n"
READ = "\n\ndef f():\n    return get_server_args().tp_size\n"


def _slow_square(n: int) -> int:
    time.sleep(0.05)
    return n * n


def _die_on_three(n: int) -> int:
    if n == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    return n * n


def _nothing() -> None:
    return None


# -- core.pool ----------------------------------------------------------------------
def _died(item: int, how: str) -> str:
    return f"{item} died: {how}"


def _on_two_workers(
    fn: Callable[[int], int], items: Iterable[int], idle: Callable[[], bool]
) -> list[object]:
    return list(
        pool.run(fn, list(items), jobs=2, initializer=_nothing, initargs=(), died=_died, idle=idle)
    )


def test_idle_runs_while_the_workers_work_and_stops_once_it_has_nothing_left() -> None:
    steps: list[float] = []

    def idle() -> bool:
        steps.append(time.perf_counter())
        return len(steps) < 5  # five steps of work, then nothing left

    results = _on_two_workers(_slow_square, range(8), idle)
    assert sorted(results) == [n * n for n in range(8)]
    assert len(steps) == 5  # called until it said it was done, never after


def test_a_worker_death_with_idle_given_is_still_that_items_result() -> None:
    steps: list[int] = []

    def idle() -> bool:
        steps.append(1)
        return True  # always more to do: it is called whenever nothing is ready

    results = _on_two_workers(_die_on_three, range(6), idle)
    assert sorted(map(str, results)) == sorted(
        [str(n * n) for n in range(6) if n != 3] + ["3 died: SIGKILL"]
    )
    assert steps, "idle was never called while the workers worked"


# -- engine.decoding, through the engine --------------------------------------------
@pytest.fixture
def edited(project: Path) -> Path:
    """A tree whose cache is warm, then one file edited (its facts change)."""
    write(project, {f"app/m{i:02d}.py": SEED + READ for i in range(40)})
    run_engine(project, jobs=2, use_cache=True)
    write(project, {"app/m07.py": SEED + "\n\nX = 1\n" + READ})
    return project


def _slow_work(item):  # type: ignore[no-untyped-def]
    time.sleep(2)  # a parse that the parent's code digest always outruns
    return _real_work(item)


_real_work = engine._work


def test_a_comment_edit_stops_the_workers_and_a_code_edit_does_not(
    edited: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a pool, an edit's misses go to the workers at once and the parent
    works out their code digests meanwhile: when every miss has the facts of
    its earlier content (a comment edit), the workers stop and nothing is
    parsed; after a code edit the workers' facts are taken. Either way the
    outcome is --no-cache's."""
    run_engine(edited, jobs=2, use_cache=True)  # m07's code edit: parsed, digest learnt
    text = (edited / "app" / "m07.py").read_text()
    write(edited, {"app/m07.py": text.replace("X = 1", "X = 1  # a note") + "# the end\n"})
    with monkeypatch.context() as slow:
        slow.setattr(engine, "_work", _slow_work)
        started = time.perf_counter()
        commented = run_engine(edited, jobs=2, use_cache=True)
        took = time.perf_counter() - started
    assert commented.files_parsed == 0
    assert took < 2  # the slow worker was not waited for
    assert commented.findings == run_engine(edited).findings
    write(edited, {"app/m07.py": text.replace("X = 1", "X = 2")})
    with monkeypatch.context() as slow:
        slow.setattr(engine, "_work", _slow_work)
        coded = run_engine(edited, jobs=2, use_cache=True)
    assert coded.files_parsed == 1
    assert coded.findings == run_engine(edited).findings


def test_an_edited_file_is_parsed_by_a_worker_while_the_parent_decodes(
    edited: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One miss goes to a worker when the parent has cached facts to decode,
    and the parent decodes them meanwhile; the outcome is --no-cache's."""
    seen: list[tuple[int, bool]] = []
    real_run, real_step = pool.run, decoding.FactsDecoder.step
    stepped: list[bool] = []

    def recording_run(fn, items, **kw):  # type: ignore[no-untyped-def]
        seen.append((len(items), kw.get("idle") is not None))
        return real_run(fn, items, **kw)

    def counting_step(self: decoding.FactsDecoder) -> bool:
        stepped.append(True)
        return real_step(self)

    monkeypatch.setattr(pool, "run", recording_run)
    monkeypatch.setattr(decoding.FactsDecoder, "step", counting_step)
    warm = run_engine(edited, jobs=2, use_cache=True)
    assert warm.files_parsed == 1
    assert (1, True) in seen, seen
    assert stepped, "the parent decoded nothing while the worker parsed"
    cold = run_engine(edited, jobs=1)
    assert [f.fingerprint for f in warm.findings] == [f.fingerprint for f in cold.findings]
    assert list(warm.program.files) == list(cold.program.files)  # the order too


def test_with_every_core_parsing_the_parent_decodes_nothing_meanwhile(
    edited: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As many misses as jobs (a cold run, a fix's re-check): the workers use
    every core, so the parent does not decode ahead (it would only slow them,
    and hold the decoded facts beside the workers' trees)."""
    write(edited, {"app/m08.py": SEED + "\n\nY = 2\n" + READ})  # a second miss
    seen: list[int] = []
    steps: list[int] = []
    real_run, real_step = pool.run, decoding.FactsDecoder.step

    def recording_run(fn, items, **kw):  # type: ignore[no-untyped-def]
        seen.append(len(items))
        return real_run(fn, items, **kw)

    def recording_step(self):  # type: ignore[no-untyped-def]
        steps.append(1)
        return real_step(self)

    monkeypatch.setattr(pool, "run", recording_run)
    monkeypatch.setattr(decoding.FactsDecoder, "step", recording_step)
    warm = run_engine(edited, jobs=2, use_cache=True)
    assert warm.files_parsed == 2
    # (the misses' code digests are worked out meanwhile: a few files' tokens)
    assert seen == [2] and steps == [], (seen, steps)


def test_with_one_job_an_edited_file_is_parsed_here(
    edited: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--jobs 1 forks nothing: the one miss is parsed in the process."""
    monkeypatch.setattr(pool, "run", lambda *a, **k: pytest.fail("a pool with --jobs 1"))
    warm = run_engine(edited, jobs=1, use_cache=True)
    assert warm.files_parsed == 1


def test_an_entry_gone_from_the_cache_is_left_to_decode_all(
    edited: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A step never extracts: an entry whose digest is known but whose facts
    are gone is passed over, and decode_all extracts it again."""
    real_load = engine.Blobs.load
    loads: list[bool] = []

    def dropping_load(self, paths=None, *, extract=True):  # type: ignore[no-untyped-def]
        loads.append(extract)
        if not extract:  # as if the step's batch had been evicted: nothing read
            return None
        return real_load(self, paths, extract=extract)

    monkeypatch.setattr(engine.Blobs, "load", dropping_load)
    warm = run_engine(edited, jobs=2, use_cache=True)
    cold = run_engine(edited, jobs=1)
    assert False in loads and True in loads
    assert [f.fingerprint for f in warm.findings] == [f.fingerprint for f in cold.findings]


# -- what the parent holds ----------------------------------------------------------
def test_a_decoded_entrys_bytes_go_and_come_back_from_the_cache(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once the program holds an entry's facts its bytes are let go (a cold run
    held them all to its end); asked for again, they are read back from the
    cache, the same bytes. With no cache to read them back from, they stay."""
    made: list[engine.Blobs] = []
    real_init = engine.Blobs.__init__

    def recording_init(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        real_init(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(engine.Blobs, "__init__", recording_init)
    write(project, {"app/a.py": SEED + READ})
    out = run_engine(project, jobs=1, use_cache=True, memo=False)
    blobs = made[-1]
    assert out.program.files and set(out.program.files) <= set(blobs)
    assert not any(blobs.in_hand(p) for p in out.program.files)
    path = sorted(out.program.files)[0]
    assert engine.digest_of(blobs[path]) == blobs.digests[path]  # read back
    assert blobs.in_hand(path)
    run_engine(project, jobs=1, use_cache=False, memo=False)
    assert made[-1] is not blobs and all(made[-1].in_hand(p) for p in made[-1])
