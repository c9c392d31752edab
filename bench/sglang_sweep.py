#!/usr/bin/env python3
"""SGLang's own migration sweep from 0.5.17 to 0.5.19, read off the two wheels.

Every seed read `ctxlint check --select CTX101` reports on 0.5.17 (a direct
`get_server_args().X`, or a read through an alias of it), with what SGLang
wrote in its place in 0.5.19: the enclosing function is found again by its
qualified name, the two functions' tokens are aligned (difflib), and the
read's first and last token are carried across. Where SGLang bound the new
value to a local first (`a2a = get_exec().moe.moe_a2a_backend`, then `a2a`
where the read was), the local's value is kept beside it, so a fix that
writes the value in place compares equal. Nothing is typed in by hand: the
table is what the two wheels say.

    python bench/sglang_sweep.py > tests/data/sglang_sweep_0517_0519.json
    python bench/sglang_sweep.py --findings CTX101.json   # an earlier check's JSON

The 0.5.17 tree is checked on a copy (ctxlint writes its cache into the tree it
checks; the unpacked wheel stays untouched), kept in --work for a warm rerun.
tests/fix/test_fix_sglang.py compares `ctxlint fix --unsafe --select CTX101` with
the table (`agreement()` below).
"""

from __future__ import annotations

import argparse
import ast
import difflib
import io
import json
import keyword
import re
import sys
import tempfile
import tokenize
from collections.abc import Iterable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # the bench's own modules, as compare_guard_tests does
from sglang_history import WHEELS, ctxlint, working_copy  # noqa: E402

OLD, NEW = "0.5.17", "0.5.19"
SKIPPED = {
    tokenize.COMMENT,
    tokenize.NL,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.ENCODING,
    tokenize.ENDMARKER,
}

Pos = tuple[int, int]  # (line, 0-based column)
Token = tuple[str, Pos, Pos]


def functions(source: str) -> dict[str, ast.AST]:
    """Qualified name (`Cls.meth.inner`, as ctxlint's scopes spell it) -> the def."""
    found: dict[str, ast.AST] = {}

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    found.setdefault(name, child)
                walk(child, name + ".")
            else:
                walk(child, prefix)

    walk(ast.parse(source), "")
    return found


def tokens(source: str, node: ast.AST | None) -> list[Token]:
    """The tokens of `node`'s lines (the whole module for None), layout dropped."""
    first = node.lineno if node is not None else 1  # type: ignore[attr-defined]
    last = node.end_lineno if node is not None else 10**9  # type: ignore[attr-defined]
    out: list[Token] = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type in SKIPPED or not first <= tok.start[0] <= last:
            continue
        out.append((tok.string if tok.type != tokenize.NEWLINE else "\n", tok.start, tok.end))
    return out


def text_between(lines: list[str], start: Pos, end: Pos) -> str:
    """The source from `start` to `end`, whitespace (newlines included) collapsed."""
    if start[0] == end[0]:
        raw = lines[start[0] - 1][start[1] : end[1]]
    else:
        middle = lines[start[0] : end[0] - 1]
        raw = "\n".join([lines[start[0] - 1][start[1] :], *middle, lines[end[0] - 1][: end[1]]])
    return normalized(raw)


def normalized(text: str) -> str:
    """One spelling per expression: ast.unparse where it parses, else whitespace
    collapsed (a fragment such as `x) * y`)."""
    try:
        return ast.unparse(ast.parse(text.strip(), mode="eval"))
    except SyntaxError:
        return re.sub(r"\s+", " ", text).strip()


def statements(toks: list[Token]) -> list[list[int]]:
    """Token indices per logical line (a NEWLINE token ends one)."""
    out: list[list[int]] = [[]]
    for i, t in enumerate(toks):
        out[-1].append(i)
        if t[0] == "\n":
            out.append([])
    return [s for s in out if s]


def _align(a: list[str], b: list[str]) -> list[tuple[str, int, int, int, int]]:
    return difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()


