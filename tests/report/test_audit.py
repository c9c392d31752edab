"""`ctxlint audit`: data, terminal and JSON reports, HTML page, history burn-down."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from collections import Counter
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import FIXTURE, REPO
from helpers import cli
from wheels import sglang_tree

from ctxlint import session
from ctxlint.core.findings import PIN, Finding, Span
from ctxlint.engine.registry import load_rules
from ctxlint.report.audit.charts import squarify
from ctxlint.report.audit.model import field_rows

HEAD = """\
from specrt.context import get_exec, get_parallel, get_schedule, get_server_args
from specrt.record import ServerArgs
"""
# (file, rule, field, bad body, fixed body): one finding each, fixed in this order
# by the scripted history. Bodies are the inside of `def f{i}(server_args: ServerArgs)`.
STEPS: list[tuple[str, str, str | None, str, str]] = [
    ("app/serving/server.py", "CTX101", "tp_size", "return get_server_args().tp_size",
     "return get_parallel().tp_size"),
    ("app/serving/scheduler.py", "CTX102", "max_running_requests",
     "return server_args.max_running_requests", "return get_schedule().max_running_requests"),
    ("app/models/runner.py", "CTX201", None, "server_args.dp_size = 2", "return None"),
    ("app/kernels/attn.py", "CTX101", "attention_backend",
     "return get_server_args().attention_backend", "return get_exec().kernel.attention_backend"),
    ("app/serving/server.py", "CTX101", "tp_size", "return get_server_args().tp_size + 1",
     "return get_parallel().tp_size + 1"),
    ("app/serving/scheduler.py", "CTX102", "chunked_prefill_size",
     'return getattr(server_args, "chunked_prefill_size")',
     "return get_schedule().chunked_prefill_size"),
    ("app/kernels/attn.py", "CTX001", None,
     "return 1  # ctxlint: ignore[CTX101] nothing to suppress here", "return 1"),
    ("app/serving/server.py", "CTX101", "model_path", "return get_server_args().model_path",
     "return get_parallel().tp_size"),
]  # fmt: skip
RULES = len(load_rules())  # the audit shows every selected rule, zeros included


def make_codebase(root: Path, fixed: int = 0) -> Path:
    """The specrt runtime plus an `app` package whose findings are STEPS[fixed:]."""
    if not root.exists():
        shutil.copytree(FIXTURE, root)
    files: dict[str, list[str]] = {}
    for i, (path, _, _, bad, good) in enumerate(STEPS):
        body = good if i < fixed else bad
        files.setdefault(path, [HEAD]).append(
            f"\n\ndef f{i}(server_args: ServerArgs):\n    {body}\n"
        )
    files["app/util.py"] = ["VALUE = 1\n"]
    for rel, parts in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        for folder in target.relative_to(root).parents:
            if str(folder) != ".":
                (root / folder / "__init__.py").touch()
        target.write_text("".join(parts))
    return root


def expected(fixed: int = 0) -> Counter[str]:
    return Counter(rule for _, rule, _, _, _ in STEPS[fixed:])


def audit_json(*args: str, cwd: Path, cache: bool = False) -> dict:
    res = cli(
        "audit", "--format", "json", *([] if cache else ["--no-cache", "-j", "1"]), *args, cwd=cwd
    )
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


@pytest.fixture
def codebase(tmp_path: Path) -> Path:
    return make_codebase(tmp_path / "proj")


# -- the data -----------------------------------------------------------------------------


def test_json_counts_per_rule_folder_file_scope(codebase: Path) -> None:
    doc = audit_json(cwd=codebase)
    assert (doc["tool"], doc["kind"], doc["schema"]) == ("ctxlint", "ctxlint-audit", 1)
    found = {r["id"]: r["found"] for r in doc["rules"]}
    assert len(found) == RULES
    assert {k: v for k, v in found.items() if v} == dict(expected())
    assert doc["summary"]["found"] == len(STEPS)
    folders = {f["folder"]: f for f in doc["folders"]}
    assert folders["app/serving"]["total"] == 5
    assert folders["app/serving"]["counts"] == {"CTX101": 3, "CTX102": 2}
    assert folders["app/serving"]["files"] == 3  # __init__, scheduler, server
    assert doc["files"][0]["path"] == "app/serving/server.py"
    assert doc["files"][0]["total"] == 3
    scopes = {(s["path"], s["scope"]): s["total"] for s in doc["scopes"]}
    assert scopes[("app/serving/server.py", "f0")] == 1
    assert sum(scopes.values()) == len(STEPS)


def test_fields_come_with_their_bag(codebase: Path) -> None:
    doc = audit_json(cwd=codebase)
    fields = {f["field"]: f for f in doc["fields"]}
    assert doc["fields"][0]["field"] == "tp_size"  # read most often
    assert fields["tp_size"] == {
        "field": "tp_size",
        "namespace": "parallel",
        "bag": "get_parallel().tp_size",
        "reads": 2,
        "counts": {"CTX101": 2},
    }
    assert fields["attention_backend"]["bag"] == "get_exec().kernel.attention_backend"
    assert fields["chunked_prefill_size"]["counts"] == {"CTX102": 1}  # the getattr spelling
    assert sum(f["reads"] for f in doc["fields"]) == expected()["CTX101"] + expected()["CTX102"]


def test_every_derived_set_has_its_size(codebase: Path) -> None:
    doc = audit_json(cwd=codebase)
    sets = {(s["section"], s["name"]): s for s in doc["sets"]}
    assert sets[("vocabulary", "bag accessors")]["size"] == 5
    assert sets[("vocabulary", "record fields: exec.kernel")]["value"] == ["attention_backend"]
    assert sets[("vocabulary", "record fields")]["size"] == 9
    assert sets[("CTX201", "record parameter names")]["value"] == ["server_args"]
    sections = {s["section"] for s in doc["sets"]}
    assert {"vocabulary", "CTX101", "CTX301", "CTX501"} <= sections
    for s in doc["sets"]:
        if isinstance(s["value"], (list, dict)):
            assert s["size"] == len(s["value"])


def test_baseline_columns(codebase: Path) -> None:
    res = cli(
        "baseline", "update", "--allow-growth", "--reason", "legacy", "--no-cache", cwd=codebase
    )
    assert res.returncode == 0, res.stderr
    make_codebase(codebase, fixed=1)  # one fixed: its allowance is stale
    server = codebase / "app/serving/server.py"
    server.write_text(server.read_text() + "\n\ndef g():\n    return get_server_args().dp_size\n")
    doc = audit_json(cwd=codebase)
    row = next(r for r in doc["rules"] if r["id"] == "CTX101")
    assert (row["found"], row["new"], row["baselined"], row["stale"], row["allowed"]) == (
        4,
        1,
        3,
        1,
        4,
    )
    assert doc["baseline"] == "ctxlint-baseline.json"


def test_path_filter_reports_only_below_it(codebase: Path) -> None:
    doc = audit_json("app/kernels", cwd=codebase)
    assert doc["paths"] == ["app/kernels"]
    assert {f["path"] for f in doc["files"]} == {"app/kernels/attn.py"}
    assert doc["files_checked"] == 2


# -- the terminal report ------------------------------------------------------------------


def test_terminal_report(codebase: Path) -> None:
    res = cli("audit", "--no-cache", cwd=codebase)
    assert res.returncode == 0, res.stderr
    out = res.stdout
    for title in (
        "ctxlint audit · proj",
        "Findings by rule",
        "Heat by package folder",
        "Top files",
        "Top scopes",
        "Fields read off records most often",
        "Derived sets",
    ):
        assert title in out
    assert "8 findings in 4 of" in out
    assert "get_parallel().tp_size" in out
    assert "app/serving" in out


def test_output_file_and_markup_is_literal(codebase: Path, tmp_path: Path) -> None:
    weird = codebase / "app" / "[red]x"
    weird.mkdir()
    (weird / "__init__.py").write_text("")
    (weird / "m.py").write_text(HEAD + "\n\ndef h():\n    return get_server_args().tp_size\n")
    out = tmp_path / "audit.txt"
    res = cli("audit", "--no-cache", "--output", str(out), cwd=codebase)
    assert res.returncode == 0, res.stderr
    assert res.stdout == ""
    text = out.read_text()
    assert "app/[red]x/m.py" in text  # top files
    assert "\n  app/[red]x " in text  # the heat table's folder column


# -- the HTML page ------------------------------------------------------------------------


def test_html_is_self_contained_with_counted_charts(codebase: Path, tmp_path: Path) -> None:
    page = tmp_path / "audit.html"
    res = cli("audit", "--no-cache", "--format", "json", "--html", str(page), cwd=codebase)
    assert res.returncode == 0, res.stderr
    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>")
    for remote in ("http://", "https://", "<link", "src=", "@import", "url("):
        assert remote not in html, remote
    assert f'data-chart="rules" data-points="{RULES}"' in html
    assert html.count('class="bar" data-point=""') == RULES
    assert 'data-chart="treemap" data-points="4"' in html  # four files have findings
    assert html.count('class="cell" data-point=""') == 4
    assert 'data-chart="burndown"' not in html  # no --history


def test_html_is_text_and_findings_sort_by_path_then_line(codebase: Path, tmp_path: Path) -> None:
    """No NUL byte (the file:line sort keys held one: `file` called the page
    data); each key is a number the page's sort compares as one, and ordering
    rows by it is path order, then line as a number (9 before 13)."""
    reads = "".join(f"\n\ndef r{i}():\n    return get_server_args().tp_size\n" for i in range(4))
    (codebase / "app" / "many.py").write_text(HEAD + reads)  # lines 9, 13 ... in one file
    page = tmp_path / "audit.html"
    res = cli("audit", "--no-cache", "--html", str(page), "--format", "json", cwd=codebase)
    assert res.returncode == 0, res.stderr
    raw = page.read_bytes()
    assert b"\x00" not in raw
    assert all(c >= 0x20 or c in b"\t\n\r" for c in raw.decode("utf-8").encode("ascii", "ignore"))
    findings = raw.decode("utf-8").split('<section id="findings">', 1)[1]
    cells = re.findall(r'<td class="mono wrap" data-sort="([^"]*)">(.*?)</td>', findings)
    assert len(cells) == len(json.loads(res.stdout)["findings"]) > 8
    keys = [key for key, _ in cells]
    assert all(key.isdigit() for key in keys)  # the page compares numbers as numbers
    assert sorted(map(int, keys)) == list(range(len(keys)))
    shown = [re.sub(r"<[^>]+>", "", where).rsplit(":", 1) for _, where in cells]
    by_key = [shown[i] for i in sorted(range(len(keys)), key=lambda i: int(keys[i]))]
    assert by_key == sorted(shown, key=lambda w: (w[0], int(w[1])))
    lines = [int(line) for path, line in by_key if path == "app/many.py"]
    assert lines == sorted(lines) and len({len(str(n)) for n in lines}) > 1, lines


def test_same_input_same_output(codebase: Path, tmp_path: Path) -> None:
    outs = []
    for jobs in ("1", "2"):
        page = tmp_path / f"a{jobs}.html"
        res = cli("audit", "--format", "json", "-j", jobs, "--html", str(page), cwd=codebase)
        assert res.returncode == 0, res.stderr
        outs.append((res.stdout, page.read_bytes()))
    assert outs[0] == outs[1]


# -- history --------------------------------------------------------------------------------


def git(repo: Path, *argv: str, day: int = 1) -> str:
    """git with a fixed identity and date (`day` of January 2025): same history, same ids."""
    date = f"2025-01-{day:02d}T12:00:00Z"
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_DATE": date,
    }
    done = subprocess.run(
        ["git", "-C", str(repo), *argv], capture_output=True, text=True, check=True, env=env
    )
    return done.stdout


def scripted_history(repo: Path, fixes: int = len(STEPS)) -> Path:
    """A repository whose project lives in `proj/`; commit k fixes STEPS[k-1]."""
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "README").write_text("outside the project\n")
    project = make_codebase(repo / "proj")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "legacy code")
    for k in range(1, fixes + 1):
        make_codebase(project, fixed=k)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", f"fix step {k}")
        if k == 2:  # a commit outside the project does not count
            (repo / "README").write_text("edited\n")
            git(repo, "commit", "-q", "-am", "docs only")
    return project


def test_history_burndown_counts_exactly(tmp_path: Path) -> None:
    project = scripted_history(tmp_path / "repo")
    n = len(STEPS) + 1
    page = tmp_path / "h.html"
    doc = audit_json("--history", str(n), "--html", str(page), cwd=project)
    points = doc["history"]
    assert len(points) == n
    assert [p["subject"] for p in points] == ["legacy code"] + [
        f"fix step {k}" for k in range(1, n)
    ]
    assert [p["total"] for p in points] == list(range(len(STEPS), -1, -1))
    for k, p in enumerate(points):
        assert p["error"] is None
        assert {r: c for r, c in p["counts"].items() if c} == dict(expected(k))
        assert len(p["counts"]) == RULES
    html = page.read_text()
    assert f'data-chart="burndown" data-points="{n * RULES}"' in html
    assert html.count('class="dot" data-point=""') == n * RULES
    # the last N only, oldest first
    doc3 = audit_json("--history", "3", cwd=project)
    assert [p["total"] for p in doc3["history"]] == [2, 1, 0]


def test_history_shares_one_fact_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Unchanged files are parsed once across commits: the cost is the changes."""
    project = scripted_history(tmp_path / "repo", fixes=4)
    parsed: list[int] = []

    class Counting(session.runs.Engine):
        def run(self):  # type: ignore[no-untyped-def]
            out = super().run()
            parsed.append(self.parsed)
            return out

    monkeypatch.setattr(session.runs, "Engine", Counting)
    audit_json("--history", "5", cwd=project)  # --no-cache: a shared temporary cache
    # the audit's own run, then one per commit (all through the one session)
    assert len(parsed) == 1 + 5
    commits = parsed[1:]
    # each fix edits one module; the first commit parses everything the prefilter lets through
    assert all(n <= 1 for n in commits[1:]), parsed
    assert commits[0] >= 4


