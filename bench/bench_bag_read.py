"""Bag leaf read cost against a plain attribute read and a module-global read.

Run: ``python bench/bench_bag_read.py``. Exits non-zero when a held bag's leaf read
(the hot-path spelling: ``moe = get_exec().moe`` once, ``moe.moe_runner_backend`` in
the loop) costs more than 2x a plain instance attribute read. Not a pytest test."""

from __future__ import annotations

import sys
import timeit

from ctxrt.context import get_exec, get_parallel, publish
from ctxrt.record import ServerArgs

THRESHOLD = 2.0
READS_PER_STMT = 20  # amortises the timeit loop over many reads
NUMBER = 100_000
REPEAT = 7

MOE_RUNNER_BACKEND = "torch"  # the module-global baseline


class Plain:
    def __init__(self) -> None:
        self.moe_runner_backend = "torch"


def _case(read: str, setup: str = "") -> tuple[str, str]:
    # timeit runs ``setup`` inside its timing function: names bound there are locals,
    # as they are in a forward that holds a bag.
    return "; ".join([read] * READS_PER_STMT), setup


def main() -> int:
    publish(ServerArgs(model_path="dummy"), role="scheduler")
    env = {
        "PLAIN": Plain(),
        "MOE": get_exec().moe,
        "PARALLEL": get_parallel(),
        "get_exec": get_exec,
        "get_parallel": get_parallel,
        "MOE_RUNNER_BACKEND": MOE_RUNNER_BACKEND,
    }
    cases = {
        "plain attribute (obj.x)": _case("o.moe_runner_backend", "o = PLAIN"),
        "module global (X)": _case("MOE_RUNNER_BACKEND"),
        "held bag leaf (moe.x)": _case("m.moe_runner_backend", "m = MOE"),
        "held parallel leaf (p.tp_size)": _case("p.tp_size", "p = PARALLEL"),
        "get_exec().moe.x": _case("get_exec().moe.moe_runner_backend"),
        "get_parallel().tp_size": _case("get_parallel().tp_size"),
    }
    best = dict.fromkeys(cases, float("inf"))
    for _ in range(REPEAT):  # interleaved, so drift on a shared machine hits every case
        for name, (stmt, setup) in cases.items():
            t = timeit.timeit(stmt, setup=setup, globals=env, number=NUMBER)
            best[name] = min(best[name], t)
    ns_per_read = {name: t / (NUMBER * READS_PER_STMT) * 1e9 for name, t in best.items()}
    base = ns_per_read["plain attribute (obj.x)"]
    print(f"{'read':32} {'ns/read':>8} {'x plain':>8}")
    for name, ns in ns_per_read.items():
        print(f"{name:32} {ns:8.2f} {ns / base:8.2f}")
    ratio = ns_per_read["held bag leaf (moe.x)"] / base
    verdict = "ok" if ratio <= THRESHOLD else "FAIL"
    print(f"held bag leaf / plain attribute = {ratio:.2f} (target <= {THRESHOLD}): {verdict}")
    return 0 if ratio <= THRESHOLD else 1


if __name__ == "__main__":
    sys.exit(main())
