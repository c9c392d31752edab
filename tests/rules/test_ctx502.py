"""CTX502 readback-surfaces: primitives derived to a fixed point, surfaces in every
shape (display, local dict, update, comprehension, wrappers, parts), groups by
the readback's name, sibling disagreement, and the pins through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import cli, run_engine, write
from rulecase import assert_case

from ctxlint.program.readback_surfaces import WHOLE

RULE = "CTX502"

MANAGER = {
    "app/manager.py": """\
from specrt.context import get_context, get_server_args

_OWNED = ("model_path",)


class TokenizerManager:
    model_path = "m"

    def config_value(self, name: str):
        if name in _OWNED:
            return getattr(self, name)
        return get_context().config_leaf(name)

    def resolved_config_dict(self, base: dict) -> dict:
        resolved = dict(base) if base else get_server_args().resolved_dict()
        return resolved


def build_server_info(scheduler_info: dict) -> dict:
    result = get_server_args().resolved_dict()
    result["launch_command"] = "serve"
    result.update(scheduler_info)
    result.update(kv_events=None)
    return result
"""
}


def test_primitives_parts_and_surfaces(project: Path) -> None:
    write(
        project,
        {
            **MANAGER,
            "app/http_server.py": """\
import json

from app.manager import TokenizerManager, build_server_info

tm = TokenizerManager()


async def server_info():
    return json.dumps({**build_server_info({}), "version": "1", "frontend": "python"})


async def get_server_info():
    return await server_info()


async def model_info():
    result = {"model_path": tm.model_path, "load_format": tm.config_value("load_format")}
    result["weight_version"] = tm.config_value("weight_version")
    return result


async def hicache():
    return {name: tm.config_value(name) for name in ("hicache_storage_backend",)}


def not_a_surface() -> dict:
    return {"a": 1, "b": tm.model_path}
""",
            "app/engine.py": """\
from app.manager import TokenizerManager
from specrt.context import get_server_args


class Engine:
    tokenizer_manager: TokenizerManager

    def get_server_info(self):
        return {**get_server_args().resolved_dict(), "version": "1", **self.infos[0]}

    def get_model_info(self):
        tm = self.tokenizer_manager
        return {"model_path": tm.model_path, "load_format": tm.config_value("load_format")}
""",
        },
    )
    out = run_engine(project, select={RULE})
    sets = out.program.sets[RULE]
    assert sets["whole-object readback"] == ["resolved_dict"]
    assert sets["name-driven leaf reads"] == ["config_leaf"]
    assert sets["readback primitives"] == [
        "build_server_info",
        "config_leaf",
        "config_value",
        "get_server_info",
        "resolved_config_dict",
        "resolved_dict",
        "server_info",
    ]
    assert sets["parts"] == ["app.manager.build_server_info"]
    assert sets["groups"] == {
        "hicache": {"app.http_server.hicache": ["hicache_storage_backend"]},
        "model_info": {
            "app.engine.Engine.get_model_info": ["load_format", "model_path"],
            "app.http_server.model_info": ["load_format", "model_path", "weight_version"],
        },
        "server_info": {
            "app.engine.Engine.get_server_info": ["**self.infos[0]", WHOLE, "version"],
            "app.http_server.server_info": [
                "**scheduler_info",
                WHOLE,
                "frontend",
                "kv_events",
                "launch_command",
                "version",
            ],
        },
    }
    found = sorted((f.path, f.line, f"{f.message}\n{f.details}") for f in out.findings)
    assert [(p, line) for p, line, _ in found] == [("app/engine.py", 8), ("app/engine.py", 11)]
    # `frontend` is the HTTP surface's constant, which no sibling reports: its own
    # description, no field the engine's users lose
    assert "does not report `kv_events`, `launch_command`, `**whole" not in found[0][2]
    assert "does not report `kv_events`, `launch_command`, which" in found[0][2]
    assert "`weight_version`" in found[1][2] and "http_server.model_info" in found[1][2]


def test_each_sibling_reports_what_the_others_lack(project: Path) -> None:
    assert_case(
        project,
        RULE,
        """
        from specrt.context import get_context, get_server_args

        def server_info() -> dict:  # expect
            return {**get_server_args().resolved_dict(), "a": 1}

        class Servicer:
            def GetServerInfo(self, request) -> dict:  # expect
                return {"b": get_context().config_leaf("b"), "a": 2}

        class Engine:
            def get_server_info(self) -> dict:
                return {**get_server_args().resolved_dict(), "a": 1, "b": 2}

            def get_model_info(self) -> dict:  # alone: nothing to compare with
                return {"c": get_context().config_leaf("c")}
        """,
    )


def _check(project: Path) -> tuple[int, list[dict]]:
    r = cli("check", "--strict", "--format", "json", "--no-cache", cwd=project)
    doc = json.loads(r.stdout)
    return r.returncode, [f for f in doc["findings"] if f["rule"] == RULE]


SURFACES = """\
from specrt.context import get_server_args


