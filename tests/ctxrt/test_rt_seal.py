"""The seal is deep and the write paths keep their meaning: container leaves are
frozen, a resolved record is not copied, flags and overrides check value types, a
scope does not undo a logged override made inside it, and override_server_args
restores correctly in any order."""

from __future__ import annotations

import dataclasses
import json
import pickle

import pytest
from rt_fixtures import fresh_context  # noqa: F401 - autouse: empty context per test

from ctxrt.context import (
    get_context,
    get_flags,
    get_lora,
    get_memory,
    get_model,
    get_parallel,
    get_schedule,
    get_server_args,
    publish,
)
from ctxrt.errors import SealedError
from ctxrt.flags import MoeFlags
from ctxrt.frozen import FrozenDict, freeze
from ctxrt.record import ServerArgs
from ctxrt.resolution import declare_resolution, resolution_result


def test_container_leaves_are_frozen_in_the_bag_and_the_record() -> None:
    paths = ["adapter-a"]
    sa = ServerArgs(model_path="dummy", lora_paths=paths)
    publish(sa, role="scheduler")
    with pytest.raises(AttributeError):
        get_lora().lora_paths.append("x")  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        sa.lora_paths.append("x")  # type: ignore[attr-defined]
    paths.append("late")  # the caller's list is not aliased
    assert get_lora().lora_paths == sa.lora_paths == ("adapter-a",)
    mine = ["b"]
    get_context().override("ops", lora_paths=mine)
    mine.append("c")
    assert get_lora().lora_paths == ("b",)
    assert get_context().overrides_log()[-1].new == ("b",)


def test_frozen_mappings_refuse_writes_and_still_travel() -> None:
    frozen = freeze({"a": [1, {"b": {2}}]})
    assert isinstance(frozen, FrozenDict) and frozen == {"a": (1, {"b": frozenset({2})})}
    for write in (
        lambda: frozen.__setitem__("a", 1),
        lambda: frozen.update(a=1),
        lambda: frozen.pop("a"),
        lambda: frozen["a"][1].setdefault("c", 3),
    ):
        with pytest.raises(SealedError):
            write()
    assert pickle.loads(pickle.dumps(frozen)) == frozen
    assert isinstance(pickle.loads(pickle.dumps(frozen)), FrozenDict)
    assert json.loads(json.dumps(freeze({"a": [1]}))) == {"a": [1]}


def test_dataclasses_replace_of_a_resolved_record_is_refused() -> None:
    sa = ServerArgs(model_path="dummy")
    declare_resolution(sa, "launcher", nccl_port=12345)
    with pytest.raises(TypeError, match="not copied"):
        dataclasses.replace(sa, tp_size=2)
    assert resolution_result(sa, "nccl_port") == 12345
    ServerArgs(model_path="dummy", tp_size=2)  # building a new record stays legal


def test_flag_groups_cannot_be_replaced_by_a_wrong_type() -> None:
    flags = get_flags()
    for group in ("moe", "dp", "capture"):
        with pytest.raises(TypeError, match=f"Flags.{group}"):
            setattr(flags, group, "x")
    assert isinstance(flags.moe, MoeFlags)
    fresh = MoeFlags()
    flags.moe = fresh  # a whole group of the right type is still a legal write
    assert get_flags().moe is fresh


def test_override_checks_value_types_before_writing_anything() -> None:
    publish(ServerArgs(model_path="dummy", tp_size=2), role="scheduler")
    ctx = get_context()
    with pytest.raises(TypeError, match="tp_size takes int"):
        ctx.override("ops", max_running_requests=3, tp_size="4")
    with pytest.raises(TypeError):
        ctx.override("ops", tp_size=True)  # a bool is not a width
    with pytest.raises(TypeError):
        ctx.override("ops", enable_lora="yes")
    with pytest.raises(TypeError):
        get_model().override(context_length="long")
    with pytest.raises(TypeError):
        get_parallel().override(tp_size=2.0)
    assert get_parallel().tp_size == 2 and get_schedule().max_running_requests != 3
    assert ctx.overrides_log() == ()
    ctx.override("ops", mem_fraction_static=1, cuda_graph_max_bs=None)  # int for float; None
    assert get_memory().mem_fraction_static == 1


def test_a_scope_does_not_undo_a_logged_override_made_inside_it() -> None:
    publish(ServerArgs(model_path="dummy"), role="scheduler")
    model = get_model()
    context_length = model.context_length
    with model.override(load_format="draft", context_length=7):
        get_context().override("weight_update", load_format="layered")
        assert model.load_format == "layered"
    assert model.load_format == "layered"  # the logged change stands ...
    assert model.context_length == context_length  # ... the scope's own change is undone
    assert [e.new for e in get_context().overrides_log()] == ["layered"]
    with get_parallel().override(ep_size=4):
        get_context().override("elastic", ep_size=8)
        assert get_parallel().ep_size == 4  # the scope answers over the published layer
    assert get_parallel().ep_size == 8


def test_override_server_args_restored_out_of_order_ends_where_it_began() -> None:
    base = ServerArgs(model_path="dummy")
    publish(base, role="scheduler")
    first = get_context().override_server_args(tp_size=2)
    second = get_context().override_server_args(tp_size=4)
    first.install()
    second.install()
    first.restore()  # out of order: the later install stays in force
    assert get_parallel().tp_size == 4
    second.restore()
    assert get_server_args() is base and get_parallel().tp_size == 1
    first.install()
    second.install()
    second.restore()
    assert get_parallel().tp_size == 2
    first.restore()
    assert get_server_args() is base
