"""`# ctxlint: ignore[RULE] reason`: silences exactly its rule on its line; bad
or useless suppressions are CTX001 findings; strings are never suppressions."""

from __future__ import annotations

from pathlib import Path

from helpers import run_engine, write

from ctxlint.core.findings import Finding

HEAD = (
    "from specrt.context import get_server_args\n"
    "from specrt.record import ServerArgs\n\n\n"
    "def f(rec: ServerArgs) -> None:\n"
)
# One line with both a CTX101 read and a CTX201 write.
BOTH = "    rec.tp_size = get_server_args().dp_size"


CORE = {"CTX001", "CTX101", "CTX201"}  # later rules stay out of these exact assertions


def _run(project: Path, body: str, select: set[str] = CORE) -> list[Finding]:
    write(project, {"app/m.py": HEAD + body + "\n"})
    return run_engine(project, select=select).findings


def _rules(findings: list[Finding]) -> list[tuple[str, int]]:
    return sorted((f.rule, f.line) for f in findings)


def test_unsuppressed_baseline(project: Path) -> None:
    """Without a comment the line carries one finding of each rule."""
    assert _rules(_run(project, BOTH)) == [("CTX101", 6), ("CTX201", 6)]


def test_used_suppression_silences_exactly_its_rule_on_its_line(project: Path) -> None:
    """ignore[CTX201] drops the write, keeps the read, and is not reported."""
    body = BOTH + "  # ctxlint: ignore[CTX201] pipeline-owned\n" + BOTH
    assert _rules(_run(project, body)) == [("CTX101", 6), ("CTX101", 7), ("CTX201", 7)]


def test_one_comment_can_name_several_rules(project: Path) -> None:
    """ignore[CTX101, CTX201] silences both."""
    assert _run(project, BOTH + "  # ctxlint: ignore[CTX101, CTX201] both accepted") == []


def test_suppression_on_the_last_line_of_a_multiline_finding(project: Path) -> None:
    """A finding spanning lines is silenced by a comment on its last line too."""
    body = '    x = getattr(\n        get_server_args(), "tp_size"\n    )  # ctxlint: ignore[CTX101] ok'
    assert _run(project, body) == []


def test_unused_suppression_is_ctx001(project: Path) -> None:
    """A suppression with nothing to silence is reported where the comment is."""
    found = _run(project, "    pass  # ctxlint: ignore[CTX101] stale excuse")
    assert [(f.rule, f.line, f.span.column) for f in found] == [("CTX001", 6, 11)]
    assert "unused suppression" in found[0].message and "CTX101" in found[0].message


def test_a_ctx001_finding_names_the_function_its_comment_is_in(project: Path) -> None:
    """Comments come from the tokenizer, apart from the tree: the scope was
    `<module>` whatever the comment was in."""
    body = (
        "    pass  # ctxlint: ignore[CTX101] stale excuse\n\n\n"
        "class K:\n    def m(self) -> None:\n"
        "        pass  # ctxlint: ignore[CTX201] stale too\n\n\n"
        "X = 1  # ctxlint: ignore[CTX101] at module level"
    )
    found = _run(project, body)
    assert [(f.rule, f.line, f.scope) for f in found] == [
        ("CTX001", 6, "f"),
        ("CTX001", 11, "K.m"),
        ("CTX001", 14, "<module>"),
    ]
    # shown, not hashed: a baseline pinned when every scope read <module> still matches
    from ctxlint.engine.fingerprints import fingerprint

    assert [f.fingerprint for f in found] == [
        fingerprint("CTX001", "app/m.py", "<module>", f.snippet, 0) for f in found
    ]


def test_a_suppression_may_name_its_rule_by_name(project: Path) -> None:
    """As --select takes them: ignore[record-mutation] silences CTX201."""
    found = _run(project, BOTH + "  # ctxlint: ignore[record-mutation] pipeline-owned")
    assert _rules(found) == [("CTX101", 6)]


def test_an_unknown_rule_name_gets_the_nearest_name(project: Path) -> None:
    found = _run(project, BOTH + "  # ctxlint: ignore[record-mutaton] pipeline-owned")
    message = next(f.message for f in found if f.rule == "CTX001")
    assert (
        message == "suppression names unknown rule record-mutaton (did you mean 'record-mutation'?)"
    )