def server_info() -> dict:
    return {**get_server_args().resolved_dict(), "version": "1"}


class Engine:
    def get_server_info(self) -> dict:
        return {**get_server_args().resolved_dict(), "version": "1"}
"""


def test_pins_recorded_by_baseline_update_and_changes_fail_until_recorded(
    project: Path,
) -> None:
    write(project, {"app/readback.py": SURFACES})
    assert _check(project) == (0, [])  # no pins yet: nothing to enforce
    r = cli("baseline", "update", "--no-cache", cwd=project)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads((project / "ctxlint-baseline.json").read_text())
    assert doc["pins"][RULE] == {
        "server_info: app.readback.Engine.get_server_info": f"{WHOLE}, version",
        "server_info: app.readback.server_info": f"{WHOLE}, version",
    }
    assert _check(project) == (0, [])

    # both siblings add a key together: no disagreement, but the pins changed
    both = SURFACES.replace('"version": "1"', '"version": "1", "commit": COMMIT')
    both = both.replace("\n\n\ndef server_info", '\n\nCOMMIT = "abc"\n\n\ndef server_info')
    (project / "app/readback.py").write_text(both)
    rc, found = _check(project)
    assert rc == 1 and len(found) == 2
    assert all("changed: pinned" in f["message"] for f in found)
    cli("baseline", "update", "--no-cache", cwd=project)
    assert _check(project) == (0, [])

    # one sibling drops it: the pin change, and the disagreement
    one = both.replace('"version": "1", "commit": COMMIT}\n\n\nclass', '"version": "1"}\n\n\nclass')
    (project / "app/readback.py").write_text(one)
    rc, found = _check(project)
    assert rc == 1
    assert sorted((f["line"], "pinned" in f["message"]) for f in found) == [(6, False), (6, True)]

    # a constant only one sibling reports is its own description: the pin change
    # alone says the other dropped it
    (project / "app/readback.py").write_text(one.replace("COMMIT}", '"abc"}'))
    rc, found = _check(project)
    assert rc == 1
    assert [(f["line"], "pinned" in f["message"]) for f in found] == [(6, True)]

    # a surface that disappears was pinned and is gone
    (project / "app/readback.py").write_text(SURFACES.split("\n\nclass Engine")[0] + "\n")
    cli("baseline", "update", "--no-cache", cwd=project)
    (project / "app/readback.py").write_text(SURFACES)
    rc, found = _check(project)
    assert rc == 1
    (f,) = found
    assert "server_info: app.readback.Engine.get_server_info is not pinned" in f["message"]


def test_dunder_and_private_lookups_are_no_leaf_reads(project: Path) -> None:
    """SGLang's runtime module has `__getattr__(self, name)` and `_read(self, name)`
    on its bags: taken as name-driven reads, every `__getattr__`/`__call__` in the
    tree became a primitive and unrelated dict builders became surfaces."""
    ctx = project / "specrt/context.py"
    ctx.write_text(
        ctx.read_text().replace(
            "    def config_leaf(self, name: str) -> object:",
            "    def __getattr__(self, name: str) -> object:\n"
            "        return self.__dict__.get(name)\n\n"
            "    def _read(self, name: str) -> object:\n"
            "        return self.__dict__.get(name)\n\n"
            "    def config_leaf(self, name: str) -> object:",
        )
    )
    write(
        project,
        {
            "app/wrap.py": """\
