"""Process roles and the namespaces each may read.

``ROLE_NAMESPACE_SETS`` is the one enumeration of roles (there is no launcher role:
the launch path publishes as ``tokenizer``). ``None`` means the full tree; a set
restricts the role, and only audited roles are restricted.

``CTXRT_ROLE_NAMESPACES=record`` appends one ``role<TAB>namespace`` line per pair first
read in a process to the file named by ``CTXRT_ROLE_NAMESPACES_OUT`` (appends are
atomic, so every process of a server can share one file); ``=enforce`` fails closed
on a read outside the role's set, inside ``torch.compile``-traced code too: the
refused read raises while dynamo traces, so no graph is built around it. Record mode
does not observe traced reads (a file append has no place in a trace, and a graph
replay reads nothing): audit with compilation disabled before restricting a role."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

from ctxrt.errors import RoleNamespaceError

ROLE_NAMESPACE_SETS: Mapping[str, frozenset[str] | None] = MappingProxyType(
    {
        "tokenizer": None,
        "scheduler": None,
        "detokenizer": frozenset({"serving", "observability"}),
        "dp_controller": frozenset({"exec"}),
        "encoder": None,
    }
)

MODE_ENV = "CTXRT_ROLE_NAMESPACES"
OUT_ENV = "CTXRT_ROLE_NAMESPACES_OUT"
MODES = ("record", "enforce")


class RoleAudit:
    """The per-process observer, created at publish from the environment."""

    def __init__(self, role: str, mode: str, out_path: str | None) -> None:
        if mode not in MODES:
            raise ValueError(f"{MODE_ENV} must be one of {MODES}, got {mode!r}")
        if mode == "record" and not out_path:
            raise ValueError(f"{MODE_ENV}=record needs {OUT_ENV} to name the output file")
        self.role = role
        self.mode = mode
        self._out = out_path
        self._allowed = ROLE_NAMESPACE_SETS[role]
        self._seen: set[str] = set()

    @classmethod
    def from_env(cls, role: str) -> RoleAudit | None:
        mode = os.environ.get(MODE_ENV, "")
        if not mode:
            return None
        return cls(role, mode, os.environ.get(OUT_ENV))

    def check(self, namespace: str) -> None:
        """The enforce side alone: pure (no I/O, no state), so it also runs while
        ``torch.compile`` traces and a refused read fails the trace."""
        if self.mode == "enforce" and self._allowed is not None and namespace not in self._allowed:
            raise RoleNamespaceError(
                f"role {self.role!r} read namespace {namespace!r}, outside its "
                f"ROLE_NAMESPACE_SETS entry {sorted(self._allowed)}"
            )

    def observe(self, namespace: str) -> None:
        if self.mode == "enforce":
            self.check(namespace)
            return
        if namespace not in self._seen:
            self._seen.add(namespace)
            assert self._out is not None
            fd = os.open(self._out, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, f"{self.role}\t{namespace}\n".encode())
            finally:
                os.close(fd)


def read_role_audit(path: str | os.PathLike[str]) -> dict[str, set[str]]:
    """Role -> namespaces read, merged over every process that recorded into ``path``."""
    result: dict[str, set[str]] = {}
    for line in Path(path).read_text().splitlines():
        role, _, namespace = line.partition("\t")
        result.setdefault(role, set()).add(namespace)
    return result
