"""The scheduler process: builds the model runners and serves tokenized requests."""

from __future__ import annotations

import copy
from multiprocessing.queues import Queue
from typing import Any

from ctxrt.context import get_context, get_flags, get_schedule, publish
from ctxrt.record import ServerArgs
from examples.legacy_app.model_runner import ModelRunner
from examples.legacy_app.speculative import create_spec_algorithm, speculative_generate

# read once at import, for the log line below (before the migration)
DEFAULT_POLICY = get_schedule().schedule_policy


class Scheduler:
    def __init__(self, server_args: ServerArgs) -> None:
        self.server_args = server_args
        self.get_schedule = get_schedule  # kept on self so tests can swap it
        self.max_running_requests = self.get_schedule().max_running_requests
        if server_args.tp_size * server_args.pp_size != 1:
            raise ValueError("the example runs a single rank")
        self.target = ModelRunner(server_args)
        self.spec = create_spec_algorithm(server_args, self.target)
        self.num_draft_tokens = getattr(server_args, "speculative_num_draft_tokens", 4)
        # a private copy, so the launcher's later edits never reach this process
        self.config_at_start = copy.deepcopy(server_args)

    def run_request(self, input_ids: list[int], max_new_tokens: int) -> tuple[list[int], int]:
        if self.spec is None:
            return self.target.greedy(input_ids, max_new_tokens), 0
        return speculative_generate(
            self.target, self.spec, self.num_draft_tokens, input_ids, max_new_tokens
        )

    def event_loop(self, inbox: Queue[Any], outbox: Queue[Any]) -> None:
        while True:
            batch = [inbox.get()]
            while len(batch) < self.max_running_requests and not inbox.empty():
                batch.append(inbox.get())
            for msg in batch:
                if msg is None:
                    outbox.put(None)
                    return
                rid, input_ids, max_new_tokens = msg
                outbox.put((rid, *self.run_request(input_ids, max_new_tokens)))


def run_scheduler_process(server_args: ServerArgs, inbox: Queue[Any], outbox: Queue[Any]) -> None:
    scheduler = Scheduler(server_args)
    publish(server_args, role="scheduler")
    scheduler.event_loop(inbox, outbox)


def use_triton_moe() -> None:
    """Switch this process to the Triton MoE runner without DP attention: runtime
    flags set by hand, outside the inits that own them."""
    get_flags().moe.runner_backend = "triton"
    get_flags().dp.enabled = False


def startup_summary() -> str:
    """The scheduler's startup log line, field by field as the flag names read."""
    return (
        f"max_running_requests={get_context().config_leaf('max_running_requests')} "
        f"chunked_prefill_size={get_context().config_leaf('chunked_prefill_size')}"
    )
