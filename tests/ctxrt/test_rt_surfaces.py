"""The design surfaces SGLang 0.5.23 has and ctxrt lacked: the manager's config
readback (``config_value`` / ``resolved_config_dict`` with the manager-owned fields
on top), ``speculative_moe_backend_context``, and the manager facades with a lazy
Noop default and a publish-once slot."""

from __future__ import annotations

import pytest
import torch
from rt_fixtures import fresh_context  # noqa: F401 - autouse: empty context per test

from ctxrt.context import get_context, get_model, get_server_args, publish, reset_context
from ctxrt.eplb import (
    ExpertDistributionRecorder,
    ExpertDistributionRecorderReal,
    NoopExpertDistributionRecorder,
    get_global_expert_distribution_recorder,
    get_global_expert_location_metadata,
    set_global_expert_distribution_recorder,
    set_global_expert_location_metadata,
)
from ctxrt.errors import UnknownLeafError
from ctxrt.manager_config import MANAGER_OWNED_FIELDS, ManagerConfig
from ctxrt.record import ServerArgs
from ctxrt.subsystems import (
    get_moe_runner_backend,
    get_speculative_moe_runner_backend,
    initialize_moe_config,
    speculative_moe_backend_context,
)


class _Manager(ManagerConfig):
    def __init__(self) -> None:
        model = get_model()
        self.model_path, self.served_model_name = model.model_path, model.served_model_name


def test_config_readback_overlays_the_manager_owned_fields() -> None:
    publish(ServerArgs(model_path="tiny-lm"), role="tokenizer")
    manager = _Manager()
    manager.record_config_updates("ops", max_running_requests=3)
    manager.update_model_path("tiny-lm-draft", load_format="layered")
    assert manager.config_value("max_running_requests") == 3
    assert manager.config_value("load_format") == "layered"
    assert manager.config_value("model_path") == "tiny-lm-draft"  # the manager's ...
    assert get_model().model_path == "tiny-lm"  # ... not this process's bag
    base = get_server_args().resolved_dict()
    resolved = manager.resolved_config_dict(base)
    assert {n: resolved[n] for n in MANAGER_OWNED_FIELDS} == dict.fromkeys(
        MANAGER_OWNED_FIELDS, "tiny-lm-draft"
    )
    assert (resolved["load_format"], resolved["max_running_requests"]) == ("layered", 3)
    assert base["load_format"] == "dummy" and base["model_path"] == "tiny-lm"  # base untouched
    in_effect = get_context().resolved_server_args_dict()
    assert (in_effect["load_format"], in_effect["model_path"]) == ("layered", "tiny-lm")
    assert [e.source for e in get_context().overrides_log()] == ["ops", "tokenizer.update_weights"]
    with pytest.raises(UnknownLeafError):
        manager.config_value("no_such_field")


def test_speculative_moe_backend_context_swaps_the_active_backend() -> None:
    publish(
        ServerArgs(model_path="tiny-lm", speculative_moe_runner_backend="triton"), role="scheduler"
    )
    assert get_speculative_moe_runner_backend() == "auto"  # before init: the lazy default
    initialize_moe_config()
    assert get_moe_runner_backend() == "torch"
    with speculative_moe_backend_context():
        assert get_moe_runner_backend() == "triton"  # the draft's, for the block
    assert get_moe_runner_backend() == "torch"
    with pytest.raises(ValueError), speculative_moe_backend_context():
        raise ValueError
    assert get_moe_runner_backend() == "torch"  # restored on exception
    publish(ServerArgs(model_path="tiny-lm"), role="scheduler")
    initialize_moe_config()
    with speculative_moe_backend_context():
        assert get_moe_runner_backend() == "torch"  # unconfigured: the target's


def test_the_recorder_facade_defaults_to_a_lazy_noop() -> None:
    recorder = get_global_expert_distribution_recorder()
    assert type(recorder) is NoopExpertDistributionRecorder  # never None
    assert get_global_expert_distribution_recorder() is recorder  # installed once
    with recorder.with_current_layer(0):
        recorder.on_select_experts(torch.tensor([[1, 2]]))  # call sites call it anyway
    assert recorder.dump_record() == {} and not recorder.recording
    publish(ServerArgs(model_path="tiny-lm"), role="scheduler")
    assert type(ExpertDistributionRecorder.init_new(2, 4)) is NoopExpertDistributionRecorder
    publish(
        ServerArgs(model_path="tiny-lm", expert_distribution_recorder_mode="stat"),
        role="scheduler",
    )
    real = ExpertDistributionRecorder.init_new(2, 4)
    assert isinstance(real, ExpertDistributionRecorderReal)
    set_global_expert_distribution_recorder(real)
    recorder = get_global_expert_distribution_recorder()
    recorder.start_record()
    with recorder.with_current_layer(1):
        recorder.on_select_experts(torch.tensor([[0, 3], [3, 1]]))
    recorder.stop_record()
    with recorder.with_current_layer(0):
        recorder.on_select_experts(torch.tensor([[2, 2]]))  # not recording: ignored
    assert recorder.dump_record()["logical_count"].tolist() == [[0, 0, 0, 0], [1, 1, 0, 2]]
    reset_context()
    assert type(get_global_expert_distribution_recorder()) is NoopExpertDistributionRecorder


def test_the_location_metadata_is_published_once() -> None:
    assert get_global_expert_location_metadata() is None
    set_global_expert_location_metadata({"num_physical_experts": 4})
    with pytest.raises(RuntimeError, match="published once"):
        set_global_expert_location_metadata({"num_physical_experts": 8})
    assert get_global_expert_location_metadata() == {"num_physical_experts": 4}
    reset_context()
    assert get_global_expert_location_metadata() is None
