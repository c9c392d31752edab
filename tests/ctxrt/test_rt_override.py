"""Post-publish writes: ``get_context().override`` (atomic, logged, never the record),
``config_leaf``, the scoped bag override, and ``override_server_args``."""

from __future__ import annotations

import pytest
from rt_fixtures import fresh_context  # noqa: F401 - autouse: empty context per test

from ctxrt.context import (
    get_context,
    get_device,
    get_exec,
    get_model,
    get_parallel,
    get_schedule,
    get_server_args,
    publish,
)
from ctxrt.errors import ConfigNotPublishedError, UnknownLeafError
from ctxrt.record import ServerArgs
from ctxrt.resolution import resolution_result


@pytest.fixture
def published() -> ServerArgs:
    sa = ServerArgs(model_path="tiny-lm", tp_size=4, dp_size=2, enable_dp_attention=True)
    publish(sa, role="scheduler")
    return sa


def test_override_writes_the_leaf_logs_provenance_and_leaves_the_record(
    published: ServerArgs,
) -> None:
    before = resolution_result(published, "moe_runner_backend")
    get_context().override("weight_update", moe_runner_backend="triton", load_format="layered")
    assert get_exec().moe.moe_runner_backend == "triton"
    assert get_model().load_format == "layered"
    log = get_context().overrides_log()
    assert [(e.source, e.field, e.namespace, e.old, e.new) for e in log] == [
        ("weight_update", "moe_runner_backend", "exec.moe", before, "triton"),
        ("weight_update", "load_format", "model", "dummy", "layered"),
    ]
    assert resolution_result(published, "moe_runner_backend") == before
    assert published.resolved_dict()["load_format"] == "dummy"


def test_override_is_atomic_one_bad_name_writes_nothing(published: ServerArgs) -> None:
    backend = get_exec().moe.moe_runner_backend
    with pytest.raises(UnknownLeafError, match="no_such_leaf"):
        get_context().override("x", moe_runner_backend="triton", no_such_leaf=1)
    with pytest.raises(UnknownLeafError):
        get_context().override("x", max_running_requests=1, moe=None)  # a sub-bag, not a leaf
    assert get_exec().moe.moe_runner_backend == backend
    assert get_schedule().max_running_requests != 1
    assert get_context().overrides_log() == ()


def test_override_and_config_leaf_need_a_publish() -> None:
    with pytest.raises(ConfigNotPublishedError):
        get_context().override("x", tp_size=2)
    with pytest.raises(ConfigNotPublishedError):
        get_context().config_leaf("tp_size")


def test_config_leaf_is_the_read_side_of_override(published: ServerArgs) -> None:
    ctx = get_context()
    assert ctx.config_leaf("attn_tp_size") == get_parallel().attn_tp_size == 2
    ctx.override("ctl", chunked_prefill_size=64)
    assert ctx.config_leaf("chunked_prefill_size") == 64
    for name in ("moe", "exec", "_path", "override", "nope"):
        with pytest.raises(UnknownLeafError):
            ctx.config_leaf(name)


def test_a_seed_read_misses_the_override_a_bag_read_sees(published: ServerArgs) -> None:
    get_context().override("ops", max_running_requests=2)
    assert get_schedule().max_running_requests == 2
    assert get_server_args().max_running_requests is None  # the operator's input, stale


def test_derived_leaves_are_computed_at_publish_not_moved_by_overriding_inputs(
    published: ServerArgs,
) -> None:
    assert get_parallel().attn_tp_size == 2
    get_context().override("elastic", tp_size=8)
    assert get_parallel().tp_size == 8 and get_parallel().attn_tp_size == 2
    get_context().override("elastic", attn_tp_size=4)  # name the width to move it
    assert get_parallel().attn_tp_size == 4


def test_scoped_bag_override_restores_on_exit_and_on_exception(published: ServerArgs) -> None:
    model = get_model()
    with model.override(load_format="draft", context_length=7):
        assert get_model().load_format == "draft" and get_model().context_length == 7
        with model.override(load_format="inner"):
            assert get_model().load_format == "inner"
        assert get_model().load_format == "draft"
    assert (model.load_format, model.context_length) == ("dummy", 128)
    with pytest.raises(RuntimeError, match="boom"), get_device().override(device="meta"):
        assert get_device().device == "meta"
        raise RuntimeError("boom")
    assert get_device().device == published.resolved_dict()["device"]
    with pytest.raises(UnknownLeafError):
        model.override(load_format="x", tp_size=1)  # tp_size is not a model leaf
    assert model.load_format == "dummy"


def test_override_server_args_publishes_when_entered_and_restores() -> None:
    bare = get_context().override_server_args(tp_size=2)
    with pytest.raises(ConfigNotPublishedError):
        get_exec()  # building it published nothing
    with get_context().override_server_args(tp_size=2, max_running_requests=5) as sa:
        assert get_server_args() is sa
        assert get_parallel().tp_size == 2 and get_schedule().max_running_requests == 5
    with pytest.raises(ConfigNotPublishedError):
        get_exec()
    outer = ServerArgs(model_path="tiny-lm")
    publish(outer, role="tokenizer")
    get_context().override("ops", log_level="debug")
    bare.install()
    assert get_parallel().tp_size == 2 and get_context().overrides_log() == ()
    bare.restore()
    assert get_server_args() is outer and get_context().role == "tokenizer"
    assert [e.field for e in get_context().overrides_log()] == ["log_level"]
    with pytest.raises(KeyError), get_context().override_server_args(dp_size=1):
        raise KeyError("inside")
    assert get_server_args() is outer


def test_an_override_does_not_cross_a_process_boundary() -> None:
    """``override`` changes this process's bag; a spawned child publishes the record
    it was handed and sees the resolved value (apply a control-plane change in every
    process that reads it, or declare it before the record is handed on)."""
    import multiprocessing as mp

    import rt_spawn_probes

    sa = ServerArgs(model_path="tiny-lm")
    publish(sa, role="scheduler")
    resolved = resolution_result(sa, "max_running_requests")
    get_context().override("ops", max_running_requests=resolved + 1)
    spawn = mp.get_context("spawn")
    results = spawn.Queue()
    child = spawn.Process(target=rt_spawn_probes.report_overridden_leaf, args=(sa, results))
    child.start()
    seen = results.get(timeout=60)
    child.join(30)
    assert child.exitcode == 0
    assert get_schedule().max_running_requests == resolved + 1  # the parent: overridden
    assert seen == (resolved, 0)  # the child: the resolved value, an empty log
