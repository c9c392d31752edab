"""Role namespace modes across real spawned processes: ``record`` writes what each
role read, ``enforce`` fails closed outside the role's ``ROLE_NAMESPACE_SETS`` entry."""

from __future__ import annotations

import multiprocessing as mp
from pathlib import Path
from typing import Any

import pytest
import rt_spawn_probes
from rt_fixtures import fresh_context  # noqa: F401 - autouse: empty context per test

from ctxrt.record import ServerArgs
from ctxrt.roles import MODE_ENV, OUT_ENV, ROLE_NAMESPACE_SETS, read_role_audit


def _drain(results: Any) -> list[tuple[str, str, str]]:
    out = []
    while (item := results.get(timeout=60))[0] != "done":
        out.append(item)
    return out


def test_record_and_enforce_modes_in_spawned_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spawn = mp.get_context("spawn")
    sa = ServerArgs(model_path="dummy")
    audit = tmp_path / "roles.tsv"
    detok_allowed = ROLE_NAMESPACE_SETS["detokenizer"]
    assert detok_allowed is not None and "exec" not in detok_allowed
    assert ROLE_NAMESPACE_SETS["scheduler"] is None

    steps_record = [("detokenizer", ["serving", "exec", "serving"]), ("scheduler", ["parallel"])]
    steps_enforce = [("detokenizer", ["serving", "exec"]), ("scheduler", ["exec", "mm"])]
    queues, procs = [], []
    for mode, steps in (("record", steps_record), ("enforce", steps_enforce)):
        monkeypatch.setenv(MODE_ENV, mode)  # a spawned child inherits the environment
        monkeypatch.setenv(OUT_ENV, str(audit))
        results = spawn.Queue()
        proc = spawn.Process(target=rt_spawn_probes.read_namespaces, args=(sa, steps, results))
        proc.start()
        queues.append(results)
        procs.append(proc)
    recorded, enforced = (_drain(q) for q in queues)
    for proc in procs:
        proc.join(30)
        assert proc.exitcode == 0

    # record: nothing fails, and the file says which namespaces each role read
    assert all(status == "ok" for status, _, _ in recorded)
    assert read_role_audit(audit) == {"detokenizer": {"serving", "exec"}, "scheduler": {"parallel"}}
    assert len(audit.read_text().splitlines()) == 3  # one line per (role, ns) pair
    # enforce: the detokenizer's exec read fails closed; the full-tree role reads anything
    assert enforced == [
        ("ok", "detokenizer", "serving"),
        ("RoleNamespaceError", "detokenizer", "exec"),
        ("ok", "scheduler", "exec"),
        ("ok", "scheduler", "mm"),
    ]
