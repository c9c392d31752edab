"""Pins are counted one way everywhere: one per pinned key, apart from the
findings, in check's closing line, its statistics and JSON summary, baseline
update's line and the audit's rule rows (issue 34: on sglang 0.5.23, check said
229 new where 16 were sites of 9 pins, and baseline update said 213 added); and
every format keeps a pin change apart from the findings (issue 36): its own
section of the text report, `pin change:` in concise lines, a GitHub notice,
a SARIF note with the property kind "pin", its own count in JUnit."""

from __future__ import annotations

import json
import re
from pathlib import Path

from helpers import cli, write

# two sites of one sticky setter (CTX702: one pin, listed at both sites) and a seed read
STICKY = """\
from specrt.context import get_forward, get_server_args


def mark(extend: bool) -> None:
    get_forward().set('is_extend_in_batch', extend)


def mark_again(extend: bool) -> None:
    get_forward().set('is_extend_in_batch', not extend)


def tp() -> int:
    return get_server_args().tp_size
"""


def test_pins_are_counted_by_key_apart_from_findings(project: Path) -> None:
    write(project, {"app/batch.py": STICKY})
    doc = json.loads(cli("check", "--no-cache", "--format", "json", cwd=project).stdout)
    kinds = sorted((f["rule"], f.get("kind", "violation")) for f in doc["findings"])
    assert kinds == [("CTX101", "violation"), ("CTX702", "pin"), ("CTX702", "pin")]
    assert doc["summary"]["CTX101"] == {"found": 1, "new": 1, "baselined": 0, "stale": 0}
    assert doc["summary"]["CTX702"] == {
        "found": 0,
        "new": 0,
        "baselined": 0,
        "stale": 0,
        "pins": 1,
    }

    text = cli("check", "--no-cache", cwd=project)
    said = " ".join(text.stdout.split())
    assert "1 new finding, 1 pin change (CTX702 1), 0 stale baseline entries" in said, said
    assert "app/batch.py (1 new finding)" in said, said
    # the pin sites are a section of their own after the findings, not findings
    pins = said.index("2 pin change sites (not findings")
    assert said.index("app/batch.py (1 new finding)") < pins, said
    assert "PIN" in said[pins:] and "NEW" not in said[pins:].split("pin change (")[0], said
    concise = cli("check", "--no-cache", "--output-format", "concise", cwd=project).stdout
    assert concise.count(": CTX702 pin change: ") == 2 and ": CTX101 " in concise, concise
    github = cli("check", "--no-cache", "--output-format", "github", cwd=project).stdout
    assert github.count("(a pin change that baseline update records)") == 2, github
    # bookkeeping is a notice, never an error; the violation stays an error
    assert sorted(line[2:8] for line in github.splitlines()) == ["error ", "notice", "notice"], (
        github
    )
    sarif = json.loads(cli("check", "--no-cache", "--output-format", "sarif", cwd=project).stdout)
    got = sorted(
        (r["ruleId"], r["level"], r.get("properties", {}).get("kind", ""))
        for r in sarif["runs"][0]["results"]
    )
    assert got == [("CTX101", "error", ""), ("CTX702", "note", "pin"), ("CTX702", "note", "pin")]
    junit = cli("check", "--no-cache", "--output-format", "junit", cwd=project).stdout
    assert 'message="2 pin change sites"' in junit and 'message="1 new finding"' in junit, junit
    stats = cli("check", "--no-cache", "--statistics", cwd=project)
    row = next(line.split() for line in stats.stdout.splitlines() if line.startswith("CTX702"))
    assert row[-1] == "1" and "Pin changes" in stats.stdout, stats.stdout

    audit = cli("audit", "--no-cache", "--format", "json", cwd=project)
    doc = json.loads(audit.stdout)
    rows = {r["id"]: r for r in doc["rules"]}
    assert (rows["CTX702"]["found"], rows["CTX702"]["pins"]) == (0, 1)
    assert (rows["CTX101"]["found"], rows["CTX101"]["pins"]) == (1, 0)
    # the folder, file and scope tallies count the same findings (they counted the
    # two pin change sites too: 228 against 212 on sglang 0.5.23)
    for tally in ("folders", "files", "scopes"):
        assert sum(t["total"] for t in doc[tally]) == doc["summary"]["found"] == 1, tally

    # baseline update adds the new finding and records the pin: the same numbers,
    # by rule (rules that compare only once pinned, CTX501 say, are recorded too)
    upd = cli("baseline", "update", "--no-cache", "--allow-growth", "--reason=legacy", cwd=project)
    assert upd.returncode == 0, upd.stdout + upd.stderr
    line = " ".join(upd.stdout.split())
    assert "removed 0, added 1, kept 0; pins: " in line, line
    recorded = dict(
        (rule, int(n)) for rule, n in re.findall(r"(CTX\d+) (\d+)", line.split("pins:")[1])
    )
    assert recorded["CTX702"] == 1, line
    pins = json.loads((project / "ctxlint-baseline.json").read_text())["pins"]
    assert recorded == {rule: len(keys) for rule, keys in pins.items()}
    after = cli("check", "--no-cache", "--strict", cwd=project)
    assert after.returncode == 0, after.stdout + after.stderr