class Wrapper:
    def __getattr__(self, name):
        return getattr(self.inner, name)

    def __call__(self, x):
        return self.inner(x)


def process(w: Wrapper) -> dict:
    return {"input_ids": w(1), "pixel_values": w.read()}
"""
        },
    )
    sets = run_engine(project, select={RULE}).program.sets[RULE]
    assert sets["name-driven leaf reads"] == ["config_leaf"]
    assert sets["readback primitives"] == ["config_leaf", "resolved_dict"]
    assert sets["groups"] == {}


def test_a_field_read_out_of_a_readback_is_no_surface(project: Path) -> None:
    """sglang's offline benchmark: `server_info = backend.get_server_info()`, then
    `results["last_gen_throughput"] = server_info["internal_states"][0][...]`."""
    write(
        project,
        {
            "app/bench.py": """\
from specrt.context import get_server_args


def get_server_info() -> dict:
    return {**get_server_args().resolved_dict(), "version": "1"}


def throughput_once(backend) -> dict:
    results = {"backend": "x"}
    info = get_server_info()
    results["last_gen_throughput"] = info["internal_states"][0]
    return results
"""
        },
    )
    sets = run_engine(project, select={RULE}).program.sets[RULE]
    assert sets["groups"] == {"server_info": {"app.bench.get_server_info": [WHOLE, "version"]}}


def test_a_key_one_sibling_reports_about_its_own_transport_is_no_field(project: Path) -> None:
    """sglang 0.5.23: HTTP `/server_info` adds `"frontend": "python"`, gRPC adds
    `"grpc_features": _media_input_features(mm_processor)`; the engine lacks
    both, and `kv_events`, which is a field (the record is handed to its helper)."""
    write(
        project,
        {
            "app/common.py": """\
from specrt.context import get_server_args


def describe_events(server_args) -> dict:
    return {"port": 1}


def build_server_info(server_args) -> dict:
    result = server_args.resolved_dict()
    result["kv_events"] = describe_events(server_args)
    return result


def shared_features(processor) -> list:
    return []
""",
            "app/http_server.py": """\
from app.common import build_server_info
from specrt.context import get_server_args


def server_info() -> dict:
    return {**build_server_info(get_server_args()), "frontend": "python"}
""",
            "app/grpc_bridge.py": """\
import json

from app.common import build_server_info, shared_features
from specrt.context import get_exec, get_server_args


def _media_features(processor) -> list:
    return [f for f in ("image", "video") if getattr(processor, f, None)]


def _backend_note() -> str:
    return str(get_exec().attention_backend)


def _budget() -> int:
    seed = get_server_args()
    return seed.max_running_requests * seed.context_length


class Handle:
    def get_server_info(self) -> str:
        return json.dumps(
            {
                **build_server_info(get_server_args()),
                "grpc_features": _media_features(self.processor),
                "backend_note": _backend_note(),
                "budget": _budget(),
                "shared": shared_features(self.processor),
                "limit": 8,
            }
        )
""",
            "app/engine.py": """\
from specrt.context import get_server_args


class Engine:
    def get_server_info(self) -> dict:
        return {**get_server_args().resolved_dict(), "limit": 8}
""",
        },
    )
    out = run_engine(project, select={RULE})
    (finding,) = [f for f in out.findings if f.path == "app/engine.py"]
    # a helper reading a bag or the seed record, a helper of another module: fields;
    # the constant `limit` two siblings report is the group's
    # (two keys in the message, every key with its siblings in the details)
    assert "does not report `backend_note`, `budget` and 2 more, which" in (finding.message)
    assert "  - shared: reported by Handle.get_server_info" in finding.details
    assert "frontend" not in finding.message and "grpc_features" not in finding.message
    (http,) = [f for f in out.findings if f.path == "app/http_server.py"]
    assert "does not report `backend_note`, `budget` and 2 more, which" in http.message
    assert "grpc_features" not in http.message
    assert not [f for f in out.findings if f.path == "app/grpc_bridge.py"]  # `frontend` is HTTP's
