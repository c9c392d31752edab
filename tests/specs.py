"""Rule specs (`rules/CTXnnn.md`): their example blocks, as runnable cases.

A block fenced as ```python bad``` or ```python good``` is one example. Inside
it, `# file: pkg/mod.py` starts another file (default `app/example.py`), and a
trailing `# expect: CTX101` marks a line that must carry that finding. The test
suite checks each bad block yields exactly its marked findings and each good
block none of the rule's, so a spec cannot drift from what the rule does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ctxlint.report.spec_markdown import EXPECT as _EXPECT
from ctxlint.report.spec_markdown import FENCE as _FENCE

_FILE = re.compile(r"^# file: (\S+)\s*$")
DEFAULT_FILE = "app/example.py"


@dataclass
class Example:
    rule: str
    kind: str  # "bad" | "good"
    index: int  # position among the spec's blocks
    files: dict[str, str] = field(default_factory=dict)
    expected: list[tuple[str, int, str]] = field(default_factory=list)  # (path, line, rule)

    @property
    def id(self) -> str:
        return f"{self.rule}-{self.kind}-{self.index}"


def examples(spec: Path) -> list[Example]:
    rule = spec.stem
    out: list[Example] = []
    for i, m in enumerate(_FENCE.finditer(spec.read_text(encoding="utf-8"))):
        ex = Example(rule, m.group(1), i)
        current = DEFAULT_FILE
        lines: dict[str, list[str]] = {}
        for raw in m.group(2).splitlines():
            fm = _FILE.match(raw)
            if fm:
                current = fm.group(1)
                lines.setdefault(current, [])
                continue
            lines.setdefault(current, []).append(raw)
            em = _EXPECT.search(raw)
            if em:
                for rid in em.group(1).replace(" ", "").split(","):
                    if rid:
                        ex.expected.append((current, len(lines[current]), rid))
        ex.files = {p: "\n".join(ls) + "\n" for p, ls in lines.items()}
        out.append(ex)
    return out
