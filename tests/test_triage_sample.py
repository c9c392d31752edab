"""bench/triage_sample.py: the hand-triage draw is stratified and deterministic,
and a seed gives a fresh draw (no sglang needed)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[1]


def _sampler() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "triage_sample", REPO / "bench" / "triage_sample.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _findings() -> list[dict]:
    made = []
    for rule, n in (("CTX102", 40), ("CTX301", 2), ("CTX501", 18)):
        for i in range(n):
            made.append({"rule": rule, "fingerprint": f"{rule}-{i:03}", "path": "a.py", "line": i})
    made.append({"rule": "CTX105", "kind": "pin", "fingerprint": "p", "path": "b.py", "line": 1})
    return made


def test_quotas_floor_then_shares_and_pins_apart() -> None:
    ts = _sampler()
    violations, pins = ts.split_pins(_findings())
    assert len(pins) == 1 and len(violations) == 60
    sample = ts.draw(violations, 20)
    by_rule = {r: sum(f["rule"] == r for f in sample) for r in ("CTX102", "CTX301", "CTX501")}
    assert by_rule == {"CTX102": 11, "CTX301": 2, "CTX501": 7}


def test_seeded_draw_is_stable_and_differs_from_the_unseeded_one() -> None:
    ts = _sampler()
    violations, _ = ts.split_pins(_findings())
    plain = [f["fingerprint"] for f in ts.draw(violations, 20)]
    assert plain[:3] == ["CTX102-000", "CTX102-001", "CTX102-002"]
    once = [f["fingerprint"] for f in ts.draw(violations, 20, "2026-12-06")]
    again = [f["fingerprint"] for f in ts.draw(list(reversed(violations)), 20, "2026-12-06")]
    assert once == again
    assert set(once) != set(plain)
    assert {f for f in once if f.startswith("CTX301")} == {"CTX301-000", "CTX301-001"}
