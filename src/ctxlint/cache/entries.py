"""What each kind of cache entry holds, and the check that an entry read back holds it.

The cache is an optimisation, never a source of truth: an entry that
decompresses but is not what this code writes (another version's layout, a
hand edit, a bug) is a miss, recomputed and overwritten, never a broken run
(issue 11 D18). Each reader returns None for such an entry. The checks look at
the shape the engine itself relies on; a rule's own facts inside a well-formed
entry are covered by Engine.run's fallback (a run that trips over them is done
again without reading the cache).
"""

from __future__ import annotations

import json
from typing import Any

DIGEST_LENGTH = 32  # sources.content_hash: blake2b, 16 bytes, hex


def _json(blob: bytes | None) -> Any:
    if blob is None:
        return None
    try:
        return json.loads(blob)
    except ValueError:  # not JSON, or not UTF-8
        return None


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def facts_entry(
    blob: bytes | None, module: str | None, *, schema: bool = False
) -> dict[str, Any] | None:
    """A file's facts as the engine writes them: for the syntax check (module
    None) {} or {"error"}; otherwise {"module", "error"} or {"module",
    "facts": {rule: ...}, "suppressions"?, "schema"?}, for this very module
    (with "schema" when `schema`: the vocabulary round's facts)."""
    return facts_value(_json(blob), module, schema=schema)


def facts_value(facts: Any, module: str | None, *, schema: bool = False) -> dict[str, Any] | None:
    """facts_entry of an entry's value in hand (decoded already)."""
    if not isinstance(facts, dict):
        return None
    if "error" in facts and not isinstance(facts["error"], str):
        return None
    if module is None:
        return facts if set(facts) <= {"error"} else None
    if facts.get("module") != module:
        return None
    if "error" in facts:
        return facts
    if not isinstance(facts.get("facts"), dict):
        return None
    if "suppressions" in facts and not isinstance(facts["suppressions"], list):
        return None
    if ("schema" in facts or schema) and not isinstance(facts.get("schema"), dict):
        return None
    return facts


def prefilter_entry(blob: bytes | None) -> bool | None:
    """Whether a file's bytes hold one of a token set."""
    return {b"1": True, b"0": False}.get(blob) if blob is not None else None


def learnt_entry(blob: bytes | None) -> set[str] | None:
    """The tokens a fixed-point round learnt."""
    tokens = _json(blob)
    return set(tokens) if _strings(tokens) else None


def _finding(value: Any) -> bool:
    text = ("rule", "path", "scope", "message", "snippet", "fingerprint")
    return (
        isinstance(value, dict)
        and all(isinstance(value.get(k), str) for k in text)
        and isinstance(value.get("span"), list)
        and len(value["span"]) == 4
        and all(isinstance(n, int) for n in value["span"])
        and isinstance(value.get("kind", ""), str)
        and isinstance(data := value.get("data", {}), dict)
        and all(isinstance(v, str) for v in data.values())
    )


def _file_error(value: Any) -> bool:
    return isinstance(value, dict) and all(
        isinstance(value.get(k), str) for k in ("path", "message")
    )


def outcome_entry(blob: bytes | None) -> dict[str, Any] | None:
    """A whole run's outcome (Engine._record)."""
    data = _json(blob)
    if not (
        isinstance(data, dict)
        and all(isinstance(data.get(k), dict) for k in ("vocab", "sets", "pins"))
        and isinstance(data.get("findings"), list)
        and all(_finding(f) for f in data["findings"])
        and isinstance(data.get("errors"), list)
        and all(_file_error(e) for e in data["errors"])
    ):
        return None
    return data


def signatures_entry(blob: bytes | None) -> dict[str, list[Any]]:
    """Path -> [mtime_ns, ctime_ns, size, inode, content hash] (sources.py);
    entries of another shape are left out (those files are read again)."""
    data = _json(blob)
    if not isinstance(data, dict):
        return {}
    return {
        path: entry
        for path, entry in data.items()
        if isinstance(entry, list)
        and len(entry) == 5
        and all(type(n) is int for n in entry[:4])
        and isinstance(entry[4], str)
        and len(entry[4]) == DIGEST_LENGTH
    }
