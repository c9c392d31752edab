"""`ctxlint audit`: where a codebase stands against the design, in the terminal,
as JSON and as one self-contained HTML page, optionally with a burn-down over
the git history. See docs/audit.md."""

from __future__ import annotations

import argparse

from ctxlint.report.audit.options import add_audit_options


def cmd_audit(args: argparse.Namespace) -> int:
    """Runs the audit (imported on use: `check` should not pay for the renderers)."""
    from ctxlint.report.audit.command import cmd_audit as run

    return run(args)


__all__ = ["add_audit_options", "cmd_audit"]
