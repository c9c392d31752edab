"""`ctxlint audit`'s report: where a codebase stands against the design, in the
terminal, as JSON and as one self-contained HTML page, optionally with a
burn-down over the git history or across trees. The command itself is
cli/audit.py; see docs/audit.md."""
