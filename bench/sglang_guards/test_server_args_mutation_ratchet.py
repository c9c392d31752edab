# RECONSTRUCTION, not SGLang's file. SGLang's guard tests live in the repository's
# test/ folder, which is in neither the sglang 0.5.23 wheel nor an sdist (PyPI has
# no sdist for 0.5.23). Rebuilt from the design document
# (shared/design/runtime-context-design.md), lines 569-581 (Guardrails 1-2):
# "Mutation ratchet (`test_server_args_mutation_ratchet.py`, exact pin 0 over the
# whole package minus the pipeline / multimodal_gen): textual scan for assignment
# forms. Never raise the baseline."
#
# "Textual scan" is taken literally: a regex over each line of source, comment
# lines skipped, for `server_args.f = ...` (plain and augmented, so tuple targets
# on one line match too), `get_server_args().f = ...` and `setattr(server_args, ...)`,
# with `self.` / `x.server_args.` prefixes matching as text does.
#
# Bench adaptation: SGLANG_GUARD_ROOT names the folder that holds `sglang/`.
from __future__ import annotations

import os
import re
from pathlib import Path

_ASSIGN = re.compile(
    r"(?:\bserver_args|\bget_server_args\(\))\.([A-Za-z_]\w*)\s*"
    r"(?:\*\*|//|>>|<<|[-+*/%@&|^])?=(?!=)"
)
_SETATTR = re.compile(r"\bsetattr\(\s*(?:[\w.]+\.)?server_args\s*,")
# Hand list: the resolution pipeline builds the record; multimodal_gen has its own.
_EXEMPT = (
    "sglang/srt/server_args.py",
    "sglang/srt/arg_groups/",
    "sglang/multimodal_gen/",
    "sglang/test/",
)
_PINNED = 0  # exact pin: never raise it


def _root() -> Path:
    root = os.environ.get("SGLANG_GUARD_ROOT")
    return Path(root) if root else Path(__file__).resolve().parents[2] / "python"


def scan(root: Path | None = None) -> list[tuple[str, int, str]]:
    root = root or _root()
    hits = []
    for path in sorted((root / "sglang").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(_EXEMPT):
            continue
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.lstrip().startswith("#"):
                continue
            for m in _ASSIGN.finditer(line):
                hits.append((rel, lineno, f"assignment to server_args.{m.group(1)}"))
            if _SETATTR.search(line):
                hits.append((rel, lineno, "setattr on server_args"))
    return hits


def test_server_args_mutation_ratchet():
    hits = scan()
    assert len(hits) == _PINNED, (
        f"{len(hits)} ServerArgs mutation(s) (pinned at {_PINNED}); use "
        "get_context().override(source, **fields), or a constructor argument:\n"
        + "\n".join(f"  {p}:{ln}: {m}" for p, ln, m in hits)
    )
