"""Whether an edit of a buffer changed only its statement-level layout (comments
at bracket depth 0, blank lines, trailing blanks), found by tokenizing only
the changed lines, and where each old position went if so.

The rule is the code digest's (facts.code_digest): no fact holds a depth-0
comment's text or the layout between statements; facts render code inside
brackets and within a statement as written (`code_for_node`: defaults,
annotations, values), so a comment inside brackets or a blank added inside a
statement changes facts, and takes the full check. An edit accepted here
moves each statement's lines as a whole, columns unchanged: the facts are
those of the old text with their lines moved (`Moved`).

`Layout` keeps, for each line of a text, the tokenizer's state at its start
when that is top level (not inside brackets, a string or a backslash
continuation): the indentation stack. `compare` tokenizes the edited text
from the last such line before the change until both texts are at top level
again on the same line of their common tail, and returns the new text's
layout with it, so a text is tokenized whole once, when it is first edited.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass

from ctxlint.facts.ruff import DIRECTIVE
from ctxlint.facts.suppression_comments import INTENT

Stack = tuple[str, ...]  # the indentation of each open block, as written
# a line break of old Macs (CPython's, not readline's): lines would not agree
_LONE_CR = re.compile(r"\r(?!\n)")
_CODING = re.compile(r"^[ \t\f]*#.*?coding[:=]")
# what the tokenizer emits besides code; NEWLINE ends a statement
_LAYOUT = frozenset({tokenize.COMMENT, tokenize.NL})
_MARKS = frozenset({tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER})
_OPEN, _CLOSE = frozenset("([{"), frozenset(")]}")


def lines_of(text: str) -> list[str]:
    """The text's lines as the tokenizer and CPython count them (a break is
    `\\n` or `\\r\\n`; a lone `\\r` is refused by the callers)."""
    return io.StringIO(text, newline="").readlines() if text else []


@dataclass(frozen=True, slots=True)
class Layout:
    """A text's top-level line starts: `states[i]` is the indentation stack at
    the start of line i (0-based; i == len(lines): the end), None where line i
    continues a statement."""

    states: tuple[Stack | None, ...]

    @classmethod
    def of(cls, text: str) -> Layout | None:
        """The whole text tokenized (None: it does not tokenize)."""
        lines = lines_of(text)
        scan = _Scan(lines, 0, (), 0, keep=False)
        if not scan.run(lambda _line, _stack: False):
            return None
        return cls(tuple(scan.states))


@dataclass(frozen=True, slots=True)
class Moved:
    """Where the old text's positions are in the new one: lines before `first`
    (0-based: the first line that differs) stay; the lines of each statement
    in the changed window (`lines`, 1-based old -> new) move with it; lines
    after the window move by `delta`. Columns do not change. A position in
    the window is known only at a code token's start or end (`starts`,
    `ends`: 1-based line, 0-based column), where a syntactic span can be."""

    first: int
    window_end: int  # 1-based, the window's last old line
    delta: int
    size: int  # the old text's lines
    lines: dict[int, int]
    starts: frozenset[tuple[int, int]]
    ends: frozenset[tuple[int, int]]

    def line(self, n: int) -> int | None:
        """Old 1-based line `n` in the new text; None for a line of the window
        that holds no statement (a comment or blank line)."""
        if n <= self.first or n > self.size:  # (past the end: no line of it)
            return n
        if n > self.window_end:
            return n + self.delta
        return self.lines.get(n)

    def start(self, line: int, column: int) -> tuple[int, int] | None:
        """A span's start (1-based line, 0-based column), None if not known."""
        return self._at(line, column, self.starts)

    def end(self, line: int, column: int) -> tuple[int, int] | None:
        """A span's end (exclusive), None if not known."""
        return self._at(line, column, self.ends)

    def _at(
        self, line: int, column: int, known: frozenset[tuple[int, int]]
    ) -> tuple[int, int] | None:
        if line <= self.first:
            return line, column
        if line > self.window_end:
            return line + self.delta, column
        if (line, column) not in known:
            return None
        return self.lines[line], column


@dataclass(frozen=True, slots=True)
class Compared:
    """`layout`: the new text's (None: not known); `moved`: set when only the
    statement-level layout changed."""

    layout: Layout | None
    moved: Moved | None


