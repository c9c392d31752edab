"""`ctxlint rules`, `explain`, `sets` and `show-settings`: what the rules are,
and what they derive from a tree."""

from __future__ import annotations

import argparse
import json
import sys
from functools import partial
from typing import Any

from ctxlint import session
from ctxlint.cli import options
from ctxlint.core.console import UNWRAPPED
from ctxlint.core.errors import ConfigError, did_you_mean
from ctxlint.core.shown_paths import opener, places_shown
from ctxlint.engine.registry import load_rules, spec_path


def add_parsers(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    rules = sub.add_parser("rules", help="the rule catalogue")
    options.add_color(rules)
    options.add_format(rules, "the catalogue")
    exp = sub.add_parser("explain", aliases=["rule"], help="show a rule's spec (ruff: `rule`)")
    exp.add_argument("rule", help="a rule id or name: CTX101, seed-read")
    options.add_color(exp)
    sets = sub.add_parser("sets", help="print every derived set the checks use")
    options.add_common(sets)
    options.add_format(sets, "the sets")
    settings = sub.add_parser(
        "show-settings",
        help="the resolved settings: config file, roots, excludes, baseline, cache, rules, sets",
    )
    options.add_common(settings)
    options.add_format(settings, "the settings")


def cmd_rules(args: argparse.Namespace) -> int:
    from rich.table import Table
    from rich.text import Text

    if getattr(args, "format", "text") == "json":  # as `ruff rule --all --output-format json`
        catalogue = [
            {"id": r.id, "name": r.name, "summary": r.summary, "fixes": list(r.fixes)}
            for r in load_rules()
        ]
        sys.stdout.write(json.dumps(catalogue, indent=2) + "\n")
        return 0
    table = Table(title="ctxlint rules")
    table.add_column("id")
    table.add_column("name")
    table.add_column("what it reports")
    table.add_column("fix")
    for r in load_rules():  # Text, never markup: "[dev]" in a summary prints as written
        table.add_row(Text(r.id), Text(r.name), Text(r.summary), Text(", ".join(r.fixes) or "-"))
    options.console(color=args.color).print(table)
    return 0


PROSE_WIDTH = 100  # `explain` off a terminal without COLUMNS: a spec's paragraphs wrap here


def cmd_explain(args: argparse.Namespace) -> int:
    rules = {r.id: r for r in load_rules()}
    by_name = {r.name: r.id for r in rules.values()}  # as --select takes them
    rid = by_name.get(args.rule.strip().lower(), args.rule.strip().upper())
    if rid not in rules:
        prefixed = sorted(r for r in rules if r.startswith(rid))
        if rid and prefixed:  # `CTX10`: a prefix, not a typo of its nearest id
            raise ConfigError(f"{args.rule!r} is a prefix of {', '.join(prefixed)}: give one rule")
        hint = did_you_mean(rid, sorted(rules)) or did_you_mean(args.rule.lower(), sorted(by_name))
        if not hint:  # nothing close (CTX999): the ids there are
            hint = f" (the rules are {', '.join(sorted(rules))}; `ctxlint rules` names them)"
        raise ConfigError(f"unknown rule {args.rule!r}{hint}")
    path = spec_path(rid)
    console = options.console(color=args.color)
    if console.width >= UNWRAPPED:  # prose, not code: rich pads Markdown to the full width
        console.width = PROSE_WIDTH
    from rich.markdown import Markdown  # only `explain` renders Markdown

    if path.is_file():
        from ctxlint.report.spec_markdown import for_reading

        text = for_reading(path.read_text(encoding="utf-8"))
    else:  # installed without the source tree: the module docstring is the summary
        module = sys.modules[type(rules[rid]).__module__]
        text = f"# {rid} {rules[rid].name}\n\n{module.__doc__ or rules[rid].summary}"
    with console.capture() as captured:
        console.print(Markdown(text))
    # rich pads Markdown lines to the full width: no trailing blanks in a pipe or file
    sys.stdout.write("".join(line.rstrip() + "\n" for line in captured.get().splitlines()))
    return 0


def cmd_sets(args: argparse.Namespace) -> int:
    setup = options.resolve(args, baseline=False, disabled=session.SAY)
    config, selected = setup.config, setup.selected
    out = options.check(args, setup).out
    vocab = out.program.vocab
    namespaces: dict[str, list[str]] = {}
    for field, ns in vocab.fields.items():
        namespaces.setdefault(ns or "(record)", []).append(field)
    data: dict[str, Any] = {
        "vocabulary": {
            "runtime module": vocab.runtime_module,
            "record class": vocab.record_class,
            "seed accessors": list(vocab.seed_accessors),
            "bag accessors": dict(vocab.bag_accessors),
            "field classes": dict(vocab.field_classes),
            "record fields by namespace": {k: sorted(v) for k, v in sorted(namespaces.items())},
            "record properties": list(vocab.properties),
            "namespaces": list(vocab.namespaces),
            "where it came from": dict(vocab.provenance),
            "missing sets": dict(vocab.missing),
            "disabled rules": dict(sorted(out.disabled.items())),
        },
        **{r.id: out.program.sets.get(r.id, {}) for r in selected if out.program.sets.get(r.id)},
    }
    if args.format == "json":
        sys.stdout.write(json.dumps(data, indent=2, sort_keys=True) + "\n")
        return 0
    from rich.text import Text
    from rich.tree import Tree

    # every label is a Text, never markup: derived names and statuses print as
    # written ("install ctxlint[dev]" would otherwise lose its "[dev]")
    # locations in the sets are project paths: printed as they open from here
    shown = partial(places_shown, opener(str(config.root)))
    tree = Tree(Text(f"derived sets of {config.root}"))
    for section, sets in data.items():
        branch = tree.add(Text(section, style="bold"))
        for name, value in sets.items():
            size = len(value) if isinstance(value, (list, dict)) else None
            node = branch.add(
                Text(shown(f"{name}" + (f" ({size})" if size is not None else f": {value}")))
            )
            if isinstance(value, dict):
                for k, v in value.items():
                    node.add(Text(shown(f"{k}: {', '.join(v) if isinstance(v, list) else v}")))
            elif isinstance(value, list):
                for v in value:
                    node.add(Text(shown(str(v))))
    options.console(color=args.color).print(tree)
    return 0


def _size(value: Any) -> int | Any:
    return len(value) if isinstance(value, (list, dict, set, tuple)) else value


def cmd_show_settings(args: argparse.Namespace) -> int:
    """The settings a `check` with the same arguments would use (as ruff's
    --show-settings), and the size of every set the rules derive from the tree."""
    setup = options.resolve(args, baseline=False, disabled=session.QUIET)
    config, filters, selected = setup.config, setup.filters, setup.selected
    # keys spelled as the config spells its own (kebab-case), in JSON and text alike
    out = options.check(args, setup).out
    baseline = config.baseline
    data: dict[str, Any] = {
        "config-file": str(config.config_path or ""),
        "root": str(config.root),
        "paths": filters,
        "src": list(config.src),
        "exclude": list(config.exclude),
        "per-rule-exclude": {k: list(v) for k, v in sorted(config.per_rule_exclude.items())},
        "runtime-module": config.runtime_module,
        "record-class": config.record_class,
        "target-version": config.target_version,
        "baseline": (
            f"{baseline} ({'exists' if baseline.is_file() else 'not written yet'})"
            if baseline is not None
            else ""
        ),
        "cache-dir": str(config.cache_dir or "")
        + (" (not used: --no-cache)" if args.no_cache else ""),
        "rule-options": dict(sorted(config.options.items())),
        "selected-rules": [f"{r.id} {r.name}" for r in selected],
        "files-checked": out.files_checked,
        "derived-set-sizes": {
            rid: {name: _size(v) for name, v in sorted(sets.items())}
            for rid, sets in sorted(out.program.sets.items())
            if sets and rid in {r.id for r in selected}
        },
    }
    if args.format == "json":
        sys.stdout.write(json.dumps(data, indent=2, sort_keys=False) + "\n")
        return 0
    from rich.text import Text

    console = options.console(color=args.color)
    for key, value in data.items():
        line = Text(f"{key}: ", style="bold")
        if isinstance(value, dict) and value:
            console.print(line)
            for k, v in value.items():
                shown = ", ".join(f"{n}={s}" for n, s in v.items()) if isinstance(v, dict) else v
                console.print(Text(f"  {k}: {shown}"))
        elif isinstance(value, list) and value and key == "selected-rules":
            console.print(line)
            for v in value:
                console.print(Text(f"  {v}"))
        else:
            shown = ", ".join(map(str, value)) if isinstance(value, (list, dict)) else str(value)
            console.print(line.append(shown or "(none)", style=""))
    return 0
