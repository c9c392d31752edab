"""`[tool.ctxlint]` loading and validation.

Only `runtime-module` and `record-class` name code; everything else the rules
need is derived from the tree. Unknown keys are errors with a did-you-mean so a
typo never silently disables a check.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxlint.errors import ConfigError
from ctxlint.selection import resolve as resolve_selectors

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

CONFIG_FILES = ("pyproject.toml", "ctxlint.toml", ".ctxlint.toml")
DEFAULT_BASELINE = "ctxlint-baseline.json"
DEFAULT_CACHE_DIR = ".ctxlint_cache"

# key -> expected python type; rule modules add their own keys through `options`.
CORE_KEYS: dict[str, type | tuple[type, ...]] = {
    "src": list,
    "exclude": list,
    "per-rule-exclude": dict,
    "runtime-module": str,
    "record-class": str,
    "baseline": str,
    "cache-dir": str,
    "select": list,
    "ignore": list,
}


@dataclass(frozen=True)
class Config:
    root: Path  # project root: finding paths are relative to it
    config_path: Path | None
    runtime_module: str
    record_class: str
    src: tuple[str, ...] = (".",)
    exclude: tuple[str, ...] = ()
    per_rule_exclude: dict[str, tuple[str, ...]] = field(default_factory=dict)
    baseline: Path | None = None
    cache_dir: Path | None = None
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    options: dict[str, Any] = field(default_factory=dict)  # rule-declared keys

    @property
    def record_module(self) -> str:
        return self.record_class.rpartition(".")[0]

    @property
    def record_name(self) -> str:
        return self.record_class.rpartition(".")[2]

    def fact_key(self) -> str:
        """What per-file facts depend on, besides the file's bytes and the version."""
        payload = {"runtime": self.runtime_module, "record": self.record_class}
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]


def _did_you_mean(word: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def find_config(start: Path) -> Path | None:
    """The nearest config file holding a ctxlint table, walking up from `start`."""
    here = start if start.is_dir() else start.parent
    for folder in (here, *here.parents):
        for name in CONFIG_FILES:
            candidate = folder / name
            if candidate.is_file() and _table(_read_toml(candidate), candidate) is not None:
                return candidate
    return None


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except OSError as exc:
        raise ConfigError(f"cannot read config {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"invalid TOML in {path}: {exc}") from None


def _table(doc: dict[str, Any], path: Path) -> dict[str, Any] | None:
    tool = doc.get("tool", {}).get("ctxlint")
    if tool is not None:
        return tool
    if path.name != "pyproject.toml" and doc and "tool" not in doc:
        return doc  # a standalone ctxlint.toml may hold the keys at top level
    return None


def load_config(
    config_path: Path | None,
    *,
    root: Path | None = None,
    rule_ids: list[str],
    rule_options: dict[str, Any],
    profile: dict[str, Any] | None = None,
    rule_names: list[str] | None = None,
) -> Config:
    """Load and validate the config.

    `root` overrides the project root (a tree the config does not live in, such
    as an unpacked wheel checked with `--config`); relative `src` and `exclude`
    are then taken from the root, while `baseline` stays beside the config file.
    """
    if config_path is not None:
        table = _table(_read_toml(config_path), config_path)
        if table is None:
            raise ConfigError(f"{config_path} has no [tool.ctxlint] table")
        base = config_path.parent.resolve()
    elif profile is not None:
        table, base = dict(profile), None
    else:
        raise ConfigError(
            "no ctxlint configuration found: add a [tool.ctxlint] table to pyproject.toml "
            "or pass --config FILE"
        )
    project_root = (root or base or Path.cwd()).resolve()
    allowed = {**CORE_KEYS, **{k: object for k in rule_options}}
    for key, value in table.items():
        if key not in allowed:
            raise ConfigError(
                f"unknown config key {key!r} in {config_path or 'profile'}"
                + _did_you_mean(key, sorted(allowed))
            )
        expected = allowed[key]
        if expected is not object and not isinstance(value, expected):
            raise ConfigError(f"config key {key!r} must be a {_type_name(expected)}")
    for key in ("runtime-module", "record-class"):
        if not table.get(key):
            raise ConfigError(f"config key {key!r} is required (e.g. see README: Configuration)")
    record_class = table["record-class"]
    if "." not in record_class:
        raise ConfigError(
            f"record-class must be a qualified name like pkg.mod.Class, got {record_class!r}"
        )

    # select/ignore take ids, id prefixes, ALL and (given rule_names, aligned
    # with rule_ids) rule names; they are resolved to ids when rules are chosen
    named = dict(zip(rule_ids, rule_names or [""] * len(rule_ids), strict=True))

    def rules_list(key: str) -> tuple[str, ...]:
        selectors = tuple(str(x).strip() for x in table.get(key, []))
        resolve_selectors(selectors, named, f"config key {key!r}")
        return selectors

    per_rule = table.get("per-rule-exclude", {})
    check_rule_ids(tuple(per_rule), rule_ids, "per-rule-exclude")
    for rid, globs in per_rule.items():
        if not isinstance(globs, list) or not all(isinstance(g, str) for g in globs):
            raise ConfigError(f"per-rule-exclude.{rid} must be a list of glob strings")
    baseline = table.get("baseline", DEFAULT_BASELINE)
    baseline_base = base or project_root
    cache_dir = table.get("cache-dir", DEFAULT_CACHE_DIR)
    return Config(
        root=project_root,
        config_path=config_path.resolve() if config_path else None,
        runtime_module=table["runtime-module"],
        record_class=record_class,
        src=tuple(table.get("src", ["."])),
        exclude=tuple(table.get("exclude", [])),
        per_rule_exclude={k.upper(): tuple(v) for k, v in per_rule.items()},
        baseline=(baseline_base / baseline).resolve(),
        cache_dir=(project_root / cache_dir),
        select=rules_list("select"),
        ignore=rules_list("ignore"),
        options={k: table[k] for k in rule_options if k in table},
    )


def check_rule_ids(ids: tuple[str, ...] | list[str], known: list[str], where: str) -> None:
    for rid in ids:
        if rid.upper() not in known:
            raise ConfigError(
                f"unknown rule {rid!r} in {where}" + _did_you_mean(rid.upper(), known)
            )


def _type_name(expected: type | tuple[type, ...]) -> str:
    names = {list: "list", dict: "table", str: "string"}
    if isinstance(expected, tuple):
        return " or ".join(names.get(t, t.__name__) for t in expected)
    return names.get(expected, expected.__name__)
