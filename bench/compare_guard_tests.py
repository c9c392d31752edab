#!/usr/bin/env python3
"""ctxlint vs SGLang's guard tests, measured in one run.

SGLang's guard tests live in the repository's test/ folder: neither the 0.5.23
wheel nor an sdist ships them (PyPI has no sdist for 0.5.23), so the guards
compared here are reconstructions from the design document, in
bench/sglang_guards/ (each file's header says which lines it follows). One run
measures:

1. on the unpacked wheel: each guard's scan, serial and in-process, and their
   total; ruff F811 (the design's named check for accessor imports); ctxlint
   cold (a fresh cache under a temp folder) and warm, each
   `python -m ctxlint.cli check --profile sglang ROOT --jobs N --format json`;
2. probes (bench/guard_probes.py): small snippets of the forms the design names,
   each written into a copy of a tiny sglang-shaped tree and run through its
   guard's scan and through ctxlint (in-process, `--profile sglang`, against a
   baseline holding the base tree's pins). A verdict counts only what the probe
   adds over the base tree: detected / missed for a violation, clean / false
   positive for code the design allows;
3. derived vs hand sets: each guard's hand lists (sizes) next to what
   `ctxlint sets --profile sglang ROOT --format json` derives on the wheel.

    python bench/compare_guard_tests.py [--tree DIR] [--json OUT] [--probes-only]

Prints Markdown. A script, not a pytest test: a cold ctxlint run on the wheel
takes minutes. tests/test_compare_guards_smoke.py runs the probe part.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import importlib.util
import io
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
GUARDS = HERE / "sglang_guards"
sys.path.insert(0, str(REPO / "src"))  # this checkout's ctxlint, whatever is installed
sys.path.insert(0, str(HERE))

import guard_probes as gp  # noqa: E402
from bench_sglang import VERSION, fetch_tree, scratch_copy, timed_run  # noqa: E402

# `python -m ctxlint` has no __main__ module; the CLI module runs the same main()
CTXLINT = [sys.executable, "-m", "ctxlint.cli"]
RUFF_F811 = "ruff --select F811"


def load_guard(filename: str) -> ModuleType:
    path = GUARDS / filename
    spec = importlib.util.spec_from_file_location(f"sglang_guard_{path.stem}", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def guard_files() -> list[str]:
    return [g for g, _ in gp.FAMILIES.values() if g.endswith(".py")]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), *filter(None, [env.get("PYTHONPATH")])])
    return env


def _ruff() -> list[str] | None:
    if importlib.util.find_spec("ruff") is not None:
        return [sys.executable, "-m", "ruff"]
    exe = shutil.which("ruff")
    return [exe] if exe else None


def ruff_f811(root: Path) -> list[tuple[str, int, str]] | None:
    """ruff F811 hits as (path, line, message), or None without ruff."""
    ruff = _ruff()
    if ruff is None:
        return None
    cmd = [*ruff, "check", "--isolated", "--select", "F811", "--no-cache"]
    done = subprocess.run(
        [*cmd, "--output-format", "json", "."], cwd=root, capture_output=True, text=True
    )
    hits = []
    for item in json.loads(done.stdout or "[]"):
        rel = Path(item["filename"]).resolve().relative_to(root.resolve()).as_posix()
        hits.append((rel, item["location"]["row"], item["message"]))
    return hits


# -- part 1: time on the wheel ------------------------------------------------------
ACCESSORS = {"get_server_args", "get_parallel"} | {
    f"get_{ns}"
    for ns in (
        "exec memory schedule model spec serving observability disagg lora mm device".split()
    )
}


def _accessor_named(message: str) -> bool:
    return any(f"`{name}`" in message for name in ACCESSORS)


def split_findings(report: dict[str, Any]) -> dict[str, dict[str, int]]:
    """Findings per rule, outside `sglang/multimodal_gen/` (its own ServerArgs) and in it."""
    out: dict[str, dict[str, int]] = {}
    for f in report["findings"]:
        where = "multimodal_gen" if f["path"].startswith("sglang/multimodal_gen/") else "rest"
        out.setdefault(f["rule"], {"rest": 0, "multimodal_gen": 0})[where] += 1
    return out


@dataclass
class Timed:
    name: str
    wall: float
    cpu: float | None
    result: str  # hits / findings / exit code
    note: str = ""


def time_guards(root: Path) -> tuple[list[Timed], dict[str, list[Any]]]:
    rows, hits = [], {}
    for filename in guard_files():
        module = load_guard(filename)
        start, cpu = time.perf_counter(), time.process_time()
        found = module.scan(root)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        hits[filename] = found
        rows.append(Timed(filename, wall, cpu, f"{len(found)} hit(s)", "in-process, serial"))
    rows.append(
        Timed(
            "all guard scans (sum)",
            sum(r.wall for r in rows),
            sum(r.cpu or 0 for r in rows),
            f"{sum(len(h) for h in hits.values())} hit(s)",
        )
    )
    ruff = _ruff()
    if ruff:
        cmd = [*ruff, "check", "--isolated", "--select", "F811", "--no-cache", "--quiet", "."]
        m = timed_run(cmd, cwd=root)
        found = ruff_f811(root) or []
        hits[RUFF_F811] = [h for h in found if _accessor_named(h[2])]
        rows.append(
            Timed(
                RUFF_F811,
                m.wall,
                m.cpu,
                f"{len(found)} hit(s), {len(hits[RUFF_F811])} on accessor names",
                "the design's import check",
            )
        )
    return rows, hits


def time_ctxlint(root: Path, work: Path, jobs: int, repeat: int) -> tuple[list[Timed], Any]:
    """Cold (fresh cache: the tree is a scratch copy) and warm (best of `repeat`)."""
    shutil.rmtree(root / ".ctxlint_cache", ignore_errors=True)
    rows, reports = [], []
    for i in range(1 + repeat):
        out = work / f"ctxlint-{i}.json"
        cmd = [*CTXLINT, "check", "--profile", "sglang", str(root), "--jobs", str(jobs)]
        cmd += ["--format", "json", "--output", str(out)]
        m = _timed_with_env(cmd, work)
        if m.exit_code not in (0, 1):
            print(f"ctxlint exited {m.exit_code}: {m.stderr}", file=sys.stderr)
        reports.append(json.loads(out.read_text()) if out.exists() else None)
        rows.append(Timed("cold" if i == 0 else f"warm {i}", m.wall, m.cpu, f"exit {m.exit_code}"))
    cold, warms = rows[0], rows[1:]
    best = min(warms, key=lambda r: r.wall)
    spread = ", ".join(f"{r.wall:.2f}" for r in warms)
    summary = reports[0]["summary"] if reports[0] else {}
    found = {rule: s["found"] for rule, s in summary.items()}
    same = reports[0] is not None and all(
        r is not None
        and (r["findings"], r["errors"]) == (reports[0]["findings"], reports[0]["errors"])
        for r in reports[1:]
    )
    out_rows = [
        Timed(
            "ctxlint cold", cold.wall, cold.cpu, f"{sum(found.values())} finding(s)", "empty cache"
        ),
        Timed(
            "ctxlint warm",
            best.wall,
            best.cpu,
            f"{sum(found.values())} finding(s)",
            f"best of {len(warms)}: {spread}",
        ),
    ]
    return out_rows, {
        "found": found,
        "split": split_findings(reports[0]) if reports[0] else {},
        "findings": [
            [f["rule"], f["path"], f["line"], f["message"]] for f in reports[0]["findings"]
        ]
        if reports[0]
        else [],
        "errors": len(reports[0]["errors"]) if reports[0] else None,
        "cold_equals_warm": same,
    }


def _timed_with_env(cmd: list[str], cwd: Path) -> Any:
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = _env()["PYTHONPATH"]
    try:
        return timed_run(cmd, cwd=cwd)
    finally:
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old


def ctxlint_sets(root: Path, jobs: int) -> dict[str, Any]:
    cmd = [*CTXLINT, "sets", "--profile", "sglang", str(root), "--jobs", str(jobs)]
    done = subprocess.run(
        [*cmd, "--format", "json"], capture_output=True, text=True, env=_env(), check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"ctxlint sets exited {done.returncode}: {done.stderr.strip()}")
    return json.loads(done.stdout)


# -- part 2: the probes -------------------------------------------------------------------
def write_tree(dest: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = dest / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def probe_files(probe: gp.Probe) -> dict[str, str]:
    files = dict(gp.BASE)
    for rel, old, new in probe.edits:
        if files[rel].count(old) != 1:
            raise ValueError(f"probe {probe.name}: {old!r} is not in {rel} exactly once")
        files[rel] = files[rel].replace(old, new)
    return files | probe.files


def ctxlint_inprocess(args: list[str]) -> tuple[int, str]:
    from ctxlint.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(args)
    return rc, out.getvalue() + err.getvalue()


def ctxlint_findings(root: Path, baseline: Path, config: list[str]) -> tuple[Counter, str]:
    """New findings as a Counter of (rule, path, message); the exit code if it is 2."""
    report = root.parent / f"{root.name}.json"
    rc, said = ctxlint_inprocess(
        [
            *("check", *config, str(root), "--baseline", str(baseline), "--no-cache"),
            *("--jobs", "1", "--format", "json", "--output", str(report)),
        ]
    )
    if rc == 2 or not report.exists():
        return Counter({("ERROR", "", said.strip()): 1}), said
    data = json.loads(report.read_text())
    report.unlink()
    found = Counter((f["rule"], f["path"], f["message"]) for f in data["findings"])
    found.update(("ERROR", e["path"], e["message"]) for e in data["errors"])
    return found, ""


PLUGIN_BASE = "sglang.srt.speculative.spec_registry.CustomSpecAlgo"


def plugin_profile(dest: Path) -> Path:
    """The sglang profile with `plugin-bases = [CustomSpecAlgo]`, which rules/CTX501.md
    says SGLang names (the shipped profile did not set it when the comparison was
    first run; it does now, and then this is the profile itself)."""
    from ctxlint.session import profile_path

    text = profile_path("sglang").read_text(encoding="utf-8")
    if "plugin-bases" in text:  # the shipped profile names it (since the first run)
        dest.write_text(text)
        return dest
    head, sep, tail = text.partition("\n[")
    dest.write_text(f"{head}\nplugin-bases = [{json.dumps(PLUGIN_BASE)}]\n{sep}{tail}")
    return dest


def guard_hits(family: str, root: Path) -> Counter | None:
    guard = gp.FAMILIES[family][0]
    if guard == RUFF_F811:
        hits = ruff_f811(root)
        if hits is None:
            return None
    else:
        hits = load_guard(guard).scan(root)
    return Counter((path, message) for path, _, message in hits)


def verdict(positive: bool, detected: bool) -> str:
    if positive:
        return "detected" if detected else "missed"
    return "false positive" if detected else "clean"


def expected_ctxlint(probe: gp.Probe) -> str:
    return probe.ctxlint_known or verdict(probe.positive, probe.positive)


@dataclass
class ProbeResult:
    name: str
    family: str
    form: str
    positive: bool
    guard: str  # verdict, or "n/a"
    ctxlint: str
    ctxlint_expected: str
    ctxlint_plugin_bases: str = ""  # plugin probes: the verdict with CustomSpecAlgo configured
    guard_saw: list[str] = field(default_factory=list)
    ctxlint_saw: list[str] = field(default_factory=list)  # the family's rules
    ctxlint_other: list[str] = field(default_factory=list)  # other rules that fired
    note: str = ""


class _Ctxlint:
    """ctxlint on the probe trees under one config, the base tree's findings subtracted."""

    def __init__(self, work: Path, base: Path, config: list[str], name: str) -> None:
        self.config, self.baseline = config, work / f"{name}-baseline.json"
        rc, said = ctxlint_inprocess(
            [
                *("baseline", "update", *config, str(base)),
                *("--baseline", str(self.baseline), "--no-cache", "--jobs", "1"),
            ]
        )
        if rc != 0:
            raise RuntimeError(f"baseline of the probe base tree ({name}): exit {rc}: {said}")
        self.base, _ = ctxlint_findings(base, self.baseline, config)

    def new(self, root: Path, rules: tuple[str, ...]) -> tuple[list, list]:
        found, _ = ctxlint_findings(root, self.baseline, self.config)
        new = found - self.base
        mine = sorted(k for k in new if not rules or k[0] in rules)
        other = sorted(k for k in new if rules and k[0] not in rules)
        return mine, other


