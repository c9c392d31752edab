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

_FENCE = re.compile(r"^```python (bad|good)[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)
_FILE = re.compile(r"^# file: (\S+)\s*$")
_EXPECT = re.compile(r"#\s*expect:\s*([A-Z0-9, ]+)\s*$")
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


SPECRT_NOTE = (
    "> The examples import `specrt`, the small fixture runtime the test suite runs them "
    "against (`tests/fixtures/specrt` in the source tree). It has the design's shape: "
    "`specrt.context` is the runtime module (the seed accessor `get_server_args()`, one "
    "bag accessor per namespace such as `get_parallel()` or `get_exec()`, and "
    "`get_context().override(...)`), and `specrt.record.ServerArgs` is the record. "
    "Read it as your own runtime module (`runtime-module` in the config, e.g. "
    "`sglang.srt.runtime_context`)."
)


def for_reading(text: str) -> str:
    """The spec as a person reads it (`ctxlint explain`): each example block is
    labelled BAD or GOOD with what ctxlint reports on it, since the fence's info
    string is not shown, and a note before the first says what `specrt` is."""
    counts = {"bad": 0, "good": 0}
    totals = {kind: len(re.findall(rf"^```python {kind}[ \t]*$", text, re.M)) for kind in counts}
    noted = False

    def label(m: re.Match[str]) -> str:
        nonlocal noted
        kind, body = m.group(1), m.group(2)
        counts[kind] += 1
        marks = sum(
            len(em.group(1).replace(" ", "").strip(",").split(","))
            for em in (_EXPECT.search(line) for line in body.splitlines())
            if em
        )
        if kind == "bad":
            what = f"ctxlint reports {marks} finding{'s' if marks != 1 else ''}, on the lines marked `# expect`"
        else:
            what = "ctxlint reports nothing here"
        head = f"**{kind.upper()} example {counts[kind]} of {totals[kind]}**: {what}."
        note = "" if noted else SPECRT_NOTE + "\n\n"
        noted = True
        return f"{note}{head}\n\n```python\n{body}```"

    return _FENCE.sub(label, text)
