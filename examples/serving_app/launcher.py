"""The launcher: build and resolve the record, publish it as ``tokenizer``, spawn the
three server processes, serve a few requests end to end, report, shut down."""

from __future__ import annotations

import argparse
import json
import logging
import multiprocessing as mp
import queue
import socket
import sys
import time
from collections.abc import Sequence
from multiprocessing.process import BaseProcess
from typing import Any

from ctxrt.context import get_model, get_serving, get_spec, publish
from ctxrt.record import ServerArgs
from ctxrt.resolution import declare_resolution
from examples.serving_app import model_overrides  # noqa: F401 - registers the TinyLM override
from examples.serving_app.detokenizer import run_detokenizer_process
from examples.serving_app.logs import configure_logging
from examples.serving_app.messages import (
    ConfigUpdateRequest,
    GenerateRequest,
    Response,
    ServerInfo,
    ServerInfoRequest,
    Shutdown,
)
from examples.serving_app.model import ATTENTION_BACKENDS
from examples.serving_app.readback import SURFACES
from examples.serving_app.scheduler import run_scheduler_process
from examples.serving_app.speculative import SPEC_ALGORITHMS
from examples.serving_app.tokenizer_manager import run_tokenizer_process

PROMPTS = ("Hello, world", "The runtime context", "Bags are sealed", "Publish first")
REPLY_TIMEOUT_S = 60.0


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m examples.serving_app", description=__doc__)
    p.add_argument("--model-path", default="tiny-lm")
    p.add_argument("--speculative-algorithm", default="standalone", help="'none' disables")
    p.add_argument("--speculative-draft-model-path", default="tiny-lm-draft")
    p.add_argument("--speculative-attention-backend", default="sdpa", help="the draft's kernel")
    p.add_argument("--attention-backend", default=None, help=f"one of {ATTENTION_BACKENDS}")
    p.add_argument(
        "--no-torch-compile",
        dest="torch_compile",
        action="store_false",
        help="run the model forward eagerly (default: torch.compile(fullgraph=True))",
    )
    p.add_argument("--num-requests", type=int, default=len(PROMPTS))
    p.add_argument("--max-new-tokens", type=int, default=12)
    p.add_argument("--log-level", default="warning")
    return p.parse_args(argv)


def check_args(args: argparse.Namespace) -> None:
    """Reject a bad flag here, in one line, before any process is spawned (a bad
    value would otherwise surface as a traceback in a child)."""
    backends = {
        "--attention-backend": args.attention_backend,
        "--speculative-attention-backend": args.speculative_attention_backend,
    }
    for flag, value in backends.items():
        if value is not None and value not in ATTENTION_BACKENDS:
            raise ValueError(f"{flag} {value!r} is not one of {', '.join(ATTENTION_BACKENDS)}")
    algorithms = ("none", *sorted(SPEC_ALGORITHMS))
    if args.speculative_algorithm not in algorithms:
        raise ValueError(
            f"--speculative-algorithm {args.speculative_algorithm!r} is not one of "
            f"{', '.join(algorithms)}"
        )
    if args.log_level.upper() not in logging.getLevelNamesMapping():
        raise ValueError(f"--log-level {args.log_level!r} is not a logging level")


