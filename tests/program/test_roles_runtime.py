"""The linter and the runtime checking each other on the role namespaces.

- examples/serving_app runs in real spawned processes (real torch) under ctxrt's
  `CTXRT_ROLE_NAMESPACES=record`; `ctxlint roles --compare` on that output finds
  every observed (role, namespace) pair in the static reach: no soundness gap.
- In a copy of the app, a helper the detokenizer calls reads the `model`
  namespace: CTX302 reports that read statically, and the same app under
  `CTXRT_ROLE_NAMESPACES=enforce` aborts the detokenizer on that very line.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
from pathlib import Path

import httpx
import pytest
from helpers import cli

from ctxrt.roles import MODE_ENV, OUT_ENV
from examples.serving_app.client import Server, stream_generate

REPO = Path(__file__).resolve().parents[2]
CONFIG = """\
[tool.ctxlint]
src = ["src", "."]
runtime-module = "ctxrt.context"
record-class = "ctxrt.record.ServerArgs"
"""
HELPER = """\
from ctxrt.context import get_model


def clip(text: str) -> str:
    return text[: get_model().context_length]
"""


@pytest.fixture
def app(tmp_path: Path) -> Path:
    """The runtime and the serving app copied, with a config checking them."""
    root = tmp_path / "repo"
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(REPO / "src" / "ctxrt", root / "src" / "ctxrt", ignore=skip)
    shutil.copytree(
        REPO / "examples" / "serving_app", root / "examples" / "serving_app", ignore=skip
    )
    shutil.copy2(REPO / "examples" / "__init__.py", root / "examples" / "__init__.py")
    (root / "pyproject.toml").write_text(CONFIG)
    return root


def serve(root: Path, mode: str, out: Path) -> subprocess.CompletedProcess[str]:
    """The app's HTTP server, two streamed requests, then SIGTERM (if it is still up:
    a server process that dies takes the server down by itself)."""
    server = Server([], root, env={MODE_ENV: mode, OUT_ENV: str(out)}, root=root)
    try:
        server.wait_ready()
        asyncio.run(_two_streams(server.url, dying=mode == "enforce"))
    finally:
        code = server.terminate(timeout_s=30)
    return subprocess.CompletedProcess(server.proc.args, code, server.stdout(), server.stderr())


async def _two_streams(url: str, *, dying: bool) -> None:
    """Two concurrent streams; each must end well unless the server is `dying`.

    Under enforce the first request that reaches the detokenizer kills it, and the
    watchdog takes the server down: a stream open by then gets its `abort` chunk,
    but on a busy machine the other request may not have its response started yet
    (its connection is cut: httpx.ReadError), or not even sent (ConnectError, or
    the manager's refusal of a new request: an error status). Which one happens
    is the race; what the test asserts is the server's exit and its stderr."""
    async with httpx.AsyncClient(timeout=60.0) as client:
        results = await asyncio.gather(
            *(stream_generate(client, url, "Hi", 8) for _ in range(2)), return_exceptions=True
        )
    for result in results:
        if isinstance(result, BaseException):
            if dying and isinstance(result, (httpx.TransportError, httpx.HTTPStatusError)):
                continue
            raise result


def test_every_pair_the_runtime_records_is_in_the_static_reach(app: Path) -> None:
    audit = app / "roles.tsv"
    proc = serve(app, "record", audit)
    assert proc.returncode == 0, proc.stderr
    observed = {tuple(line.split("\t")) for line in audit.read_text().splitlines()}
    assert {r for r, _ in observed} == {"tokenizer", "scheduler", "detokenizer"}

    result = cli("roles", "--compare", str(audit), "--format", "json", "--jobs", "1", cwd=app)
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["soundness gaps"] == []
    roles = report["roles"]
    for role, ns in observed:
        assert ns in roles[role]["reached"], (role, ns)
        assert ns in roles[role]["observed"]
    assert roles["detokenizer"]["agreement"] == "agree: both inside the set"
    assert roles["dp_controller"]["agreement"] == "not observed at runtime"
    # the text form says the same
    text = cli("roles", "--compare", str(audit), "--jobs", "1", cwd=app)
    assert text.returncode == 0 and "no soundness gap;" in text.stdout

    # a pair the static reach lacks (the runtime read it through a path the graph
    # does not follow) is a soundness gap: exit 1, named
    with audit.open("a") as f:
        f.write("detokenizer\tlora\n")
    gap = cli("roles", "--compare", str(audit), "--format", "json", "--jobs", "1", cwd=app)
    assert gap.returncode == 1
    assert json.loads(gap.stdout)["soundness gaps"] == ["detokenizer\tlora"]


def test_a_helper_read_outside_the_role_fails_statically_and_under_enforce(app: Path) -> None:
    helper = app / "examples" / "serving_app" / "postprocess.py"
    helper.write_text(HELPER)
    detok = app / "examples" / "serving_app" / "detokenizer.py"
    text = detok.read_text()
    for old, new in (
        (
            "from examples.serving_app import byte_tokenizer\n",
            "from examples.serving_app import byte_tokenizer\n"
            "from examples.serving_app.postprocess import clip\n",
        ),
        (
            "texts.append(byte_tokenizer.decode(ids))",
            "texts.append(clip(byte_tokenizer.decode(ids)))",
        ),
    ):
        assert text.count(old) == 1
        text = text.replace(old, new)
    detok.write_text(text)
    read_line = HELPER.splitlines().index("    return text[: get_model().context_length]") + 1

    # statically: CTX302 at the helper's read, with the path from the entry
    result = cli("check", "--select", "CTX302", "--format", "json", "--jobs", "1", cwd=app)
    assert result.returncode == 1, result.stdout + result.stderr
    [finding] = json.loads(result.stdout)["findings"]
    assert (finding["path"], finding["line"]) == ("examples/serving_app/postprocess.py", read_line)
    assert finding["message"] == (
        "role 'detokenizer' reads namespace 'model' outside its set {observability, serving} "
        "(from run_detokenizer_process)"
    )
    path = "run_detokenizer_process -> detokenize -> clip -> get_model()"
    assert finding["details"].splitlines()[0] == path

    # at runtime: default mode serves; enforce mode aborts the detokenizer on that read
    assert serve(app, "", app / "unused.tsv").returncode == 0
    proc = serve(app, "enforce", app / "unused.tsv")
    assert proc.returncode != 0
    assert "[launcher] error: server process exited early: ['detokenizer']" in proc.stderr
    assert (
        "RoleNamespaceError: role 'detokenizer' read namespace 'model', outside its "
        "ROLE_NAMESPACE_SETS entry ['observability', 'serving']"
    ) in proc.stderr
    frames = re.findall(r'File "([^"]+)", line (\d+), in (\w+)', proc.stderr)
    assert (str(helper), str(read_line), "clip") in frames
