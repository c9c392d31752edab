"""Pool workers: one file's facts (or just its syntax verdict) per work item.

Each worker loads the rules once (`_init_worker`); `_work` parses a file and
runs the visitors `extract_file` wires for the vocabulary, or only asks "does it
parse" in SYNTAX_ONLY mode.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from ctxlint.core import deepstack, pysource
from ctxlint.engine.part_digests import PartDigests, of_facts, of_piece
from ctxlint.facts.entry import text

_WORKER: dict[str, Any] = {}


SYNTAX_ONLY = "syntax"  # the mode for files no rule needs: only "does it parse"
# CPython's parser gives each file's verdict: a newer one may judge a target differently.
_PYTHON = "py{}{}".format(*sys.version_info[:2])


def _init_worker(vocab_json: dict[str, Any] | str | None, target: str, timed: bool = False) -> None:
    from ctxlint.engine.registry import file_visitors, load_rules

    _WORKER["vocab"] = vocab_json
    _WORKER["target"] = target
    # Every rule's visitor, and the program parts any rule requires: facts do
    # not depend on the selection (the cache is shared by every selection).
    _WORKER["visitors"] = file_visitors(load_rules())
    _WORKER["timed"] = timed


def _init_pool_worker(
    vocab_json: dict[str, Any] | str | None, target: str, timed: bool = False
) -> None:
    _init_worker(vocab_json, target, timed)
    deepstack.start()  # one deep thread for the worker's life


# (path, encoded facts, seconds per visitor and "parse" when timed, part digests)
Result = tuple[str, bytes, dict[str, float], PartDigests | None]


def _encode(path: str, facts: dict[str, Any], clock: dict[str, float], syntax_only: bool) -> Result:
    blob = json.dumps(facts, sort_keys=True, separators=(",", ":")).encode()
    # the digests a round keys each rule's answer by, worked out here, in
    # parallel, while the facts are at hand (the parent would decode them again)
    return path, blob, clock, None if syntax_only else of_facts(facts, blob)


def _work(item: tuple[str, str, bytes], parser: Any = None) -> Result:
    """(path, encoded facts, seconds per visitor and "parse" when timed (else
    {}), the facts' part digests (None for the syntax check)); `parser`, in
    place of LibCST's parse (facts.extract)."""
    path, module, source = item
    target = _WORKER["target"]
    clock: dict[str, float] = {}
    syntax_only = _WORKER["vocab"] == SYNTAX_ONLY
    try:
        if syntax_only:  # path-free: keyed by content alone (see fact_key)
            try:
                pysource.read(source, target)
                facts: dict[str, Any] = {}
            except pysource.SourceError as exc:
                facts = {"error": str(exc)}
        else:
            from ctxlint.facts.extract import extract_file  # LibCST: only when parsing

            facts = extract_file(
                path,
                module,
                source,
                _WORKER["vocab"],
                _WORKER["visitors"],
                target,
                clock if _WORKER["timed"] else None,
                parser,
            )
    except Exception as exc:  # a bug, or code deeper than a rule's recursion: this file only
        facts = _error(module, f"cannot check: {type(exc).__name__}: {exc}", syntax_only)
    kept = getattr(parser, "kept", None)
    entry = getattr(kept, "entry", None)
    _WORKER.pop("entry", None)
    if entry is not None and entry.value is facts:  # a kept module's (facts.entry)
        parts = of_piece(entry)
        if parts is not None:
            _WORKER["entry"] = entry  # (the engine decodes the facts from it: used_entry)
            return path, text(entry, "placed").encode(), clock, parts
    return _encode(path, facts, clock, syntax_only)


def used_entry() -> Any:
    """The kept module's entry (facts.entry.Piece) the last `_work` here encoded
    its result from (None: it encoded the facts); asked once."""
    return _WORKER.pop("entry", None)


def _error(module: str, message: str, syntax_only: bool) -> dict[str, Any]:
    return {"error": message} if syntax_only else {"module": module, "error": message}


def _died(item: tuple[str, str, bytes], how: str, syntax_only: bool) -> Result:
    path, module, _ = item
    died = _error(module, f"checking it killed the worker ({how})", syntax_only)
    return _encode(path, died, {}, syntax_only)
