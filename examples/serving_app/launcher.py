"""The launcher: build and resolve the record, publish it as ``tokenizer`` (the
launch path has no role of its own), start the ``Engine`` (scheduler and
detokenizer processes), and serve it over HTTP until SIGTERM or SIGINT."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import socket
import sys
from collections.abc import Sequence
from types import FrameType

from ctxrt.context import get_model, get_schedule, get_serving, get_spec, publish
from ctxrt.record import ServerArgs
from ctxrt.resolution import declare_resolution
from examples.serving_app import model_overrides  # noqa: F401 - registers the TinyLM override
from examples.serving_app.logs import configure_logging
from examples.serving_app.model import ATTENTION_BACKENDS
from examples.serving_app.speculative import SPEC_ALGORITHMS


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m examples.serving_app", description=__doc__)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=30000)
    p.add_argument("--model-path", default="tiny-lm")
    p.add_argument("--max-running-requests", type=int, default=None, help="the batch's size limit")
    p.add_argument("--speculative-algorithm", default="layer_skip", help="'none' disables")
    p.add_argument(
        "--speculative-draft-model-path",
        default=None,
        help="standalone's draft (e.g. tiny-lm-draft); layer_skip drafts from the target",
    )
    p.add_argument("--speculative-attention-backend", default="sdpa", help="the draft's kernel")
    p.add_argument("--attention-backend", default=None, help=f"one of {ATTENTION_BACKENDS}")
    p.add_argument(
        "--no-torch-compile",
        dest="torch_compile",
        action="store_false",
        help="run the model forward eagerly (default: torch.compile(fullgraph=True))",
    )
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
    if not 0 < args.port < 65536:
        raise ValueError(f"--port {args.port} is not a TCP port")
    if args.max_running_requests is not None and args.max_running_requests < 1:
        raise ValueError(f"--max-running-requests {args.max_running_requests} is below 1")


def build_server_args(args: argparse.Namespace) -> ServerArgs:
    spec = None if args.speculative_algorithm == "none" else args.speculative_algorithm
    server_args = ServerArgs(
        host=args.host,
        port=args.port,
        model_path=args.model_path,
        max_running_requests=args.max_running_requests,
        attention_backend=args.attention_backend,
        enable_torch_compile=args.torch_compile,
        speculative_algorithm=spec,
        speculative_draft_model_path=args.speculative_draft_model_path,
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
    serving, spec = get_serving(), get_spec()
    print(
        f"[launcher] serving {get_model().served_model_name} on {serving.host}:{serving.port} "
        f"(max_running_requests {get_schedule().max_running_requests}, speculative: "
        f"{spec.speculative_algorithm}, {spec.speculative_num_draft_tokens} draft tokens)",
        flush=True,
    )
    # Imported here: a bad flag's one-line exit does not pay for torch and FastAPI.
    from examples.serving_app.engine import Engine
    from examples.serving_app.http_server import serve

    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    engine: Engine | None = None
    try:
        # A server process that dies takes the server down with it, as a SIGTERM would.
        engine = Engine(server_args, on_failure=lambda: os.kill(os.getpid(), signal.SIGTERM))
        serve(engine, serving.host, serving.port)  # returns on SIGTERM or SIGINT
    except SystemExit as exc:
        if exc.code != 0:
            raise
    except OSError as exc:  # the address is taken, or not ours
        print(f"error: cannot listen on {serving.host}:{serving.port}: {exc}", file=sys.stderr)
        return 1
    finally:
        codes = engine.shutdown() if engine is not None else {}  # idempotent
    return 0 if codes and all(code == 0 for code in codes.values()) else 1


def _exit_on_sigterm(signum: int, frame: FrameType | None) -> None:
    """SIGTERM while uvicorn's own handler is not installed (during startup, and when
    uvicorn re-raises the signal it handled): an orderly exit through ``main``."""
    raise SystemExit(0)
