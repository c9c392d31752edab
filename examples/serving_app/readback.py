"""The readback (``/server_info``) and its three sibling surfaces.

It is answered three ways, as SGLang's is: an HTTP-style route (``server_info``,
served from ``ROUTES`` by ``handle_http``), an RPC servicer method
(``ReadbackServicer.GetServerInfo``) and an in-process engine method
(``Engine.get_server_info``). Each builds its own answer from the readback
primitives: the record's whole-object readback (``resolved_dict()``), the
overrides log, and the value in force of each overridden leaf (``effective_value``
over ``config_leaf``). So each can drift alone and still pass its own tests;
ctxlint's CTX502 derives the three as one group, pins the keys each reports, and
fails when one sibling adds or drops a key the others do not."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

from ctxrt.context import get_context, get_server_args
from examples.serving_app.control_plane import effective_value
from examples.serving_app.messages import ServerInfoRequest

Route = Callable[[], dict[str, Any]]
ROUTES: dict[str, Route] = {}


def route(path: str) -> Callable[[Route], Route]:
    def register(fn: Route) -> Route:
        ROUTES[path] = fn
        return fn

    return register


def _overrides() -> list[dict[str, Any]]:
    return [dataclasses.asdict(entry) for entry in get_context().overrides_log()]


@route("/server_info")
def server_info() -> dict[str, Any]:
    """What resolution decided, what changed since in this process, and the value of
    every changed leaf as it is in force here (``role`` says where)."""
    overrides = _overrides()
    return {
        "role": get_context().role,
        "resolved_config": get_server_args().resolved_dict(),
        "overrides": overrides,
        "effective_overridden": {e["field"]: effective_value(e["field"]) for e in overrides},
    }


def handle_http(path: str) -> tuple[int, bytes]:
    """A GET of ``path``: (status, JSON body)."""
    handler = ROUTES.get(path)
    if handler is None:
        return 404, json.dumps({"error": f"no route {path}"}).encode()
    return 200, json.dumps(handler(), sort_keys=True, default=str).encode()


class ReadbackServicer:
    """The RPC service: one method per RPC, taking the request (gRPC's shape)."""

    def GetServerInfo(self, request: ServerInfoRequest) -> dict[str, Any]:
        overrides = _overrides()
        return {
            "role": get_context().role,
            "resolved_config": get_server_args().resolved_dict(),
            "overrides": overrides,
            "effective_overridden": {e["field"]: effective_value(e["field"]) for e in overrides},
        }


class Engine:
    """The in-process engine's readback (a library user's ``engine.get_server_info()``)."""

    def get_server_info(self) -> dict[str, Any]:
        overrides = _overrides()
        return {
            "role": get_context().role,
            "resolved_config": get_server_args().resolved_dict(),
            "overrides": overrides,
            "effective_overridden": {e["field"]: effective_value(e["field"]) for e in overrides},
        }


SURFACES = ("http", "rpc", "engine")


def answer(request: ServerInfoRequest) -> dict[str, Any]:
    """The readback through the surface the request names."""
    if request.surface == "http":
        status, body = handle_http("/server_info")
        if status != 200:
            raise RuntimeError(f"/server_info answered {status}")
        return json.loads(body)
    if request.surface == "rpc":
        return ReadbackServicer().GetServerInfo(request)
    if request.surface == "engine":
        return Engine().get_server_info()
    raise ValueError(f"no readback surface {request.surface!r} (one of {', '.join(SURFACES)})")
