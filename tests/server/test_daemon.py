"""`ctxlint server --daemon`: start, status and stop; `ctxlint check` answered
by the daemon equals the batch run (`--no-cache`, no daemon) on the same tree,
before and after edits on disk; a socket left by a killed daemon is stale and
replaced; a socket others may open is not used; nothing is left running."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import CliResult, cli
from lspclient import APP, copy_legacy_app

from ctxlint.server import client, daemon

SEED_READ = '"served_model_name": get_server_args().served_model_name,'
NEW_READ = "\n\ndef tp_now() -> int:\n    return get_server_args().tp_size\n"


def command(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real command line from `root` (the daemon forks: never from pytest itself)."""
    return subprocess.run(
        [sys.executable, "-m", "ctxlint.cli", *args],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def session_members(sid: int) -> list[int]:
    """The live processes of session `sid` (the daemon's, and any worker it left)."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[3]) == sid:  # state, ..., session
            out.append(int(entry.name))
    return out


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = copy_legacy_app(tmp_path_factory.mktemp("daemon") / "repo")
    assert command(root, "check", APP).returncode in (0, 1)  # a warm fact cache
    return root


@pytest.fixture
def tree(pristine: Path, tmp_path: Path) -> Iterator[Path]:
    """A private copy of the tree; whatever daemon a test left is stopped."""
    import shutil

    root = tmp_path / "repo"
    shutil.copytree(pristine, root, ignore=shutil.ignore_patterns("server.*"))
    yield root
    pid = daemon_pid(root)
    if pid is not None:
        os.kill(pid, signal.SIGKILL)


def daemon_pid(root: Path) -> int | None:
    lock = root / ".ctxlint_cache" / client.LOCK
    try:
        pid = int(lock.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return pid if session_members(pid) else None


def start(root: Path) -> int:
    started = command(root, "server", "--daemon", "start", APP)
    assert started.returncode == 0, started.stderr
    assert started.stdout.startswith(f"ctxlint server: started for {root} (pid ")
    pid = daemon_pid(root)
    assert pid is not None
    return pid


def served(root: Path) -> int:
    """How many checks the daemon has answered."""
    answer = client.ask(root / ".ctxlint_cache", {"op": "status"}, timeout=10)
    assert answer is not None
    return int(answer["checks"])


def check(root: Path, *args: str, batch: bool = False, cold: bool = False) -> CliResult:
    """`ctxlint check ... APP` in-process: through the daemon if one runs, or
    (`batch`) the batch run with no daemon (`cold`: and no cache)."""
    extra = ("--no-cache",) if cold else ()
    old = os.environ.get("CTXLINT_NO_SERVER")
    if batch or cold:
        os.environ["CTXLINT_NO_SERVER"] = "1"
    try:
        return cli("check", *extra, *args, APP, cwd=root)
    finally:
        if old is None:
            os.environ.pop("CTXLINT_NO_SERVER", None)


def same_answer(root: Path) -> None:
    """The daemon answers as the batch run does (stdout, exit code): the JSON
    report (every finding, stale entry and error) as a run with no cache, the
    text report as the plain batch run."""
    for args, cold in ((("--format", "json"), True), (("--strict",), False)):
        before = served(root)
        warm = check(root, *args)
        assert served(root) == before + 1  # the daemon answered it
        batch = check(root, *args, batch=True, cold=cold)
        assert (warm.returncode, warm.stdout) == (batch.returncode, batch.stdout), args


def test_start_status_stop_and_nothing_left_running(tree: Path) -> None:
    assert command(tree, "server", "--daemon", "status", APP).returncode == 1
    pid = start(tree)
    socket = tree / ".ctxlint_cache" / client.SOCKET
    assert socket.stat().st_mode & 0o777 == 0o600
    status = command(tree, "server", "--daemon", "status", APP)
    assert status.returncode == 0
    assert f"running for {tree} (pid {pid}," in status.stdout
    again = command(tree, "server", "--daemon", "start", APP)
    assert again.returncode == 0 and "already running" in again.stdout
    assert check(tree, "--jobs", "2").returncode == 0  # a check with a pool of workers
    stopped = command(tree, "server", "--daemon", "stop", APP)
    assert stopped.returncode == 0 and f"stopped for {tree} (pid {pid})" in stopped.stdout
    assert session_members(pid) == []  # the daemon and every worker of its checks
    assert not socket.exists()
    assert command(tree, "server", "--daemon", "status", APP).returncode == 1


def test_check_through_the_daemon_equals_the_batch_run_before_and_after_edits(
    tree: Path,
) -> None:
    start(tree)
    same_answer(tree)
    readback = tree / APP / "readback.py"
    text = readback.read_text()
    readback.write_text(text.replace(SEED_READ, '"served_model_name": "fixed",'))
    same_answer(tree)  # a baselined finding fixed: stale under --strict
    assert check(tree, "--strict").returncode == 1
    readback.write_text(text + NEW_READ)
    same_answer(tree)  # a new finding
    report = json.loads(check(tree, "--format", "json").stdout)
    assert [f["rule"] for f in report["findings"] if f["status"] == "new"] == ["CTX101"]
    readback.write_text(text)
    same_answer(tree)  # back as it was
    (tree / APP / "extra.py").write_text("from ctxrt.context import get_server_args\n" + NEW_READ)
    same_answer(tree)  # a file added


def test_a_socket_left_by_a_killed_daemon_is_replaced(tree: Path) -> None:
    pid = start(tree)
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while session_members(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert session_members(pid) == []
    assert (tree / ".ctxlint_cache" / client.SOCKET).exists()  # stale
    status = command(tree, "server", "--daemon", "status", APP)
    assert status.returncode == 1 and "stale socket" in status.stdout
    asked, batch = check(tree), check(tree, batch=True)  # no daemon: the batch run
    assert (asked.returncode, asked.stdout) == (batch.returncode, batch.stdout)
    new = start(tree)
    assert new != pid
    assert served(tree) == 0
    assert check(tree).stdout == asked.stdout
    assert served(tree) == 1


def test_a_socket_others_may_open_is_not_used(tree: Path) -> None:
    start(tree)
    socket = tree / ".ctxlint_cache" / client.SOCKET
    socket.chmod(0o666)
    before = check(tree, "--strict", batch=True)
    after = check(tree, "--strict")
    assert (after.returncode, after.stdout) == (before.returncode, before.stdout)
    assert "not using the server socket" in after.stderr and "mode 0666" in after.stderr
    socket.chmod(0o600)
    assert served(tree) == 0  # it was never asked


def test_a_socket_of_another_user_is_refused(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    start(tree)
    cache = tree / ".ctxlint_cache"
    uid = os.getuid()
    monkeypatch.setattr(os, "getuid", lambda: uid + 1)  # as another user sees it
    with pytest.raises(client.NotOurs, match=f"belongs to user id {uid}"):
        client.ask(cache, {"op": "status"})


def test_a_socket_path_too_long_for_an_address_is_reached_through_its_folder(
    tmp_path: Path,
) -> None:
    cache = tmp_path / ("x" * 60) / ("y" * 60)
    cache.mkdir(parents=True)
    path = client.socket_path(cache)
    assert len(str(path)) > 108  # more than sun_path holds
    server = daemon.listening(path)
    assert path.stat().st_mode & 0o777 == 0o600

    def echo() -> None:
        conn, _ = server.accept()
        with conn:
            client.send(conn, {"echo": client.receive(conn)})

    answering = threading.Thread(target=echo)
    answering.start()
    try:
        assert client.ask(cache, {"op": "status"}, timeout=10) == {"echo": {"op": "status"}}
    finally:
        answering.join(timeout=10)
        server.close()


def test_a_request_the_daemon_cannot_answer_leaves_it_to_the_batch_run(tree: Path) -> None:
    """Another ctxlint's request, or one that makes the daemon fail: the answer
    says to run the check without it, and the daemon goes on serving."""
    from ctxlint.engine.keys import CODE_VERSION

    start(tree)
    cache = tree / ".ctxlint_cache"
    other = client.ask(cache, {"op": "check", "code": "another version"}, timeout=30)
    assert other is not None and "another version" in other["fallback"]
    broken = {"op": "check", "code": CODE_VERSION, "args": {"no": "paths"}, "cwd": str(tree)}
    failed = client.ask(cache, broken, timeout=30)
    assert failed is not None and "failed" in failed["fallback"]
    assert served(tree) == 0
    assert check(tree).returncode == 0  # still serving
    assert served(tree) == 1


def test_the_pre_commit_hooks_check_through_the_daemon_equals_the_batch_run(tree: Path) -> None:
    """`ctxlint check --strict --staged` (the hook's entry) in a git repository:
    an untracked file with a new finding takes part but is not reported."""
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(tree)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    start(tree)
    (tree / APP / "extra.py").write_text("from ctxrt.context import get_server_args\n" + NEW_READ)
    for staged in (False, True):
        if staged:
            subprocess.run([*git, "add", f"{APP}/extra.py"], check=True)
        asked = check(tree, "--strict", "--staged")
        batch = check(tree, "--strict", "--staged", batch=True)
        assert (asked.returncode, asked.stdout) == (batch.returncode, batch.stdout)
        assert asked.returncode == (1 if staged else 0)
    assert served(tree) == 2


# `ctxlint check` as the installed command starts it (cli.entry), with what it imported
_QUICK = """
import sys
from ctxlint.cli.entry import _quick
code = _quick(sys.argv[1:])
sys.stdout.write("\\n@@ %s %s %s\\n" % (
    code, "ctxlint.cli.main" in sys.modules, "ctxlint.session" in sys.modules
))
"""


def _command(root: Path, code: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "COLUMNS": "300", **env},  # (see below)
    )


_FULL = "import sys; from ctxlint.cli.main import main; sys.exit(main(sys.argv[1:]))"


def test_the_quick_client_asks_the_daemon_without_importing_the_linter(tree: Path) -> None:
    """The command's quick client (cli.quick_check) sends the daemon the command
    line itself: the answer is the full client's (exit code, output, and what
    the resolve says on stderr: a shadowed config here) and the batch run's,
    and the client imported neither the command line nor the session."""
    app = tree / APP
    (app / "pyproject.toml").write_text((app / "ctxlint.toml").read_text())  # shadowed by it
    start(tree)
    readback = tree / APP / "readback.py"
    for edit in ("", NEW_READ):
        readback.write_text(readback.read_text() + edit)
        for args in (("--format", "json"), ("--strict",)):
            before = served(tree)
            quick = _command(tree, _QUICK, "check", *args, APP)
            out, _, said = quick.stdout.rpartition("\n@@ ")
            code, main, session = said.split()
            assert (main, session) == ("False", "False"), quick.stderr
            assert served(tree) == before + 1  # the daemon answered it
            full = _command(tree, _FULL, "check", *args, APP)
            assert served(tree) == before + 2
            assert (int(code), out, quick.stderr) == (full.returncode, full.stdout, full.stderr)
            assert "warning: using" in quick.stderr
            batch = _command(tree, _FULL, "check", *args, APP, CTXLINT_NO_SERVER="1")
            assert (int(code), out, quick.stderr) == (batch.returncode, batch.stdout, batch.stderr)
    before = served(tree)
    # python -m ctxlint.cli: the same entry (the report's width given: a daemon
    # started from pytest drew some text reports 80 wide with no COLUMNS, through
    # either client; docs/server.md, h37e)
    real = _command(
        tree,
        "import runpy; runpy.run_module('ctxlint.cli', run_name='__main__')",
        "check",
        "--strict",
        APP,
    )
    assert (real.returncode, real.stdout, real.stderr) == (
        full.returncode,
        full.stdout,
        full.stderr,
    )
    assert served(tree) == before + 1
