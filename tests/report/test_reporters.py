"""Reporters: exact JSON schema 1, valid SARIF 2.1.0, GitHub escaping, JUnit counts, text.

The SARIF schema in tests/data/sarif-2.1.0.json is the SARIF 2.1.0 (rtm.5, the
version OASIS published as 2.1.0) JSON schema, taken unchanged from
lib/schemas/sarif-2.1.0-rtm.5.json of the npm package @microsoft/jest-sarif
1.0.0-beta.0 (MIT), so the test needs no network.
"""

from __future__ import annotations

import io
import json
import re
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest
from rich.console import Console

from ctxlint import __version__
from ctxlint.core.findings import BASELINED, FileError, Finding, Result, RuleInfo, Span, StaleEntry
from ctxlint.report.formats import FORMATS, print_text, render
from ctxlint.report.formats.github import escape_data, escape_property
from ctxlint.report.formats.text import _Sources

DATA = Path(__file__).parents[1] / "data"
RULES = [
    RuleInfo(
        "CTX101", "seed-read", "A field read off the process-global seed record.", "rules/CTX101.md"
    ),
    RuleInfo("CTX201", "record-mutation", "A write to a field of a record instance."),
]
SOURCE = """\
import os

def serve(self):
    sa = get_server_args()
    tp = get_server_args().tp_size
    return tp
"""
TRICKY = "bad: 100% of a, b\nsecond line\r\nthird"


def make_result(root: Path, *, strict: bool = False, errors: bool = True) -> Result:
    (root / "pkg").mkdir(exist_ok=True)
    (root / "pkg" / "serve.py").write_text(SOURCE, encoding="utf-8")
    findings = [
        Finding(
            "CTX101",
            "pkg/serve.py",
            Span(4, 10, 4, 27),
            "serve",
            "alias of the seed record",
            "get_server_args()",
            "fp-base",
            BASELINED,
        ),
        Finding(
            "CTX101",
            "pkg/serve.py",
            Span(5, 10, 5, 32),
            "serve",
            "`tp_size` read off get_server_args()",
            "get_server_args().tp_size",
            "fp-new",
        ),
        # A file that does not exist on disk (deleted since): no frame, no crash.
        Finding("CTX201", "pkg/gone.py", Span(7, 1, 7, 12), "<module>", TRICKY, "sa.x = 1", "fp-w"),
        Finding(
            "CTX201",
            "pkg/only base.py",
            Span(2, 1, 2, 8),
            "C.m",
            "m",
            "rec.y = 2",
            "fp-b2",
            BASELINED,
        ),
    ]
    stale = [StaleEntry("CTX101", "pkg/old.py", "Old.run", "fp-stale", "sa.dp_size")]
    errs = [FileError("pkg/broken.py", "syntax error: invalid syntax (line 3, column 4)")]
    return Result(
        root=str(root),
        rules=RULES,
        findings=findings,
        stale=stale,
        errors=errs if errors else [],
        strict=strict,
        files_checked=5,
    )


@pytest.fixture
def result(tmp_path: Path) -> Result:
    return make_result(tmp_path)


def test_render_knows_every_format_and_rejects_others(result: Result) -> None:
    for fmt in FORMATS:
        out = render(result, fmt)
        assert out.endswith("\n") and render(result, fmt) == out  # deterministic
    with pytest.raises(ValueError, match="unknown format 'xml'"):
        render(result, "xml")


# -- json ----------------------------------------------------------------------------


def test_json_schema_1_exact(result: Result) -> None:
    out = render(result, "json")
    doc = json.loads(out)
    assert list(doc) == [
        "tool", "version", "schema", "findings", "stale", "summary", "errors", "disabled",
    ]  # fmt: skip
    assert doc["disabled"] == []  # additive: rules the codebase cannot run yet, with why
    assert (doc["tool"], doc["version"], doc["schema"]) == ("ctxlint", __version__, 1)
    assert all(
        list(f)
        == [
            "rule",
            "path",
            "line",
            "column",
            "end_line",
            "end_column",
            "scope",
            "message",
            "fingerprint",
            "status",
        ]
        for f in doc["findings"]
    )
    assert [f["fingerprint"] for f in doc["findings"]] == ["fp-base", "fp-new", "fp-w", "fp-b2"]
    assert [f["status"] for f in doc["findings"]] == ["baselined", "new", "new", "baselined"]
    assert doc["findings"][1] == {
        "rule": "CTX101",
        "path": "pkg/serve.py",
        "line": 5,
        "column": 10,
        "end_line": 5,
        "end_column": 32,
        "scope": "serve",
        "message": "`tp_size` read off get_server_args()",
        "fingerprint": "fp-new",
        "status": "new",
    }
    assert doc["stale"] == [
        {
            "rule": "CTX101",
            "path": "pkg/old.py",
            "scope": "Old.run",
            "fingerprint": "fp-stale",
            "snippet": "sa.dp_size",
        }
    ]
    assert doc["summary"] == {
        "CTX101": {"found": 2, "new": 1, "baselined": 1, "stale": 1},
        "CTX201": {"found": 2, "new": 1, "baselined": 1, "stale": 0},
    }
    assert doc["errors"] == [
        {"path": "pkg/broken.py", "message": "syntax error: invalid syntax (line 3, column 4)"}
    ]
    assert out == json.dumps(doc, indent=2) + "\n"  # indent 2, trailing newline


