"""Speculative decoding: a plugin base for algorithms, two in-tree implementations,
and the dispatch that calls the hooks. Every step works on the whole running batch:
the draft proposes for every row, the target verifies every row in one forward.

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
    def propose(self, batch: list[list[int]], num_tokens: int) -> list[list[int]]:
        """``num_tokens`` draft tokens continuing each row of ``batch``."""


@register_spec_algorithm
class LayerSkipDraft(SpecAlgorithm):
    """The draft is the target itself cut short: its first half of the layers, with
    the target's embedding and head, the very same parameter tensors (no second
    copy, nothing to load). Early layers already predict much of what the whole
    stack does, so the target accepts a real share of the draft."""

    name = "layer_skip"

    def __init__(self) -> None:
        self.worker: DraftWorker | None = None

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

    def propose(self, batch: list[list[int]], num_tokens: int) -> list[list[int]]:
        assert self.worker is not None, "build_draft was not called"
        return self.worker.propose(batch, num_tokens)


@register_spec_algorithm
class StandaloneDraft(SpecAlgorithm):
    """A separate small draft model with weights of its own, run greedily."""

    name = "standalone"

    def __init__(self) -> None:
        self.worker: DraftWorker | None = None

    def build_draft(self, server_args: ServerArgs, target: ModelRunner) -> None:
        spec = get_spec()
        self.worker = DraftWorker(
            server_args,
            model_path=spec.speculative_draft_model_path,
            context_length=target.context_length,  # the target's window bounds the draft
            attention_backend=spec.speculative_attention_backend,
            load_format=spec.speculative_draft_load_format,
        )

    def propose(self, batch: list[list[int]], num_tokens: int) -> list[list[int]]:
        assert self.worker is not None, "build_draft was not called"
        return self.worker.propose(batch, num_tokens)


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
    batch: list[list[int]],
    budgets: list[int],
) -> list[tuple[list[int], SpecStats]]:
    """One draft-then-verify step over a batch: per row, the new tokens (at least one,
    at most its budget) and the draft tokens proposed and accepted. Greedy, so the
    tokens are exactly the target's own greedy continuation."""
    proposals = algorithm.propose(batch, min(num_draft_tokens, max(budgets) - 1))
    drafts = [p[: max(budget - 1, 0)] for p, budget in zip(proposals, budgets, strict=True)]
    # The target scores every row's last token + draft in one forward (the prefix
    # comes from its cache): k+1 predictions each.
    verified = target.cached_greedy(
        [row + d for row, d in zip(batch, drafts, strict=True)], [len(d) + 1 for d in drafts]
    )
    results = []
    for predictions, draft in zip(verified, drafts, strict=True):
        accepted = 0
        while accepted < len(draft) and draft[accepted] == predictions[accepted]:
            accepted += 1
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
) -> tuple[list[int], SpecStats]:
    """One sequence alone, step after step (the reference the batched steps match)."""
    tokens, stats = list(token_ids), SpecStats()
    while len(tokens) - len(token_ids) < max_new_tokens:
        remaining = max_new_tokens - (len(tokens) - len(token_ids))
        [(new, step)] = speculative_step(target, algorithm, num_draft_tokens, [tokens], [remaining])
        tokens += new
        stats.proposed += step.proposed
        stats.accepted += step.accepted
    return tokens[len(token_ids) :], stats
