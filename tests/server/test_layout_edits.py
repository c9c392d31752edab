"""The region compare behind the server's layout edits (server.layout_edits) and
the move of findings it allows (server.moved_findings): which edits count as
statement layout alone, where each old position lands, and that the layout
kept for the next edit is the one a whole tokenize of the new text gives."""

from __future__ import annotations

import io
import random
import tokenize

import pytest

from ctxlint.core.findings import Finding, Span
from ctxlint.server.layout_edits import Layout, Moved, changes_code, compare
from ctxlint.server.moved_findings import move, pin_texts

BASE = '''"""A module."""

import os


class A:
    def f(self, x=1):
        y = call(
            x,
            2,
        )
        s = """a # not a comment
b"""
        return y  # trailing


def g():
    pass
'''


def edit(old: str, new: str) -> Moved | None:
    layout = Layout.of(old)
    assert layout is not None
    compared = compare(old, new, layout)
    assert compared.layout is None or compared.layout == Layout.of(new)
    return compared.moved


def code_tokens(text: str) -> list[tokenize.TokenInfo]:
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}
    skip.add(tokenize.ENDMARKER)
    return [t for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type not in skip]


def assert_places_every_token(old: str, new: str, moved: Moved) -> None:
    """Each code token's old start and end land on its new ones."""
    for a, b in zip(code_tokens(old), code_tokens(new), strict=True):
        assert moved.start(*a.start) == b.start
        assert moved.end(*a.end) == b.end
        assert moved.line(a.start[0]) == b.start[0]


LAYOUT_EDITS = {
    "comment appended": BASE + "# the end\n",
    "blank line above the class": BASE.replace("class A:", "\nclass A:"),
    "comment line in a method": BASE.replace("        return y", "        # why\n        return y"),
    "trailing comment reworded": BASE.replace("# trailing", "# another reason"),
    "trailing comment added": BASE.replace("import os", "import os  # the os"),
    "blank lines removed": BASE.replace("\n\n\ndef g", "\ndef g"),
    "last newline removed": BASE.rstrip("\n"),
    "comment dedented": BASE.replace("        return y", "# at column 0\n        return y"),
}


@pytest.mark.parametrize("name", sorted(LAYOUT_EDITS))
def test_a_layout_edit_moves_every_token_by_its_statement(name: str) -> None:
    new = LAYOUT_EDITS[name]
    moved = edit(BASE, new)
    assert moved is not None, name
    assert_places_every_token(BASE, new, moved)


FULL_CHECK = {
    # facts render code inside brackets as written (a default, a value)
    "comment inside a multi-line call": BASE.replace("            2,", "            2,  # two"),
    "a # inside a string": BASE.replace("a # not a comment", "a # changed"),
    "a suppression": BASE.replace("# trailing", "# ctxlint: ignore[CTX101] why"),
    "a noqa": BASE.replace("# trailing", "# noqa: F811"),
    "indentation": BASE.replace("def g():\n    pass", "def g():\n        pass"),
    "a block opened": BASE.replace("        return y", "        if y:\n            return y"),
    "a blank inside a statement": BASE.replace("return y", "return  y"),
    "code": BASE.replace("pass", "return 1"),
    "a coding declaration": "# -*- coding: latin-1 -*-\n" + BASE,
    "a line split inside brackets": BASE.replace("x=1)", "x=1,\n)"),
}


@pytest.mark.parametrize("name", sorted(FULL_CHECK))
def test_other_edits_take_the_full_check(name: str) -> None:
    assert edit(BASE, FULL_CHECK[name]) is None, name


def test_a_comment_inside_a_string_is_not_taken_for_one() -> None:
    """A `#` line inside a triple-quoted string, edited: the start line is
    found from the layout (top level), so the string is seen as one."""
    old = 'x = 1\nS = """\n# looks like a comment\n"""\n'
    new = old.replace("# looks like a comment", "# looks like another")
    assert edit(old, new) is None


def test_positions_off_a_token_in_the_window_are_not_placed() -> None:
    old = "x = 1\ny = 2\n"
    moved = edit(old, "x = 1\n\n# c\ny = 2\n")
    assert moved is not None
    assert moved.start(2, 0) == (4, 0) and moved.end(2, 5) == (4, 5)
    assert moved.end(2, 0) is None  # a whitespace-inclusive end: not known
    assert moved.line(1) == 1 and moved.line(2) == 4


