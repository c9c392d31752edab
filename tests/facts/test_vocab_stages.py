"""The vocabulary at every stage of the migration, and rules that run only where
their inputs can be derived.

- tests/fixtures/begun: a codebase that has just begun (a flat record, some
  fields marked `NS("path")`, an unannotated seed accessor and its deprecated
  alias, bag accessors over literal names): CTX101/CTX201 report with a fix that
  names the bag or says "declare its namespace", CTX601 lists the fields with no
  namespace yet.
- a codebase before the migration (SGLang 0.5.14's shape: the seed accessor in
  the record's module, no namespaces): the rules that need bags are disabled with
  one line each, the others run; selecting a disabled rule is exit 2.
- a spelling that is there but cannot be read is an error, not a disabled rule.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import REPO
from helpers import cli, run_engine, write

from ctxlint.engine.registry import load_rules

BEGUN = REPO / "tests" / "fixtures" / "begun"


@pytest.fixture
def begun(tmp_path: Path) -> Path:
    root = tmp_path / "begun"
    shutil.copytree(BEGUN, root)
    return root


def test_every_spelling_of_the_vocabulary_is_derived_with_where_it_came_from(begun: Path) -> None:
    vocab = run_engine(begun).program.vocab
    assert vocab.seed_accessors == ("get_global_server_args", "get_server_args")
    assert vocab.bag_accessors == {"get_parallel": "parallel", "get_schedule": "schedule"}
    assert vocab.fields == {
        "log_level": "",
        "max_running_requests": "schedule",  # field(metadata={"ns": NS("schedule")})
        "model_path": "",
        "tp_size": "parallel",  # Annotated[int, "...", NS("parallel")]
    }
    assert vocab.namespaces == ("parallel", "schedule")
    assert vocab.missing == {}
    assert vocab.provenance == {
        "bag accessor get_parallel": "begun/runtime.py:33 (returns the context's bag 'parallel')",
        "bag accessor get_schedule": "begun/runtime.py:37 (returns the context's bag 'schedule')",
        "namespace parallel": "begun/record.py:10 (NS('parallel') on ServerArgs.tp_size), 1 marker",
        "namespace schedule": (
            "begun/record.py:11 (NS('schedule') on ServerArgs.max_running_requests), 1 marker"
        ),
        "seed accessor get_global_server_args": "begun/runtime.py:30 (alias of get_server_args)",
        "seed accessor get_server_args": "begun/runtime.py:26 (returns _CONTEXT.server_args)",
    }


def _last(finding: dict[str, str]) -> str:
    return (finding.get("details") or finding["message"]).rpartition("; ")[2]


def test_a_codebase_that_has_just_begun_gets_findings_and_its_to_do_list(begun: Path) -> None:
    res = cli("check", "--no-cache", "--format", "json", cwd=begun)
    assert res.returncode == 1, res.stderr
    # its runtime has bags but no name-driven reader yet: CTX603 says it checks nothing
    # (no manager, resolution or aliased group: CTX303/403/704 say so in their sets)
    assert res.stderr == (
        "ctxlint: warning: CTX603 literal-leaf-name is partial: the runtime module defines "
        "no `config_leaf`: no name-driven read is checked\n"
    )
    doc = json.loads(res.stdout)
    assert doc["disabled"] == []
    # each finding's last word: the step to take (in the details where the message is brief)
    got = [(f["rule"], f["line"], _last(f)) for f in doc["findings"]]
    declare = (
        'declare its namespace (a field class with `_NS_PATH`, or an `NS("path")` marker) '
        "to give it a bag leaf"
    )
    assert got == [
        ("CTX101", 7, "read get_parallel().tp_size"),
        ("CTX101", 8, declare),  # through the deprecated alias
        ("CTX301", 9, _last(doc["findings"][2])),
        ("CTX201", 10, "its bag leaf is get_schedule().max_running_requests"),
        ("CTX201", 11, declare),
        ("CTX601", 9, _last(doc["findings"][5])),
        ("CTX601", 12, _last(doc["findings"][6])),
    ]
    todo = [f["message"] for f in doc["findings"] if f["rule"] == "CTX601"]
    assert [m.split("`")[1] for m in todo] == ["model_path", "log_level"]
    assert all("has no namespace yet: declare its namespace" in m for m in todo)
    sets = json.loads(cli("sets", "--no-cache", "--format", "json", cwd=begun).stdout)
    assert sets["CTX601"]["record fields without a namespace (the migration's to-do list)"] == [
        "model_path (begun/record.py:9)",
        "log_level (begun/record.py:12)",
    ]


PRE_MIGRATION = {
    "pyproject.toml": (
        "[tool.ctxlint]\n"
        'runtime-module = "old.runtime_context"\n'
        'record-class = "old.server_args.ServerArgs"\n'
    ),
    "old/server_args.py": """\
