"""Publish and the accessors: fail closed before publish, projection from the
declarations, sealed bags, last-publish-wins, reset, assert_published."""

from __future__ import annotations

import pytest
from rt_fixtures import fresh_context  # noqa: F401 - autouse: empty context per test

from ctxrt import context
from ctxrt.bag import ConfigBag
from ctxrt.context import (
    assert_published,
    get_context,
    get_exec,
    get_flags,
    get_forward,
    get_model,
    get_parallel,
    get_resources,
    get_schedule,
    get_server_args,
    publish,
    reset_context,
)
from ctxrt.errors import BagSealedError, ConfigNotPublishedError, PublishAssertionError
from ctxrt.fields.layout import TOP_NAMESPACES
from ctxrt.record import LAYOUT, ServerArgs
from ctxrt.roles import ROLE_NAMESPACE_SETS

# Derived from the layout, not hand-kept: one accessor per top-level namespace.
BAG_NAMESPACES = [ns for ns in TOP_NAMESPACES if ns != "parallel"]


def _accessor(ns: str):  # type: ignore[no-untyped-def]
    return getattr(context, f"get_{ns}")


def _leaf(name: str) -> object:
    """Read a leaf through its accessor and bag path, as business code spells it."""
    top, *rest = LAYOUT.leaf_paths[name].split(".")
    obj = get_parallel() if top == "parallel" else _accessor(top)()
    for part in rest:
        obj = getattr(obj, part)
    return getattr(obj, name)


@pytest.mark.parametrize("ns", BAG_NAMESPACES)
def test_every_bag_accessor_fails_closed_before_publish(ns: str) -> None:
    with pytest.raises(ConfigNotPublishedError, match=repr(ns)):
        _accessor(ns)()


def test_seed_and_parallel_leaves_fail_closed_before_publish() -> None:
    with pytest.raises(ConfigNotPublishedError):
        get_server_args()
    with pytest.raises(ConfigNotPublishedError, match="'parallel'"):
        _ = get_parallel().tp_size
    with pytest.raises(ValueError):  # the design's exception family for an unpublished leaf
        _ = get_parallel().attn_tp_size
    with pytest.raises(AttributeError):
        _ = get_parallel().no_such_leaf


def test_publish_projects_every_leaf_from_the_declarations() -> None:
    sa = ServerArgs(model_path="tiny-lm", tp_size=4, ep_size=2, dcp_size=2)
    publish(sa, role="scheduler")
    resolved = sa.resolved_dict()
    for name in LAYOUT.leaf_paths:
        assert _leaf(name) == resolved[name], name
    assert get_exec().kernel.attention_backend == resolved["attention_backend"] is not None
    assert get_server_args() is sa
    assert get_context().role == "scheduler"


def test_bags_are_sealed_like_the_record() -> None:
    publish(ServerArgs(model_path="dummy"), role="scheduler")
    moe = get_exec().moe
    with pytest.raises(BagSealedError):
        moe.moe_runner_backend = "triton"
    with pytest.raises(BagSealedError):
        get_exec().moe = None
    with pytest.raises(BagSealedError):
        del get_schedule().max_running_requests
    with pytest.raises(BagSealedError):
        get_parallel().tp_size = 8
    assert get_exec().moe is moe and moe.moe_runner_backend != "triton"
    assert isinstance(get_exec().kernel, ConfigBag)


def test_last_publish_wins_and_reprojects() -> None:
    first = ServerArgs(model_path="tiny-lm", tp_size=2)
    second = ServerArgs(model_path="dummy", tp_size=4)
    publish(first, role="tokenizer")
    get_context().override("test", max_running_requests=3)
    publish(second, role="scheduler")
    assert get_server_args() is second
    assert get_model().model_path == "dummy"
    assert get_parallel().tp_size == 4
    assert get_schedule().max_running_requests == second.resolved_dict()["max_running_requests"]
    assert get_context().overrides_log() == ()  # overrides belonged to the replaced config


def test_reset_drops_config_and_installs_fresh_tiers() -> None:
    publish(ServerArgs(model_path="dummy"), role="scheduler")
    flags, resources, forward = get_flags(), get_resources(), get_forward()
    flags.moe.runner_backend = "triton"
    reset_context()
    with pytest.raises(ConfigNotPublishedError):
        get_exec()
    assert get_flags() is not flags and get_flags().moe.runner_backend == "auto"
    assert get_resources() is not resources and get_forward() is not forward


def test_assert_published_catches_an_entry_that_forgot() -> None:
    sa = ServerArgs(model_path="dummy")
    with pytest.raises(PublishAssertionError, match="no publish"):
        assert_published(sa)
    publish(sa, role="scheduler")
    assert_published(sa, role="scheduler")
    with pytest.raises(PublishAssertionError, match="other than"):
        assert_published(ServerArgs(model_path="dummy"))
    with pytest.raises(PublishAssertionError, match="'tokenizer'"):
        assert_published(sa, role="tokenizer")


def test_publish_takes_a_known_role_and_a_resolved_record() -> None:
    assert "launcher" not in ROLE_NAMESPACE_SETS  # the launch path publishes as tokenizer
    with pytest.raises(ValueError, match="unknown role"):
        publish(ServerArgs(model_path="dummy"), role="launcher")
    with pytest.raises(TypeError):
        publish(object(), role="scheduler")  # type: ignore[arg-type]
    with pytest.raises(ConfigNotPublishedError):
        get_exec()


def test_runtime_context_has_no_bag_named_members() -> None:
    publish(ServerArgs(model_path="dummy"), role="scheduler")
    ctx = get_context()
    assert "__getattr__" not in type(ctx).__dict__
    for ns in TOP_NAMESPACES:
        assert not hasattr(ctx, f"get_{ns}"), ns
        assert not hasattr(ctx, ns), ns
    with pytest.raises(AttributeError):
        ctx.get_disagg()  # type: ignore[attr-defined]


def test_a_second_context_does_not_feed_the_accessors() -> None:
    publish(ServerArgs(model_path="dummy", tp_size=2), role="scheduler")
    other = context.RuntimeContext()
    other.publish(ServerArgs(model_path="tiny-lm", tp_size=4), role="scheduler")
    assert get_parallel().tp_size == 2 and get_model().model_path == "dummy"
    other.reset()
    assert get_exec() is get_context().config_bag("exec")
