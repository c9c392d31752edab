"""The audit subcommand's own options (a light module: building the CLI parser
must not import the audit's renderers)."""

from __future__ import annotations

import argparse


def add_audit_options(p: argparse.ArgumentParser) -> None:
    """Options beyond the common ones (paths, --config/--profile, --select, ...)."""
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--output", "-o", metavar="FILE", help="write the text or JSON report to FILE")
    p.add_argument("--html", metavar="FILE", help="also write a self-contained HTML report")
    p.add_argument(
        "--history",
        type=int,
        default=0,
        metavar="N",
        help="findings per rule over the last N commits touching the tree (burn-down)",
    )
    p.add_argument(
        "--trees",
        nargs="+",
        metavar="TREE",
        help="findings per rule across these trees (releases, oldest first), charted like "
        "--history; the audit itself is of PATH, or of the last TREE",
    )
