"""bench/scan_server_args_ast.py: the plain ast scan the history triage compares
ctxlint's CTX201/CTX101 counts with counts exactly the syntactic forms it names."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[1]


def _scan() -> ModuleType:
    path = REPO / "bench" / "scan_server_args_ast.py"
    spec = importlib.util.spec_from_file_location("scan_server_args_ast", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


SOURCE = """\
\ufefffrom sglang.srt.server_args import get_global_server_args

def f(server_args, args):
    server_args.tp_size = 1
    self.server_args.dp_size += 1
    (a, draft_server_args.x) = 1, 2
    args.tp_size = 3                      # not named server_args: not counted
    setattr(server_args, "tp_size", 4)    # not an assignment: not counted
    y = get_global_server_args().model_path
    z = get_server_args().tp_size
    w = get_server_args(1).tp_size        # takes an argument: not the seed
    get_server_args().tp_size = 5         # a write, not a read
"""


def test_the_scan_counts_the_named_forms_only(tmp_path: Path) -> None:
    scan = _scan()
    for rel in ("sglang/srt/m.py", "sglang/srt/arg_groups/h.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(SOURCE, encoding="utf-8")
    found = scan.scan_tree(tmp_path)
    writes = [(h["path"], h["line"], h["pipeline"]) for h in found["writes"]]
    assert writes == [
        ("sglang/srt/arg_groups/h.py", 4, True),
        ("sglang/srt/arg_groups/h.py", 5, True),
        ("sglang/srt/arg_groups/h.py", 6, True),
        ("sglang/srt/m.py", 4, False),
        ("sglang/srt/m.py", 5, False),
        ("sglang/srt/m.py", 6, False),
    ]
    reads = [(h["line"], h["text"]) for h in found["seed reads"] if not h["pipeline"]]
    assert reads == [
        (9, "get_global_server_args().model_path"),
        (10, "get_server_args().tp_size"),
    ]
