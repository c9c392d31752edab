"""Speculative decoding: a plugin base for algorithms, two in-tree implementations,
and the dispatch that calls the hooks. Every step works on the whole running batch:
the draft proposes for every row, the target verifies every row in one forward.
Each row is a request in a KV cache slot (the same index in the target's and the
draft's cache); after the verify, both caches keep only what was accepted.

The dispatch calls every algorithm with the built-in's argument list, so a plugin
that drifts from the base signature fails at its first call; the example's tests
check the registered implementations' hook signatures against the base."""

from __future__ import annotations

import abc
import dataclasses
from typing import ClassVar

from ctxrt.context import get_spec
from ctxrt.record import ServerArgs
from examples.serving_app.draft_worker import DraftWorker
from examples.serving_app.model_runner import ModelRunner

SPEC_ALGORITHMS: dict[str, type[SpecAlgorithm]] = {}


def register_spec_algorithm(cls: type[SpecAlgorithm]) -> type[SpecAlgorithm]:
    SPEC_ALGORITHMS[cls.name] = cls
    return cls


class SpecAlgorithm(abc.ABC):
    """Plugin base. ``name`` is what ``--speculative-algorithm`` selects."""

    name: ClassVar[str]

    @abc.abstractmethod
    def build_draft(self, server_args: ServerArgs, target: ModelRunner) -> None:
        """Build whatever proposes tokens; called once at scheduler init."""

    @abc.abstractmethod
    def propose(self, slots: list[int], batch: list[list[int]], num_tokens: int) -> list[list[int]]:
        """``num_tokens`` draft tokens continuing each row of ``batch`` (row i is the
        request in KV cache slot ``slots[i]``)."""

    @abc.abstractmethod
    def accept(self, slot: int, length: int) -> None:
        """The request in ``slot`` has committed its first ``length`` tokens: drop
        whatever the draft cached past them (its rejected proposals)."""

    @abc.abstractmethod
    def release(self, slot: int) -> None:
        """The request in ``slot`` finished; the slot goes to another request."""


class WorkerDraft(SpecAlgorithm):
    """The hooks of an algorithm whose draft is a ``DraftWorker`` (both in-tree ones)."""

    def __init__(self) -> None:
        self.worker: DraftWorker | None = None

    def propose(self, slots: list[int], batch: list[list[int]], num_tokens: int) -> list[list[int]]:
        assert self.worker is not None, "build_draft was not called"
        return self.worker.propose(slots, batch, num_tokens)

    def accept(self, slot: int, length: int) -> None:
        assert self.worker is not None, "build_draft was not called"
        self.worker.accept(slot, length)

    def release(self, slot: int) -> None:
        assert self.worker is not None, "build_draft was not called"
        self.worker.release(slot)


@register_spec_algorithm
class LayerSkipDraft(WorkerDraft):
    """The draft is the target itself cut short: its first half of the layers, with
    the target's embedding and head, the very same parameter tensors (no second
    copy, nothing to load). Early layers already predict much of what the whole
    stack does, so the target accepts a real share of the draft."""

    name = "layer_skip"

    def build_draft(self, server_args: ServerArgs, target: ModelRunner) -> None:
        spec = get_spec()
        if spec.speculative_draft_model_path != target.model_path:
            raise ValueError(
                f"layer_skip drafts from the target itself ({target.model_path!r}), not "
                f"{spec.speculative_draft_model_path!r}"
            )
        self.worker = DraftWorker(
            server_args,
            model_path=target.model_path,
            context_length=target.context_length,
            attention_backend=spec.speculative_attention_backend,
            load_format=target.load_format,
            num_layers=max(1, len(target.module.blocks) // 2),
            shared_with=target,
        )


@register_spec_algorithm
class StandaloneDraft(WorkerDraft):
    """A separate small draft model with weights of its own, run greedily."""

    name = "standalone"

    def build_draft(self, server_args: ServerArgs, target: ModelRunner) -> None:
        spec = get_spec()
        self.worker = DraftWorker(
            server_args,
            model_path=spec.speculative_draft_model_path,
            context_length=target.context_length,  # the target's window bounds the draft
            attention_backend=spec.speculative_attention_backend,
            load_format=spec.speculative_draft_load_format,
        )


@dataclasses.dataclass
class SpecStats:
    proposed: int = 0
    accepted: int = 0


def create_spec_algorithm(
    server_args: ServerArgs, target: ModelRunner
) -> tuple[SpecAlgorithm, int] | None:
    """The dispatch: pick the configured algorithm, call its build hook."""
    spec = get_spec()
    if spec.speculative_algorithm is None:
        return None
    try:
        algorithm = SPEC_ALGORITHMS[spec.speculative_algorithm]()
    except KeyError:
        known = sorted(SPEC_ALGORITHMS)
        raise ValueError(
            f"unknown speculative algorithm {spec.speculative_algorithm!r}; {known}"
        ) from None
    algorithm.build_draft(server_args, target)
    return algorithm, spec.speculative_num_draft_tokens


def speculative_step(
    target: ModelRunner,
    algorithm: SpecAlgorithm,
    num_draft_tokens: int,
    slots: list[int],
    batch: list[list[int]],
    budgets: list[int],
) -> list[tuple[list[int], SpecStats]]:
    """One draft-then-verify step over a batch (row i: the request in KV cache slot
    ``slots[i]``): per row, the new tokens (at least one, at most its budget) and the
    draft tokens proposed and accepted. Greedy, so the tokens are exactly the
    target's own greedy continuation."""
    proposals = algorithm.propose(slots, batch, min(num_draft_tokens, max(budgets) - 1))
    drafts = [p[: max(budget - 1, 0)] for p, budget in zip(proposals, budgets, strict=True)]
    # The target scores every row's last token + draft in one forward (the prefix
    # is in its cache): k+1 predictions each.
    verified = target.cached_greedy(
        slots, [row + d for row, d in zip(batch, drafts, strict=True)], [len(d) + 1 for d in drafts]
    )
    results = []
    for slot, row, predictions, draft in zip(slots, batch, verified, drafts, strict=True):
        accepted = 0
        while accepted < len(draft) and draft[accepted] == predictions[accepted]:
            accepted += 1
        # Both caches hold the row and (part of) a draft: keep the accepted part. The
        # target's new token is not cached yet; the next step feeds it.
        target.truncate(slot, len(row) + accepted)
        algorithm.accept(slot, len(row) + accepted)
        results.append(
            ([*draft[:accepted], predictions[accepted]], SpecStats(len(draft), accepted))
        )
    return results


def speculative_generate(
    target: ModelRunner,
    algorithm: SpecAlgorithm,
    num_draft_tokens: int,
    token_ids: list[int],
    max_new_tokens: int,
    slot: int = 0,
) -> tuple[list[int], SpecStats]:
    """One sequence alone, step after step, in one KV cache slot (released after):
    the reference the batched steps match."""
    tokens, stats = list(token_ids), SpecStats()
    try:
        while len(tokens) - len(token_ids) < max_new_tokens:
            remaining = max_new_tokens - (len(tokens) - len(token_ids))
            [(new, step)] = speculative_step(
                target, algorithm, num_draft_tokens, [slot], [tokens], [remaining]
            )
            tokens += new
            stats.proposed += step.proposed
            stats.accepted += step.accepted
    finally:
        target.release(slot)
        algorithm.release(slot)
    return tokens[len(token_ids) :], stats