def compare_probes(work: Path, probes: list[gp.Probe] | None = None) -> dict[str, Any]:
    """Run every probe through its guard and ctxlint; the base tree's results are subtracted."""
    probes = gp.PROBES if probes is None else probes
    base = work / "base"
    write_tree(base, gp.BASE)
    shipped = _Ctxlint(work, base, ["--profile", "sglang"], "profile")
    variant = _Ctxlint(
        work, base, ["--config", str(plugin_profile(work / "plugin.toml"))], "plugin-bases"
    )
    base_guard = {family: guard_hits(family, base) for family in gp.FAMILIES}
    results = []
    for probe in probes:
        root = work / probe.name
        write_tree(root, probe_files(probe))
        rules = gp.FAMILIES[probe.family][1]
        hits = guard_hits(probe.family, root)
        if hits is None:
            guard_verdict, guard_saw = "n/a (no ruff)", []
        else:
            new = hits - (base_guard[probe.family] or Counter())
            guard_saw = [f"{p}: {m}" for p, m in sorted(new)]
            guard_verdict = verdict(probe.positive, bool(new))
        mine, other = shipped.new(root, rules)
        with_bases = ""
        if probe.family == "plugin":
            with_bases = verdict(probe.positive, bool(variant.new(root, rules)[0]))
        results.append(
            ProbeResult(
                probe.name,
                probe.family,
                probe.form,
                probe.positive,
                guard_verdict,
                verdict(probe.positive, bool(mine)),
                expected_ctxlint(probe),
                with_bases,
                guard_saw,
                [f"{r} {p}: {m}" for r, p, m in mine],
                [f"{r} {p}: {m}" for r, p, m in other],
                probe.note,
            )
        )
        shutil.rmtree(root, ignore_errors=True)
    return {
        "base_guard_hits": {f: sum((c or Counter()).values()) for f, c in base_guard.items()},
        "base_ctxlint_findings": sum(shipped.base.values()),
        "probes": results,
    }


