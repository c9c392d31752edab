"""`[tool.ctxlint]` loading and validation.

Only `runtime-module` and `record-class` name code; everything else the rules
need is derived from the tree. Unknown keys are errors with a did-you-mean so a
typo never silently disables a check.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxlint.config.selection import resolve as resolve_selectors
from ctxlint.core.errors import ConfigError, did_you_mean
from ctxlint.core.pysource import DEFAULT_TARGET, unsupported_target

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

# In one folder a dedicated file wins over pyproject.toml, as in ruff.
CONFIG_FILES = (".ctxlint.toml", "ctxlint.toml", "pyproject.toml")
DEFAULT_BASELINE = "ctxlint-baseline.json"
DEFAULT_CACHE_DIR = ".ctxlint_cache"

# key -> expected python type; rule modules add their own keys through `options`.
CORE_KEYS: dict[str, type | tuple[type, ...]] = {
    "src": list,
    "exclude": list,
    "per-rule-exclude": dict,
    "root": str,  # the project root, relative to the config file (default: its folder)
    "runtime-module": str,
    "record-class": str,
    "baseline": str,
    "cache-dir": str,
    "select": list,
    "ignore": list,
    "target-version": str,
}
LIST_OF_STRINGS = {"src", "exclude", "select", "ignore"}


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
    target_version: str = DEFAULT_TARGET  # the grammar files are checked against

    @property
    def record_module(self) -> str:
        return self.record_class.rpartition(".")[0]


def find_config(start: Path) -> Path | None:
    """The nearest config file holding a ctxlint table, walking up from `start`."""
    here = start if start.is_dir() else start.parent
    for folder in (here, *here.parents):
        for name in CONFIG_FILES:
            candidate = folder / name
            if candidate.is_file() and _table(read_toml(candidate), candidate) is not None:
                return candidate
    return None


def has_table(path: Path) -> bool:
    """Whether the config file `path` holds a ctxlint table (False if it is unreadable)."""
    try:
        return _table(read_toml(path), path) is not None
    except ConfigError:
        return False


def shown(path: Path | str) -> str:
    """A config file's path as it opens from the working folder: relative below
    it, else as given (every config error names the file the same way)."""
    rel = os.path.relpath(path)
    return str(path) if rel.startswith(os.pardir) else rel


def naming_file(exc: ConfigError, path: Path) -> ConfigError:
    """`exc`, saying which config file it is about unless it already does."""
    text = str(exc)
    if any(p in text for p in (str(path), str(path.resolve()), shown(path))):
        return exc
    return ConfigError(f"{text} (in {shown(path)})")


def shadowed_configs(chosen: Path) -> list[Path]:
    """Other config files beside `chosen` that hold a ctxlint table and are ignored."""
    out = []
    for name in CONFIG_FILES:
        other = chosen.parent / name
        if other.name != chosen.name and other.is_file():
            if _table(read_toml(other), other) is not None:
                out.append(other)
    return out


def read_toml(path: Path) -> dict[str, Any]:
    """A TOML file's document (ConfigError when it cannot be read or parsed)."""
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except OSError as exc:
        raise ConfigError(f"cannot read config {shown(path)}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"invalid TOML in {shown(path)}: {exc}") from None
    except UnicodeDecodeError as exc:  # TOML is UTF-8 by definition
        line = exc.object[: exc.start].count(b"\n") + 1
        raise ConfigError(
            f"invalid TOML in {shown(path)}: not UTF-8 (byte 0x{exc.object[exc.start]:02x} on line {line})"
        ) from None


def _table(doc: dict[str, Any], path: Path) -> dict[str, Any] | None:
    tool = doc.get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError(f"key 'tool' in {shown(path)} must be a table, not a {_toml_type(tool)}")
    table = tool.get("ctxlint")
    if table is not None:
        if not isinstance(table, dict):
            raise ConfigError(f"key 'tool.ctxlint' in {shown(path)} must be a table")
        stray = sorted(k for k in doc if k != "tool")
        if path.name != "pyproject.toml" and stray:
            # `[per-rule-exclude]` after `[tool.ctxlint]` is a top-level table: it
            # would be dropped without a word, and the run would check more
            raise ConfigError(
                f"{path.name} has a [tool.ctxlint] table and top-level keys "
                f"({', '.join(stray)}): put every key at the top level, or every one "
                "under [tool.ctxlint] ([tool.ctxlint.per-rule-exclude])"
            )
        return table
    if path.name != "pyproject.toml" and doc and "tool" not in doc:
        return doc  # a standalone ctxlint.toml may hold the keys at top level
    return None


def project_table(config_path: Path, root: Path | None) -> tuple[dict[str, Any], Path, Path]:
    """The config's ctxlint table, its folder, and the project root: `root`
    (the command line's tree), else the table's own `root` key, else that folder."""
    table = _table(read_toml(config_path), config_path)
    if table is None:
        raise ConfigError(f"{shown(config_path)} has no [tool.ctxlint] table")
    base = config_path.parent.resolve()
    if root is None and isinstance(table.get("root"), str):
        root = configured_root(table["root"], base)
    return table, base, (root or base).resolve()


def load_config(
    config_path: Path | None,
    *,
    root: Path | None = None,
    rule_ids: list[str],
    rule_options: dict[str, Any],
    rule_names: list[str] | None = None,
    baseline: Path | None = None,
    cache_dir: Path | None = None,
) -> Config:
    """Load and validate the config.

    `baseline` and `cache_dir` come from the command line: they replace the
    config's values and may point anywhere (the config's may not leave the project).

    `root` overrides the project root (a tree the config does not live in, such
    as an unpacked wheel checked with `--config`), as does the table's own `root`
    key (relative to the config file); relative `src` and `exclude` are then
    taken from the root, while `baseline` stays beside the config file.
    """
    if config_path is None:
        raise ConfigError(
            "no ctxlint configuration found: add a [tool.ctxlint] table to pyproject.toml "
            "or pass --config FILE"
        )
    table, base, project_root = project_table(config_path, root)
    _check_table(table, config_path, rule_options)
    # select/ignore take ids, id prefixes, ALL and (given rule_names, aligned
    # with rule_ids) rule names; they are resolved to ids when rules are chosen
    named = dict(zip(rule_ids, rule_names or [""] * len(rule_ids), strict=True))

    def rules_list(key: str) -> tuple[str, ...]:
        selectors = tuple(str(x).strip() for x in table.get(key, []))
        resolve_selectors(selectors, named, f"config key {key!r}")
        return selectors

    per_rule = table.get("per-rule-exclude", {})
    _check_per_rule(per_rule, rule_ids)
    if "src" in table and not table["src"]:  # it would check nothing, then fail far away
        raise ConfigError('src = [] names no folder: give at least one (the default is ["."])')
    target_version = table.get("target-version", DEFAULT_TARGET)
    why_not = unsupported_target(target_version)
    if why_not is not None:
        raise ConfigError(why_not)
    # A config travels with the tree it configures, and that tree may not be
    # trusted: what it names for ctxlint to write stays inside the project.
    if baseline is None:
        baseline = confined("baseline", table.get("baseline", DEFAULT_BASELINE), base, project_root)
    if cache_dir is None:
        value = table.get("cache-dir", DEFAULT_CACHE_DIR)
        check_cache_dir(value, project_root)
        cache_dir = confined("cache-dir", value, project_root)
    return Config(
        root=project_root,
        config_path=config_path.resolve() if config_path else None,
        runtime_module=table["runtime-module"],
        record_class=table["record-class"],
        src=tuple(table.get("src", ["."])),
        exclude=tuple(table.get("exclude", [])),
        per_rule_exclude={k.upper(): tuple(v) for k, v in per_rule.items()},
        baseline=baseline,
        cache_dir=cache_dir,
        select=rules_list("select"),
        ignore=rules_list("ignore"),
        options={k: table[k] for k in rule_options if k in table},
        target_version=target_version,
    )


def _check_table(table: dict[str, Any], config_path: Path, rule_options: dict[str, Any]) -> None:
    """Every key known and of its type; the runtime module and the record class
    given, as dotted names; the exclude patterns well-formed."""
    allowed = {**CORE_KEYS, **{k: object for k in rule_options}}
    for key, value in table.items():
        if key not in allowed:
            raise ConfigError(
                f"unknown config key {key!r} in {shown(config_path)}"
                + did_you_mean(key, sorted(allowed))
            )
        expected = allowed[key]
        if expected is not object and not isinstance(value, expected):
            raise ConfigError(f"config key {key!r} must be a {_type_name(expected)}")
        _check_strings(key, value)
    for key in ("runtime-module", "record-class"):
        if not table.get(key):
            raise ConfigError(f"config key {key!r} is required (e.g. see README: Configuration)")
    record_class = table["record-class"]
    if "." not in record_class:
        raise ConfigError(
            f"record-class must be a qualified name like pkg.mod.Class, got {record_class!r}"
        )
    for key in ("runtime-module", "record-class"):
        if not _DOTTED.fullmatch(table[key]):
            raise ConfigError(
                f"config key {key!r} must be a dotted Python name, got {table[key]!r}"
            )
    _check_globs("exclude", table.get("exclude", []))


def _check_per_rule(per_rule: dict[str, Any], rule_ids: list[str]) -> None:
    """per-rule-exclude: known rule ids, each with a list of glob strings."""
    check_rule_ids(tuple(per_rule), rule_ids, "per-rule-exclude")
    for rid, globs in per_rule.items():
        if not isinstance(globs, list) or not all(isinstance(g, str) for g in globs):
            raise ConfigError(f"per-rule-exclude.{rid} must be a list of glob strings")
        _check_globs(f"per-rule-exclude.{rid}", globs)


_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def _check_strings(key: str, value: Any) -> None:
    """Strings only where strings are expected, and none holding a NUL (no path can)."""
    items = value if isinstance(value, list) else [value]
    if key in LIST_OF_STRINGS:
        for n, item in enumerate(items, 1):
            if not isinstance(item, str):
                raise ConfigError(
                    f"config key {key!r} must be a list of strings (item {n} is {item!r})"
                )
    if any(isinstance(item, str) and "\0" in item for item in items):
        raise ConfigError(f"config key {key!r} holds a NUL character")


def _check_globs(key: str, globs: list[str]) -> None:
    # (imported here: `ctxlint check` through a daemon reads the config file
    # without loading it, and pathspec was a third of that client's imports)
    import pathspec

    for glob in globs:
        try:
            pathspec.GitIgnoreSpec.from_lines([glob])
        except ValueError as exc:
            raise ConfigError(f"config key {key!r}: {exc}") from None


def confined(key: str, value: str, base: Path, *others: Path) -> Path:
    """`value` (relative to `base`) as an absolute path, which must lie inside
    `base` or one of `others` (symbolic links resolved): a checked tree's config
    cannot make ctxlint write elsewhere. The command line can (--baseline,
    --cache-dir): the user typed that path."""
    if Path(value).is_absolute():
        raise ConfigError(
            f"config key {key!r} must be a path inside the project, not {value!r} "
            f"(give --{key} on the command line to use it)"
        )
    path = (base / value).resolve()
    folders = [folder.resolve() for folder in (base, *others)]
    if not any(path.is_relative_to(folder) for folder in folders):
        # name the widest folders allowed: the project root, not the config's
        # folder inside it (`root = "../.."`)
        widest = [f for f in folders if not any(f != g and f.is_relative_to(g) for g in folders)]
        where = " or ".join(str(f) for f in dict.fromkeys(widest))
        raise ConfigError(
            f"config key {key!r} = {value!r} points outside the project {where} "
            f"(give --{key} on the command line to use it)"
        )
    return path


def configured_root(value: str, base: Path) -> Path:
    """The config's own `root` (relative to its folder `base`): that folder or one
    below it, or a folder above it inside the git work tree that holds the config
    (a config kept in a subfolder of its repository) or inside the folder the
    command runs in (the same layout unpacked from an archive). The cache and the
    baseline are written under the root, so a tree's config cannot aim them at the
    tree's parent or anywhere else; `--config FILE TREE` names any root."""
    root = (base / value).resolve()
    if root.is_relative_to(base) or root.is_relative_to(Path.cwd().resolve()):
        return root
    from ctxlint.core.gitcmd import run_git  # (subprocess: not for every client)

    try:
        top = run_git(base, "rev-parse", "--show-toplevel")
    except OSError:
        top = None
    repo = Path(os.fsdecode(top.stdout.strip())).resolve() if top and top.returncode == 0 else None
    if repo is not None and root.is_relative_to(repo):
        return root
    where = (
        f"its git work tree {repo}" if repo else "the config's folder (no git work tree holds it)"
    )
    raise ConfigError(
        f"config key 'root' = {value!r} leads outside {where}: the cache and the baseline "
        "are written under the root (give the tree on the command line: "
        "ctxlint check --config FILE TREE)"
    )


def check_cache_dir(value: str, root: Path) -> None:
    """Refuse a configured cache folder that is the project itself or is reached
    through a symbolic link (a checked tree could aim one anywhere)."""
    lexical = Path(os.path.normpath(root / value))
    if lexical == root or (root / value).resolve() == root.resolve():
        raise ConfigError("config key 'cache-dir' must name a folder of its own, not the project")
    if not lexical.is_relative_to(root):
        return  # `confined` says so
    for folder in (lexical, *lexical.parents):
        if folder == root:
            break
        if folder.is_symlink():
            raise ConfigError(
                f"cache folder {lexical} is reached through a symbolic link ({folder}); "
                "remove the link, or give --cache-dir"
            )


def check_rule_ids(ids: tuple[str, ...] | list[str], known: list[str], where: str) -> None:
    for rid in ids:
        if rid.upper() not in known:
            raise ConfigError(f"unknown rule {rid!r} in {where}" + did_you_mean(rid.upper(), known))


def _toml_type(value: Any) -> str:
    return {str: "string", list: "array", bool: "boolean", int: "integer", float: "float"}.get(
        type(value), type(value).__name__
    )


def _type_name(expected: type | tuple[type, ...]) -> str:
    names = {list: "list", dict: "table", str: "string"}
    if isinstance(expected, tuple):
        return " or ".join(names.get(t, t.__name__) for t in expected)
    return names.get(expected, expected.__name__)
