"""The scheduler process: brings up the live topology, the runtime flags and the
model runners, then serves tokenized requests in arrival order."""

from __future__ import annotations

import logging
from multiprocessing.queues import Queue
from typing import Any

import torch
import torch.distributed as dist

from ctxrt.context import (
    assert_published,
    get_exec,
    get_model,
    get_parallel,
    get_schedule,
    publish,
)
from ctxrt.record import ServerArgs
from ctxrt.subsystems import (
    initialize_dp_attention,
    initialize_model_parallel,
    initialize_moe_config,
)
from ctxrt.topology import destroy_model_parallel
from examples.serving_app.control_plane import apply_config_update
from examples.serving_app.logs import configure_logging
from examples.serving_app.messages import (
    ConfigUpdateRequest,
    Shutdown,
    TokenizedRequest,
    TokenOutput,
)
from examples.serving_app.model_runner import ModelRunner
from examples.serving_app.speculative import create_spec_algorithm, speculative_generate

logger = logging.getLogger(__name__)


class Scheduler:
    def __init__(self, server_args: ServerArgs) -> None:
        assert_published(server_args, role="scheduler")
        torch.set_num_threads(1)  # one core per process on small machines
        parallel = get_parallel()
        if parallel.tp_size * parallel.pp_size != 1:
            raise ValueError("the example runs a single rank (tp_size = pp_size = 1)")
        store = dist.TCPStore("127.0.0.1", parallel.nccl_port, 1, is_master=True)
        dist.init_process_group("gloo", store=store, rank=0, world_size=1)
        topo = initialize_model_parallel()
        initialize_moe_config()
        initialize_dp_attention(topo.attn_dp_rank)
        model = get_model()
        self.target = ModelRunner(
            server_args,
            model_path=model.model_path,
            context_length=model.context_length,
            attention_backend=get_exec().kernel.attention_backend,
            load_format=model.load_format,
        )
        self.spec = create_spec_algorithm(server_args, self.target)
        self.max_running_requests = get_schedule().max_running_requests
        logger.info(
            "scheduler up: tp_rank=%d attention=%s spec=%s",
            get_parallel().tp_rank,
            self.target.attention_backend,
            type(self.spec[0]).__name__ if self.spec else None,
        )

    def run_request(self, req: TokenizedRequest) -> TokenOutput:
        if self.spec is None:
            ids = self.target.greedy(req.input_ids, req.max_new_tokens)
            return TokenOutput(req.rid, ids, 0, 0)
        algorithm, num_draft = self.spec
        ids, stats = speculative_generate(
            self.target, algorithm, num_draft, req.input_ids, req.max_new_tokens
        )
        return TokenOutput(req.rid, ids, stats.accepted, stats.proposed)

    def event_loop(self, inbox: Queue[Any], outbox: Queue[Any]) -> None:
        while True:
            # Admit up to max_running_requests, then serve them FCFS.
            batch = [inbox.get()]
            while len(batch) < self.max_running_requests and not inbox.empty():
                batch.append(inbox.get())
            for msg in batch:
                if isinstance(msg, Shutdown):
                    outbox.put(msg)
                    return
                if isinstance(msg, ConfigUpdateRequest):
                    apply_config_update(msg.source, msg.fields)
                    outbox.put(msg)
                    continue
                outbox.put(self.run_request(msg))

    def close(self) -> None:
        if get_exec().enable_torch_compile:
            stats = torch._dynamo.utils.counters
            graphs, breaks = stats["stats"]["unique_graphs"], sum(stats["graph_break"].values())
            print(
                f"[scheduler] torch.compile(fullgraph=True): {graphs} graph{'s' * (graphs != 1)}, "
                f"{breaks} graph break{'s' * (breaks != 1)}",
                flush=True,
            )
        destroy_model_parallel()
        dist.destroy_process_group()


def run_scheduler_process(server_args: ServerArgs, inbox: Queue[Any], outbox: Queue[Any]) -> None:
    publish(server_args, role="scheduler")
    configure_logging("scheduler")
    scheduler = Scheduler(server_args)
    try:
        scheduler.event_loop(inbox, outbox)
    finally:
        scheduler.close()
