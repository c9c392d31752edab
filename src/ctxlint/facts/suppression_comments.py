"""`# ctxlint: ignore[CTX101] reason` comments, found by the tokenizer.

Tokenizing (not a regex over the text) means a `ctxlint:` inside a string or
docstring is never taken for a suppression.
"""

from __future__ import annotations

import io
import re
import tokenize
from typing import Any

# A comment that means to suppress (prose mentioning "ctxlint:" does not).
_INTENT = re.compile(r"#\s*ctxlint:\s*ignore")
# The reason runs to the end of the comment or to a second `#` comment on it.
# Rule ids or names (`ignore[seed-read]`), as --select takes them.
_DIRECTIVE = re.compile(r"#\s*ctxlint:\s*ignore\[([A-Za-z0-9_, -]*)\]\s*([^#]*)")


def scan(text: str) -> list[dict[str, Any]]:
    """One entry per suppression comment: line, rules, reason, and the raw comment."""
    found: list[dict[str, Any]] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type != tokenize.COMMENT or not _INTENT.search(tok.string):
                continue
            m = _DIRECTIVE.search(tok.string)
            if m is None:
                found.append(
                    {
                        "line": tok.start[0],
                        "col": tok.start[1] + 1,
                        "end_col": tok.end[1] + 1,
                        "rules": [],
                        "reason": "",
                        "malformed": True,
                        "text": tok.string,
                    }
                )
                continue
            rules = sorted({r.strip().upper() for r in m.group(1).split(",") if r.strip()})
            found.append(
                {
                    "line": tok.start[0],
                    "col": tok.start[1] + 1,
                    "end_col": tok.end[1] + 1,
                    "rules": rules,
                    "reason": m.group(2).strip(),
                    "malformed": not rules,
                    "text": tok.string,
                }
            )
    except (tokenize.TokenError, SyntaxError):
        return found
    return found
