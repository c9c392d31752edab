"""program.readback_surfaces (CTX502's model question): the readback a surface
serves, told from its name."""

from __future__ import annotations

from ctxlint.program.readback_surfaces import group_name


def test_group_names() -> None:
    assert {group_name(n) for n in ("server_info", "get_server_info", "GetServerInfo")} == {
        "server_info"
    }
    assert group_name("get_model_info") == group_name("GetModelInfo") == "model_info"
    assert group_name("build_server_info") == "build_server_info"
