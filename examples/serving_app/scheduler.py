"""The scheduler process: brings up the live topology, the runtime flags and the
model runners, then runs continuous batching over its request queue.

Every loop turn drains the queue without blocking, admits waiting requests into
the running batch up to ``max_running_requests``, and runs one step for the whole
batch (a decode, or a draft-then-verify step); finished requests leave, new ones
join at the next turn. It blocks only when nothing is running or waiting."""

from __future__ import annotations

import collections
import dataclasses
import logging
import queue
import time
from multiprocessing.connection import Connection
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
from examples.serving_app.lifecycle import (
    PARENT_POLL_S,
    exit_now,
    ignore_interrupts,
    launcher_alive,
)
from examples.serving_app.logs import configure_logging
from examples.serving_app.messages import (
    BatchTokenOut,
    ConfigUpdateRequest,
    SchedulerReady,
    Shutdown,
    TokenizedRequest,
)
from examples.serving_app.model_runner import ModelRunner
from examples.serving_app.speculative import (
    SpecStats,
    create_spec_algorithm,
    speculative_step,
)

logger = logging.getLogger(__name__)


@dataclasses.dataclass
class Req:
    rid: str
    input_ids: list[int]
    max_new_tokens: int
    slot: int = -1  # its KV cache slot while it runs (the target's and the draft's)
    output_ids: list[int] = dataclasses.field(default_factory=list)
    spec: SpecStats = dataclasses.field(default_factory=SpecStats)

    @property
    def tokens(self) -> list[int]:
        return self.input_ids + self.output_ids

    @property
    def remaining(self) -> int:
        return self.max_new_tokens - len(self.output_ids)


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
        self.target.warm_up(verify=self.spec is not None)  # the draft's built warm
        self.graphs_at_ready = _compiled_graphs()
        self.max_running_requests = get_schedule().max_running_requests
        self.waiting: collections.deque[Req] = collections.deque()
        self.running: list[Req] = []
        self.free_slots = list(range(self.max_running_requests))[::-1]  # pop() takes 0 first
        self.totals = SpecStats()
        self.steps = 0
        self.busy_s = 0.0  # time spent in steps
        self.largest_batch = 0
        logger.info(
            "scheduler up: tp_rank=%d attention=%s spec=%s max_running_requests=%d",
            get_parallel().tp_rank,
            self.target.attention_backend,
            type(self.spec[0]).__name__ if self.spec else None,
            self.max_running_requests,
        )

    # ---------------------------------------------------------------- one step
    def step(self, batch: list[Req]) -> BatchTokenOut:
        """Advance every request of ``batch`` by one step (one token, or what the
        target accepted of the draft plus one)."""
        slots = [r.slot for r in batch]
        if self.spec is None:
            for req, token in zip(
                batch, self.target.decode(slots, [r.tokens for r in batch]), strict=True
            ):
                req.output_ids.append(token)
            new_ids = [r.output_ids[-1:] for r in batch]
        else:
            algorithm, num_draft = self.spec
            results = speculative_step(
                self.target,
                algorithm,
                num_draft,
                slots,
                [r.tokens for r in batch],
                [r.remaining for r in batch],
            )
            new_ids = []
            for req, (new, stats) in zip(batch, results, strict=True):
                req.output_ids += new
                req.spec.proposed += stats.proposed
                req.spec.accepted += stats.accepted
                self.totals.proposed += stats.proposed
                self.totals.accepted += stats.accepted
                new_ids.append(new)
        self.steps += 1
        self.largest_batch = max(self.largest_batch, len(batch))
        return BatchTokenOut(
            rids=[r.rid for r in batch],
            new_ids=new_ids,
            finished=[r.remaining <= 0 for r in batch],
            accepted_draft_tokens=[r.spec.accepted for r in batch],
            proposed_draft_tokens=[r.spec.proposed for r in batch],
        )

    # ---------------------------------------------------------------- the loop
    def event_loop(self, inbox: Queue[Any], outbox: Queue[Any]) -> None:
        next_poll = time.monotonic() + PARENT_POLL_S
        while True:
            idle = not self.running and not self.waiting
            for msg in _drain(inbox, block=idle):
                if not self.handle(msg, outbox):
                    return
            out = self.run_batch()
            if out is not None:
                outbox.put(out)
            if time.monotonic() >= next_poll:
                next_poll = time.monotonic() + PARENT_POLL_S
                if not launcher_alive():
                    logger.warning("the launcher died; exiting")
                    return

    def handle(self, msg: Any, outbox: Queue[Any]) -> bool:
        """Take one message off the queue; False when it says to stop."""
        if isinstance(msg, Shutdown):
            outbox.put(msg)
            return False
        if isinstance(msg, ConfigUpdateRequest):
            apply_config_update(msg.source, msg.fields)
            outbox.put(msg)
        elif isinstance(msg, TokenizedRequest):
            self.waiting.append(Req(msg.rid, msg.input_ids, msg.max_new_tokens))
        else:
            raise TypeError(f"the scheduler does not take {msg!r}")
        return True

    def run_batch(self) -> BatchTokenOut | None:
        """One turn: admit waiting requests into the running batch, each into a free
        KV cache slot (this is where a new request joins, between two steps: its
        prompt is fed in the step's one forward with the others' tokens), step the
        batch, retire what finished and free its slot."""
        while self.waiting and self.free_slots:
            req = self.waiting.popleft()
            req.slot = self.free_slots.pop()
            self.running.append(req)
        if not self.running:
            return None
        started = time.perf_counter()
        out = self.step(self.running)
        self.busy_s += time.perf_counter() - started
        for req in self.running:
            if req.remaining <= 0:
                self.target.release(req.slot)
                if self.spec is not None:
                    self.spec[0].release(req.slot)
                self.free_slots.append(req.slot)
        self.running = [r for r in self.running if r.remaining > 0]
        return out

    def close(self) -> None:
        if self.spec is not None:
            share = self.totals.accepted / max(self.totals.proposed, 1)
            print(
                f"[scheduler] speculative ({self.spec[0].name}): accepted "
                f"{self.totals.accepted} of {self.totals.proposed} draft tokens ({share:.0%})",
                flush=True,
            )
        print(
            f"[scheduler] {self.steps} steps in {self.busy_s:.2f} s, largest batch "
            f"{self.largest_batch}",
            flush=True,
        )
        if get_exec().enable_torch_compile:
            graphs = _compiled_graphs()
            late = graphs - self.graphs_at_ready
            breaks = sum(torch._dynamo.utils.counters["graph_break"].values())
            print(
                f"[scheduler] torch.compile(fullgraph=True): {graphs} graph{'s' * (graphs != 1)}, "
                f"{'all before serving' if late == 0 else f'{late} while serving'}, "
                f"{breaks} graph break{'s' * (breaks != 1)}",
                flush=True,
            )
        destroy_model_parallel()
        dist.destroy_process_group()


def _compiled_graphs() -> int:
    """Graphs dynamo has compiled in this process so far."""
    return torch._dynamo.utils.counters["stats"]["unique_graphs"]


def _drain(inbox: Queue[Any], *, block: bool) -> list[Any]:
    """Everything queued now; when ``block``, wait (a bounded while) for the first."""
    msgs = []
    if block:
        try:
            msgs.append(inbox.get(timeout=PARENT_POLL_S))
        except queue.Empty:
            return msgs
    while True:
        try:
            msgs.append(inbox.get_nowait())
        except queue.Empty:
            return msgs


def run_scheduler_process(
    server_args: ServerArgs, inbox: Queue[Any], outbox: Queue[Any], ready: Connection
) -> None:
    publish(server_args, role="scheduler")
    ignore_interrupts()
    configure_logging("scheduler")
    scheduler = Scheduler(server_args)
    ready.send(SchedulerReady(scheduler.max_running_requests))
    ready.close()
    try:
        scheduler.event_loop(inbox, outbox)
    finally:
        scheduler.close()
    exit_now(0, outbox)  # an orderly stop: nothing is left to tear down
