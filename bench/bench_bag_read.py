"""The cost of reading config the way the docs teach it, measured honestly.

Run: ``python bench/bench_bag_read.py``. The taught spelling is ``get_exec().moe.x``:
an accessor call and two attribute loads. Its baseline is the least a call can cost
for the same hops: a module-level function returning a cached object,
``get_cached().moe.x``. Targets (issue 19): at most 1.5x that baseline, at most 2x
with the role audit on (``CTXRT_ROLE_NAMESPACES=record`` and ``=enforce``), and zero
cost inside compiled code (the graph captured with leaf reads is op for op the one
captured with literals, and the compiled calls take the same time). Issue 38 tightens
the bag read to 1.3x (bags retire on re-publish: the check is in the retired class,
not on this path) and adds a graph-visible per-forward flag read and scope inside a
compiled forward: 0 graph breaks. Exits non-zero when a target fails. Not a pytest
test: timings on a shared machine are not pins."""

from __future__ import annotations

import os
import sys
import tempfile
import time
import timeit
from collections.abc import Callable
from typing import Any

from ctxrt.context import get_exec, get_parallel, publish, reset_context
from ctxrt.record import ServerArgs
from ctxrt.roles import MODE_ENV, OUT_ENV

READS_PER_STMT = 20  # amortises the timeit loop over many reads
NUMBER = 50_000
REPEAT = 7
TARGET_PLAIN = 1.5
TARGET_BAG = 1.3  # issue 38: the taught bag read, with the stale-handle retirement
TARGET_AUDIT = 2.0
TARGET_COMPILED = 1.1  # compiled call time with reads over the one with literals
# CPU time of this process: on a shared machine, wall time also counts the waits.
CLOCK = time.process_time


class _Obj:
    def __init__(self, **attrs: Any) -> None:
        self.__dict__.update(attrs)


_CACHED = _Obj(moe=_Obj(moe_runner_backend="torch"), tp_size=1)


def get_cached() -> _Obj:
    """The baseline: a module-level function returning a cached object."""
    return _CACHED


def _time_reads(stmts: dict[str, str], env: dict[str, Any]) -> dict[str, float]:
    """CPU ns per read, best of REPEAT, interleaved so machine drift hits every case."""
    best = dict.fromkeys(stmts, float("inf"))
    for _ in range(REPEAT):
        for name, stmt in stmts.items():
            t = timeit.timeit(
                "; ".join([stmt] * READS_PER_STMT), globals=env, number=NUMBER, timer=CLOCK
            )
            best[name] = min(best[name], t)
    return {name: t / (NUMBER * READS_PER_STMT) * 1e9 for name, t in best.items()}


def _publish(mode: str | None, out: str) -> None:
    reset_context()
    if mode is None:
        os.environ.pop(MODE_ENV, None)
    else:
        os.environ[MODE_ENV], os.environ[OUT_ENV] = mode, out
    publish(ServerArgs(model_path="tiny-lm"), role="scheduler")  # dummy would resolve nothing


def eager_table() -> list[tuple[str, float, float, float | None]]:
    """(case, ns/read, x baseline, target) rows."""
    env = {"get_exec": get_exec, "get_parallel": get_parallel, "get_cached": get_cached}
    base_stmts = {
        "get_cached().moe.x (baseline)": "get_cached().moe.moe_runner_backend",
        "get_cached().x (baseline)": "get_cached().tp_size",
    }
    rows: list[tuple[str, float, float, float | None]] = []
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "roles.tsv")
        for mode, target in (
            (None, TARGET_PLAIN),
            ("record", TARGET_AUDIT),
            ("enforce", TARGET_AUDIT),
        ):
            _publish(mode, out)
            label = f" [audit {mode}]" if mode else ""
            ns = _time_reads(
                {
                    **base_stmts,
                    "get_exec().moe.x": "get_exec().moe.moe_runner_backend",
                    "get_parallel().tp_size": "get_parallel().tp_size",
                },
                env,
            )
            if mode is None:
                rows += [(name, ns[name], 1.0, None) for name in base_stmts]
            for name, base, want in (
                (
                    "get_exec().moe.x",
                    "get_cached().moe.x (baseline)",
                    target if mode else TARGET_BAG,
                ),
                ("get_parallel().tp_size", "get_cached().x (baseline)", target),
            ):
                rows.append((name + label, ns[name], ns[name] / ns[base], want))
    os.environ.pop(MODE_ENV, None)
    return rows


def compiled_rows() -> list[tuple[str, float, float, float | None]]:
    """Compiled code: the reads leave no op in the graph and no time in the call."""
    import torch

    _publish(None, "")
    graphs: dict[str, list[object]] = {}

    def capturing(name: str) -> Callable[..., Any]:
        def backend(gm: torch.fx.GraphModule, _inputs: Any) -> Callable[..., Any]:
            graphs[name] = [n.target for n in gm.graph.nodes]
            return gm.forward

        return backend

    def with_reads(x: torch.Tensor) -> torch.Tensor:
        y = x * get_parallel().tp_size
        return y + 1 if get_exec().moe.moe_runner_backend == "torch" else y

    def with_literals(x: torch.Tensor) -> torch.Tensor:
        y = x * 1
        return y + 1

    fns = {
        "compiled, leaf reads": torch.compile(
            with_reads, backend=capturing("reads"), fullgraph=True
        ),
        "compiled, literals": torch.compile(
            with_literals, backend=capturing("lits"), fullgraph=True
        ),
    }
    x = torch.ones(4)
    for fn in fns.values():
        fn(x)
    if graphs["reads"] != graphs["lits"]:
        raise SystemExit(f"graphs differ: {graphs['reads']} vs {graphs['lits']}")
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(REPEAT):
        for name, fn in fns.items():
            start = CLOCK()
            for _ in range(2000):
                fn(x)
            best[name] = min(best[name], (CLOCK() - start) / 2000 * 1e9)
    lit = best["compiled, literals"]
    return [
        ("compiled, literals (baseline)", lit, 1.0, None),
        (
            "compiled, leaf reads (same graph)",
            best["compiled, leaf reads"],
            best["compiled, leaf reads"] / lit,
            TARGET_COMPILED,
        ),
    ]


def flag_rows() -> list[tuple[str, float, float, float | None]]:
    """A graph-visible per-forward flag read and written inside a compiled forward:
    dynamo's graph-break count (target 0; the ns column is the count)."""
    import torch

    from ctxrt.context import get_forward

    def layer(x: torch.Tensor) -> torch.Tensor:
        y = x + 1 if get_forward().is_extend_in_batch else x
        with get_forward().scoped(mlp_reduce_scatter=True):
            y = y * 2 if get_forward().mlp_reduce_scatter else y
        return y

    breaks = torch._dynamo.explain(layer)(torch.ones(4)).graph_break_count
    torch._dynamo.reset()
    return [("graph breaks, forward flag read/scope (count)", float(breaks), breaks, 0)]


def main() -> int:
    rows = eager_table() + compiled_rows() + flag_rows()
    print(f"{'read':44} {'ns/call':>9} {'x base':>7} {'target':>7}")
    failed = []
    for name, ns, ratio, target in rows:
        verdict = "" if target is None else ("ok" if ratio <= target else "FAIL")
        shown = "" if target is None else f"<= {target}"
        print(f"{name:44} {ns:9.1f} {ratio:7.2f} {shown:>7} {verdict}")
        if verdict == "FAIL":
            failed.append(name)
    print("targets: " + ("all met" if not failed else f"FAILED: {', '.join(failed)}"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
