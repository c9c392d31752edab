"""The engine end to end: determinism across cache/jobs, the process pool, and
files that cannot be checked (syntax errors, bad encodings, unreadable files)."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest
from conftest import run_cli
from helpers import cli, populate, run_engine, write

import ctxlint.core.pool as pool_module

CORE = {"CTX001", "CTX101", "CTX201"}  # the rules these fixtures are written for


def test_json_output_is_byte_identical_cold_warm_uncached_and_for_any_job_count(
    project: Path,
) -> None:
    """Cold cache, warm cache, --no-cache, --jobs 1 and --jobs 2 print the same bytes."""
    populate(project, n=15)
    cache = project / ".ctxlint_cache" / "facts.sqlite"
    cold = run_cli("check", "--format", "json", "--jobs", "2", cwd=project)
    assert cache.is_file(), "the cold run should have filled the cache"
    warm = run_cli("check", "--format", "json", "--jobs", "1", cwd=project)
    serial = run_cli("check", "--format", "json", "--no-cache", "--jobs", "1", cwd=project)
    pooled = run_cli("check", "--format", "json", "--no-cache", "--jobs", "2", cwd=project)
    runs = [cold, warm, serial, pooled]
    assert [r.returncode for r in runs] == [1] * 4, [r.stderr for r in runs]
    assert all(r.stdout == cold.stdout for r in runs)
    doc = json.loads(cold.stdout)
    rules = Counter(f["rule"] for f in doc["findings"] if f["rule"] in CORE)
    assert rules == {"CTX101": 5, "CTX201": 5, "CTX001": 5}
    assert doc["errors"] == []


def test_the_pool_runs_and_agrees_with_the_serial_path(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With --jobs 2 and many misses the facts really come from worker processes,
    and the findings equal the in-process (jobs=1) ones."""
    populate(project, n=15)
    pools: list[int] = []
    real = pool_module.ProcessPoolExecutor

    class SpyPool(real):  # type: ignore[misc, valid-type]
        def __init__(self, *args: object, **kwargs: object) -> None:
            pools.append(int(kwargs["max_workers"]))  # type: ignore[call-overload]
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pool_module, "ProcessPoolExecutor", SpyPool)
    pooled = run_engine(project, jobs=2)
    assert pools and max(pools) == 2, "the pool never ran"
    pools.clear()
    serial = run_engine(project, jobs=1)
    assert pools == []
    assert pooled.findings == serial.findings
    assert pooled.files_parsed == serial.files_parsed > 15


# -- files that cannot be checked ---------------------------------------------------
# The prefilter only parses files that mention a derived name, so each broken
# file mentions the seed accessor to be looked at at all.
BROKEN = {
    "app/syntax.py": "from specrt.context import get_server_args\ndef broken(:\n    pass\n",
    "app/latin1.py": b"# get_server_args\nNAME = '\xe9t\xe9'\n",
}
GOOD = {
    "app/reader.py": (
        "from specrt.context import get_server_args\n\n"
        "def f() -> int:\n    return get_server_args().tp_size\n"
    )
}


def _write_broken(root: Path) -> None:
    write(root, GOOD)
    for rel, data in BROKEN.items():
        path = root / rel
        if isinstance(data, bytes):
            path.write_bytes(data)
        else:
            path.write_text(data)


def test_unparsable_files_become_errors_and_the_rest_is_still_checked(project: Path) -> None:
    """A syntax error and a non-UTF-8 file are entries in `errors` with a clear
    message; the other files' findings are still reported."""
    _write_broken(project)
    out = run_engine(project, select=CORE)
    errors = {e.path: e.message for e in out.errors}
    assert set(errors) == {"app/syntax.py", "app/latin1.py"}
    assert errors["app/syntax.py"].startswith("syntax error at line ")
    assert "not valid UTF-8" in errors["app/latin1.py"]
    assert [(f.rule, f.path) for f in out.findings] == [("CTX101", "app/reader.py")]


def test_a_broken_file_no_rule_needs_is_still_an_error(project: Path) -> None:
    """Files the prefilter leaves out are not parsed with LibCST, but one that
    does not parse is still reported (checked with ast), cold and warm alike,
    and editing it into another error is seen."""
    write(project, GOOD)
    broken = project / "app" / "unrelated.py"
    broken.write_text("def f(:\n    return 1\n")
    for _ in range(2):  # cold, then from the cache and the memo
        out = run_engine(project, select=CORE, use_cache=True)
        assert [e.path for e in out.errors] == ["app/unrelated.py"]
        assert out.errors[0].message.startswith("syntax error at line 1")
        assert "app/unrelated.py" not in out.program.files
    broken.write_text("X = 1\n\nY = (\n")
    out = run_engine(project, select=CORE, use_cache=True)
    assert [e.message.split(",")[0] for e in out.errors] == ["syntax error at line 3"]
    broken.write_bytes(b"X = '\xe9'\n")
    assert "not valid UTF-8" in run_engine(project, select=CORE).errors[0].message
    broken.write_text("X = 1\n")
    assert run_engine(project, select=CORE, use_cache=True).errors == []