def test_json_documentation_lists_every_key() -> None:
    doc = (Path(__file__).parents[2] / "docs" / "json-schema.md").read_text(encoding="utf-8")
    for key in ("end_column", "fingerprint", "baselined", "stale", "errors", "summary"):
        assert f"`{key}`" in doc or f'"{key}"' in doc


# -- sarif ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sarif_validator() -> jsonschema.Draft4Validator:
    schema = json.loads((DATA / "sarif-2.1.0.json").read_text(encoding="utf-8"))
    assert schema["$schema"] == "http://json-schema.org/draft-04/schema#"
    assert "2.1.0" in schema["title"]
    return jsonschema.Draft4Validator(
        schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER
    )


def test_sarif_validates_against_the_2_1_0_schema(
    result: Result, sarif_validator: jsonschema.Draft4Validator
) -> None:
    doc = json.loads(render(result, "sarif"))
    errors = sorted(sarif_validator.iter_errors(doc), key=str)
    assert errors == [], "\n".join(e.message for e in errors)
    # The validator is not vacuous: a bad baselineState is rejected.
    doc["runs"][0]["results"][0]["baselineState"] = "maybe"
    assert not sarif_validator.is_valid(doc)


def test_sarif_content(result: Result, monkeypatch: pytest.MonkeyPatch) -> None:
    # the home comes from the installed metadata, which an editable install of
    # this checkout fills from [project.urls]: pinned here
    from ctxlint.report.formats import sarif

    monkeypatch.setattr(sarif, "project_home", lambda: "https://example.org/ctxlint")
    doc = json.loads(render(result, "sarif"))
    assert doc["version"] == "2.1.0"
    (run,) = doc["runs"]
    driver = run["tool"]["driver"]
    assert (driver["name"], driver["version"]) == ("ctxlint", __version__)
    assert [r["id"] for r in driver["rules"]] == ["CTX101", "CTX201"]
    assert driver["rules"][0]["name"] == "seed-read"
    assert "rules/CTX101.md" in driver["rules"][0]["help"]["text"]
    assert driver["informationUri"] == "https://example.org/ctxlint"
    assert driver["rules"][0]["helpUri"] == "https://example.org/ctxlint/blob/main/rules/CTX101.md"

    by_fp = {r["partialFingerprints"]["ctxlintFingerprint/v1"]: r for r in run["results"]}
    assert set(by_fp) == {"fp-base", "fp-new", "fp-w", "fp-b2", "fp-stale"}
    new = by_fp["fp-new"]
    assert (new["ruleId"], new["ruleIndex"], new["level"], new["baselineState"]) == (
        "CTX101",
        0,
        "error",
        "new",
    )
    loc = new["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"] == {"uri": "pkg/serve.py", "uriBaseId": "%SRCROOT%"}
    assert loc["region"] == {
        "startLine": 5,
        "startColumn": 10,
        "endLine": 5,
        "endColumn": 32,
        "snippet": {"text": "get_server_args().tp_size"},
    }
    assert by_fp["fp-w"]["ruleIndex"] == 1
    base = by_fp["fp-base"]
    assert (base["level"], base["baselineState"]) == ("note", "unchanged")
    assert base["suppressions"] == [{"kind": "external", "status": "accepted"}]
    assert "suppressions" not in new
    # A space in a path is percent-encoded: the uri must be a URI reference.
    assert by_fp["fp-b2"]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == (
        "pkg/only%20base.py"
    )
    stale = by_fp["fp-stale"]
    assert (stale["level"], stale["baselineState"]) == ("note", "absent")
    assert "ctxlint baseline update" in stale["message"]["text"]

    (inv,) = run["invocations"]
    assert inv["executionSuccessful"] is False
    (note,) = inv["toolExecutionNotifications"]
    assert note["level"] == "error"
    assert note["message"]["text"].startswith("syntax error")
    assert note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "pkg/broken.py"