from dataclasses import dataclass
from typing import Optional


@dataclass
class ServerArgs:
    tp_size: int = 1
    log_level: str = "info"


_global_server_args: Optional[ServerArgs] = None


def new_server_args() -> ServerArgs:
    return ServerArgs(tp_size=2)


def get_global_server_args() -> ServerArgs:
    assert _global_server_args is not None
    return _global_server_args
""",
    "old/runtime_context.py": """\
class ParallelContext:
    @property
    def tp_size(self) -> int:
        return 1


_PARALLEL = ParallelContext()


def get_parallel() -> ParallelContext:
    return _PARALLEL
""",
    "old/app.py": """\
from old.server_args import get_global_server_args


def level() -> str:
    return get_global_server_args().log_level
""",
}
DISABLED = {
    "CTX103": "no bag accessors: a zero-argument `get_<namespace>()` in old.runtime_context "
    "returning the context's bag for a namespace would provide them",
    "CTX104": "no bag accessors: a zero-argument `get_<namespace>()` in old.runtime_context "
    "returning the context's bag for a namespace would provide them",
    "CTX301": "no bag accessors: a zero-argument `get_<namespace>()` in old.runtime_context "
    "returning the context's bag for a namespace would provide them",
    "CTX302": "no bag accessors: a zero-argument `get_<namespace>()` in old.runtime_context "
    "returning the context's bag for a namespace would provide them",
    "CTX303": "no bag accessors: a zero-argument `get_<namespace>()` in old.runtime_context "
    "returning the context's bag for a namespace would provide them",
    "CTX401": "no bag accessors: a zero-argument `get_<namespace>()` in old.runtime_context "
    "returning the context's bag for a namespace would provide them",
    "CTX403": "no bag accessors: a zero-argument `get_<namespace>()` in old.runtime_context "
    "returning the context's bag for a namespace would provide them",
    "CTX502": "no bag accessors: a zero-argument `get_<namespace>()` in old.runtime_context "
    "returning the context's bag for a namespace would provide them",
    "CTX601": 'no namespaces: field classes with `_NS_PATH`, `NS("path")` markers on '
    "ServerArgs's fields, or an accessor in old.runtime_context returning the context's bag "
    "for a literal name would provide them",
    "CTX602": "no bag accessors: a zero-argument `get_<namespace>()` in old.runtime_context "
    "returning the context's bag for a namespace would provide them",
    "CTX603": "no bag accessors: a zero-argument `get_<namespace>()` in old.runtime_context "
    "returning the context's bag for a namespace would provide them",
    "CTX701": "no bag accessors: a zero-argument `get_<namespace>()` in old.runtime_context "
    "returning the context's bag for a namespace would provide them",
    "CTX702": "no bag accessors: a zero-argument `get_<namespace>()` in old.runtime_context "
    "returning the context's bag for a namespace would provide them",
    "CTX703": "no bag accessors: a zero-argument `get_<namespace>()` in old.runtime_context "
    "returning the context's bag for a namespace would provide them",
    "CTX704": "no bag accessors: a zero-argument `get_<namespace>()` in old.runtime_context "
    "returning the context's bag for a namespace would provide them",
    "CTX705": "no bag accessors: a zero-argument `get_<namespace>()` in old.runtime_context "
    "returning the context's bag for a namespace would provide them",
}


def test_before_the_migration_what_can_run_runs_and_the_rest_says_why(tmp_path: Path) -> None:
    write(tmp_path, PRE_MIGRATION)
    res = cli("check", "--no-cache", "--format", "json", cwd=tmp_path)
    assert res.returncode == 1
    assert res.stderr.splitlines() == [
        f"ctxlint: {rule} disabled: {why}" for rule, why in DISABLED.items()
    ]
    doc = json.loads(res.stdout)
    assert doc["disabled"] == [{"rule": r, "reason": why} for r, why in DISABLED.items()]
    assert set(doc["summary"]) == {r.id for r in load_rules()} - set(DISABLED)
    # the seed accessor lives in the record's module; the factory is not a seed
    assert [(f["rule"], f["path"], f["line"]) for f in doc["findings"]] == [
        ("CTX101", "old/app.py", 5)
    ]
    sets = json.loads(cli("sets", "--no-cache", "--format", "json", cwd=tmp_path).stdout)
    vocab = sets["vocabulary"]
    assert vocab["seed accessors"] == ["get_global_server_args"]
    assert vocab["where it came from"] == {
        "seed accessor get_global_server_args": "old/server_args.py:18 (annotated -> ServerArgs)"
    }
    assert vocab["missing sets"] == {
        "bag accessors": DISABLED["CTX301"],
        "namespaces": DISABLED["CTX601"],
    }
    assert vocab["disabled rules"] == DISABLED


def test_selecting_a_rule_that_cannot_run_is_exit_2(tmp_path: Path) -> None:
    write(tmp_path, PRE_MIGRATION)
    res = cli("check", "--no-cache", "--select", "CTX101,CTX601", cwd=tmp_path)
    assert res.returncode == 2
    assert res.stderr.splitlines() == [
        f"ctxlint: CTX601 disabled: {DISABLED['CTX601']}",
        f"ctxlint: error: CTX601 selected but cannot run on this codebase: {DISABLED['CTX601']}",
    ]
    assert cli("check", "--no-cache", "--select", "CTX101", cwd=tmp_path).returncode == 1


def test_a_rule_selected_by_name_counts_as_selected_a_prefix_does_not(tmp_path: Path) -> None:
    write(tmp_path, PRE_MIGRATION)
    by_name = cli("check", "--no-cache", "--select", "seed-read,bag-coverage", cwd=tmp_path)
    assert by_name.returncode == 2
    assert by_name.stderr.splitlines()[-1].startswith("ctxlint: error: CTX601 selected but")
    by_prefix = cli("check", "--no-cache", "--select", "CTX1,CTX6", cwd=tmp_path)
    assert by_prefix.returncode == 1  # CTX101 and CTX102 run; CTX103/4 and CTX601 are only said
    assert by_prefix.stderr == (
        f"ctxlint: CTX103 disabled: {DISABLED['CTX103']}\n"
        f"ctxlint: CTX104 disabled: {DISABLED['CTX104']}\n"
        f"ctxlint: CTX601 disabled: {DISABLED['CTX601']}\n"
        f"ctxlint: CTX602 disabled: {DISABLED['CTX602']}\n"
        f"ctxlint: CTX603 disabled: {DISABLED['CTX603']}\n"
    )


def test_nothing_that_can_run_is_exit_2(tmp_path: Path) -> None:
    write(tmp_path, PRE_MIGRATION)
    # (the rules that need only the record run before any migration: ignored too)
    ignore = "CTX001,CTX101,CTX102,CTX105,CTX201,CTX202,CTX203,CTX204,CTX402,CTX501"
    res = cli("check", "--no-cache", "--ignore", ignore, cwd=tmp_path)
    assert res.returncode == 2
    assert res.stderr.splitlines()[-1] == (
        "ctxlint: error: no selected rule can run on this codebase (see the lines above)"
    )


def test_a_disabled_rule_keeps_its_baseline_entries(tmp_path: Path) -> None:
    """A rule that could not run found nothing: its entries are not stale."""
    write(tmp_path, PRE_MIGRATION)
    entry = {"rule": "CTX601", "path": "old/server_args.py", "scope": "ServerArgs",
             "fingerprint": "0123456789abcdef0123", "snippet": "tp_size: int = 1"}  # fmt: skip
    baseline = {"schema": 1, "tool": "ctxlint", "entries": [entry]}
    (tmp_path / "ctxlint-baseline.json").write_text(json.dumps(baseline))
    res = cli("check", "--no-cache", "--strict", "--format", "json", cwd=tmp_path)
    assert res.returncode == 1, res.stderr  # the CTX101 finding, not a stale entry
    assert json.loads(res.stdout)["stale"] == []


BROKEN = {
    "unreadable-markers": (
        {"old/server_args.py": PRE_MIGRATION["old/server_args.py"].replace(
            "    tp_size: int = 1\n",
            "    tp_size: Annotated[int, NS(PARALLEL)] = 1\n",
        ).replace("from typing import Optional", "from typing import Annotated, Optional")},
        "record-class 'old.server_args.ServerArgs': namespaces are declared but none can be "
        "read (a literal is needed): "
        "old/server_args.py:7 (ServerArgs: tp_size: NS(...) without a literal path)",
    ),
    "seed-annotation-that-does-not-resolve": (
        {"old/runtime_context.py": PRE_MIGRATION["old/runtime_context.py"]
         + '\n\ndef get_server_args() -> "ServerArgs":\n    return _PARALLEL\n',
         "old/server_args.py": PRE_MIGRATION["old/server_args.py"].replace(
             "def get_global_server_args() -> ServerArgs:", "def get_global_server_args():")},
        "old/runtime_context.py:14: `get_server_args()` is annotated `-> ServerArgs` but that "
        "does not resolve to old.server_args.ServerArgs",
    ),
}  # fmt: skip


@pytest.mark.parametrize(("files", "message"), BROKEN.values(), ids=BROKEN.keys())
def test_a_spelling_that_cannot_be_read_is_an_error(
    tmp_path: Path, files: dict[str, str], message: str
) -> None:
    write(tmp_path, {**PRE_MIGRATION, **files})
    res = cli("check", "--no-cache", cwd=tmp_path)
    assert res.returncode == 2
    assert len(res.stderr.splitlines()) == 1
    assert res.stderr.startswith(f"ctxlint: error: {message}")


def test_a_line_moved_in_the_runtime_module_keeps_other_files_warm(begun: Path) -> None:
    """Facts depend on the derived names, not on where they came from: shifting
    the runtime module's lines re-parses that file only, and the provenance shown
    is the new one (a warm run equals a cold one)."""
    first = run_engine(begun, use_cache=True)
    assert first.files_parsed == 5  # declarations of runtime and record, facts of 3 files
    runtime = begun / "begun" / "runtime.py"
    runtime.write_text("# moved down a line\n" + runtime.read_text())
    warm = run_engine(begun, use_cache=True)
    assert warm.files_parsed == 2  # runtime.py: its declarations, then its facts
    where = warm.program.vocab.provenance["seed accessor get_server_args"]
    assert where == "begun/runtime.py:27 (returns _CONTEXT.server_args)"
    cold = run_engine(begun, use_cache=False)
    assert cold.program.vocab == warm.program.vocab
    assert cold.findings == warm.findings


def test_a_deprecated_name_re_exported_by_the_record_module_is_a_seed(tmp_path: Path) -> None:
    """`from runtime import get_server_args as get_global_server_args` in the
    record's module: old imports of the old name still read the seed."""
    files = dict(PRE_MIGRATION)
    files["old/runtime_context.py"] += (
        "\n\nfrom typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
        "    from old.server_args import ServerArgs\n\n\n"
        "def get_server_args() -> ServerArgs:\n    return _PARALLEL\n"
    )
    files["old/server_args.py"] = (
        "from old.runtime_context import get_server_args as get_global_server_args\n"
        + PRE_MIGRATION["old/server_args.py"].split("\n\n\ndef get_global_server_args")[0]
    )
    write(tmp_path, files)
    out = run_engine(tmp_path)
    vocab = out.program.vocab
    assert vocab.seed_accessors == ("get_global_server_args", "get_server_args")
    assert vocab.qualified("get_global_server_args") == "old.server_args.get_global_server_args"
    assert vocab.provenance["seed accessor get_global_server_args"] == (
        "old/server_args.py (alias of old.runtime_context.get_server_args)"
    )
    assert [(f.rule, f.path, f.line) for f in out.findings] == [("CTX101", "old/app.py", 5)]


