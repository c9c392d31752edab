"""Manager facades over resource slots: the EPLB expert-distribution recorder and the
expert-location metadata. The owning accessors stay the API; only their state lives
in ``get_resources().slots`` (dropped by ``reset_context()``), with SGLang's
semantics kept in the shim:

- the recorder is never ``None``: call sites call it unconditionally, and before
  anyone installs one the accessor lazily installs the Noop recorder;
- the location metadata is published once: a second ``set`` raises instead of
  swapping the metadata under readers that already hold the first."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from ctxrt.context import get_exec, get_resources

_RECORDER = "expert_distribution_recorder"
_METADATA = "expert_location_metadata"


class ExpertDistributionRecorder:
    """The recorder interface; this base class is the Noop (records nothing)."""

    @staticmethod
    def init_new(num_layers: int, num_experts: int) -> ExpertDistributionRecorder:
        """The real recorder when ``exec.moe.expert_distribution_recorder_mode`` is
        set, the Noop otherwise."""
        if get_exec().moe.expert_distribution_recorder_mode is not None:
            return ExpertDistributionRecorderReal(num_layers, num_experts)
        return NoopExpertDistributionRecorder()

    @contextlib.contextmanager
    def with_current_layer(self, layer_idx: int) -> Iterator[None]:
        yield

    def on_select_experts(self, topk_ids: Any) -> None:
        """Called by every MoE layer with the experts it routed to."""

    def start_record(self) -> None:
        pass

    def stop_record(self) -> None:
        pass

    def dump_record(self) -> dict[str, Any]:
        return {}

    @property
    def recording(self) -> bool:
        return False


class NoopExpertDistributionRecorder(ExpertDistributionRecorder):
    pass


class ExpertDistributionRecorderReal(ExpertDistributionRecorder):
    """Counts, per layer, how many tokens each expert was selected for."""

    def __init__(self, num_layers: int, num_experts: int) -> None:
        import torch

        self._counts = torch.zeros(num_layers, num_experts, dtype=torch.int64)
        self._layer: int | None = None
        self._recording = False

    @contextlib.contextmanager
    def with_current_layer(self, layer_idx: int) -> Iterator[None]:
        previous, self._layer = self._layer, layer_idx
        try:
            yield
        finally:
            self._layer = previous

    def on_select_experts(self, topk_ids: Any) -> None:
        import torch

        if not self._recording:
            return
        if self._layer is None:
            raise RuntimeError("on_select_experts outside with_current_layer(layer_idx)")
        counts = torch.bincount(topk_ids.flatten(), minlength=self._counts.shape[1])
        self._counts[self._layer] += counts

    def start_record(self) -> None:
        self._counts.zero_()
        self._recording = True

    def stop_record(self) -> None:
        self._recording = False

    def dump_record(self) -> dict[str, Any]:
        return {"logical_count": self._counts.clone()}

    @property
    def recording(self) -> bool:
        return self._recording


def get_global_expert_distribution_recorder() -> ExpertDistributionRecorder:
    slots = get_resources().slots
    recorder = slots.get(_RECORDER)
    if recorder is None:  # call sites expect a recorder: default to the Noop
        recorder = slots[_RECORDER] = NoopExpertDistributionRecorder()
    return recorder


def set_global_expert_distribution_recorder(recorder: ExpertDistributionRecorder) -> None:
    get_resources().slots[_RECORDER] = recorder


def get_global_expert_location_metadata() -> Any:
    """The published metadata, or ``None`` before it is published."""
    return get_resources().slots.get(_METADATA)


def set_global_expert_location_metadata(metadata: Any) -> None:
    slots = get_resources().slots
    if slots.get(_METADATA) is not None:
        raise RuntimeError("the expert location metadata is published once per process")
    slots[_METADATA] = metadata