def test_sarif_clean_run_and_unknown_rule(
    tmp_path: Path, sarif_validator: jsonschema.Draft4Validator
) -> None:
    clean = Result(str(tmp_path), RULES, [], [], [])
    doc = json.loads(render(clean, "sarif"))
    assert sarif_validator.is_valid(doc)
    assert doc["runs"][0]["invocations"] == [{"executionSuccessful": True}]
    assert doc["runs"][0]["results"] == []
    # A stale entry of a rule no longer in the catalogue still gets a valid ruleIndex.
    retired = Result(str(tmp_path), RULES, [], [StaleEntry("CTX999", "a.py", "f", "fp")], [])
    doc = json.loads(render(retired, "sarif"))
    assert sarif_validator.is_valid(doc)
    rules = doc["runs"][0]["tool"]["driver"]["rules"]
    (res,) = doc["runs"][0]["results"]
    assert rules[res["ruleIndex"]]["id"] == "CTX999"


# -- github --------------------------------------------------------------------------


def test_github_escaping() -> None:
    assert escape_data("100% a,b: c\r\nd") == "100%25 a,b: c%0D%0Ad"
    assert escape_property("100% a,b: c\r\nd") == "100%25 a%2Cb%3A c%0D%0Ad"


def test_github_annotations(result: Result) -> None:
    lines = render(result, "github").splitlines()
    assert lines[0] == (
        "::error file=pkg/serve.py,line=5,col=10,endLine=5,endColumn=32,"
        "title=CTX101 seed-read::`tp_size` read off get_server_args()"
    )
    assert lines[1] == (
        "::error file=pkg/gone.py,line=7,col=1,endLine=7,endColumn=12,"
        "title=CTX201 record-mutation::bad: 100%25 of a, b%0Asecond line%0D%0Athird"
    )
    assert not any("fp-base" in line or "serve.py,line=4" in line for line in lines)  # baselined
    assert lines[2].startswith("::warning file=pkg/old.py,title=CTX101 seed-read%3A stale")
    assert "run `ctxlint baseline update`" in lines[2]
    assert lines[3].startswith("::error file=pkg/broken.py,title=ctxlint%3A file not checked::")
    assert lines[3].endswith("syntax error: invalid syntax (line 3, column 4)")
    assert len(lines) == 4


def test_github_strict_stale_is_an_error(tmp_path: Path) -> None:
    lines = render(make_result(tmp_path, strict=True), "github").splitlines()
    assert any(line.startswith("::error file=pkg/old.py,") for line in lines)
    assert not any(line.startswith("::warning") for line in lines)


def test_github_path_with_comma_and_colon_is_escaped(tmp_path: Path) -> None:
    f = Finding("CTX101", "a,b:c.py", Span(1, 1, 1, 2), "f", "m", "s", "fp")
    out = render(Result(str(tmp_path), RULES, [f], [], []), "github")
    assert out.startswith("::error file=a%2Cb%3Ac.py,line=1,")


# -- junit ---------------------------------------------------------------------------


def _suite(result: Result) -> ET.Element:
    root = ET.fromstring(render(result, "junit").encode())
    assert root.tag == "testsuite" and root.get("name") == "ctxlint"
    return root


def test_junit_counts_and_content(result: Result) -> None:
    suite = _suite(result)
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == [
        "CTX101 seed-read",
        "CTX201 record-mutation",
        "pkg/broken.py",
    ]
    assert {c.get("classname") for c in cases[:2]} == {"ctxlint"}
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("3", "2", "1")
    f101 = cases[0].find("failure")
    assert f101 is not None and f101.get("message") == "1 new finding"
    assert "pkg/serve.py:5:10: `tp_size` read off get_server_args()" in f101.text
    assert "fp-stale" not in f101.text  # stale does not fail without --strict
    assert "pkg/old.py" in cases[0].find("system-out").text
    f201 = cases[1].find("failure")
    assert TRICKY.replace("\r\n", "\n") in f201.text  # XML normalises CR LF
    err = cases[2].find("error")
    assert err is not None and err.get("message").startswith("syntax error")


