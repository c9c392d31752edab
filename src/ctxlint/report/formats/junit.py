"""JUnit XML: one testsuite "ctxlint", one testcase per rule, one per unreadable file.

A rule's testcase fails when it has new findings (or stale baseline entries under
--strict); a file that could not be checked is an <error> testcase.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import defaultdict

from ctxlint.core.findings import NEW, PIN, Finding, Result, StaleEntry
from ctxlint.report.formats._common import plural, rule_catalogue, rule_title, update_hint

# Characters XML 1.0 cannot hold at all, even escaped.
_INVALID_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _clean(s: str) -> str:
    return _INVALID_XML.sub("\ufffd", s)


def _finding_line(f: Finding) -> str:
    s = f.span
    pin = "pin change: " if f.kind == PIN else ""
    return f"{f.path}:{s.line}:{s.column}: {pin}{f.message} [scope {f.scope}]"


def _stale_line(e: StaleEntry, hint: str) -> str:
    return f"{e.path}: stale baseline entry [scope {e.scope}, {e.fingerprint}]; {hint}"


def to_element(result: Result) -> ET.Element:
    new: dict[str, list[Finding]] = defaultdict(list)
    baselined: dict[str, int] = defaultdict(int)
    for f in result.findings:
        if f.status == NEW:
            new[f.rule].append(f)
        else:
            baselined[f.rule] += 1
    stale: dict[str, list[StaleEntry]] = defaultdict(list)
    for e in result.stale:
        stale[e.rule].append(e)

    suite = ET.Element("testsuite", name="ctxlint")
    failures = 0
    for rule in rule_catalogue(result):
        case = ET.SubElement(suite, "testcase", classname="ctxlint", name=rule_title(rule))
        failing_stale = stale[rule.id] if result.strict else []
        if new[rule.id] or failing_stale:
            failures += 1
            parts = []
            pins = sum(f.kind == PIN for f in new[rule.id])  # bookkeeping, counted apart
            if len(new[rule.id]) > pins:
                parts.append(plural(len(new[rule.id]) - pins, "new finding"))
            if pins:
                parts.append(plural(pins, "pin change site"))
            if failing_stale:
                parts.append(
                    plural(len(failing_stale), "stale baseline entry", "stale baseline entries")
                )
            failure = ET.SubElement(case, "failure", message=", ".join(parts), type=rule.id)
            lines = [_finding_line(f) for f in new[rule.id]]
            lines += [_stale_line(e, update_hint(result)) for e in failing_stale]
            failure.text = _clean("\n".join(lines))
        notes = []
        if baselined[rule.id]:
            notes.append(f"{plural(baselined[rule.id], 'baselined finding')} (accepted)")
        if stale[rule.id] and not result.strict:
            notes += [_stale_line(e, update_hint(result)) for e in stale[rule.id]]
        if notes:
            ET.SubElement(case, "system-out").text = _clean("\n".join(notes))

    for err in result.errors:
        case = ET.SubElement(
            suite, "testcase", classname="ctxlint.core.errors", name=_clean(err.path)
        )
        error = ET.SubElement(case, "error", message=_clean(err.message), type="FileError")
        error.text = _clean(f"{err.path}: {err.message}")

    suite.set("tests", str(len(suite)))
    suite.set("failures", str(failures))
    suite.set("errors", str(len(result.errors)))
    suite.set("skipped", "0")
    return suite


def render(result: Result) -> str:
    suite = to_element(result)
    ET.indent(suite)
    body = ET.tostring(suite, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"