def test_unreadable_file_is_an_error(project: Path) -> None:
    """A file that cannot be read is an error entry, not a crash."""
    write(project, GOOD)
    secret = project / "app" / "secret.py"
    secret.write_text("X = 1\n")
    secret.chmod(0)
    try:
        if os.access(secret, os.R_OK):
            pytest.skip("running with privileges that read a chmod 000 file")
        out = run_engine(project, select=CORE)
    finally:
        secret.chmod(0o644)
    assert [e.path for e in out.errors] == ["app/secret.py"]
    assert out.errors[0].message.startswith("cannot read")
    assert [f.path for f in out.findings] == ["app/reader.py"]


def test_file_errors_exit_2_unless_ignored(project: Path) -> None:
    """Errors exit 2 and are listed in the JSON; --ignore-errors exits per findings."""
    _write_broken(project)
    select = ("--select", ",".join(sorted(CORE)))
    res = cli("check", "--format", "json", "--no-cache", *select, cwd=project)
    assert res.returncode == 2
    doc = json.loads(res.stdout)
    assert [e["path"] for e in doc["errors"]] == ["app/latin1.py", "app/syntax.py"]
    assert [f["path"] for f in doc["findings"]] == ["app/reader.py"]
    assert cli("check", "--ignore-errors", "--no-cache", *select, cwd=project).returncode == 1
    (project / "app" / "reader.py").write_text("X = 1\n")
    assert cli("check", "--ignore-errors", "--no-cache", *select, cwd=project).returncode == 0
    assert cli("check", "--no-cache", *select, cwd=project).returncode == 2


def test_text_report_lists_errors(project: Path) -> None:
    """The human report names each file that could not be checked."""
    _write_broken(project)
    res = cli("check", "--no-cache", cwd=project)
    assert res.returncode == 2
    assert "app/syntax.py" in res.stdout and "syntax error" in res.stdout
    assert "2 errors" in res.stdout


def test_per_rule_exclude_drops_only_that_rule(project: Path) -> None:
    """`per-rule-exclude` silences one rule under a glob; others still report there."""
    write(
        project,
        {
            "app/pipeline/resolve.py": (
                "from specrt.context import get_server_args\n"
                "from specrt.record import ServerArgs\n\n"
                "def resolve(server_args: ServerArgs) -> int:\n"
                "    server_args.tp_size = 2\n"
                "    return get_server_args().dp_size\n"
            ),
            "app/biz.py": (
                "from specrt.record import ServerArgs\n\n"
                "def tune(server_args: ServerArgs) -> None:\n"
                "    server_args.tp_size = 2\n"
            ),
        },
    )
    cfg = project / "pyproject.toml"
    cfg.write_text(
        cfg.read_text().replace(
            'CTX201 = ["specrt/record.py"]', 'CTX201 = ["specrt/record.py", "app/pipeline/**"]'
        )
    )
    got = sorted((f.rule, f.path) for f in run_engine(project, select=CORE).findings)
    assert got == [
        ("CTX101", "app/pipeline/resolve.py"),
        ("CTX201", "app/biz.py"),
    ]


def test_warm_run_replays_the_stored_outcome_exactly(project: Path) -> None:
    """Byte-identical inputs replay the stored run: same findings, sets and pins as a
    full derivation, nothing parsed; an edit re-parses the file, and one that
    changes its facts derives again."""
    populate(project)
    from ctxlint.config.settings import find_config, load_config
    from ctxlint.engine.registry import load_rules
    from ctxlint.engine.run import Engine

    rules = load_rules()
    cfg_path = find_config(project)
    assert cfg_path is not None
    config = load_config(
        cfg_path,
        rule_ids=[r.id for r in rules],
        rule_options={k: v for r in rules for k, v in r.options.items()},
    )
    full = Engine(config, rules, memo=False).run()
    Engine(config, rules).run()  # records the outcome
    replayed = Engine(config, rules).run()
    assert replayed.files_parsed == 0 and not replayed.program.files  # nothing reloaded
    assert replayed.findings == full.findings and replayed.findings
    assert json.dumps(replayed.program.sets, sort_keys=True, default=sorted) == json.dumps(
        full.program.sets, sort_keys=True, default=sorted
    )
    assert replayed.pins == full.pins

    first = sorted(project.rglob("app/*.py"))[-1]
    first.write_text(first.read_text() + "\n# edited\n")
    commented = Engine(config, rules).run()
    # same facts, found by code digest (a small project: the cold run stored them)
    assert commented.files_parsed == 0 and not commented.program.files
    assert commented.findings == full.findings
    # a seed read (the module did not import the accessor: a bare name is no read)
    read = "\nfrom specrt.context import get_server_args\nEXTRA = get_server_args().dp_size\n"
    first.write_text(first.read_text() + read)
    edited = Engine(config, rules).run()
    assert edited.files_parsed == 1 and edited.program.files
    # the seed read, and the same read at import time
    assert sorted(f.rule for f in edited.findings if f not in full.findings) == ["CTX101", "CTX602"]


