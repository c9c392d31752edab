"""The launcher: parse flags into the record, patch the late values onto it, publish
it, and spawn the scheduler and detokenizer processes."""

from __future__ import annotations

import argparse
import multiprocessing as mp
import socket
from collections.abc import Sequence
from multiprocessing.process import BaseProcess
from pathlib import Path

from ctxrt.context import get_serving, publish
from ctxrt.record import ServerArgs
from ctxrt.resolution import declare_resolution
from examples.legacy_app.detokenizer import run_detokenizer_process
from examples.legacy_app.scheduler import run_scheduler_process


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m examples.legacy_app")
    p.add_argument("--model-path", default="tiny-lm")
    p.add_argument("--speculative-algorithm", default="standalone")
    p.add_argument("--speculative-draft-model-path", default=None)
    p.add_argument("--attention-backend", default=None)
    p.add_argument("--tp-size", type=int, default=1)
    return p.parse_args(argv)


def build_server_args(args: argparse.Namespace) -> ServerArgs:
    server_args = ServerArgs(
        model_path=args.model_path,
        attention_backend=args.attention_backend,
        speculative_algorithm=args.speculative_algorithm,
        speculative_draft_model_path=args.speculative_draft_model_path,
        tp_size=args.tp_size,
    )
    _fill_late_defaults(server_args)
    return server_args


def _fill_late_defaults(server_args: ServerArgs) -> None:
    """Values only the launcher knows, patched onto the record every child is handed."""
    server_args.nccl_port = _free_port()
    if not server_args.served_model_name:
        server_args.served_model_name = server_args.model_path
    if server_args.tp_size > 1 and server_args.attention_backend is None:
        server_args.attention_backend = "sdpa"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(argv: Sequence[str] | None = None) -> int:
    server_args = build_server_args(parse_args(argv))
    publish(server_args, role="tokenizer")
    declare_resolution(server_args, "launcher", speculative_num_draft_tokens=4)
    serving = get_serving()
    print(f"[launcher] serving on {serving.host}:{serving.port}", flush=True)

    spawn = mp.get_context("spawn")
    tokenized, outputs, replies = (spawn.Queue() for _ in range(3))
    procs: list[BaseProcess] = [
        spawn.Process(target=run_scheduler_process, args=(server_args, tokenized, outputs)),
        spawn.Process(target=run_detokenizer_process, args=(server_args, outputs, replies)),
    ]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join()
    return 0 if all(p.exitcode == 0 for p in procs) else 1


def dump_config(server_args: ServerArgs, path: str) -> None:
    """`--dump-config`: the record as the old launcher wrote it out."""
    server_args.print_summary()
    Path(path).write_text(server_args.to_json())
