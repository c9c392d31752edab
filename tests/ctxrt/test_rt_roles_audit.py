"""RoleAudit in-process: enforce mode raises on a read outside the role's set (the
spawned-process test is not the only one that sees it stop raising)."""

from __future__ import annotations

from pathlib import Path

import pytest
from rt_fixtures import fresh_context  # noqa: F401 - autouse: empty context per test

from ctxrt.context import get_exec, get_parallel, get_serving, publish
from ctxrt.errors import RoleNamespaceError
from ctxrt.record import ServerArgs
from ctxrt.roles import MODE_ENV, OUT_ENV, ROLE_NAMESPACE_SETS, RoleAudit, read_role_audit


def test_enforce_observe_raises_outside_the_role_set() -> None:
    allowed = ROLE_NAMESPACE_SETS["detokenizer"]
    assert allowed is not None
    audit = RoleAudit("detokenizer", "enforce", None)
    for ns in sorted(allowed):
        audit.observe(ns)
    with pytest.raises(RoleNamespaceError, match="'detokenizer' read namespace 'exec'"):
        audit.observe("exec")
    RoleAudit("scheduler", "enforce", None).observe("exec")  # a full-tree role reads anything


def test_enforce_through_the_accessors_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MODE_ENV, "enforce")
    publish(ServerArgs(model_path="dummy"), role="detokenizer")
    assert get_serving().port == 30000
    with pytest.raises(RoleNamespaceError):
        get_exec()
    with pytest.raises(RoleNamespaceError):
        get_parallel()


def test_record_observe_writes_each_pair_once(tmp_path: Path) -> None:
    out = tmp_path / "roles.tsv"
    audit = RoleAudit("detokenizer", "record", str(out))
    for ns in ("exec", "serving", "exec"):
        audit.observe(ns)  # record mode never raises
    assert out.read_text().splitlines() == ["detokenizer\texec", "detokenizer\tserving"]
    assert read_role_audit(out) == {"detokenizer": {"exec", "serving"}}
    with pytest.raises(ValueError, match=OUT_ENV):
        RoleAudit("detokenizer", "record", None)


def test_the_accessor_fast_path_keeps_the_audit_semantics(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After its first read a namespace is served without the audit; a refused one
    is never served that way, so it keeps raising."""
    monkeypatch.setenv(MODE_ENV, "enforce")
    publish(ServerArgs(model_path="dummy"), role="detokenizer")
    for _ in range(2):
        assert get_serving().port == 30000
        with pytest.raises(RoleNamespaceError):
            get_exec()
    out = tmp_path / "roles.tsv"
    monkeypatch.setenv(MODE_ENV, "record")
    monkeypatch.setenv(OUT_ENV, str(out))
    publish(ServerArgs(model_path="dummy"), role="scheduler")
    for _ in range(3):
        get_exec()
        get_parallel()
    assert out.read_text().splitlines() == ["scheduler\texec", "scheduler\tparallel"]
    monkeypatch.delenv(MODE_ENV)
    publish(ServerArgs(model_path="dummy"), role="detokenizer")
    get_exec()  # no audit: every namespace answers