def compare(old: str, new: str, layout: Layout) -> Compared:
    """Tokenize what changed from `old` (whose layout is `layout`) to `new`."""
    if "\0" in new or _LONE_CR.search(new):
        return Compared(None, None)
    try:
        new.encode("utf-8")  # (a lone surrogate: CPython refuses the text)
    except UnicodeEncodeError:
        return Compared(None, None)
    a, b = lines_of(old), lines_of(new)
    if len(layout.states) != len(a) + 1:
        return Compared(None, None)  # not this text's layout
    p, q = _common(a, b)
    if p == len(a) == len(b):
        return Compared(layout, None)  # the same lines
    if _code_only(a[p : len(a) - q]) != _code_only(b[p : len(b) - q]):
        # code changed (a statement edit): no scan, the new layout is made
        # when the editor is quiet (Project.prepare_layouts)
        return Compared(None, None)
    s = p  # the last top-level line at or before the first change (line 0 is)
    while layout.states[s] is None:
        s -= 1
    stack = layout.states[s]
    assert stack is not None
    delta = len(b) - len(a)
    # where the two can meet again: a line of the common tail, past its first
    # line (so that every token of that line is in the window), or the end
    lowest = len(b) - q + (1 if q else 0)

    def met(i: int, now: Stack) -> bool:
        return i >= lowest and layout.states[i - delta] == now

    fresh = _Scan(b, s, stack, len(b) + 1)
    if not fresh.run(met):
        return Compared(None, None)
    if fresh.met is None:  # tokenized to the end without meeting: the new layout only
        return Compared(Layout(layout.states[:s] + tuple(fresh.states[s:])), None)
    end_new = fresh.met
    states = layout.states[:s] + tuple(fresh.states[s:end_new]) + layout.states[end_new - delta :]
    new_layout = Layout(states)
    end_old = end_new - delta
    before = _Scan(a, s, stack, len(a) + 1)
    if not before.run(lambda i, _now: i >= end_old) or before.met != end_old:
        return Compared(new_layout, None)
    moved = _moved(a, b, before.tokens, fresh.tokens, p, len(a) - q, delta)
    return Compared(new_layout, moved)


def changes_code(old: str, new: str) -> bool:
    """Whether the lines that differ between two texts differ in code (see
    _code_only): such an edit is no layout edit, and needs no Layout."""
    a, b = lines_of(old), lines_of(new)
    p, q = _common(a, b)
    return _code_only(a[p : len(a) - q]) != _code_only(b[p : len(b) - q])


def _common(a: list[str], b: list[str]) -> tuple[int, int]:
    """The lines two texts have in common at their start and at their end."""
    p = 0
    top = min(len(a), len(b))
    while p < top and a[p] == b[p]:
        p += 1
    q = 0
    while q < top - p and a[-1 - q] == b[-1 - q]:
        q += 1
    return p, q


def _code_only(lines: list[str]) -> str:
    """The lines without whitespace and without anything from a `#` on: what
    a layout edit leaves as it was (it adds, removes or rewords comments and
    blank lines, blanks at a line's end), so two windows that differ here
    differ in code (a `#` in a string is cut alike in both: a necessary
    condition, the scan decides the rest)."""
    return "".join("".join(line.split("#", 1)[0].split()) for line in lines)


def _moved(
    a: list[str],
    b: list[str],
    old: list[tokenize.TokenInfo],
    new: list[tokenize.TokenInfo],
    first: int,
    tail: int,
    delta: int,
) -> Moved | None:
    """The window's positions old -> new, when the two token runs differ only
    in statement-level layout; else None."""
    for tokens, lines, end in ((old, a, tail), (new, b, tail + delta)):
        for t in tokens:
            if t.type == tokenize.COMMENT and first < t.start[0] <= end:  # a changed line's
                if INTENT.search(t.string) or DIRECTIVE.search(t.string):
                    return None  # a suppression or noqa: read by the checks
                if t.start[0] <= 2 and _CODING.match(lines[t.start[0] - 1]):
                    return None  # a coding declaration: the file's bytes read otherwise
    code_old = [t for t in old if t.type not in _LAYOUT]
    code_new = [t for t in new if t.type not in _LAYOUT]
    if len(code_old) != len(code_new):
        return None
    boundary = True  # a statement ended since the last code token (or the window began)
    prev_old = prev_new = None
    lines: dict[int, int] = {}
    starts: set[tuple[int, int]] = set()
    ends: set[tuple[int, int]] = set()
    statement: list[tuple[tokenize.TokenInfo, tokenize.TokenInfo]] = []
    for x, y in zip(code_old, code_new, strict=True):
        if x.type != y.type:
            return None
        if x.type == tokenize.NEWLINE:
            boundary = True  # ('' at the end of a text without its last break, or '\r\n')
            if not _same_shift(statement, lines):
                return None
            statement = []
            continue
        if x.string != y.string:
            return None  # code, or an INDENT's own indentation
        if x.type in _MARKS:
            continue
        # a code token: the text before it, back to the previous one, must be
        # the same within a statement; between statements, its indentation
        if boundary or prev_old is None or prev_new is None:
            if a[x.start[0] - 1][: x.start[1]] != b[y.start[0] - 1][: y.start[1]]:
                return None
        elif _between(a, prev_old, x) != _between(b, prev_new, y):
            return None
        if x.start[1] != y.start[1]:
            return None
        boundary = False
        prev_old, prev_new = x, y
        statement.append((x, y))
        starts.add(x.start)
        ends.add(x.end)
    if statement and not _same_shift(statement, lines):
        return None
    return Moved(first, tail + 1, delta, len(a), lines, frozenset(starts), frozenset(ends))