def carried(old: list[Token], new: list[Token], first: int, last: int) -> tuple[int, int] | None:
    """The new tokens standing where old tokens [first, last) stood, or None when
    the statement went with no counterpart. Statements are aligned first (an
    unchanged one keeps its place), then the tokens of the changed run that
    holds the read; each edge is carried through the blocks (an edge inside a
    changed block takes that block's edge, outward; text inserted at an edge
    is left out)."""
    olds, news = statements(old), statements(new)
    key = lambda toks, st: tuple(toks[i][0] for i in st)  # noqa: E731
    lines = _align([key(old, s) for s in olds], [key(new, s) for s in news])
    kept = {j for tag, _, _, j1, j2 in lines if tag == "equal" for j in range(j1, j2)}
    for tag, i1, i2, j1, j2 in lines:
        o = [i for s in olds[i1:i2] for i in s]
        if not o or not o[0] <= first <= o[-1]:
            continue
        if tag == "equal":
            n = [i for s in news[j1:j2] for i in s]
            return n[0] + (first - o[0]), n[0] + (last - o[0])
        # the statement holding the read, and the new statement most like it
        # (in the changed run, else anywhere changed: a statement can move)
        (o,) = [s for s in olds[i1:i2] if s[0] <= first <= s[-1]]
        text = [old[i][0] for i in o]

        def like(j: int, text: list[str] = text) -> float:
            return difflib.SequenceMatcher(None, text, [new[i][0] for i in news[j]]).ratio()

        near = max(((like(j), j) for j in range(j1, j2)), default=(0.0, -1))
        moved = max(((like(j), j) for j in range(len(news)) if j not in kept), default=(0.0, -1))
        if near[0] >= 0.4:
            n = news[near[1]]
        elif moved[0] >= 0.6:
            n = news[moved[1]]
        else:
            return None
        start = end = None
        for op, a1, a2, b1, b2 in _align([old[i][0] for i in o], [new[i][0] for i in n]):
            if start is None and op != "insert" and a1 <= first - o[0] < a2:
                start = b1 + (first - o[0] - a1) if op == "equal" else b1
            if op != "insert" and a1 < last - o[0] <= a2:
                end = b1 + (last - o[0] - a1) if op == "equal" else b2
        if start is None or end is None or end <= start:
            return None
        nxt = old[last][0] if last < len(old) else ""
        return _primary(new, n[0] + start, n[0] + end, nxt)
    return None


OPENS, CLOSES = "([{", ")]}"


def _primary(toks: list[Token], start: int, end: int, after: str) -> tuple[int, int]:
    """[start, end) widened to whole primaries: `.f` takes the object it is read
    off, `()` the function it calls, a call or read that follows where none
    followed the read (`after`) is taken, and a bracket left open its partner."""

    def name(i: int) -> bool:
        return toks[i][0].isidentifier() and not keyword.iskeyword(toks[i][0])

    def partner(i: int, step: int) -> int:
        depth = 0
        while 0 <= i < len(toks):
            s = toks[i][0]
            depth += (s in OPENS) - (s in CLOSES) if step > 0 else (s in CLOSES) - (s in OPENS)
            if depth == 0:
                return i
            i += step
        return i - step

    while start > 0:
        cur, prev = toks[start][0], toks[start - 1][0]
        if cur in (".", "(", "[") and (name(start - 1) or prev in ")]"):
            start = partner(start - 1, -1) if prev in ")]" else start - 1
        elif prev == "." and name(start):
            start -= 1
        else:
            break
    while end < len(toks) and toks[end][0] in ("(", ".", "[") and toks[end][0] != after:
        if toks[end][0] == ".":
            end += 2
        else:
            end = partner(end, 1) + 1
        after = ""
    depth = 0
    for i in range(start, end):
        s = toks[i][0]
        depth += (s in OPENS) - (s in CLOSES)
    while depth > 0 and end < len(toks):
        s = toks[end][0]
        depth += (s in OPENS) - (s in CLOSES)
        end += 1
    stop = next((i for i in range(start, end) if toks[i][0] == "\n"), end)
    return start, stop


def by_name(toks: list[Token], field: str) -> tuple[int, int] | None:
    """Where the statement holding a read has no counterpart: the first read of
    the same field in the new function that is off no record (`x.field`,
    `field()`), as a whole primary."""
    for i, t in enumerate(toks):
        if t[0] != field:
            continue
        start, end = _primary(toks, i, i + 1, "")
        spelled = [x[0] for x in toks[start:end]]
        if end > i + 1 or start < i:
            if not any("server_args" in x or x == "sa" for x in spelled):
                return start, end
    return None


def local_value(source: str, fn: ast.AST, name: str) -> str | None:
    """The value of `name` in `fn` when one plain assignment binds it there
    (`name = value`, or `a, name = value` as `value[1]`), its own first name
    resolved the same way."""
    binds = [
        (n, t)
        for n in ast.walk(fn)
        if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.NamedExpr))
        for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
        for e in ast.walk(t)
        if isinstance(e, ast.Name) and e.id == name
    ]
    if len(binds) != 1 or not isinstance(binds[0][0], ast.Assign):
        return None
    assign, target = binds[0]
    segment = ast.get_source_segment(source, assign.value)
    if segment is None or len(assign.targets) != 1:
        return None
    if isinstance(target, ast.Tuple):
        names = [e.id if isinstance(e, ast.Name) else None for e in target.elts]
        segment = f"{segment}[{names.index(name)}]"
    elif not isinstance(target, ast.Name):
        return None
    head = re.match(r"[A-Za-z_]\w*", segment)
    if head and head.group() != name and segment[head.end() : head.end() + 1] in (".", ""):
        inner = local_value(source, fn, head.group())
        if inner is not None:
            segment = inner + segment[head.end() :]
    return normalized(segment)


