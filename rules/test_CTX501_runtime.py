"""CTX501 plugin-signature, on the reference runtime: a plugin whose hook drifted from
the base signature registers, instantiates and passes every in-tree test; the
dispatch calls it with the base's argument list and it raises ``TypeError`` there."""

from __future__ import annotations

import inspect
from collections.abc import Iterator

import pytest

from ctxrt.context import get_model, publish, reset_context
from ctxrt.record import ServerArgs
from examples.serving_app.model_runner import ModelRunner
from examples.serving_app.speculative import (
    SPEC_ALGORITHMS,
    SpecAlgorithm,
    StandaloneDraft,
    create_spec_algorithm,
)


class DriftedDraft(StandaloneDraft):
    """A plugin written against an older base: build_draft lost its target."""

    name = "drifted"

    def build_draft(self, server_args: ServerArgs) -> None:  # type: ignore[override]
        super().build_draft(server_args, None)  # type: ignore[arg-type]


@pytest.fixture(autouse=True)
def _fresh_context() -> Iterator[None]:
    reset_context()
    yield
    reset_context()


def test_a_drifted_hook_raises_at_dispatch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(SPEC_ALGORITHMS, DriftedDraft.name, DriftedDraft)
    assert not inspect.isabstract(DriftedDraft)  # it registers and instantiates
    base = inspect.signature(SpecAlgorithm.build_draft)
    assert inspect.signature(DriftedDraft.build_draft) != base

    sa = ServerArgs(model_path="tiny-lm", speculative_algorithm="drifted")
    publish(sa, role="scheduler")
    model = get_model()
    target = ModelRunner(
        sa,
        model_path=model.model_path,
        context_length=model.context_length,
        attention_backend="torch_native",
        load_format=model.load_format,
    )
    with pytest.raises(TypeError, match="build_draft"):
        create_spec_algorithm(sa, target)  # the dispatch passes (server_args, target)
