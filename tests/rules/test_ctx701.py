"""CTX701 resource-lease: lease functions derived from the runtime's resources tier,
literal names, the name -> subsystem table (derived and pinned), and leases reached
from inside CUDA graph capture."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import cli, run_engine, write
from rulecase import assert_case

RULE = "CTX701"

MODELS = """\
from specrt.context import get_stream


class Llama:
    def __init__(self) -> None:
        self.alt = get_stream("alt")


class Qwen:
    def __init__(self) -> None:
        self.alt = get_stream("alt")
"""


def test_names_must_be_literal_in_every_lease_spelling(project: Path) -> None:
    assert_case(
        project,
        RULE,
        """
        from specrt import context
        from specrt.context import get_buffer, get_context, get_resources, get_stream, set_stream

        WORKSPACE = "llama_workspace"
        SHARED = "a"
        SHARED = "b"  # bound twice: not one literal

        class Other:
            WORKSPACE = "a class attribute, not the module constant"

        def init(shape: int, name: str) -> None:
            get_stream("alt")
            get_stream(name)  # expect
            get_buffer(WORKSPACE, lambda: shape)
            get_buffer(SHARED, lambda: shape)  # expect
            get_buffer(name=f"{shape}_ws", factory=lambda: shape)  # expect
            get_buffer(f"_{shape}", lambda: shape)  # expect: a prefix with no word names no role
            context.get_stream(name + "_x")  # expect
            get_buffer(name=f"ws_{shape}", factory=lambda: shape)  # the prefix `ws_` names it
            context.get_stream("side_" + name)
            get_buffer("mha_" f"out_{shape}_" f"{name}", lambda: shape)
            set_stream(name, object())  # expect
            get_resources().stream(name)  # expect
            get_resources().buffer("llama_workspace", lambda: shape)
            get_context().get_stream(name)  # not a lease method of the context class here
            get_stream.__name__.upper()
        """,
        path="app/models/llama.py",
    )


def test_one_name_from_two_subsystems_is_reported_once_per_other_subsystem(project: Path) -> None:
    assert_case(
        project,
        RULE,
        """
        from specrt.context import get_buffer, get_stream

        def comm() -> object:
            get_stream("alt")  # expect
            get_stream("alt")
            get_buffer("alt", lambda: 0)  # another registry: another lease
            return get_stream("dp_tbo_comm")
        """,
        path="app/layers/comm.py",
        extra={"app/models/llama.py": MODELS, "app/models/qwen.py": MODELS},
    )


def test_leases_inside_capture_and_reached_from_it(project: Path) -> None:
    assert_case(
        project,
        RULE,
        """
        import torch
        from torch.cuda import graph

        from specrt.context import get_buffer, get_stream

        def warmup() -> None:
            get_stream("capture")  # before capture: fine

        def workspace() -> object:
            return get_buffer("ws", lambda: 0)  # expect

        def deeper() -> object:
            return workspace()

        class Runner:
            def __init__(self) -> None:
                self.stream = get_stream("capture")

            def capture(self, g: object) -> None:
                with torch.cuda.graph(g, stream=self.stream):
                    get_stream("late")  # expect
                    self.run_once()

            def run_once(self) -> None:
                deeper()

            def replay(self) -> None:
                get_buffer("replay", lambda: 0)

        def npu(g: object) -> None:
            with torch.npu.graph(g):
                get_stream("npu_late")  # expect
            get_stream("after")

        def imported(g: object) -> None:
            def inner() -> None:
                get_stream("nested")  # expect
            with graph(g):
                inner()
        """,
        path="app/runner.py",
    )


def test_a_literal_prefix_is_the_name_shared_across_subsystems_as_any_name(
    project: Path,
) -> None:
    prefixed = (
        "from specrt.context import get_buffer\n\n\n"
        "def ws(shape: int) -> object:\n"
        "    return get_buffer(f'ws_{shape}', lambda: shape)\n"
    )
    assert_case(
        project,
        RULE,
        """
        from specrt.context import get_buffer

        def ws(shape: int) -> object:
            get_buffer(f"ws_big_{shape}", lambda: shape)  # another name: `ws_big_{…}`
            return get_buffer(f"ws_{shape}", lambda: shape)  # expect
        """,
        path="app/layers/comm.py",
        extra={"app/models/llama.py": prefixed, "app/models/qwen.py": prefixed},
    )


def test_a_name_keyed_by_its_factorys_device_is_a_per_device_entry(project: Path) -> None:
    assert_case(
        project,
        RULE,
        """
        import torch

        from specrt.context import get_buffer

        def ws(device: str, rows: int) -> None:
            get_buffer(f"ws:{device}", lambda: torch.zeros(16, device=device))  # expect
            get_buffer(f"ws_rows:{rows}", factory=lambda: torch.zeros(rows, device=device))
            get_buffer("ws_" + device, factory=lambda: torch.zeros(4, device=device))  # expect
        """,
        path="app/layers/ws.py",
    )
    out = run_engine(project, select={RULE})
    assert all("per device" in f.message for f in out.findings)


def test_derived_sets_and_subsystems(project: Path) -> None:
    write(
        project,
        {
            "app/models/llama.py": MODELS,
            "app/layers/comm.py": (
                "from specrt.context import get_buffer, get_stream\n\n\n"
                "def comm() -> object:\n"
                "    get_buffer('flashinfer_workspace', lambda: 0)\n"
                "    get_buffer(f'k3_symm:{id(0)}', lambda: 0)\n"
                "    get_buffer('mha_' f'out_{id(0)}', lambda: 0)\n"
                "    return get_stream('dp_tbo_comm')\n"
            ),
        },
    )
    sets = run_engine(project, select={RULE}).program.sets[RULE]
    assert sets == {
        "resources tier": "specrt.context.Resources",
        "lease methods": {
            "specrt.context.Resources.buffer": "buffers",
            "specrt.context.Resources.set_stream": "streams",
            "specrt.context.Resources.stream": "streams",
        },
        "lease functions": {
            "specrt.context.get_buffer": "buffers",
            "specrt.context.get_stream": "streams",
            "specrt.context.set_stream": "streams",
        },
        "subsystems": ["app.layers", "app.models"],
        "name table": {
            "buffers flashinfer_workspace": "app.layers",
            "buffers k3_symm:{…}": "app.layers",
            "buffers mha_out_{…}": "app.layers",
            "streams alt": "app.models",
            "streams dp_tbo_comm": "app.layers",
        },
        "lease sites": 6,
        "capture blocks": [],
        "reached from capture": 0,
    }


def test_no_tier_is_a_derived_note_and_no_lease_function_a_partial_run(project: Path) -> None:
    ctx = project / "specrt" / "context.py"
    before = ctx.read_text().split("# -- the resources")[0]
    ctx.write_text(before)
    out = run_engine(project, select={RULE})
    assert out.program.sets[RULE] == {"resources tier": "(no get_resources() in specrt.context)"}
    r = cli("check", "--select", RULE, "--no-cache", cwd=project)
    assert r.returncode == 0 and "partial" not in r.stdout + r.stderr  # nothing to lease
    ctx.write_text(
        before + "\n\nclass Resources:\n    streams: dict = {}\n\n\n"
        "def get_resources() -> Resources:\n    return Resources()\n"
    )
    r = cli("check", "--select", RULE, "--no-cache", cwd=project)
    assert "CTX701 resource-lease is partial: no lease functions" in r.stderr


def test_the_name_table_is_pinned_by_baseline_update(project: Path) -> None:
    write(project, {"app/models/llama.py": MODELS})

    def check() -> tuple[int, list[dict]]:
        r = cli("check", "--strict", "--format", "json", "--no-cache", cwd=project)
        return r.returncode, [f for f in json.loads(r.stdout)["findings"] if f["rule"] == RULE]

    assert check() == (0, [])  # no pins yet: nothing to enforce
    assert cli("baseline", "update", "--no-cache", cwd=project).returncode == 0
    doc = json.loads((project / "ctxlint-baseline.json").read_text())
    assert doc["pins"][RULE] == {"streams alt": "app.models"}
    write(
        project,
        {
            "app/layers/comm.py": "from specrt.context import get_stream\n\nS = get_stream('offload')\n"
        },
    )
    rc, found = check()
    assert rc == 1
    assert [f["message"].split(";")[0] for f in found] == [
        "streams offload is not pinned in the baseline (now app.layers)"
    ]
    cli("baseline", "update", "--no-cache", cwd=project)
    assert check() == (0, [])