def sweep(findings: Iterable[dict[str, Any]], old_root: Path, new_root: Path) -> list[dict]:
    """One row per read: where it was, its text, and what stands there in 0.5.19."""
    rows: list[dict] = []
    cache: dict[tuple[Path, str], tuple[str, dict[str, ast.AST]]] = {}

    def load(root: Path, path: str) -> tuple[str, dict[str, ast.AST]] | None:
        key = (root, path)
        if key not in cache:
            file = root / path
            if not file.is_file():
                return None
            text = file.read_text(encoding="utf-8")
            cache[key] = (text, functions(text))
        return cache[key]

    for f in sorted(findings, key=lambda f: (f["path"], f["line"], f["column"])):
        old_src, old_fns = load(old_root, f["path"])  # type: ignore[misc]
        start, end = (f["line"], f["column"] - 1), (f["end_line"], f["end_column"] - 1)
        old_lines = old_src.splitlines()
        row: dict[str, Any] = {
            "path": f["path"],
            "function": f["scope"],
            "line": f["line"],
            "field": f["data"]["field"],
            "old": text_between(old_lines, start, end),
        }
        rows.append(row)
        new = load(new_root, f["path"])
        fn_old = old_fns.get(f["scope"])
        fn_new = new[1].get(f["scope"]) if new else None
        if new is None or fn_new is None:
            row["sglang"] = None
            row["sglang_note"] = "the file is gone" if new is None else "the function is gone"
            continue
        old_toks, new_toks = tokens(old_src, fn_old), tokens(new[0], fn_new)
        inside = [i for i, t in enumerate(old_toks) if t[1] >= start and t[2] <= end]
        span = carried(old_toks, new_toks, inside[0], inside[-1] + 1) if inside else None
        if span is None:
            span = by_name(new_toks, row["field"])
            row["sglang_note"] = "its statement was rewritten: the field's spelling there"
        if span is None:
            row["sglang"] = None
            row["sglang_note"] = "removed with no counterpart"
            continue
        new_lines = new[0].splitlines()
        text = text_between(new_lines, new_toks[span[0]][1], new_toks[span[1] - 1][2])
        row["sglang"] = text
        try:
            ast.parse(text, mode="eval")
        except SyntaxError:
            row["sglang_note"] = "no one expression stands in its place"
        head = new_toks[span[0]][0]
        value = local_value(new[0], fn_new, head) if head.isidentifier() else None
        if value is not None and (len(text) == len(head) or text[len(head)] == "."):
            row["sglang_value"] = normalized(value + text[len(head) :])
    return rows


SITE = re.compile(
    r"^(?P<path>\S+):\d+:\d+: CTX101 (?P<status>fixed|left|rolled back):? `(?P<old>.*?)`"
    r"(?: -> `(?P<became>.*?)`.*|: (?P<reason>.*))$",
    re.M,
)
EXACT, DIFFERENT, LEFT = "exact", "different", "not offered"


def agreement(rows: list[dict[str, Any]], fix_output: str) -> list[dict[str, Any]]:
    """Each read of the table beside what `ctxlint fix` printed for it (its
    per-site lines, in the order of the file): `exact` when the fix wrote what
    SGLang wrote (its local's value, where it bound one), `different` when it
    wrote something else, `not offered` when it left the site (with its reason)."""
    sites: dict[str, list[re.Match[str]]] = {}
    for m in SITE.finditer(fix_output):
        sites.setdefault(m["path"], []).append(m)
    out = []
    taken: dict[str, int] = {}
    for row in rows:
        path = next((p for p in sites if p.endswith("/" + row["path"]) or p == row["path"]), None)
        found = sites[path][taken.get(path, 0)] if path else None
        if path:
            taken[path] = taken.get(path, 0) + 1
        if found is None or normalized(found["old"]) != row["old"]:
            raise ValueError(f"no fix site for {row['path']}:{row['line']} `{row['old']}`")
        wanted = row.get("sglang_value") or row.get("sglang")
        if found["status"] != "fixed":
            verdict, fix = LEFT, found["reason"]
        else:
            fix = normalized(found["became"])
            verdict = EXACT if wanted is not None and fix == wanted else DIFFERENT
        out.append({**row, "verdict": verdict, "fix": fix})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", type=Path, default=WHEELS / f"sglang-{OLD}")
    ap.add_argument("--new", type=Path, default=WHEELS / f"sglang-{NEW}")
    ap.add_argument("--findings", type=Path, help="`check --select CTX101 --format json` output")
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "ctxlint-sweep")
    args = ap.parse_args(argv)
    if args.findings:
        report = json.loads(args.findings.read_text())
    else:
        tree = working_copy(args.old, args.work, OLD)
        done = ctxlint(
            "check", "--profile", "sglang", str(tree), "--select", "CTX101", "--format", "json"
        )
        if done.returncode not in (0, 1):
            print(done.stderr, file=sys.stderr)
            return 2
        report = json.loads(done.stdout)
    found = [f for f in report["findings"] if f["rule"] == "CTX101"]
    rows = sweep(found, args.old, args.new)
    doc = {
        "about": f"seed reads ctxlint reports on sglang {OLD} and what sglang {NEW} has there "
        "(bench/sglang_sweep.py)",
        "reads": rows,
    }
    print(json.dumps(doc, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
