#!/usr/bin/env python3
"""Draw the hand-triage sample of issue 36 from a `ctxlint check --format json` report.

Deterministic and stratified: pins (kind "pin") are left out and counted apart;
every rule with findings gets min(its count, 3) entries, the rest of the sample
is shared out in proportion to the rules' counts (largest remainder, ties by
rule id), and within a rule the entries are the first ones by sorted
fingerprint, or with `--seed S` by sorted sha256 of S and the fingerprint (a
fresh draw that does not repeat an earlier sample's entries). The same report
and seed always give the same sample.

    python bench/triage_sample.py /tmp/triage-0523.json --size 60
    python bench/triage_sample.py /tmp/triage-0523.json --size 60 --format json
    python bench/triage_sample.py /tmp/triage-0523.json --size 60 --seed 2026-12-06
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter, defaultdict
from fractions import Fraction
from pathlib import Path

FLOOR = 3


def split_pins(findings: list[dict]) -> tuple[list[dict], list[dict]]:
    """Violations and pins (the baseline's bookkeeping, not findings to judge)."""
    pins = [f for f in findings if f.get("kind") == "pin"]
    violations = [f for f in findings if f.get("kind") != "pin"]
    return violations, pins


def quotas(counts: dict[str, int], size: int) -> dict[str, int]:
    """Entries per rule: the floor first, then the rest by the rules' shares."""
    take = {rule: min(n, FLOOR) for rule, n in counts.items()}
    total = sum(counts.values())
    left = min(size, total) - sum(take.values())
    if left <= 0:
        return take
    shares = {rule: Fraction(counts[rule] * left, total) for rule in counts}
    for rule in counts:
        take[rule] = min(counts[rule], take[rule] + int(shares[rule]))
    # Largest remainder for what integer parts leave; a full rule gives way.
    order = sorted(counts, key=lambda r: (-(shares[r] - int(shares[r])), -counts[r], r))
    while sum(take.values()) < min(size, total):
        grew = False
        for rule in order:
            if sum(take.values()) >= min(size, total):
                break
            if take[rule] < counts[rule]:
                take[rule] += 1
                grew = True
        if not grew:
            break
    return take


def _order(seed: str | None):
    """Within a rule: by fingerprint, or by a seeded hash of it."""
    if seed is None:
        return lambda f: (f["fingerprint"], f["path"], f["line"])

    def key(f: dict) -> tuple[str, str, int]:
        mixed = hashlib.sha256(f"{seed}:{f['fingerprint']}".encode()).hexdigest()
        return (mixed, f["path"], f["line"])

    return key


def draw(findings: list[dict], size: int, seed: str | None = None) -> list[dict]:
    by_rule: dict[str, list[dict]] = defaultdict(list)
    for f in findings:
        by_rule[f["rule"]].append(f)
    take = quotas({rule: len(fs) for rule, fs in by_rule.items()}, size)
    sample: list[dict] = []
    for rule in sorted(by_rule):
        ordered = sorted(by_rule[rule], key=_order(seed))
        sample.extend(ordered[: take[rule]])
    return sample


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report", type=Path, help="ctxlint check --format json output")
    ap.add_argument("--size", type=int, default=60, help="sample size (default 60)")
    ap.add_argument("--format", choices=("text", "json"), default="text")
    ap.add_argument("--seed", help="draw by a seeded hash instead of the first fingerprints")
    args = ap.parse_args(argv)
    report = json.loads(args.report.read_text())
    violations, pins = split_pins(report["findings"])
    sample = draw(violations, args.size, args.seed)
    if args.format == "json":
        json.dump({"sample": sample, "pins": pins}, sys.stdout, indent=1)
        print()
        return 0
    counts = Counter(f["rule"] for f in violations)
    drawn = Counter(f["rule"] for f in sample)
    print(f"violations {len(violations)}, pins {len(pins)}, sample {len(sample)}")
    for rule in sorted(counts):
        print(f"  {rule}: {counts[rule]} found, {drawn[rule]} drawn")
    for i, f in enumerate(sample, 1):
        print(
            f"{i:3} {f['rule']} {f['fingerprint']} {f['path']}:{f['line']} [{f.get('scope', '')}]"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