def test_suppression_without_reason_is_ctx001_but_still_suppresses(project: Path) -> None:
    """No reason: CTX001, while the named finding stays silenced."""
    found = _run(project, BOTH + "  # ctxlint: ignore[CTX201]")
    assert _rules(found) == [("CTX001", 6), ("CTX101", 6)]
    assert "without a reason" in next(f for f in found if f.rule == "CTX001").message


def test_unknown_rule_in_suppression_is_ctx001(project: Path) -> None:
    """A misspelt rule id is reported (and silences nothing)."""
    found = _run(project, BOTH + "  # ctxlint: ignore[CTX2O1] typo")
    assert _rules(found) == [("CTX001", 6), ("CTX101", 6), ("CTX201", 6)]
    assert "unknown rule CTX2O1" in next(f for f in found if f.rule == "CTX001").message


def test_malformed_suppression_is_ctx001(project: Path) -> None:
    """`# ctxlint:` that is not `ignore[...]` is reported as malformed."""
    found = _run(project, BOTH + "  # ctxlint: ignore CTX201 forgot brackets")
    assert _rules(found) == [("CTX001", 6), ("CTX101", 6), ("CTX201", 6)]
    assert "malformed" in next(f for f in found if f.rule == "CTX001").message


def test_ctxlint_inside_strings_is_not_a_suppression(project: Path) -> None:
    """A string or docstring holding the directive neither silences nor is reported."""
    body = (
        '    """# ctxlint: ignore[CTX201] in a docstring"""\n'
        + BOTH
        + '; s = "# ctxlint: ignore[CTX101, CTX201] in a string"'
    )
    assert _rules(_run(project, body)) == [("CTX101", 7), ("CTX201", 7)]


def test_suppression_for_an_unselected_rule_is_not_unused(project: Path) -> None:
    """With CTX101 not selected, its suppression cannot be judged unused; with
    it selected, the same comment on a clean line is."""
    body = "    pass  # ctxlint: ignore[CTX101] reviewed"
    assert _run(project, body, select={"CTX001", "CTX201"}) == []
    assert _rules(_run(project, body, select={"CTX001", "CTX101"})) == [("CTX001", 6)]


def test_ctx001_not_selected_reports_no_hygiene(project: Path) -> None:
    """Without CTX001 selected, suppressions still silence but are not judged."""
    body = BOTH + "  # ctxlint: ignore[CTX201]\n    pass  # ctxlint: ignore[CTX101] old"
    assert _rules(_run(project, body, select={"CTX101", "CTX201"})) == [("CTX101", 6)]


def test_suppression_does_not_reach_other_lines(project: Path) -> None:
    """A comment on the line above silences nothing (and is unused)."""
    body = "    # ctxlint: ignore[CTX101] wrong line\n" + BOTH
    assert _rules(_run(project, body)) == [("CTX001", 6), ("CTX101", 7), ("CTX201", 7)]


def test_ctx001_is_one_rule_judging_what_the_engine_recorded() -> None:
    """The engine only filters and records what each comment silenced; CTX001's
    own hook turns that record into findings (nothing else makes them)."""
    from ctxlint.engine.registry import load_rules
    from ctxlint.program.suppressions import Suppression, Suppressions
    from ctxlint.rules.ctx001_suppressions import RULE

    def comment(line: int, rules: list[str], reason: str, used: set[str]) -> Suppression:
        text = f"# ctxlint: ignore[{', '.join(rules)}] {reason}"
        return Suppression(
            "app/m.py", line, 5, 5 + len(text), "f", text, rules, reason, False, used
        )

    every = load_rules()
    known = {r.id: r.id for r in every} | {r.name.upper(): r.id for r in every}
    record = Suppressions(
        [
            comment(3, ["CTX101"], "kept", {"CTX101"}),
            comment(4, ["CTX101", "CTX201"], "", {"CTX201"}),
            comment(5, ["CTX999"], "typo", set()),
        ],
        {"CTX101", "CTX201"},
        known,
    )
    found = [(f.span[0], f.message) for f in RULE.check_suppressions(record)]
    assert found == [
        (4, "unused suppression: no CTX101 finding on this line"),
        (4, "suppression without a reason: say why after the ]"),
        (5, "suppression names unknown rule CTX999"),
    ]
    assert all(list(r.check_suppressions(record)) == [] for r in every if r is not RULE)