def test_trusted_stat_signatures_still_see_every_edit(project: Path, monkeypatch) -> None:
    """With every file settled (its stat signature trusted), a warm run reads no file
    and gives the cold run's findings; an edit that keeps size and mtime is still
    read (its ctime moved) and changes the findings as a cold run would."""
    import ctxlint.discover.sources as sources_module

    monkeypatch.setattr(sources_module, "RACY_NS", -(10**12))
    populate(project)
    cold = run_engine(project, use_cache=True)
    read: list[str] = []
    real = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda p: read.append(p.name) or real(p))
    warm = run_engine(project, use_cache=True)
    assert read == [] and warm.findings == cold.findings
    target = next(
        p for p in sorted(project.rglob("app/*.py")) if "get_server_args().tp_size" in p.read_text()
    )
    st = os.stat(target)
    text = target.read_text()
    edited = text.replace("get_server_args().tp_size", "get_server_args().dp_size", 1)
    assert edited != text and len(edited) == len(text)
    target.write_text(edited)
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    read.clear()
    after = run_engine(project, use_cache=True)
    assert target.name in read
    fresh = run_engine(project, use_cache=False)
    assert after.findings == fresh.findings != cold.findings


def test_token_matcher_words_whole_and_other_tokens_as_substrings() -> None:
    from ctxlint.engine.run import token_matcher

    match = token_matcher({"get_exec", "Process", "def run(", "ctxlint:"})
    assert match(b"x = get_exec().a")
    assert match(b"mp.Process(target=f)")
    assert not match(b"x = get_exec_all() + my_get_exec")  # not the whole word
    assert not match(b"from torch import ProcessGroup")
    assert match(b"    def run(self):")
    assert match(b"# ctxlint: ignore[CTX101] why")
    assert not match(b"def running(): pass")
    assert not token_matcher(set())(b"anything")


def test_token_matcher_matches_what_a_flat_alternation_matches() -> None:
    """Shared prefixes are factored into one pattern (`get_(?:exec|model)`); it
    must accept exactly the texts the word-by-word alternation accepts: words
    that are prefixes of each other, of longer identifiers, and none at all."""
    import random
    import re

    from ctxlint.engine.run import token_matcher

    rng = random.Random(7)
    letters = "ab_c1"
    for _ in range(2000):
        words = {
            rng.choice("ab_") + "".join(rng.choice(letters) for _ in range(rng.randint(0, 4)))
            for _ in range(rng.randint(1, 8))
        }
        text = "".join(rng.choice(letters + " .(\n") for _ in range(rng.randint(0, 40)))
        flat = re.compile(r"\b(?:" + "|".join(sorted(words, key=lambda w: -len(w))) + r")\b")
        assert token_matcher(words)(text.encode()) == bool(flat.search(text)), (words, text)


def test_the_cyclic_gc_is_paused_for_a_run_and_restored(project: Path, monkeypatch) -> None:
    """The run pauses the cyclic GC (it re-traverses millions of acyclic facts) and
    turns it back on afterwards, also when the run fails."""
    import gc

    from ctxlint.rules import ctx101_seed_read

    populate(project)
    during: list[bool] = []
    # patched on the class: monkeypatch restores an instance attribute by setting the
    # bound method on the instance, which would shadow later tests' class patches
    rule_class = type(ctx101_seed_read.RULE)
    real = rule_class.derive
    monkeypatch.setattr(
        rule_class, "derive", lambda self, p: during.append(gc.isenabled()) or real(self, p)
    )
    assert gc.isenabled()
    run_engine(project)
    assert during == [False] and gc.isenabled()

    def boom(self, program):
        raise RuntimeError("a bug in a rule")

    monkeypatch.setattr(rule_class, "derive", boom)
    with pytest.raises(RuntimeError):
        run_engine(project)
    assert gc.isenabled()


def test_a_file_s_tree_is_freed_without_the_cyclic_gc(project: Path) -> None:
    """With the GC paused, nothing but reference counting frees a parsed tree: the
    extraction must leave no reference cycle that holds it."""
    import gc

    from ctxlint.engine.registry import file_visitors, load_rules
    from ctxlint.facts.extract import extract_file

    populate(project)
    vocab = run_engine(project).program.vocab.to_json()
    source = "\n".join(
        f"def f{i}(server_args):\n    server_args.tp_size = {i}\n    return get_exec().x\n"
        for i in range(200)
    ).encode()
    rules = load_rules()
    gc.collect()
    gc.disable()
    try:
        extract_file("app/big.py", "app.big", source, vocab, file_visitors(rules))
        leaked = gc.collect()
    finally:
        gc.enable()
    assert leaked < 500, f"{leaked} objects were only reachable through cycles"