def test_unpack_reads_git_archive_to_its_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tarfile stops at the end-of-archive marker while git may still write the
    record's padding: unpack reads the stream to its end, so git is never
    killed by SIGPIPE (the history point said "git archive ...: failed"). Here
    a megabyte of zeros after the archive makes the race certain."""
    from ctxlint.report.audit import history

    project = scripted_history(tmp_path / "repo", fixes=1)
    real = history.git_argv

    def padded(top: Path, *argv: str) -> list[str]:
        archive = shlex.join(real(top, *argv))
        return ["sh", "-c", f"{archive} && head -c 1000000 /dev/zero"]

    monkeypatch.setattr(history, "git_argv", padded)
    sha = git(project.parent, "rev-parse", "HEAD").strip()
    root = history.unpack(project.parent, sha, "proj", tmp_path / "tree")
    assert (root / "app" / "util.py").read_text() == "VALUE = 1\n"


def test_history_point_for_a_tree_that_cannot_be_checked(tmp_path: Path) -> None:
    """Before the runtime existed there is nothing to derive: an error point, not a crash."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "proj").mkdir()
    (repo / "proj" / "pyproject.toml").write_text((FIXTURE / "pyproject.toml").read_text())
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "config first")
    shutil.rmtree(repo / "proj")
    make_codebase(repo / "proj", fixed=len(STEPS) - 1)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the code", day=2)
    doc = audit_json("--history", "5", cwd=repo / "proj")
    first, last = doc["history"]
    assert first["subject"] == "config first" and first["total"] == 0
    assert "specrt.context" in first["error"]
    assert last["error"] is None and last["total"] == 1


