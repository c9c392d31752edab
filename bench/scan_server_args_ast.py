#!/usr/bin/env python3
"""A plain `ast` scan of SGLang's srt for record writes and seed reads, to set
ctxlint's CTX201 and CTX101 counts against (docs/sglang-history-triage.md).

What it counts, by syntax alone (no types, no aliases, no imports):
- writes: an assignment target (plain, augmented, annotated, inside tuples)
  `<expr>.x` where `<expr>` is a name or attribute chain ending in `server_args`
  (`server_args.x`, `self.server_args.x`, `draft_server_args.x`, ...);
- seed reads: `<call>().x` where the call takes no arguments and its callee's
  name is `get_server_args` or `get_global_server_args` (the seed accessor's
  two spellings in the releases the design covers).

    python bench/scan_server_args_ast.py TREE [TREE ...] [--list] [--json OUT]

TREE holds `sglang/`. Files under the resolution pipeline (`srt/server_args.py`,
`srt/arg_groups/`) are counted apart, as ctxlint's sglang profile excludes them.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path

SEED_ACCESSORS = ("get_server_args", "get_global_server_args")
PIPELINE = ("sglang/srt/server_args.py", "sglang/srt/arg_groups/")


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr}" if head else None
    return None


def _targets(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        out = list(node.targets)
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        out = [node.target] if not isinstance(node, ast.AnnAssign) or node.value else []
    else:
        return []
    flat: list[ast.expr] = []
    while out:
        t = out.pop()
        if isinstance(t, (ast.Tuple, ast.List)):
            out.extend(t.elts)
        elif isinstance(t, ast.Starred):
            out.append(t.value)
        else:
            flat.append(t)
    return flat


def scan_file(text: str) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """(writes, seed reads) as (line, source text) pairs."""
    tree = ast.parse(text)
    writes: list[tuple[int, str]] = []
    reads: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        for t in _targets(node):
            if isinstance(t, ast.Attribute):
                base = _dotted(t.value)
                if base and base.endswith("server_args"):
                    writes.append((t.lineno, f"{base}.{t.attr}"))
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Load)
            and isinstance(node.value, ast.Call)
            and not node.value.args
            and not node.value.keywords
        ):
            callee = _dotted(node.value.func) or ""
            if callee.rpartition(".")[2] in SEED_ACCESSORS:
                reads.append((node.lineno, f"{callee}().{node.attr}"))
    return sorted(writes), sorted(reads)


def scan_tree(root: Path) -> dict[str, list[dict[str, object]]]:
    found: dict[str, list[dict[str, object]]] = {"writes": [], "seed reads": []}
    for path in sorted((root / "sglang" / "srt").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        try:
            writes, reads = scan_file(path.read_text(encoding="utf-8-sig"))
        except (SyntaxError, UnicodeDecodeError) as exc:
            print(f"{rel}: skipped ({exc})", file=sys.stderr)
            continue
        pipeline = rel.startswith(PIPELINE)
        for kind, hits in (("writes", writes), ("seed reads", reads)):
            found[kind] += [
                {"path": rel, "line": n, "text": t, "pipeline": pipeline} for n, t in hits
            ]
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trees", nargs="+", type=Path)
    ap.add_argument("--list", action="store_true", help="print every hit outside the pipeline")
    ap.add_argument("--json", type=Path, help="write every hit, per tree, to this file")
    args = ap.parse_args(argv)
    report: dict[str, dict[str, list[dict[str, object]]]] = {}
    print("| tree | writes (outside pipeline / all) | seed reads (outside pipeline / all) |")
    print("|---|---:|---:|")
    for root in args.trees:
        if not (root / "sglang" / "srt").is_dir():
            print(f"error: {root} holds no sglang/srt", file=sys.stderr)
            return 2
        found = report[str(root)] = scan_tree(root)
        cells = []
        for kind in ("writes", "seed reads"):
            outside = [h for h in found[kind] if not h["pipeline"]]
            cells.append(f"{len(outside)} / {len(found[kind])}")
        print(f"| {root.name} | {cells[0]} | {cells[1]} |")
    if args.list:
        for root, found in report.items():
            for kind, hits in found.items():
                for h in hits:
                    if not h["pipeline"]:
                        print(f"{root} {kind}: {h['path']}:{h['line']} {h['text']}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