def test_junit_strict_stale_fails_and_clean_passes(tmp_path: Path) -> None:
    r = make_result(tmp_path, strict=True)
    r.findings = [f for f in r.findings if f.status == BASELINED]
    suite = _suite(r)
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    failure = cases["CTX101 seed-read"].find("failure")
    assert failure is not None and failure.get("message") == "1 stale baseline entry"
    assert "ctxlint baseline update" in failure.text
    assert cases["CTX201 record-mutation"].find("failure") is None
    assert suite.get("failures") == "1"

    clean = Result(str(tmp_path), RULES, [], [], [])
    suite = _suite(clean)
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("2", "0", "0")


def test_junit_strips_characters_xml_cannot_hold(tmp_path: Path) -> None:
    f = Finding("CTX101", "a.py", Span(1, 1, 1, 2), "f", "nul\x00 and esc\x1b", "s", "fp")
    suite = _suite(Result(str(tmp_path), RULES, [f], [], []))
    assert "nul\ufffd and esc\ufffd" in suite.find("testcase/failure").text


# -- text ----------------------------------------------------------------------------


def text_of(result: Result, **kw) -> str:
    buf = io.StringIO()
    console = Console(file=buf, width=10_000, no_color=True, color_system=None)
    print_text(result, console, **kw)
    return buf.getvalue()


