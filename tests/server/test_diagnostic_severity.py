"""The severity a finding is served with: what a check would fail on is an
error, a baselined finding a hint, and a new pin entry (bookkeeping that
`ctxlint baseline update` records) information, as the GitHub format's notice."""

from __future__ import annotations

import dataclasses

from lsprotocol import types

from ctxlint.core.findings import BASELINED, NEW, PIN, Finding, Span
from ctxlint.server.diagnostics import diagnostic

READ = Finding(
    rule="CTX301",
    path="app/worker.py",
    span=Span(1, 1, 1, 5),
    scope="<module>",
    message="reads a bag before any publish",
    snippet="x",
    fingerprint="f" * 20,
)


def severity(f: Finding) -> types.DiagnosticSeverity | None:
    return diagnostic(f, ["x = 1"], {}, lambda path: f"file:///{path}").severity


def test_a_new_violation_is_an_error_a_baselined_one_a_hint() -> None:
    assert severity(READ) == types.DiagnosticSeverity.Error
    assert severity(dataclasses.replace(READ, status=BASELINED)) == types.DiagnosticSeverity.Hint


def test_a_new_pin_is_information_and_a_recorded_one_a_hint() -> None:
    pin = dataclasses.replace(READ, kind=PIN, status=NEW)
    assert severity(pin) == types.DiagnosticSeverity.Information
    assert severity(dataclasses.replace(pin, status=BASELINED)) == types.DiagnosticSeverity.Hint
