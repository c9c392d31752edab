"""The serving example as it looked before the runtime-context migration.

A lint target, not a program: every module is valid Python, and the design
violations in it (seed reads, record writes and copies, bag reads above publish,
shadowed accessors, a drifted plugin hook, reads off handed records) are pinned
in ``baselines/legacy_app.json``. Check it from the repository root with
``ctxlint check --strict --config examples/legacy_app/ctxlint.toml .``."""
