"""Faults: a rule that raises is logged and left out while the others' findings
are served; a config or baseline change is read again; the server exits when
stdin closes, leaving no worker behind."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from lspclient import APP, BASELINE, Serve, Session, batch_keys, uri
from lsprotocol import types

# The server, with CTX203's check made to raise (as a bug in a rule would)
RAISING = [
    sys.executable,
    "-c",
    "import sys\n"
    "from ctxlint.engine.registry import load_rules\n"
    "(rule,) = [r for r in load_rules() if r.id == 'CTX203']\n"
    "def check(self, program):\n"
    "    raise RuntimeError('a bug in the rule')\n"
    "type(rule).check = check\n"
    "from ctxlint.cli.main import run\n"
    "sys.argv = ['ctxlint', 'server', '--no-cache']  # a stored outcome runs no rule\n"
    "run()\n",
]


@pytest.mark.asyncio
async def test_a_rule_that_raises_is_logged_and_the_others_are_served(serve: Serve) -> None:
    session = await serve(command=RAISING)
    logged = [m for m in session.client.log_messages if "CTX203" in m.message]
    assert len(logged) == 1
    assert logged[0].type == types.MessageType.Error
    assert "a bug in the rule" in logged[0].message
    shown = session.all()
    rules = {k[0] for keys in shown.values() for k in keys}
    assert "CTX203" not in rules
    assert {"CTX101", "CTX301", "CTX601"} <= rules  # the other rules' findings


@pytest.mark.asyncio
async def test_a_baseline_change_is_read_again_and_republished(
    root: Path,
    session: Session,
) -> None:
    assert [r.method for r in session.registered] == ["workspace/didChangeWatchedFiles"]
    pinned = session.all()
    assert pinned and all(k[2] == "baselined" for v in pinned.values() for k in v)
    data = json.loads((root / BASELINE).read_text())
    data["entries"] = []  # every finding new
    (root / BASELINE).write_text(json.dumps(data))
    session.watched((BASELINE, types.FileChangeType.Changed))
    await session.settle()
    now = session.all()
    assert set(now) == set(pinned)
    assert all(k[2] == "new" for v in now.values() for k in v)


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def _message(body: dict[str, object]) -> bytes:
    data = json.dumps(body).encode()
    return b"Content-Length: %d\r\n\r\n" % len(data) + data


def test_the_server_exits_when_stdin_closes_leaving_no_worker(root: Path) -> None:
    server = subprocess.Popen(
        [sys.executable, "-m", "ctxlint.cli", "server", "--no-cache", "--jobs", "2"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    assert server.stdin is not None
    folder = {"uri": uri(root / APP), "name": "app"}
    init = {"processId": None, "capabilities": {}, "workspaceFolders": [folder]}
    server.stdin.write(
        _message({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
    )
    server.stdin.write(_message({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
    server.stdin.flush()
    # a cold check (no cache) parses on the pool: close stdin while it runs
    seen: set[int] = set()
    until = time.monotonic() + 20
    while time.monotonic() < until and not seen:
        seen.update(_children(server.pid))
        time.sleep(0.01)
    server.stdin.close()  # the client vanished
    assert server.wait(timeout=60) == 0
    for pid in seen:  # every worker it started is gone
        assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text()
    assert seen, "the check started no worker: the test proves nothing"


def test_the_server_equals_batch_keys_helper_is_exact() -> None:
    report = {"findings": [{"path": "a.py", "rule": "CTX101", "line": 3, "status": "new"}]}
    assert batch_keys(report) == {"a.py": [("CTX101", 3, "new")]}


def test_a_config_given_that_cannot_be_used_is_a_usage_error(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ctxlint.cli", "server", "--config", str(tmp_path / "none.toml")],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("ctxlint: error: config file ")
    assert len(done.stderr.strip().splitlines()) == 1
    assert done.stdout == ""


@pytest.mark.asyncio
async def test_a_workspace_with_no_project_says_so_on_screen(root: Path) -> None:
    """An editor started at a monorepo's root, the config in a subfolder (hwalk):
    the reason nothing is served went to the log alone, which Neovim keeps in a
    file, so the editor showed nothing and said nothing. It is shown as well,
    naming the folder below that has a config."""
    from lspclient import SERVER, uri
    from pytest_lsp import ClientServerConfig, LanguageClient

    client = await ClientServerConfig(server_command=SERVER).start()
    assert isinstance(client, LanguageClient)
    try:
        await client.initialize_session(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                workspace_folders=[types.WorkspaceFolder(uri=uri(root), name="repo")],
            )
        )
        until = time.monotonic() + 60
        while not client.messages and time.monotonic() < until:
            await asyncio.sleep(0.05)
        (shown,) = client.messages
        assert shown.type == types.MessageType.Error
        assert shown.message.startswith("ctxlint: no project: no ctxlint configuration found")
        assert f"{APP}/ctxlint.toml has one" in shown.message, shown.message
        assert f"`args: [{APP}]`" in shown.message
        assert any(m.message == shown.message for m in client.log_messages)
    finally:
        await client.shutdown_session()
        await client.stop()
