"""ctxlint over the five SGLang releases that carry the design (slow: a cold run
parses ~2000 files per release).

Per release, exactly: the exit code (0 or 1, never 2: every rule whose inputs the
release has runs, the others are disabled with their reason), the rules disabled
and why, the derived sets' sizes and the findings per rule. The pins live in one
table, tests/data/sglang_history_pins.json; when a change to ctxlint moves a count
on purpose, regenerate it with

    python bench/sglang_history.py --pins > tests/data/sglang_history_pins.json

and review the diff. The trees are the bench's working copies
($CTXLINT_SGLANG_HISTORY_WORK, default $TMPDIR/ctxlint-sglang-history), copied
from the unpacked wheels (downloaded with `pip download --no-deps` when missing).
"""

from __future__ import annotations

import importlib.util
import json
from typing import Any

import pytest
from conftest import REPO
from test_model_invariance import on_its_cache

pytestmark = pytest.mark.slow

PINS = json.loads((REPO / "tests" / "data" / "sglang_history_pins.json").read_text())


def _bench() -> Any:
    spec = importlib.util.spec_from_file_location(
        "sglang_history", REPO / "bench" / "sglang_history.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BENCH = _bench()


def test_the_pins_cover_every_release() -> None:
    assert sorted(PINS) == sorted(BENCH.RELEASES)


@pytest.mark.parametrize("version", [on_its_cache(v) for v in BENCH.RELEASES])
def test_release(version: str) -> None:
    source = BENCH.unpacked(version, REPO / "bench" / ".cache")
    tree = BENCH.working_copy(source, BENCH.default_work(), version)
    got = BENCH.pins({version: BENCH.measure(tree, None)})[version]
    assert got["exit"] in (0, 1), got
    assert got == PINS[version]
