"""Applying a file's plan: only the way to each edit is rebuilt."""

from __future__ import annotations

from pathlib import Path
from unittest import mock

import libcst as cst
import pytest

from ctxlint.fix import plan as fix_plan
from ctxlint.fix.plan import FilePlan, apply
from ctxlint.fix.source import SourceFile

TEXT = (
    "import os\n\n"
    + "".join(
        f"\ndef f{i}():\n    # keep {i}\n    return os.path.join('a',  'b')\n\n" for i in range(40)
    )
    + "\ndef g():\n    return old_name()  # here\n"
)


def _plan() -> FilePlan:
    src = SourceFile("m.py", "m", TEXT)
    node = next(n for n in src.walk.nodes if isinstance(n, cst.Name) and n.value == "old_name")
    plan = FilePlan(src, "rt")
    plan.replace[id(node)] = cst.Name("new_name")
    return plan


def _visits(ways_in: bool) -> tuple[str, int]:
    seen: list[cst.CSTNode] = []
    real = fix_plan._Apply.on_visit

    def counting(self: fix_plan._Apply, node: cst.CSTNode) -> bool:
        seen.append(node)
        return real(self, node)

    with mock.patch.object(fix_plan._Apply, "on_visit", counting):
        if ways_in:
            return apply(_plan()), len(seen)
        with mock.patch.object(fix_plan, "_ways_in", lambda _plan: None):
            return apply(_plan()), len(seen)


def test_a_rewrite_visits_only_the_nodes_on_the_way_to_its_edits() -> None:
    text, visited = _visits(ways_in=True)
    assert text == TEXT.replace("old_name", "new_name")
    # the module's statements are visited, not entered, except g's way down
    every_text, every = _visits(ways_in=False)
    assert every_text == text
    assert visited * 10 < every


def test_an_edit_the_walk_did_not_place_falls_back_to_visiting_every_node() -> None:
    plan = _plan()
    stray = cst.Name("stray")  # a node of no tree the walk placed: no way in
    plan.replace[id(stray)] = cst.Name("x")
    assert fix_plan._ways_in(plan) is None
    assert fix_plan._ways_in(_plan()) is not None


def test_a_grown_import_is_wrapped_past_the_line_length() -> None:
    from ctxlint.fix.plan import fitted

    def wrapped(code: str, indent: int, limit: int) -> str:
        stmt = cst.parse_statement(code).body[0]  # type: ignore[attr-defined]
        return cst.Module([]).code_for_node(fitted(stmt, indent, limit))

    short = "from pkg.context import get_exec, get_model"
    assert wrapped(short + "\n", 0, 88) == short
    assert wrapped(short + "\n", 0, 40) == (
        "from pkg.context import (\n    get_exec,\n    get_model,\n)"
    )
    assert wrapped(short + "\n", 4, len(short) + 3) != short  # the indentation counts
    assert wrapped("from ..ctx import a as b, c\n", 0, 10) == (
        "from ..ctx import (\n    a as b,\n    c,\n)"
    )
    already = "from pkg import (a, b)"
    assert wrapped(already + "\n", 0, 5) == already  # parenthesized: its layout is kept
    # in a function, the wrapped lines take the block's indentation
    module = cst.parse_module("def f():\n    from pkg.context import get_exec, get_model\n")
    fn = module.body[0]
    assert isinstance(fn, cst.FunctionDef)
    line = fn.body.body[0]
    assert isinstance(line, cst.SimpleStatementLine) and isinstance(line.body[0], cst.ImportFrom)
    new = module.deep_replace(line.body[0], fitted(line.body[0], 4, 30))
    assert new.code == (
        "def f():\n    from pkg.context import (\n        get_exec,\n        get_model,\n    )\n"
    )


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({}, 88),
        ({"pyproject.toml": "[tool.ruff]\nline-length = 100\n"}, 100),
        ({"pyproject.toml": "[tool.black]\nline-length = 79\n"}, 79),
        (
            {
                "pyproject.toml": "[tool.ruff]\nline-length = 100\n",
                "ruff.toml": "line-length = 120\n",
            },
            120,
        ),
        ({"pyproject.toml": "not toml ["}, 88),
        ({"pyproject.toml": "[tool.ruff]\nline-length = true\n"}, 88),
    ],
)
def test_the_line_length_is_the_projects(
    tmp_path: Path, files: dict[str, str], expected: int
) -> None:
    from ctxlint.fix.line_length import line_length

    for name, text in files.items():
        (tmp_path / name).write_text(text)
    assert line_length(tmp_path) == expected


def test_the_line_length_is_the_nearest_config_above_the_file(tmp_path: Path) -> None:
    """As ruff finds its settings: SGLang keeps them in python/pyproject.toml,
    below a root ctxlint.toml (the fix wrapped at 88 and ruff wanted 100)."""
    from ctxlint.fix.line_length import line_length

    (tmp_path / "python" / "pkg").mkdir(parents=True)
    (tmp_path / "pyproject.toml").write_text("[tool.black]\nline-length = 79\n")
    (tmp_path / "python" / "pyproject.toml").write_text("[tool.ruff]\nline-length = 100\n")
    assert line_length(tmp_path, "python/pkg/mod.py") == 100
    assert line_length(tmp_path, "other/mod.py") == 79  # no ruff config on its way: black's
    (tmp_path / "python" / "pkg" / "ruff.toml").write_text("select = ['E']\n")
    assert line_length(tmp_path, "python/pkg/mod.py") == 88  # nearest ruff config, its default


def test_an_import_the_fix_wrapped_then_shortened_goes_back_on_one_line(
    project: Path,
) -> None:
    """The wrap is decided before the seed accessor nothing uses any more is
    dropped: `get_model, get_parallel, get_server_args` passes 60 columns, the
    import that is left (50) does not, so it is written on one line; at 45 it
    stays wrapped."""
    from fixrun import fix_project
    from helpers import write

    source = (
        "from specrt.context import get_model, get_server_args\n\n\n"
        "def f() -> object:\n    return get_model(), get_server_args().tp_size\n"
    )
    for limit, head in (
        (60, "from specrt.context import get_model, get_parallel\n"),
        (45, "from specrt.context import (\n    get_model,\n    get_parallel,\n)\n"),
    ):
        (project / "ruff.toml").write_text(f"line-length = {limit}\n")
        write(project, {"app/example.py": source})
        fix_project(project, {"CTX101"}, unsafe=True)
        text = (project / "app/example.py").read_text()
        assert text.startswith(head), (limit, text)
