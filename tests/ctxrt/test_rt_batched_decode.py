"""The example's batched decode: one forward per step for the whole running batch,
over a preallocated KV cache with a slot per request, written in place; each
request gets exactly the tokens it gets served alone (greedy)."""

from __future__ import annotations

import queue

import pytest
import torch
from rt_fixtures import fresh_context  # noqa: F401 - autouse: empty context per test

from ctxrt.context import publish
from examples.serving_app import launcher
from examples.serving_app.messages import BatchTokenOut, TokenizedRequest
from examples.serving_app.model_runner import ModelRunner
from examples.serving_app.scheduler import Scheduler

PROMPTS = ["Hello, world", "The runtime context", "Bags", "Publish first, then read", "x"]


def _scheduler(max_running: int, speculative: str) -> Scheduler:
    argv = ["--no-torch-compile", "--speculative-algorithm", speculative]
    argv += ["--max-running-requests", str(max_running)]
    sa = launcher.build_server_args(launcher.parse_args(argv))
    publish(sa, role="scheduler")
    return Scheduler(sa)


def _serve(scheduler: Scheduler, requests: list[TokenizedRequest], join_at: int) -> dict:
    """Run the scheduler until every request finished: the first ``join_at`` are
    queued at once, the rest one per step while the others run. Each request's
    output ids."""
    outbox: queue.Queue[object] = queue.Queue()
    outputs: dict[str, list[int]] = {r.rid: [] for r in requests}
    pending = list(requests)
    for req in pending[:join_at]:
        scheduler.handle(req, outbox)
    pending = pending[join_at:]
    while scheduler.running or scheduler.waiting or pending:
        if pending:
            scheduler.handle(pending.pop(0), outbox)
        out = scheduler.run_batch()
        if isinstance(out, BatchTokenOut):
            for rid, new in zip(out.rids, out.new_ids, strict=True):
                outputs[rid] += new
    return outputs


def _count_forwards(runner: ModelRunner) -> list[int]:
    """Counts the calls of the runner's (eager) model: one per forward."""
    calls = [0]
    runner.model.register_forward_pre_hook(lambda *_: calls.__setitem__(0, calls[0] + 1))
    return calls


def _requests(lengths: list[int]) -> list[TokenizedRequest]:
    return [
        TokenizedRequest(f"r{i}", [256, *PROMPTS[i % len(PROMPTS)].encode()], n)
        for i, n in enumerate(lengths)
    ]


@pytest.mark.parametrize("speculative", ["none", "layer_skip"])
def test_a_continuous_batch_serves_each_request_as_it_runs_alone(speculative: str) -> None:
    """Requests of different prompt and output lengths join a running batch between
    steps (their prompts prefilled in the step's one forward), wait for a slot,
    leave: every request's tokens are the target's greedy tokens for it alone,
    unbatched and uncached."""
    scheduler = _scheduler(4, speculative)
    try:
        requests = _requests([9, 17, 3, 12, 20, 6])
        # One fills the whole context (128): its slot's last positions are used too.
        long_prompt = [256, *(b"the runtime context " * 5)][:100]
        requests.append(TokenizedRequest("full", long_prompt, 128 - len(long_prompt)))
        outputs = _serve(scheduler, requests, join_at=2)
        assert scheduler.largest_batch == 4  # the batch filled; two waited for a slot
        for req in requests:
            alone = scheduler.target.greedy(req.input_ids, req.max_new_tokens)
            assert outputs[req.rid] == alone, req.rid
        if speculative == "layer_skip":
            assert 0 < scheduler.totals.accepted < scheduler.totals.proposed
        assert sorted(scheduler.free_slots) == [0, 1, 2, 3]  # every slot came back
    finally:
        scheduler.close()


def test_concurrent_requests_take_one_forward_per_step_not_per_request() -> None:
    """8 concurrent requests of 16 tokens: one target forward per step for all of
    them (16), not one per request and token (128); a request that joins later is
    prefilled in the forward that decodes the others."""
    scheduler = _scheduler(8, "none")
    try:
        forwards = _count_forwards(scheduler.target)
        _serve(scheduler, _requests([16] * 8), join_at=8)
        assert forwards[0] == scheduler.steps == 16
        forwards[0] = scheduler.steps = 0
        _serve(scheduler, _requests([16] * 8), join_at=1)  # 2 at the first step, then 1 a step
        assert forwards[0] == scheduler.steps == 16 + 6  # the last joins at step 7
    finally:
        scheduler.close()


def test_speculative_steps_take_the_same_forwards_for_one_row_or_many() -> None:
    """With the draft: 4 draft forwards and 1 verify per step, whatever the batch
    holds. 8 requests served together take the forwards of one served alone."""
    alone = _scheduler(1, "layer_skip")
    try:
        draft = _count_forwards(alone.spec[0].worker.runner)  # type: ignore[index, union-attr]
        target = _count_forwards(alone.target)
        _serve(alone, _requests([24]), join_at=1)
        one = (draft[0], target[0], alone.steps)
    finally:
        alone.close()
    together = _scheduler(8, "layer_skip")
    try:
        draft = _count_forwards(together.spec[0].worker.runner)  # type: ignore[index, union-attr]
        target = _count_forwards(together.target)
        _serve(together, _requests([24] * 8), join_at=8)
        many = (draft[0], target[0], together.steps)
    finally:
        together.close()
    assert one[1] == one[2] and many[1] == many[2]  # one verify forward per step
    assert one[0] <= 4 * one[2] and many[0] <= 4 * many[2]
    # Rows accept different shares of their drafts, so the batch runs until its
    # slowest row is done: a few steps more than one request alone, not 8 times.
    assert many[2] < 2 * one[2]
    assert sum(many[:2]) < 2 * sum(one[:2])


def test_the_kv_cache_is_preallocated_and_written_in_place() -> None:
    """The cache is allocated once, a slot per running request (and a scratch slot
    and position for padding). A decode step writes each row's newest keys and
    values at its slot's next position and changes nothing a real token reads:
    nothing cached is copied or rebuilt per step."""
    scheduler = _scheduler(4, "none")
    try:
        kv = scheduler.target.kv
        assert kv.k.shape[:3] == (4 + 1, 2, kv.max_len + 1)  # slots, layers, positions
        storage = (kv.k.data_ptr(), kv.v.data_ptr())
        outbox: queue.Queue[object] = queue.Queue()
        for req in _requests([8, 8, 8]):
            scheduler.handle(req, outbox)
        scheduler.run_batch()  # the prefills
        slots = [r.slot for r in scheduler.running]
        assert sorted(slots) == [0, 1, 2]
        for _ in range(3):
            before = (kv.k.clone(), kv.v.clone())
            lens = list(kv.lens)
            scheduler.run_batch()
            for req in scheduler.running:
                assert kv.lens[req.slot] == lens[req.slot] + 1 == len(req.tokens) - 1
            written = torch.zeros(kv.k.shape[:3], dtype=torch.bool)
            for slot in slots:
                written[slot, :, lens[slot]] = True
            written[:, :, kv.scratch] = written[kv.scratch_slot] = True
            for new, old in zip((kv.k, kv.v), before, strict=True):
                changed = (new != old).flatten(3).any(-1)
                assert torch.equal(changed & ~written, torch.zeros_like(changed))
                for slot in slots:
                    assert changed[slot, :, lens[slot]].all()
            assert (kv.k.data_ptr(), kv.v.data_ptr()) == storage
        assert kv.lens[3] == 0  # the unused slot was never written
        assert not kv.k[3].any()
    finally:
        scheduler.close()
