"""Speculative decoding: a plugin base for algorithms, one in-tree implementation,
and the dispatch that calls the hooks.

The dispatch calls every algorithm with the built-in's argument list, so a plugin
that drifts from the base signature fails at its first call; the example's tests
check the registered implementations' hook signatures against the base."""

from __future__ import annotations

import abc
import dataclasses
from typing import ClassVar

from ctxrt.context import get_forward, get_spec
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
    def propose(self, token_ids: list[int], num_tokens: int) -> list[int]:
        """Up to ``num_tokens`` draft tokens continuing ``token_ids``."""


@register_spec_algorithm
class StandaloneDraft(SpecAlgorithm):
    """A separate small draft model, run greedily."""

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

    def propose(self, token_ids: list[int], num_tokens: int) -> list[int]:
        assert self.worker is not None, "build_draft was not called"
        return self.worker.propose(token_ids, num_tokens)


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


def speculative_generate(
    target: ModelRunner,
    algorithm: SpecAlgorithm,
    num_draft_tokens: int,
    token_ids: list[int],
    max_new_tokens: int,
) -> tuple[list[int], SpecStats]:
    """Greedy draft-then-verify: the output equals the target's own greedy output."""
    tokens, stats = list(token_ids), SpecStats()
    while len(tokens) - len(token_ids) < max_new_tokens:
        remaining = max_new_tokens - (len(tokens) - len(token_ids))
        draft = algorithm.propose(tokens, min(num_draft_tokens, remaining - 1))
        # The target scores prefix + draft once: k+1 next-token predictions.
        with get_forward().scoped(is_extend_in_batch=True):
            scores = target.logits(tokens + draft)
        predictions = scores[len(tokens) - 1 :].argmax(-1).tolist()
        accepted = 0
        while accepted < len(draft) and draft[accepted] == predictions[accepted]:
            accepted += 1
        tokens += [*draft[:accepted], predictions[accepted]]
        stats.proposed += len(draft)
        stats.accepted += accepted
    return tokens[len(token_ids) :], stats
