"""bench/sglang_sweep.py on two small trees: what stands where a seed read
stood, read off the two versions (tests/data/sglang_sweep_0517_0519.json is
its output on the real wheels), and the verdicts beside a fix run's lines."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from conftest import REPO

OLD = """\
from rt import get_server_args


def direct():
    size = get_server_args().tp_size
    return size


def alias():
    sa = get_server_args()
    if sa.moe_a2a_backend != "none":
        return sa.chunked_prefill_size
    return 0


def moved():
    try:
        sa = get_server_args()
    except ValueError:
        return "auto"
    return sa.mm_attention_backend or "auto"


def gone():
    return get_server_args().pp_size
"""
NEW = """\
from rt import get_exec, get_mm, get_parallel, get_schedule


def direct():
    size = get_parallel().tp_size
    return size


def alias():
    a2a = get_exec().moe.moe_a2a_backend
    schedule = get_schedule()
    if a2a != "none":
        return schedule.chunked_prefill_size
    return 0


def moved():
    try:
        return get_mm().mm_attention_backend or "auto"
    except ValueError:
        return "auto"
"""


def _bench() -> Any:
    spec = importlib.util.spec_from_file_location(
        "sglang_sweep", REPO / "bench" / "sglang_sweep.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _finding(scope: str, field: str, needle: str, nth: int = 0) -> dict[str, Any]:
    lines = OLD.splitlines()
    hits = [(i, ln.index(needle)) for i, ln in enumerate(lines) if needle in ln]
    line, col = hits[nth]
    return {
        "path": "m.py",
        "scope": scope,
        "line": line + 1,
        "column": col + 1,
        "end_line": line + 1,
        "end_column": col + 1 + len(needle),
        "data": {"field": field},
    }


def test_what_sglang_wrote_in_each_reads_place(tmp_path: Path) -> None:
    bench = _bench()
    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir()
    new.mkdir()
    (old / "m.py").write_text(OLD)
    (new / "m.py").write_text(NEW)
    findings = [
        _finding("direct", "tp_size", "get_server_args().tp_size"),
        _finding("alias", "moe_a2a_backend", "sa.moe_a2a_backend"),
        _finding("alias", "chunked_prefill_size", "sa.chunked_prefill_size"),
        _finding("moved", "mm_attention_backend", "sa.mm_attention_backend"),
        _finding("gone", "pp_size", "get_server_args().pp_size"),
    ]
    rows = bench.sweep(findings, old, new)
    got = [(r["old"], r["sglang"], r.get("sglang_value"), r.get("sglang_note")) for r in rows]
    assert got == [
        ("get_server_args().tp_size", "get_parallel().tp_size", None, None),
        # a local bound first: its value beside it
        ("sa.moe_a2a_backend", "a2a", "get_exec().moe.moe_a2a_backend", None),
        (
            "sa.chunked_prefill_size",
            "schedule.chunked_prefill_size",
            "get_schedule().chunked_prefill_size",
            None,
        ),
        # the statement moved into the `try`: found there
        ("sa.mm_attention_backend", "get_mm().mm_attention_backend", None, None),
        ("get_server_args().pp_size", None, None, "the function is gone"),
    ]
    fix = "\n".join(
        [
            "m.py:5:12: CTX101 fixed `get_server_args().tp_size` -> `get_parallel().tp_size` (unsafe: x)",
            "m.py:11:8: CTX101 fixed `sa.moe_a2a_backend` -> `get_exec().moe.moe_a2a_backend`",
            "m.py:12:16: CTX101 fixed `sa.chunked_prefill_size` -> `get_schedule().max_prefill`",
            "m.py:21:12: CTX101 left: `sa.mm_attention_backend`: the alias is assigned inside a `try`",
            "m.py:25:12: CTX101 fixed `get_server_args().pp_size` -> `get_parallel().pp_size`",
        ]
    )
    verdicts = [(r["verdict"], r["fix"]) for r in bench.agreement(rows, fix)]
    assert verdicts == [
        (bench.EXACT, "get_parallel().tp_size"),
        (bench.EXACT, "get_exec().moe.moe_a2a_backend"),
        (bench.DIFFERENT, "get_schedule().max_prefill"),
        (bench.LEFT, "the alias is assigned inside a `try`"),
        (bench.DIFFERENT, "get_parallel().pp_size"),  # SGLang removed the function
    ]
