"""`ctxlint audit`: where a codebase stands against the design, in the terminal,
as JSON and as one self-contained HTML page, optionally with a burn-down over
the git history. See docs/audit.md."""

from ctxlint.audit.command import add_audit_options, cmd_audit

__all__ = ["add_audit_options", "cmd_audit"]