def test_history_outside_git_is_a_clean_error(codebase: Path) -> None:
    res = cli("audit", "--history", "3", "--no-cache", cwd=codebase)
    assert res.returncode == 2
    assert res.stderr.startswith("ctxlint: error: --history")
    assert "Traceback" not in res.stderr


# -- on real trees ----------------------------------------------------------------------


def test_audit_of_the_examples() -> None:
    """examples/legacy_app (the pre-migration example, with its own config) if present,
    else the serving example under the repository's config."""
    legacy = REPO / "examples" / "legacy_app"
    if (legacy / "ctxlint.toml").is_file():
        argv = ["--config", str(legacy / "ctxlint.toml"), ".", "examples/legacy_app"]
    else:
        argv = ["examples/serving_app"]
    doc = audit_json(*argv, cwd=REPO, cache=True)
    assert doc["files_checked"] > 0
    assert len(doc["rules"]) == RULES
    assert all(f["path"].startswith(doc["paths"][0] + "/") for f in doc["files"])
    if legacy.is_dir():
        assert doc["summary"]["found"] > 0
        assert doc["fields"] and all(f["bag"] for f in doc["fields"] if f["namespace"])


def test_audit_of_ctxrt_with_the_repo_config() -> None:
    res = cli("audit", "src/ctxrt", "--format", "json", cwd=REPO)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["paths"] == ["src/ctxrt"] and doc["files_checked"] > 10
    assert doc["summary"]["new"] == 0  # the reference runtime is clean
    sets = {(s["section"], s["name"]): s for s in doc["sets"]}
    assert sets[("vocabulary", "bag accessors")]["size"] >= 10
    assert sets[("CTX501", "plugin bases")]["members"] >= 1  # hooks of the bases