def _same_shift(
    statement: list[tuple[tokenize.TokenInfo, tokenize.TokenInfo]], lines: dict[int, int]
) -> bool:
    """Every line of one statement moves by the same count (it must: the text
    between its tokens is the same); its lines are recorded."""
    if not statement:
        return True
    x0, y0 = statement[0]
    shift = y0.start[0] - x0.start[0]
    last = statement[-1][0].end[0]
    if statement[-1][1].end[0] - last != shift:
        return False
    for n in range(x0.start[0], last + 1):
        lines[n] = n + shift
    return True


def _between(lines: list[str], before: tokenize.TokenInfo, after: tokenize.TokenInfo) -> str:
    """The text from the end of one token to the start of the next."""
    (l0, c0), (l1, c1) = before.end, after.start
    if l0 == l1:
        return lines[l0 - 1][c0:c1]
    return lines[l0 - 1][c0:] + "".join(lines[l0 : l1 - 1]) + lines[l1 - 1][:c1]


class _Scan:
    """Tokenize `lines` from line `start` (0-based, at top level with the
    indentation `stack`), recording the state at each line's start, until a
    top-level line `stop(line, stack)` accepts (`met`) or the end."""

    def __init__(
        self, lines: list[str], start: int, stack: Stack, size: int, *, keep: bool = True
    ) -> None:
        self.lines, self.start, self.stack = lines, start, stack
        self.keep = keep  # the tokens (a whole file's layout needs only the states)
        self.states: list[Stack | None] = [None] * (size or len(lines) + 1)
        self.tokens: list[tokenize.TokenInfo] = []
        self.met: int | None = None

    def _source(self) -> Iterator[str]:
        # blocks opened before `start`, recreated: a line at each indentation
        yield from (f"{indent}x\n" for indent in self.stack)
        yield from (self.lines[i] for i in range(self.start, len(self.lines)))

    def run(self, stop: object) -> bool:
        """False when the text does not tokenize (or tokenizes otherwise than
        CPython would: an ERRORTOKEN)."""
        lines, start = self.lines, self.start
        if len(self.states) < len(lines) + 1:
            self.states = [None] * (len(lines) + 1)
        stack: list[str] = []
        depth = 0
        skip = len(self.stack)  # the recreated lines
        source = self._source()
        self.states[start] = self.stack
        if stop(start, self.stack):  # type: ignore[operator]
            self.met = start
            return True
        try:
            for tok in tokenize.generate_tokens(lambda: next(source, "")):
                kind = tok.type
                if kind == tokenize.INDENT:
                    stack.append(tok.string)
                elif kind == tokenize.DEDENT:
                    stack.pop()
                elif kind == tokenize.ERRORTOKEN:
                    return False
                if tok.start[0] <= skip:
                    continue
                line = tok.start[0] - skip + start  # 1-based, in `lines`
                if kind == tokenize.OP:
                    depth += (tok.string in _OPEN) - (tok.string in _CLOSE)
                    if depth < 0:  # a bracket closed that was not open: not Python
                        return False
                if self.keep and kind != tokenize.ENDMARKER:
                    self.tokens.append(
                        tok._replace(
                            start=(line, tok.start[1]), end=(tok.end[0] - skip + start, tok.end[1])
                        )
                    )
                if kind == tokenize.NEWLINE or (kind == tokenize.NL and depth == 0):
                    nxt = line  # the 0-based index of the line after it
                    if nxt > len(lines):
                        continue
                    now = tuple(stack)
                    self.states[nxt] = now
                    if stop(nxt, now):  # type: ignore[operator]
                        self.met = nxt
                        return True
        except (tokenize.TokenError, IndentationError, SyntaxError):
            return False
        if self.states[len(lines)] is None:  # ends inside a statement: not text that parses
            return False
        return True
