"""A rule spec (`rules/CTXnnn.md`) as `ctxlint explain` shows it.

A block fenced as ```python bad``` or ```python good``` is one example, and a
trailing `# expect: CTX101` marks a line that must carry that finding (the test
suite runs the blocks: tests/specs.py).
"""

from __future__ import annotations

import re

FENCE = re.compile(r"^```python (bad|good)[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)
EXPECT = re.compile(r"#\s*expect:\s*([A-Z0-9, ]+)\s*$")
# A bad example's fixed form: what `ctxlint fix` writes (tests/fix/test_fix_specs.py).
FIXED_FENCE = re.compile(r"^```python fixed[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)

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
            for em in (EXPECT.search(line) for line in body.splitlines())
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

    fixed = "**Fixed**: what `ctxlint fix` writes for the example above.\n\n```python\n{}```"
    return FIXED_FENCE.sub(lambda m: fixed.format(m.group(1)), FENCE.sub(label, text))