def test_a_legacy_seed_accessor_in_the_record_module_is_not_a_runtime_accessor_name(
    begun: Path,
) -> None:
    """CTX401 keeps the runtime module's names: importing the legacy accessor from
    the record's module, or a rival package defining its own, is not a collision."""
    runtime = begun / "begun" / "runtime.py"
    runtime.write_text(runtime.read_text().replace("get_global_server_args = get_server_args", ""))
    record = begun / "begun" / "record.py"
    record.write_text(
        record.read_text() + "\n\n_ARGS = ServerArgs()\n\n\n"
        "def get_global_server_args() -> ServerArgs:\n    return _ARGS\n"
    )
    write(begun, {
        "begun/app/scheduler.py": "from begun.record import get_global_server_args\n\n\n"
        "def level() -> str:\n    return get_global_server_args().log_level\n",
        "rival/server_args.py": "def get_global_server_args() -> object:\n    return object()\n",
    })  # fmt: skip
    out = run_engine(begun)
    assert out.program.vocab.qualified("get_global_server_args") == (
        "begun.record.get_global_server_args"
    )
    assert [(f.rule, f.path, f.line) for f in out.findings if f.rule != "CTX601"] == [
        ("CTX101", "begun/app/scheduler.py", 5)
    ]


def test_a_private_attribute_of_the_record_is_not_on_the_to_do_list(begun: Path) -> None:
    """`_resolved: bool` is bookkeeping (ctxrt's record has one), not operator input."""
    record = begun / "begun" / "record.py"
    record.write_text(
        record.read_text() + "    _resolved: bool = field(default=False, repr=False)\n"
    )
    todo = [f.message.split("`")[1] for f in run_engine(begun).findings if f.rule == "CTX601"]
    assert todo == ["model_path", "log_level"]