def build_server_args(args: argparse.Namespace) -> ServerArgs:
    spec = None if args.speculative_algorithm == "none" else args.speculative_algorithm
    server_args = ServerArgs(
        model_path=args.model_path,
        attention_backend=args.attention_backend,
        enable_torch_compile=args.torch_compile,
        speculative_algorithm=spec,
        speculative_draft_model_path=args.speculative_draft_model_path if spec else None,
        speculative_attention_backend=args.speculative_attention_backend if spec else None,
        log_level=args.log_level,
    )
    # Late launcher-stage resolution: declared on the record every child is handed.
    declare_resolution(server_args, "launcher", nccl_port=_free_port())
    return server_args


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _await(replies: Any, procs: list[BaseProcess], kind: type) -> Any:
    """The next reply of ``kind``; fails fast if a server process died."""
    deadline = time.monotonic() + REPLY_TIMEOUT_S
    while time.monotonic() < deadline:
        try:
            msg = replies.get(timeout=0.5)
        except queue.Empty:
            dead = [p.name for p in procs if not p.is_alive()]
            if dead:
                raise RuntimeError(f"server process exited early: {dead}") from None
            continue
        if isinstance(msg, kind):
            return msg
        raise RuntimeError(f"expected {kind.__name__}, got {msg!r}")
    raise TimeoutError(f"no {kind.__name__} within {REPLY_TIMEOUT_S}s")


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        check_args(args)
        server_args = build_server_args(args)  # an unknown model path raises here
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    publish(server_args, role="tokenizer")  # the launch path publishes as tokenizer
    configure_logging("launcher")
    spec = get_spec()
    print(
        f"[launcher] serving {get_model().served_model_name} on "
        f"{get_serving().host}:{get_serving().port} "
        f"(speculative: {spec.speculative_algorithm}, "
        f"{spec.speculative_num_draft_tokens} draft tokens)",
        flush=True,
    )

    spawn = mp.get_context("spawn")
    requests, tokenized, outputs, replies = (spawn.Queue() for _ in range(4))
    procs: list[BaseProcess] = [
        spawn.Process(
            target=run_tokenizer_process,
            args=(server_args, requests, tokenized, replies),
            name="tokenizer",
        ),
        spawn.Process(
            target=run_scheduler_process, args=(server_args, tokenized, outputs), name="scheduler"
        ),
        spawn.Process(
            target=run_detokenizer_process, args=(server_args, outputs, replies), name="detokenizer"
        ),
    ]
    for proc in procs:
        proc.start()
    try:
        started = time.monotonic()
        for rid in range(args.num_requests):
            requests.put(GenerateRequest(rid, PROMPTS[rid % len(PROMPTS)], args.max_new_tokens))
        responses = sorted(
            (_await(replies, procs, Response) for _ in range(args.num_requests)),
            key=lambda r: r.rid,
        )
        elapsed = time.monotonic() - started
        for r in responses:
            prompt = PROMPTS[r.rid % len(PROMPTS)]
            print(
                f"[response {r.rid}] {prompt!r} -> {r.text!r} ({r.num_tokens} tokens, "
                f"draft accepted {r.accepted_draft_tokens}/{r.proposed_draft_tokens})"
            )
        print(f"[launcher] {len(responses)} requests served in {elapsed:.2f}s")
        requests.put(ConfigUpdateRequest("operator:log_level", {"log_level": "debug"}))
        answers = {}
        for surface in SURFACES:  # the readback's three siblings must agree
            requests.put(ServerInfoRequest(surface))
            answers[surface] = _await(replies, procs, ServerInfo).info
        info = answers["http"]
        print(f"[readback] {_agreement(answers)}")
        for line in _explain_overrides(info):
            print(line)
        print("[server_info] " + json.dumps(_summary(info), sort_keys=True))
    finally:
        _shutdown(procs, requests, outputs)
    codes = {p.name: p.exitcode for p in procs}
    print(f"[launcher] shutdown: exit codes {codes}")
    return 0 if all(code == 0 for code in codes.values()) else 1


def _shutdown(procs: list[BaseProcess], requests: Any, outputs: Any) -> None:
    """Shutdown travels tokenizer -> scheduler -> detokenizer; if the scheduler died,
    hand it to the detokenizer directly so nothing waits forever."""
    requests.put(Shutdown())
    for proc in procs:
        proc.join(timeout=30)
        if proc.name == "scheduler" and proc.exitcode != 0:
            outputs.put(Shutdown())
        if proc.is_alive():
            proc.kill()
            proc.join()


def _explain_overrides(info: dict[str, Any]) -> list[str]:
    """One line per logged override, saying what the JSON below shows."""
    where = info["role"]
    return [
        f"[override] {e['field']}: {e['old']!r} -> {e['new']!r} by {e['source']!r} "
        f"(a bag leaf changed with get_context().override; the record keeps the "
        f"operator's {info['resolved_config'][e['field']]!r}; in force in the {where} "
        f"process: {info['effective_overridden'][e['field']]!r})"
        for e in info["overrides"]
    ]


def _agreement(answers: dict[str, dict[str, Any]]) -> str:
    """Whether every surface reported the same keys (JSON-normalised values: the
    HTTP route's answer went through JSON)."""
    normal = {k: json.loads(json.dumps(v, sort_keys=True, default=str)) for k, v in answers.items()}
    first = next(iter(normal.values()))
    if all(v == first for v in normal.values()):
        return f"{', '.join(normal)} agree on {len(first)} keys: {', '.join(sorted(first))}"
    differ = sorted(k for k, v in normal.items() if v != first)
    return f"surfaces disagree: {', '.join(differ)} differ from {next(iter(normal))}"


def _summary(info: dict[str, Any]) -> dict[str, Any]:
    keys = (
        "served_model_name",
        "context_length",
        "attention_backend",
        "load_format",
        "speculative_algorithm",
        "speculative_num_draft_tokens",
        "speculative_draft_model_path",
        "speculative_attention_backend",
        "nccl_port",
        "log_level",
    )
    return {
        "role": info["role"],
        "resolved_config": {k: info["resolved_config"][k] for k in keys},
        "overrides": [
            {k: e[k] for k in ("source", "field", "old", "new")} for e in info["overrides"]
        ],
        "effective_overridden": info["effective_overridden"],
    }
