"""The one check sequence every front end runs: request -> setup (config,
tree, rules) -> engine run -> baseline compare -> a filtered Result.

`ctxlint check`, `fix`, `baseline update`, `sets`/`show-settings`, the audit
(its collect, its history of commits and its trees), the pytest plugin and the
bench all go through `resolve` (which config, which tree, which rules) and
`check` (the run and what the baseline makes of it), or `Runs` (the engine's
runs and steps for a fix's re-checks, the bench, a resident front end): no
other module starts the engine (an import-linter contract). Front ends build
one `Request` from their arguments and render the `Checked` they get back;
nothing here prints except the warnings a request routes through `warn`.
"""

from __future__ import annotations

from ctxlint.discover.project import PROFILES, profile_path
from ctxlint.session.checked import (
    Checked,
    check,
    say_disabled,
    under,
    warn_unchecked,
)
from ctxlint.session.request import (
    PYTEST,
    QUIET,
    REFUSE,
    SAY,
    Overrides,
    Report,
    Request,
    RunOptions,
    Selection,
)
from ctxlint.session.runs import Resident, RunOutput, Runs
from ctxlint.session.setup import Setup, resolve

__all__ = [
    "PROFILES",
    "PYTEST",
    "QUIET",
    "REFUSE",
    "SAY",
    "Checked",
    "Overrides",
    "Report",
    "Request",
    "Resident",
    "RunOptions",
    "RunOutput",
    "Runs",
    "Selection",
    "Setup",
    "check",
    "profile_path",
    "resolve",
    "say_disabled",
    "under",
    "warn_unchecked",
]
