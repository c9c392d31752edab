"""`ctxlint roles`: the reach per role as a table and as JSON, `--compare` with a
record-mode file (gaps exit 1, the rest listed, agreement per restricted role),
and bad input in one line with exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import cli, write

APP = {
    "app/helpers.py": (
        "from specrt.context import get_schedule\n\n\n"
        "def batch() -> int:\n"
        "    return get_schedule().max_batch\n"
    ),
    "app/procs.py": (
        "from specrt.context import get_exec, get_model, publish\n\n"
        "from app.helpers import batch\n\n\n"
        "def run_detokenizer_process(server_args) -> None:\n"
        '    publish(server_args, role="detokenizer")\n'
        "    get_model().name\n"
        "    batch()\n\n\n"
        "def run_scheduler_process(server_args) -> None:\n"
        '    publish(server_args, role="scheduler")\n'
        "    get_exec().backend\n"
    ),
}


@pytest.fixture
def proj(project: Path) -> Path:
    write(project, APP)
    return project


def roles(root: Path, *args: str) -> tuple[int, str, str]:
    result = cli("roles", "--jobs", "1", "--no-cache", *args, cwd=root)
    return result.returncode, result.stdout, result.stderr


def test_the_reach_per_role_as_json(proj: Path) -> None:
    rc, out, err = roles(proj, "--format", "json")
    assert rc == 0, err
    assert roles(proj, "--output-format", "json") == (rc, out, err)  # as every command takes it
    report = json.loads(out)
    assert report["table"] == "specrt.context.ROLE_NAMESPACE_SETS (specrt/context.py:89)"
    assert report["roles"] == {
        "detokenizer": {
            "allowed": ["model"],
            "entries": ["app.procs.run_detokenizer_process (app/procs.py:7)"],
            "reached": ["model", "schedule"],
            "paths": {
                "model": "run_detokenizer_process -> get_model() (app/procs.py:8)",
                "schedule": "run_detokenizer_process -> batch -> get_schedule() (app/helpers.py:5)",
            },
        },
        "dp_controller": {
            "allowed": ["exec", "parallel"],
            "entries": [],
            "reached": [],
            "paths": {},
        },
        "scheduler": {
            "allowed": None,
            "entries": ["app.procs.run_scheduler_process (app/procs.py:13)"],
            "reached": ["exec"],
            "paths": {"exec": "run_scheduler_process -> get_exec() (app/procs.py:14)"},
        },
        "tokenizer": {"allowed": None, "entries": [], "reached": [], "paths": {}},
    }


def test_the_text_table(proj: Path) -> None:
    rc, out, err = roles(proj, "--color", "never")
    assert rc == 0, err
    rows = {line.split("│")[1].strip(): line for line in out.splitlines() if line.count("│") > 2}
    assert set(rows) == {"detokenizer", "dp_controller", "scheduler", "tokenizer"}
    assert "model, schedule" in rows["detokenizer"]
    assert (
        "(full tree)" in rows["scheduler"]
        and "app.procs.run_scheduler_process" in rows["scheduler"]
    )


def test_compare_lists_gaps_unobserved_pairs_and_agreement(proj: Path) -> None:
    audit = proj / "roles.tsv"
    audit.write_text("detokenizer\tmodel\nscheduler\texec\nscheduler\tlora\n\n")
    rc, out, _ = roles(proj, "--compare", str(audit), "--format", "json")
    assert rc == 1  # scheduler/lora: observed, not reached
    report = json.loads(out)
    assert report["soundness gaps"] == ["scheduler\tlora"]
    det = report["roles"]["detokenizer"]
    assert det["not observed"] == ["schedule"] and det["not reached"] == []
    assert det["agreement"] == "static reach outside the set: schedule"
    assert report["roles"]["dp_controller"]["agreement"] == "not observed at runtime"
    assert "agreement" not in report["roles"]["scheduler"]

    audit.write_text("detokenizer\tmodel\ndetokenizer\texec\n")
    rc, out, _ = roles(proj, "--compare", str(audit), "--color", "never")
    assert rc == 1
    assert (
        "soundness gap: role 'detokenizer' read namespace 'exec' at runtime, and no static "
        "path reaches it" in out
    )
    assert "1 soundness gap(s); 2 pair(s) reached statically and never observed" in out

    # SGLang 0.5.23's spelling: a space, and role None for a read before the publish
    audit.write_text("detokenizer model\ndetokenizer schedule\nscheduler exec\nNone mm\n")
    rc, out, _ = roles(proj, "--compare", str(audit), "--format", "json")
    assert rc == 0
    report = json.loads(out)
    assert report["soundness gaps"] == [] and report["read before a publish"] == ["mm"]
    assert "None" not in report["roles"]
    det = report["roles"]["detokenizer"]
    assert det["agreement"] == (
        "static reach outside the set: schedule; runtime reads outside the set: schedule"
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("a\tb\tc\n", "roles.tsv:1: not a `role<TAB>namespace` line"),
        ("a\tb\nb\n", "roles.tsv:2: not a `role<TAB>namespace` line"),
        (None, "roles.tsv: cannot read it (FileNotFoundError)"),
    ],
)
def test_bad_compare_files_are_one_line_errors(
    proj: Path, content: str | None, message: str
) -> None:
    audit = proj / "roles.tsv"
    if content is not None:
        audit.write_text(content)
    rc, out, err = roles(proj, "--compare", str(audit))
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and message in err, err


def test_no_role_table_is_an_error(proj: Path) -> None:
    context = proj / "specrt" / "context.py"
    text = context.read_text()
    context.write_text(text[: text.index("\n\n# The roles processes publish under")] + "\n")
    rc, out, err = roles(proj)
    assert rc == 2 and out == ""
    assert err.splitlines()[-1] == (
        "ctxlint: error: no role table: specrt.context defines or imports no mapping from "
        "role names to a set of namespaces or None"
    )
