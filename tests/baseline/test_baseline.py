"""The ratchet baseline: file format, loading errors, compare, update, pins."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ctxlint.baseline.ratchet import (
    Baseline,
    BaselineEntry,
    BaselineError,
    compare,
    compare_pins,
    load_baseline,
    show,
    update,
)
from ctxlint.core.errors import CtxlintError
from ctxlint.core.findings import BASELINED, NEW, Finding, Span, StaleEntry


def finding(fp: str, path: str = "pkg/a.py", rule: str = "CTX101", line: int = 1, **kw) -> Finding:
    return Finding(
        rule=rule,
        path=path,
        span=Span(line, 5, line, 20),
        scope=kw.pop("scope", "f"),
        message="read of a seed field",
        snippet=kw.pop("snippet", "get_server_args().tp_size"),
        fingerprint=fp,
        **kw,
    )


def entry(fp: str, path: str = "pkg/a.py", rule: str = "CTX101", **kw) -> BaselineEntry:
    return BaselineEntry(rule, path, kw.pop("scope", "f"), fp, kw.pop("snippet", "x.y"), **kw)


# -- file format ---------------------------------------------------------------------


def test_to_json_is_sorted_and_byte_stable(tmp_path: Path) -> None:
    entries = [
        entry("fp3", path="pkg/b.py"),
        entry("fp2", path="pkg/a.py", rule="CTX201"),
        entry("fp1", path="pkg/a.py", reason="legacy, tracked in #12"),
    ]
    pins = {"CTX301": {"zeta": [1, 2], "alpha": {"b": 1, "a": 2}}, "CTX300": {"k": "v"}}
    b1 = Baseline.from_entries(entries, pins)
    b2 = Baseline.from_entries(reversed(entries), dict(reversed(list(pins.items()))))
    assert b1.to_json() == b2.to_json()

    expected = """\
{
  "entries": [
    {
      "fingerprint": "fp1",
      "path": "pkg/a.py",
      "reason": "legacy, tracked in #12",
      "rule": "CTX101",
      "scope": "f",
      "snippet": "x.y"
    },
    {
      "fingerprint": "fp2",
      "path": "pkg/a.py",
      "rule": "CTX201",
      "scope": "f",
      "snippet": "x.y"
    },
    {
      "fingerprint": "fp3",
      "path": "pkg/b.py",
      "rule": "CTX101",
      "scope": "f",
      "snippet": "x.y"
    }
  ],
  "pins": {
    "CTX300": {
      "k": "v"
    },
    "CTX301": {
      "alpha": {
        "a": 2,
        "b": 1
      },
      "zeta": [
        1,
        2
      ]
    }
  },
  "schema": 1,
  "tool": "ctxlint"
}
"""
    assert b1.to_json() == expected
    path = tmp_path / "baseline.json"
    b1.save(path)
    assert path.read_bytes() == expected.encode()


def test_round_trip(tmp_path: Path) -> None:
    b = Baseline.from_entries(
        [entry("fp1", snippet="sa.ünïcode"), entry("fp2", reason="why")], {"CTX9": {"k": [1]}}
    )
    path = tmp_path / "sub" / "dir" / "baseline.json"  # parents are created
    b.save(path)
    loaded = load_baseline(path)
    assert loaded == b
    assert loaded.entries["fp2"].reason == "why"
    assert loaded.entries["fp1"].reason is None
    # Saving what was loaded changes nothing, byte for byte.
    before = path.read_bytes()
    loaded.save(path)
    assert path.read_bytes() == before


def test_one_entry_per_fingerprint() -> None:
    b = Baseline.from_entries([entry("fp1", path="a.py"), entry("fp1", path="b.py")])
    assert len(b) == 1
    assert json.loads(b.to_json())["entries"][0]["path"] == "a.py"


def test_save_is_atomic_and_leaves_no_temp_files(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "baseline.json"
    Baseline.from_entries([entry("old")]).save(path)
    before = path.read_bytes()

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(CtxlintError, match=r"cannot write baseline .*baseline\.json: disk full"):
        Baseline.from_entries([entry("new")]).save(path)
    assert path.read_bytes() == before  # old content intact
    assert sorted(p.name for p in tmp_path.iterdir()) == ["baseline.json"]


# -- loading -------------------------------------------------------------------------


def test_missing_file_is_empty_baseline(tmp_path: Path) -> None:
    b = load_baseline(tmp_path / "nope.json")
    assert len(b) == 0 and b.pins == {}


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("{not json", "invalid JSON at line 1 column 2"),
        ("[]", "expected a JSON object"),
        ('{"schema": 2, "entries": []}', "unsupported schema 2"),
        ('{"entries": []}', "unsupported schema None"),
        ('{"schema": 1, "tool": "other", "entries": []}', "written by 'other'"),
        ('{"schema": 1, "entries": {}}', '"entries" must be a list'),
        ('{"schema": 1, "entries": [1]}', "entry 0: expected an object"),
        (
            '{"schema": 1, "entries": [{"rule": "CTX101", "path": "a.py", "scope": "f", "snippet": ""}]}',
            "entry 0: missing 'fingerprint'",
        ),
        (
            '{"schema": 1, "entries": [{"rule": 1, "path": "a.py", "scope": "f", '
            '"fingerprint": "x", "snippet": ""}]}',
            "entry 0: 'rule' must be a string",
        ),
        (
            '{"schema": 1, "entries": [{"rule": "R", "path": "a.py", "scope": "f", '
            '"fingerprint": "x", "snippet": "", "colour": "red"}]}',
            "entry 0: unknown key(s): colour",
        ),
        (
            '{"schema": 1, "entries": [{"rule": "R", "path": "a.py", "scope": "f", '
            '"fingerprint": "x", "snippet": ""}, {"rule": "R", "path": "b.py", "scope": "f", '
            '"fingerprint": "x", "snippet": ""}]}',
            "entry 1: duplicate fingerprint x",
        ),
        ('{"schema": 1, "entries": [], "pins": {"R": 3}}', '"pins" must be an object of objects'),
        ('{"schema": 1, "entries": [], "extra": 1}', "unknown top-level key(s): extra"),
    ],
)
def test_corrupt_baseline_is_a_clear_one_line_error(
    tmp_path: Path, content: str, fragment: str
) -> None:
    path = tmp_path / "baseline.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(BaselineError) as info:
        load_baseline(path)
    msg = str(info.value)
    assert fragment in msg
    assert str(path) in msg  # names the file
    assert "\n" not in msg


def test_non_utf8_and_directory_are_errors(tmp_path: Path) -> None:
    bad = tmp_path / "latin1.json"
    bad.write_bytes(b'{"schema": 1, "entries": [], "x": "\xe9"}')
    with pytest.raises(BaselineError, match="not UTF-8"):
        load_baseline(bad)
    with pytest.raises(BaselineError, match="not a regular file"):
        load_baseline(tmp_path)


# -- compare -------------------------------------------------------------------------


def test_compare_statuses_and_stale() -> None:
    b = Baseline.from_entries(
        [entry("known"), entry("gone", path="pkg/z.py", scope="Z.m"), entry("gone2", path="a.py")]
    )
    findings = [
        finding("fresh", path="pkg/b.py", line=3),
        finding("known", line=9),
        finding("fresh2", line=2, status=BASELINED),  # a stale status is recomputed
    ]
    marked, stale = compare(findings, b)
    assert [(f.fingerprint, f.status) for f in marked] == [
        ("fresh2", NEW),
        ("known", BASELINED),
        ("fresh", NEW),
    ]
    assert stale == [
        StaleEntry("CTX101", "a.py", "f", "gone2", "x.y"),
        StaleEntry("CTX101", "pkg/z.py", "Z.m", "gone", "x.y"),
    ]


def test_compare_only_reports_stale_for_rules_that_ran() -> None:
    b = Baseline.from_entries([entry("a", rule="CTX101"), entry("b", rule="CTX201")])
    _, stale = compare([], b, rules={"CTX101"})
    assert [s.fingerprint for s in stale] == ["a"]


# -- update --------------------------------------------------------------------------


def test_update_only_removes_by_default() -> None:
    b = Baseline.from_entries([entry("keep", reason="old reason"), entry("fixed")])
    findings = [finding("keep"), finding("brand-new", path="pkg/c.py")]
    new, report = update(b, findings)
    assert set(new.entries) == {"keep"}
    assert new.entries["keep"].reason == "old reason"  # stored reason survives
    assert [e.fingerprint for e in report.removed] == ["fixed"]
    assert report.added == []
    assert [f.fingerprint for f in report.left_out] == ["brand-new"]
    assert report.kept == 1 and report.changed
    # Nothing to remove, nothing added: unchanged.
    again, report2 = update(new, findings)
    assert again == new and not report2.changed


def test_growth_refused_without_allow_growth_and_without_reason() -> None:
    b = Baseline()
    new, report = update(b, [finding("x")], reason="because")  # reason alone grows nothing
    assert len(new) == 0 and len(report.left_out) == 1
    for reason in (None, "", "   "):
        with pytest.raises(BaselineError, match="non-empty reason"):
            update(b, [finding("x")], allow_growth=True, reason=reason)
    with pytest.raises(ValueError):  # BaselineError is a ValueError
        update(b, [finding("x")], allow_growth=True)


def test_growth_with_reason_stores_it_on_new_entries_only() -> None:
    b = Baseline.from_entries([entry("old", reason="first")])
    findings = [finding("old"), finding("n1", path="pkg/b.py"), finding("n2", rule="CTX201")]
    new, report = update(b, findings, allow_growth=True, reason="  vendor code, see #7 ")
    assert new.entries["old"].reason == "first"
    assert new.entries["n1"].reason == "vendor code, see #7"
    assert new.entries["n2"] == BaselineEntry(
        "CTX201", "pkg/a.py", "f", "n2", "get_server_args().tp_size", "vendor code, see #7"
    )
    assert sorted(e.fingerprint for e in report.added) == ["n1", "n2"]
    assert report.left_out == []


def fingerprint_of(rule: str, path: str, scope: str, snippet: str, index: int = 0) -> str:
    # Stand-in for the engine's fingerprint: it hashes the path with the rest.
    import hashlib

    return hashlib.sha1(f"{rule}\0{path}\0{scope}\0{snippet}\0{index}".encode()).hexdigest()[:16]


def test_moving_a_finding_to_another_file_is_growth() -> None:
    old_fp = fingerprint_of("CTX101", "pkg/a.py", "f", "sa.tp_size")
    b = Baseline.from_entries([entry(old_fp, path="pkg/a.py", snippet="sa.tp_size")])
    # The same code, moved to pkg/b.py: same rule, scope and snippet, other path.
    moved_fp = fingerprint_of("CTX101", "pkg/b.py", "f", "sa.tp_size")
    assert moved_fp != old_fp
    moved = finding(moved_fp, path="pkg/b.py", snippet="sa.tp_size")

    marked, stale = compare([moved], b)
    assert marked[0].status == NEW
    assert [s.fingerprint for s in stale] == [old_fp]

    new, report = update(b, [moved])
    assert len(new) == 0  # the allowance does not follow the code
    assert report.left_out == [moved] and [e.path for e in report.removed] == ["pkg/a.py"]

    grown, report = update(b, [moved], allow_growth=True, reason="split module")
    assert [(e.path, e.reason) for e in grown.sorted_entries()] == [("pkg/b.py", "split module")]


def test_update_leaves_entries_of_rules_that_did_not_run() -> None:
    b = Baseline.from_entries([entry("a", rule="CTX101"), entry("b", rule="CTX201")])
    new, report = update(b, [], rules={"CTX101"})
    assert set(new.entries) == {"b"}
    assert [e.fingerprint for e in report.removed] == ["a"]


# -- pins ----------------------------------------------------------------------------


def test_pins_round_trip_and_comparison(tmp_path: Path) -> None:
    old = {"CTX301": {"hook_a": ["x", "y"], "hook_b": 1, "hook_c": {"k": 1}}}
    new_pins = {"CTX301": {"hook_a": ["x", "y"], "hook_b": 2, "hook_d": True}, "CTX302": {"s": 0}}
    path = tmp_path / "b.json"
    Baseline.from_entries([], old).save(path)
    assert load_baseline(path).pins == old

    diff = compare_pins(old, new_pins)
    assert diff.added == [("CTX301", "hook_d"), ("CTX302", "s")]
    assert diff.removed == [("CTX301", "hook_c")]
    assert diff.changed == [("CTX301", "hook_b")]
    assert not compare_pins(old, json.loads(json.dumps(old)))

    # update keeps pins unless new ones are given, and reports the difference.
    kept, report = update(load_baseline(path), [])
    assert kept.pins == old and not report.pins
    replaced, report = update(load_baseline(path), [], pins=new_pins)
    assert replaced.pins == new_pins and report.pins == diff and report.changed


# -- show ----------------------------------------------------------------------------


def test_show_counts_per_rule_and_lists_entries() -> None:
    b = Baseline.from_entries(
        [
            entry("1", rule="CTX201", path="b.py"),
            entry("2", rule="CTX101", path="b.py", reason="legacy"),
            entry("3", rule="CTX101", path="a.py"),
        ]
    )
    ov = show(b)
    assert ov.total == 3
    assert ov.per_rule == {"CTX101": 2, "CTX201": 1}
    assert list(ov.per_rule) == ["CTX101", "CTX201"]
    assert ov.per_path == {"a.py": 1, "b.py": 2}
    assert [e.fingerprint for e in ov.entries] == ["3", "2", "1"]
    text = ov.to_text()
    assert text.splitlines()[:3] == ["3 baseline entries", "  CTX101: 2", "  CTX201: 1"]
    assert "b.py  CTX101  f  x.y  # legacy" in text