# -- part 3: derived vs hand sets ---------------------------------------------------------
def _size(value: Any) -> int | str:
    return len(value) if isinstance(value, (list, dict, set, tuple, frozenset)) else value


def hand_sets() -> dict[str, dict[str, int]]:
    """Per guard: its hand-kept lists and their sizes (module constants)."""
    out: dict[str, dict[str, int]] = {}
    for filename in guard_files():
        module = load_guard(filename)
        lists = {
            name: len(value)
            for name, value in vars(module).items()
            if re.fullmatch(r"_[A-Z][A-Z0-9_]*", name)
            and isinstance(value, (list, tuple, set, frozenset, dict))
        }
        out[filename] = lists
    out[RUFF_F811] = {}
    return out


def derived_sets(sets: dict[str, Any], guard_scan_fields: int | None) -> dict[str, dict[str, Any]]:
    """What ctxlint derives that stands in for each guard's hand lists (sizes)."""
    voc = sets.get("vocabulary", {})
    fields = sum(len(v) for v in voc.get("record fields by namespace", {}).values())

    def pick(rule: str, *keys: str) -> dict[str, Any]:
        return {f"{rule} {k}": _size(sets.get(rule, {}).get(k, [])) for k in keys}

    rows = {
        "test_server_args_read_ratchet.py": pick(
            "CTX101", "seed accessors", "files reading the seed"
        ),
        "test_server_args_mutation_ratchet.py": pick("CTX201", "record parameter names")
        | {"record fields": fields},
        "test_server_args_no_instance_mutation_entry.py": pick(
            "CTX202", "copy entry points defined on the record", "record lineage"
        ),
        "test_supplied_instance_exposure_ratchet.py": pick(
            "CTX102",
            "record parameter names",
            "parked record attributes",
            "allowed classes",
            "allowed classes with no read",
            "exempt factory patterns",
        )
        | {"record fields (every one counts)": fields},
        "test_publish_precedes_bag_reads.py": pick(
            "CTX301",
            "process entries",
            "process starts",
            "publishers reaching no bag read",
            "functions reaching a bag read",
        )
        | {"bag accessors": _size(voc.get("bag accessors", {}))},
        "test_plugin_hook_signatures.py": pick(
            "CTX501", "plugin bases", "implementations", "dispatch sites"
        )
        | {
            "CTX501 hooks": sum(
                len(h) for h in sets.get("CTX501", {}).get("plugin bases", {}).values()
            )
        },
        "test_runtime_context_config_bags.py": {
            "bag accessors": _size(voc.get("bag accessors", {})),
            "field classes": _size(voc.get("field classes", {})),
            "record fields": fields,
        },
        RUFF_F811: pick("CTX401", "accessor names", "classes defining accessor-named methods"),
    }
    if guard_scan_fields is not None:
        rows["test_supplied_instance_exposure_ratchet.py"]["(guard derives) fields in scope"] = (
            guard_scan_fields
        )
    return rows


