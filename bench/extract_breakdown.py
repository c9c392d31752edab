#!/usr/bin/env python3
"""Where a cold worker's time goes: each step of one file's extraction, as a
multiple of LibCST's parse of the same files.

Runs the pool worker's own code (`engine.workers._work`) in this process over
a sample of a tree's files, timing each step around its call: CPython's
verdict, LibCST's parse, the walk with every visitor, the span codegen, the
JSON round trip and the part digests; "rest" is what the steps leave (the
visitors' `finish`, encoding, reading). With `--per-visitor`, each visitor's
own seconds (the engine's --timings clock, which adds its own overhead).

    python bench/extract_breakdown.py [TREE] --config FILE [--sample N] [--under DIR]

TREE is the project root (as in `ctxlint check --config FILE TREE`); without
it, the config's own.

A script, not a test: tests/test_bench_smoke.py runs it on examples/.
"""

from __future__ import annotations

import argparse
import gc
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ctxlint import session
from ctxlint.engine import workers
from ctxlint.facts import context, extract
from ctxlint.facts.walk import walk

STEPS: dict[str, float] = {}
_PATCHED: list[tuple[Any, str, Any]] = []  # (owner, name, original), put back after a run


def _timed(owner: Any, name: str, step: str) -> None:
    inner: Callable[..., Any] = getattr(owner, name)
    _PATCHED.append((owner, name, inner))

    def call(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            STEPS[step] = STEPS.get(step, 0.0) + time.perf_counter() - start

    setattr(owner, name, call)


def breakdown(
    root: Path | None, config_path: Path, sample: int, under: str, per_visitor: bool
) -> dict[str, float]:
    """Seconds per step (and "total", and "visitor X" with per_visitor) over the sample."""
    # the config as `ctxlint check --config FILE [TREE]` resolves it
    setup = session.resolve(
        session.Request(
            config=str(config_path),
            root=str(root) if root else None,
            run=session.RunOptions(use_cache=False),
        )
    )
    config = setup.config
    steps = session.Runs(setup).steps()
    files, sources, _ = steps.sources()
    root = config.root
    vocab = steps.vocabulary(files, sources)
    chosen = [f for f in files if f.rel.startswith(under)]
    random.Random(1).shuffle(chosen)
    chosen = chosen[:sample]
    workers._init_worker(vocab.to_json(), config.target_version, per_visitor)
    STEPS.clear()
    try:
        _timed(extract.pysource, "read", "CPython's verdict")
        _timed(extract, "parse", "LibCST parse")
        _timed(extract, "walk", "walk and visitors")
        _timed(context.FileContext, "resolve_anchors", "span codegen")
        _timed(extract, "_plain", "JSON round trip")
        _timed(workers, "of_facts", "part digests")
        bare = _bare_walks()  # outside the parse's timer: not in "LibCST parse"
        visitors: dict[str, float] = {}
        gc.disable()  # as in a run (engine.run pauses the cyclic GC)
        start = time.perf_counter()
        for f in chosen:
            clock = workers._work((f.rel, f.module, (root / f.rel).read_bytes()))[2]
            for name, secs in clock.items():
                if name != "parse":
                    visitors[name] = visitors.get(name, 0.0) + secs
        elapsed = time.perf_counter() - start
    finally:
        gc.enable()
        while _PATCHED:  # last patched first: each original as it was
            owner, name, original = _PATCHED.pop()
            setattr(owner, name, original)
    total = elapsed - bare[0]  # the bare walks are not the worker's
    out = {"total": total, "files": float(len(chosen)), "bare walk": bare[0], **STEPS}
    out["rest"] = total - sum(STEPS.values())
    out.update({f"visitor {k}": v for k, v in visitors.items()})
    return out


def _bare_walks() -> list[float]:
    """Walk each parsed tree once more with no visitor, right after its parse,
    timed apart (what the walk alone costs): [seconds so far]."""
    spent = [0.0]
    parse = extract.parse

    def parse_and_walk(text: str) -> Any:
        tree = parse(text)
        start = time.perf_counter()
        walk(tree, _nothing, _nothing)
        spent[0] += time.perf_counter() - start
        return tree

    _PATCHED.append((extract, "parse", parse))
    extract.parse = parse_and_walk  # type: ignore[assignment]
    return spent


def _nothing(_node: object) -> None:
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tree", type=Path, nargs="?")
    ap.add_argument("--config", type=Path, required=True)
    ap.add_argument("--sample", type=int, default=250, help="files (default 250)")
    ap.add_argument("--under", default="", help="only files under this folder")
    ap.add_argument("--per-visitor", action="store_true", help="each visitor's seconds too")
    args = ap.parse_args(argv)
    tree = args.tree.resolve() if args.tree else None
    got = breakdown(tree, args.config, args.sample, args.under, args.per_visitor)
    parse = got["LibCST parse"] or 1e-9
    print(
        f"{int(got['files'])} files: {got['total']:.2f} s = {got['total'] / parse:.2f}x the parse"
    )

    def show(keys: list[str], indent: str) -> None:
        for k in sorted(keys, key=lambda k: -got[k]):
            print(f"{indent}{k:28} {got[k]:7.2f} s {got[k] / parse:6.2f}x")

    show([k for k in got if k in STEPS or k == "rest"], "  ")
    print(f"  (the walk alone, no visitor: {got['bare walk'] / parse:.2f}x)")
    mine = [k for k in got if k.startswith("visitor ")]
    if mine:
        print("  each visitor's own time, within the walk and visitors:")
        show(mine, "    ")
    return 0


if __name__ == "__main__":
    sys.exit(main())