# -- units --------------------------------------------------------------------------------


def _finding(rule: str, message: str, snippet: str) -> Finding:
    return Finding(rule, "a.py", Span(1, 1, 1, 2), "<module>", message, snippet, "fp")


def test_field_rows_read_the_field_from_the_finding_data() -> None:
    """The field is what the rule put in the finding's data, never parsed back
    out of the message or the snippet (which may name something else)."""
    vocab = SimpleNamespace(
        fields={"tp_size": "parallel", "dp_size": None}, bag_accessors={"get_parallel": "parallel"}
    )
    findings = [
        replace(_finding("CTX101", "`dp_size` read off", "x.dp_size"), data={"field": "tp_size"}),
        replace(_finding("CTX102", "?", "sa.tp_size"), data={"field": "tp_size"}),
        replace(_finding("CTX102", "`tp_size`", "sa.tp_size"), data={"field": "dp_size"}),
        _finding("CTX102", "`tp_size` read off", "sa.tp_size"),  # no data: no field
        replace(_finding("CTX501", "pin", "pin x"), data={"key": "x"}, kind=PIN),
    ]
    rows = field_rows(SimpleNamespace(vocab=vocab), findings)  # type: ignore[arg-type]
    assert [r.to_json() for r in rows] == [
        {
            "field": "tp_size",
            "namespace": "parallel",
            "bag": "get_parallel().tp_size",
            "reads": 2,
            "counts": {"CTX101": 1, "CTX102": 1},
        },
        {"field": "dp_size", "namespace": None, "bag": None, "reads": 1, "counts": {"CTX102": 1}},
    ]