def exposure_field_count(root: Path) -> int | None:
    """How many fields the reconstructed exposure ratchet derives (resolvable + recorded)."""
    module = load_guard("test_supplied_instance_exposure_ratchet.py")
    fields: set[str] = set()
    for rel, text in module._sources(root):
        if rel.startswith("sglang/srt/arg_groups/fields/") and "resolvable" in text:
            fields |= module._resolvable(module.ast.parse(text))
        if "override(" in text or "record_config_updates(" in text:
            fields |= module._recorded(module.ast.parse(text))
    return len(fields)


# -- output ---------------------------------------------------------------------------------
def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def md_table(header: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(_cell(str(c)) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def render(data: dict[str, Any]) -> str:
    out = []
    meta = data["meta"]
    out.append(
        f"{meta['date']}, {meta['machine']}, Python {meta['python']}, load {meta['load_start']} "
        f"at start, ctxlint {meta['ctxlint']}, jobs {meta['jobs']}"
    )
    if "timings" in data:
        t = data["timings"]
        out.append(f"\n### Time on {t['tree']} ({t['files']} .py files under sglang/)\n")
        rows = [
            [
                r["name"],
                f"{r['wall']:.2f}",
                f"{r['cpu']:.2f}" if r["cpu"] is not None else "-",
                r["result"],
                r["note"],
            ]
            for r in t["rows"]
        ]
        out.append(md_table(["run", "wall s", "cpu s", "result", "note"], rows))
        out.append(
            f"\nctxlint findings (cold): {t['ctxlint']['found']}, errors "
            f"{t['ctxlint']['errors']}; cold = warm: {t['ctxlint']['cold_equals_warm']}"
        )
        split = t["ctxlint"].get("split", {})
        rows = []
        for guard, rules in gp.FAMILIES.values():
            n = len(t["guard_hits"].get(guard, []))
            for rule in rules or ("-",):
                c = split.get(rule, {"rest": 0, "multimodal_gen": 0})
                rows.append([guard, n, rule, c["rest"], c["multimodal_gen"]])
        out.append("\nHits and findings on the tree, per guard and the rule that replaces it:\n")
        out.append(
            md_table(
                [
                    "guard",
                    "guard hits",
                    "rule",
                    "ctxlint outside multimodal_gen",
                    "in multimodal_gen",
                ],
                rows,
            )
        )
        out.append("\nGuard hits on the tree:\n")
        for guard, hits in t["guard_hits"].items():
            shown = "; ".join(f"`{p}:{ln}` {m}" for p, ln, m in hits[:6]) or "none"
            more = f" (+{len(hits) - 6} more)" if len(hits) > 6 else ""
            out.append(f"- {guard}: {shown}{more}")
    p = data["probes"]
    out.append(
        f"\n### Forms detected ({len(p['probes'])} probes on a tiny sglang-shaped tree)\n\n"
        f"Base tree (subtracted): guard hits {p['base_guard_hits']}, ctxlint findings "
        f"{p['base_ctxlint_findings']}.\n"
    )
    rows = []
    for r in p["probes"]:
        guard, rules = gp.FAMILIES[r["family"]]
        rows.append(
            [
                r["name"],
                r["form"],
                "violation" if r["positive"] else "allowed",
                guard.removesuffix(".py").removeprefix("test_"),
                r["guard"],
                "/".join(rules) or "(none)",
                r["ctxlint"]
                + (
                    f" ({r['ctxlint_plugin_bases']} with plugin-bases)"
                    if r["ctxlint_plugin_bases"]
                    else ""
                ),
                ", ".join(sorted({s.split()[0] for s in r["ctxlint_other"]})),
                r["note"],
            ]
        )
    out.append(
        md_table(
            [
                "probe",
                "form",
                "design",
                "guard test",
                "guard",
                "rule",
                "ctxlint",
                "other rules",
                "note",
            ],
            rows,
        )
    )
    out.append("\n" + md_table(["", "detected", "missed", "clean", "false positive"], _tally(p)))
    if "sets" in data:
        out.append(f"\n### Hand lists vs derived sets (on {data['timings']['tree']})\n")
        rows = []
        for guard, lists in data["sets"]["hand"].items():
            derived = data["sets"]["derived"].get(guard, {})
            rows.append(
                [
                    guard,
                    ", ".join(f"`{k}` {v}" for k, v in lists.items()) or "-",
                    ", ".join(f"{k} {v}" for k, v in derived.items()),
                ]
            )
        out.append(md_table(["guard", "hand lists (size)", "ctxlint derives (size)"], rows))
    return "\n".join(out) + "\n"


def _tally(p: dict[str, Any]) -> list[list[Any]]:
    rows = []
    for who in ("guard", "ctxlint", "ctxlint_plugin_bases"):
        c = Counter(r[who] or r["ctxlint"] for r in p["probes"])
        label = {"ctxlint_plugin_bases": "ctxlint, profile + plugin-bases"}.get(who, who)
        rows.append([label, c["detected"], c["missed"], c["clean"], c["false positive"]])
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", help="an unpacked wheel root holding sglang/ (else downloaded)")
    ap.add_argument("--cache", default=str(HERE / ".cache"), help="wheel cache folder")
    ap.add_argument("--jobs", type=int, default=2, help="ctxlint --jobs on the wheel")
    ap.add_argument("--repeat", type=int, default=2, help="warm runs (the best is kept)")
    ap.add_argument("--probes-only", action="store_true", help="skip the wheel")
    ap.add_argument("--json", metavar="OUT", help="write the numbers as JSON")
    args = ap.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    from ctxlint import __version__

    data: dict[str, Any] = {
        "meta": {
            "date": dt.datetime.now().isoformat(timespec="seconds"),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores",
            "python": platform.python_version(),
            "load_start": [round(x, 2) for x in os.getloadavg()],
            "ctxlint": __version__,
            "jobs": args.jobs,
            "sglang": VERSION,
        }
    }
    work = Path(tempfile.mkdtemp(prefix="ctxlint-compare-"))
    try:
        data["probes"] = compare_probes(work / "probes")
        data["probes"]["probes"] = [asdict(r) for r in data["probes"]["probes"]]
        if not args.probes_only:
            unpacked = Path(args.tree) if args.tree else fetch_tree(Path(args.cache))
            root = scratch_copy(unpacked, work)  # fresh .ctxlint_cache, outside any git tree
            files = sum(1 for _ in (root / "sglang").rglob("*.py"))
            guard_rows, hits = time_guards(root)
            ctx_rows, ctx = time_ctxlint(root, work, args.jobs, args.repeat)
            data["timings"] = {
                "tree": str(unpacked),
                "files": files,
                "rows": [asdict(r) for r in guard_rows + ctx_rows],
                "guard_hits": hits,
                "ctxlint": ctx,
            }
            sets = ctxlint_sets(root, args.jobs)
            data["sets"] = {
                "hand": hand_sets(),
                "derived": derived_sets(sets, exposure_field_count(root)),
            }
        data["meta"]["load_end"] = [round(x, 2) for x in os.getloadavg()]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    sys.stdout.write(render(data))
    if args.json:
        Path(args.json).write_text(
            json.dumps(data, indent=2, default=list) + "\n", encoding="utf-8"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
