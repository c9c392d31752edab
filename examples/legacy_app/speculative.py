"""Speculative decoding: the plugin base for algorithms, two in-tree implementations,
and the dispatch that calls the hooks."""

from __future__ import annotations

import abc
from typing import ClassVar

from ctxrt.record import ServerArgs
from examples.legacy_app.draft_worker import DraftWorker
from examples.legacy_app.model_runner import ModelRunner

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
        self.worker = DraftWorker(server_args, target)

    # drifted: the base's `num_tokens` was renamed here
    def propose(self, token_ids: list[int], max_tokens: int) -> list[int]:
        assert self.worker is not None, "build_draft was not called"
        return self.worker.propose(token_ids, max_tokens)


@register_spec_algorithm
class NgramDraft(SpecAlgorithm):
    """Proposes the continuation of the last earlier occurrence of the suffix."""

    name = "ngram"

    # drifted: a required parameter the base does not pass
    def build_draft(self, server_args: ServerArgs, target: ModelRunner, window: int) -> None:
        self.window = window

    def propose(self, token_ids: list[int], num_tokens: int) -> list[int]:
        tail = token_ids[-self.window :]
        for start in range(len(token_ids) - len(tail) - 1, -1, -1):
            if token_ids[start : start + len(tail)] == tail:
                follow = start + len(tail)
                return token_ids[follow : follow + num_tokens]
        return []


def create_spec_algorithm(server_args: ServerArgs, target: ModelRunner) -> SpecAlgorithm | None:
    """The dispatch: pick the configured algorithm, call its build hook."""
    if server_args.speculative_algorithm is None:
        return None
    algorithm = SPEC_ALGORITHMS[server_args.speculative_algorithm]()
    algorithm.build_draft(server_args, target)
    return algorithm


def speculative_generate(
    target: ModelRunner,
    algorithm: SpecAlgorithm,
    num_draft_tokens: int,
    token_ids: list[int],
    max_new_tokens: int,
) -> tuple[list[int], int]:
    """Greedy draft-then-verify; returns the tokens and how many drafts were accepted."""
    tokens, accepted_total = list(token_ids), 0
    while len(tokens) - len(token_ids) < max_new_tokens:
        remaining = max_new_tokens - (len(tokens) - len(token_ids))
        draft = algorithm.propose(tokens, num_tokens=min(num_draft_tokens, remaining - 1))
        verified = target.greedy(tokens, len(draft) + 1)
        accepted = 0
        while accepted < len(draft) and draft[accepted] == verified[accepted]:
            accepted += 1
        tokens += [*draft[:accepted], verified[accepted]]
        accepted_total += accepted
    return tokens[len(token_ids) :], accepted_total