def test_squarify_fills_the_box_proportionally() -> None:
    values = [("a", 6.0), ("b", 6.0), ("c", 4.0), ("d", 3.0), ("e", 2.0), ("f", 2.0), ("g", 1.0)]
    rects = squarify(values, 0, 0, 600, 400)
    assert [r[0] for r in rects] == [k for k, _ in values]
    total = sum(v for _, v in values)
    for (_, v), (_, x, y, w, h) in zip(values, rects, strict=True):
        assert w * h == pytest.approx(600 * 400 * v / total)
        assert -1e-6 <= x and x + w <= 600 + 1e-6 and -1e-6 <= y and y + h <= 400 + 1e-6


# -- the sglang wheel (slow: a cold run parses ~2000 files) -------------------------------


@pytest.mark.slow
def test_audit_of_the_sglang_wheel(tmp_path: Path) -> None:
    tree = sglang_tree()
    page = tmp_path / "sglang.html"
    res = cli(
        "audit", "--profile", "sglang", str(tree), "--format", "json", "--html", str(page),
        cwd=tmp_path,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["files_checked"] > 1000
    assert doc["errors"] == []
    assert len(doc["rules"]) == RULES
    assert doc["summary"]["found"] == sum(r["found"] for r in doc["rules"]) > 0
    assert sum(f["total"] for f in doc["folders"]) == doc["summary"]["found"]
    assert all(f["folder"].startswith("sglang") for f in doc["folders"])
    sets = {(s["section"], s["name"]): s for s in doc["sets"]}
    assert sets[("vocabulary", "bag accessors")]["size"] >= 8
    assert sum(1 for s in doc["sets"] if s["name"].startswith("record fields: ")) >= 8
    # every field the vocabulary knows comes with the bag to read it from
    assert all(f["bag"] for f in doc["fields"] if f["namespace"])
    html = page.read_text()
    assert f'data-chart="rules" data-points="{RULES}"' in html
    assert f'data-chart="treemap" data-points="{len(doc["files"])}"' in html
    assert "<link" not in html and not re.search(r'(src|href)="https?:', html)