def test_the_layout_kept_equals_a_whole_tokenize_over_random_edits() -> None:
    """Lines inserted and removed at random (comments, blanks, code, string
    openers): each new layout, from the changed lines only, equals a whole
    tokenize of the new text, edit after edit."""
    rng = random.Random(37)
    pieces = ["\n", "# c\n", "    # c\n", "x = 1\n", "y = (\n", ")\n", 's = """\n', '"""\n']
    text = BASE
    layout = Layout.of(text)
    assert layout is not None
    for _ in range(300):
        lines = text.splitlines(keepends=True)
        at = rng.randrange(len(lines) + 1)
        if rng.random() < 0.5 and at < len(lines):
            new_lines = lines[:at] + lines[at + 1 :]
        else:
            new_lines = [*lines[:at], rng.choice(pieces), *lines[at:]]
        new = "".join(new_lines)
        whole = Layout.of(new)
        compared = compare(text, new, layout)
        if compared.layout is not None:
            assert compared.layout == whole
        if whole is None:
            continue  # not Python: the next edit starts from the last good text
        text, layout = new, whole


def finding(path: str, span: tuple[int, int, int, int], message: str, **data: str) -> Finding:
    return Finding("CTX301", path, Span(*span), "f", message, "x()", "fp", data=data)


def test_findings_move_with_their_file_and_quotes_of_it() -> None:
    old = "a = 1\nb = 2\nc = 3\n"
    moved = edit(old, "a = 1\n# new\nb = 2\nc = 3\n")
    assert moved is not None
    held = {
        "pkg/mod.py": [finding("pkg/mod.py", (3, 1, 3, 6), "read at line 1")],
        "pkg/other.py": [
            finding(
                "pkg/other.py",
                (9, 1, 9, 4),
                "get() at pkg/mod.py:3 before publish at line 7",
                related="pkg/mod.py:3",
            )
        ],
        "pkg/far.py": [finding("pkg/far.py", (1, 1, 1, 2), "nothing of it")],
    }
    after = move(held, "pkg/mod.py", moved, pinned=[])
    assert after is not None and set(after) == {"pkg/mod.py", "pkg/other.py"}
    assert after["pkg/mod.py"][0].span == Span(4, 1, 4, 6)
    other = after["pkg/other.py"][0]
    assert other.message == "get() at pkg/mod.py:4 before publish at line 7"  # its own line 7
    assert other.data["related"] == "pkg/mod.py:4" and other.span == Span(9, 1, 9, 4)


def test_a_bare_number_that_may_name_a_moved_line_takes_the_full_check() -> None:
    old = "a = 1\nb = 2\nc = 3\n"
    moved = edit(old, "# new\na = 1\nb = 2\nc = 3\n")
    assert moved is not None
    own = {"pkg/mod.py": [finding("pkg/mod.py", (3, 1, 3, 6), "before publish at line 2")]}
    assert move(own, "pkg/mod.py", moved, pinned=[]) is None
    # another file's finding naming the edited module (CTX301 at an entry's start site)
    named = {"pkg/b.py": [finding("pkg/b.py", (1, 1, 1, 2), "entry: pkg.mod.run at line 2")]}
    assert move(named, "pkg/mod.py", moved, pinned=[]) is None
    # past the file's end, or in another file's own words: not a line of it
    far = {"pkg/b.py": [finding("pkg/b.py", (1, 1, 1, 2), "at line 2, 40 of them")]}
    assert move(far, "pkg/mod.py", moved, pinned=[]) == {}
    # a pin that names the module and holds a moved number; one that names another
    assert (
        move({}, "pkg/mod.py", moved, pinned=pin_texts({"CTX701": {"pkg.mod.f": "at 2"}})) is None
    )
    assert move({}, "pkg/mod.py", moved, pinned=pin_texts({"CTX501": {"B.f": "(x=2)"}})) == {}


def test_a_code_change_is_told_before_any_tokenize() -> None:
    """changes_code: a necessary condition of a layout edit (the code of the
    changed lines, comments and whitespace aside, is the same), asked before
    a whole text is tokenized for its Layout; it never refuses a layout edit."""
    base = 'def f():\n    s = "#x"\n    return s\n'
    statement = base.replace("    return s\n", "    y = 1\n    return s\n")
    assert changes_code(base, statement)
    assert edit(base, statement) is None
    for layout_only in (
        base.replace('"#x"\n', '"#x"  # a comment\n'),  # after code holding a `#`
        base.replace("    return s\n", "    # a comment\n\n    return s\n"),
        base + "\n\n# the end\n",
        base.replace("    s =", "    s =", 1).replace("return s\n", "return s   \n"),
    ):
        assert not changes_code(base, layout_only)
        assert edit(base, layout_only) is not None, layout_only