def test_text_code_frame_and_grouping(result: Result, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(result.root)  # text paths are seen from the working folder, as concise
    out = text_of(result)
    lines = out.splitlines()
    assert "pkg/serve.py  (1 new finding)" in lines
    assert "  pkg/serve.py:5:10  CTX101 seed-read  NEW" in lines
    assert "     > 5 |     tp = get_server_args().tp_size" in lines
    caret = lines[lines.index("     > 5 |     tp = get_server_args().tp_size") + 1]
    assert caret == "         |          " + "^" * 22
    assert "       4 |     sa = get_server_args()" in lines  # context above
    # The baselined finding on line 4 is not shown in full.
    assert "pkg/serve.py:4:10" not in out
    # Missing file: the finding is printed, with no frame.
    assert "  pkg/gone.py:7:1  CTX201 record-mutation  NEW" in lines
    assert "    second line" in lines  # multi-line messages stay indented
    # Baselined findings are counted once, in the closing line, never per file.
    assert "only base.py" not in out
    assert out.count("baselined") == 1
    assert text_of(result, show_source=False).count(" | ") == 0


def test_text_stale_errors_summary_and_closing_line(
    result: Result, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(result.root)  # text paths are seen from the working folder, as concise
    lines = text_of(result).splitlines()
    stale_head = next(line for line in lines if line.startswith("1 stale baseline entry"))
    assert "ctxlint baseline update" in stale_head
    assert any("pkg/old.py  CTX101  in Old.run" in line for line in lines)
    assert "1 error: these files were not checked" in lines
    assert "  pkg/broken.py: syntax error: invalid syntax (line 3, column 4)" in lines

    assert not any(line.startswith("Rule ") for line in lines)  # the table: --statistics
    assert lines[-1] == (
        "2 new findings, 1 stale baseline entry, 1 error: checked 5 files under "
        "., 2 rules (CTX101 CTX201), no config file, 2 baselined findings"
    )

    lines = text_of(result, statistics=True).splitlines()
    assert lines[0] == "ctxlint statistics"
    head = lines.index(next(line for line in lines if line.startswith("Rule ")))
    assert lines[head].split() == ["Rule", "Name", "Found", "Baselined", "New", "Stale"]
    assert lines[head + 1].split() == ["CTX101", "seed-read", "2", "1", "1", "1"]
    assert lines[head + 2].split() == ["CTX201", "record-mutation", "2", "1", "1", "0"]
    assert lines[head + 3].split() == ["total", "4", "2", "2", "1"]
    assert "NEW" not in "\n".join(lines)


def test_text_all_clear(tmp_path: Path) -> None:
    r = make_result(tmp_path, errors=False)
    r.findings = [f for f in r.findings if f.status == BASELINED]
    r.stale = []
    r.config_path = str(tmp_path / "pyproject.toml")
    r.baseline_path = str(tmp_path / "ctxlint-baseline.json")
    out = text_of(r)
    # a clean run is one line: what was checked, and the baselined count once
    assert out.splitlines() == [
        f"All clear: checked 5 files under {tmp_path}, 2 rules (CTX101 CTX201), "
        f"config {tmp_path}/pyproject.toml, "
        f"baseline {tmp_path}/ctxlint-baseline.json (2 baselined findings)"
    ]


def test_text_markup_in_messages_is_literal(tmp_path: Path) -> None:
    f = Finding("CTX101", "a.py", Span(1, 1, 1, 2), "f", "x[red]y[/red] :smile:", "s", "fp")
    out = text_of(Result(str(tmp_path), RULES, [f], [], []))
    assert "x[red]y[/red] :smile:" in out


def test_render_text_is_plain(result: Result) -> None:
    out = render(result, "text")
    assert "\x1b[" not in out
    assert "     > 5 |     tp = get_server_args().tp_size" in out


# -- order and determinism across processes (issue 20) ---------------------------------
# Findings reach the reporters in the engine's order (engine.to_findings sorts by
# Finding.sort_key); docs/json-schema.md documents it: path, line, column, rule,
# fingerprint. Positions are chosen so that fingerprint order differs.
SCRAMBLED = [
    ("CTX201", "pkg/b.py", 3, 5),
    ("CTX101", "pkg/a.py", 9, 1),
    ("CTX201", "pkg/a.py", 2, 7),
    ("CTX101", "pkg/a.py", 2, 7),
    ("CTX101", "pkg/sub/c.py", 1, 1),
    ("CTX101", "pkg/a.py", 2, 3),
    ("CTX201", "pkg/b.py", 12, 1),
]
DOCUMENTED_ORDER = [
    ("pkg/a.py", 2, 3, "CTX101"),
    ("pkg/a.py", 2, 7, "CTX101"),
    ("pkg/a.py", 2, 7, "CTX201"),
    ("pkg/a.py", 9, 1, "CTX101"),
    ("pkg/b.py", 3, 5, "CTX201"),
    ("pkg/b.py", 12, 1, "CTX201"),
    ("pkg/sub/c.py", 1, 1, "CTX101"),
]


def _engine_ordered(tmp_path: Path) -> Result:
    from ctxlint.engine.run import to_findings
    from ctxlint.program.rule import RawFinding

    raw = [
        RawFinding(rule, path, "f", f"x{line}", [line, col, line, col + 3], f"{rule} at {line}")
        for rule, path, line, col in SCRAMBLED
    ]
    findings = to_findings(raw)
    by_fingerprint = sorted(findings, key=lambda f: f.fingerprint)
    assert [(f.path, f.line) for f in by_fingerprint] != [(p, n) for p, n, _, _ in DOCUMENTED_ORDER]
    return Result(str(tmp_path), RULES, findings, [], [], files_checked=3)


def test_json_lists_findings_in_the_documented_order(tmp_path: Path) -> None:
    doc = json.loads(render(_engine_ordered(tmp_path), "json"))
    got = [(f["path"], f["line"], f["column"], f["rule"]) for f in doc["findings"]]
    assert got == DOCUMENTED_ORDER


def test_text_lists_findings_in_the_documented_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    out = render(_engine_ordered(tmp_path), "text")
    heads = [f"  {path}:{line}:{col}  {rule}" for path, line, col, rule in DOCUMENTED_ORDER]
    found = [
        next(i for i, line in enumerate(out.splitlines()) if line.startswith(h)) for h in heads
    ]
    assert found == sorted(found)


RENDER_ALL = """\
import json, sys
from pathlib import Path
sys.path[:0] = [sys.argv[1], str(Path(sys.argv[1]).parent)]
from test_reporters import make_result, with_retired_rules
from ctxlint.report.formats import FORMATS, render
result = with_retired_rules(make_result(Path(sys.argv[2])))
print(json.dumps({fmt: render(result, fmt) for fmt in FORMATS}))
"""


def with_retired_rules(result: Result) -> Result:
    """Stale entries of rules the run no longer has: their descriptors are made
    up from a set of ids, the kind of order only other processes can see."""
    retired = [StaleEntry(f"CTX9{n:02d}", "pkg/old.py", "f", f"fp-{n}", "x") for n in range(6)]
    result.stale = sorted([*result.stale, *retired], key=StaleEntry.sort_key)
    return result


def test_every_format_renders_the_same_bytes_under_any_hash_seed(tmp_path: Path) -> None:
    """Rendering twice in one process cannot see set order; processes with
    different PYTHONHASHSEED values can."""
    import os
    import subprocess
    import sys

    outputs = set()
    for seed in ("0", "1", "2", "3", "4"):
        done = subprocess.run(
            [sys.executable, "-c", RENDER_ALL, str(Path(__file__).parent), str(tmp_path)],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        )
        rendered = json.loads(done.stdout)
        assert sorted(rendered) == sorted(FORMATS)
        outputs.add(done.stdout)
    assert len(outputs) == 1


def test_text_blocks_drawn_again_only_where_what_they_show_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A resident renderer keeps each new finding's drawn block (text.BLOCKS):
    every report equals one drawn afresh, over edits that move one file's
    findings, change a frame's context line, a message, and over consoles of
    other widths and colours, details and sources shown or not; only the
    blocks whose text changed are drawn again."""
    from ctxlint.report.formats import text

    monkeypatch.chdir(tmp_path)
    result = make_result(tmp_path, errors=False)
    other = "pkg/other.py"
    (tmp_path / other).write_text("".join(f"x{i} = get_server_args().a{i}\n" for i in range(9)))
    result.findings += [
        Finding("CTX101", other, Span(i, 6, i, 30), "<module>", f"read {i}", f"a{i}", f"fp-o{i}")
        for i in range(1, 9, 2)
    ]
    new = len(result.new_findings)
    drawn: list[str] = []
    real = text._print_block
    monkeypatch.setattr(text, "_print_block", lambda *a: (drawn.append(a[1].path), real(*a))[1])
    kept = text.Blocks()

    def report(blocks: text.Blocks, width: int, color: str | None, **kw: bool) -> str:
        buf = io.StringIO()
        console = Console(file=buf, width=width, color_system=color, force_terminal=bool(color))
        monkeypatch.setattr(text, "BLOCKS", blocks)
        print_text(result, console, **kw)
        return buf.getvalue()

    def moved(f: Finding) -> Finding:
        s = f.span
        return replace(f, span=Span(s.line + 1, s.column, s.end_line + 1, s.end_column))

    serve = tmp_path / "pkg" / "serve.py"
    for width, color, details, source in [
        (10_000, None, False, True),
        (40, None, True, True),
        (40, "truecolor", True, False),
        (10_000, "standard", False, True),
    ]:
        shown = {"show_details": details, "show_source": source}
        for step in range(5):
            if step == 1:  # a line added above: serve.py's findings move down
                serve.write_text("# a comment\n" + serve.read_text())
                result.findings = [
                    moved(f) if f.path == "pkg/serve.py" else f for f in result.findings
                ]
            elif step == 2:  # a context line changed, the spans the same
                serve.write_text(serve.read_text().replace("return tp", f"return tp  # {width}"))
            elif step == 3:  # a message changed
                result.findings = [
                    replace(f, message=f.message + "!") if f.fingerprint == "fp-o3" else f
                    for f in result.findings
                ]
            drawn.clear()
            mine = report(kept, width, color, **shown)
            again = list(drawn)
            assert mine == report(text.Blocks(), width, color, **shown), (width, color, step)
            want = {
                1: ["pkg/serve.py"],  # its one new finding moved
                2: ["pkg/serve.py"] if source else [],  # its frame's last line changed
                3: [other],
                4: [],  # the same report
            }
            # another console: every block drawn
            assert (len(again) == new) if step == 0 else (again == want[step]), (step, again)


def test_text_to_a_recording_console_is_recorded(tmp_path: Path) -> None:
    """A console whose buffer is read (record, capture) gets every block
    through rich itself: a kept block written to its file would be missing."""
    result = make_result(tmp_path, errors=False)
    plain = text_of(result)
    recording = Console(file=io.StringIO(), width=10_000, color_system=None, record=True)
    print_text(result, recording)
    assert recording.export_text() == plain
    captured = Console(file=io.StringIO(), width=10_000, color_system=None)
    with captured.capture() as capture:
        print_text(result, captured)
    assert capture.get() == plain


@pytest.mark.parametrize(
    "text", ["a\nb\n", "a\r\nb\r\n", "a\rb\r", "a\r\nb\nc\rd", "a\n\nb", "", "\n"]
)
def test_a_code_frame_s_lines_break_at_each_kind_of_line_break(tmp_path: Path, text: str) -> None:
    """The text report's sources split as the checked file's lines are, LF
    alone (str.split) or CR LF and lone CR too (the pattern)."""
    (tmp_path / "m.py").write_bytes(text.encode())
    expected = re.split(r"\r\n|\r|\n", text)
    if expected and expected[-1] == "":
        expected.pop()
    assert _Sources(str(tmp_path)).lines("m.py") == expected
