"""``get_parallel()``: leaves from the published bag, quotients computed at publish,
ranks and groups read through the live topology."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace

import pytest
import torch.distributed as dist
from rt_fixtures import fresh_context  # noqa: F401 - autouse: empty context per test

from ctxrt import topology
from ctxrt.context import get_context, get_parallel, publish, reset_context
from ctxrt.errors import (
    ConfigNotPublishedError,
    ParallelTopologyError,
    TopologyNotInitializedError,
    UnknownLeafError,
)
from ctxrt.parallel_state import patch_tensor_parallel_group
from ctxrt.record import ServerArgs
from ctxrt.subsystems import initialize_model_parallel


@pytest.fixture
def single_rank_world() -> Iterator[None]:
    """A real one-process gloo world (in-memory store: no ports, no files)."""
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        yield
    finally:
        topology.destroy_model_parallel()
        dist.destroy_process_group()


def test_quotients_are_computed_at_publish() -> None:
    publish(
        ServerArgs(
            model_path="dummy",
            tp_size=8,
            dp_size=2,
            enable_dp_attention=True,
            attn_cp_size=2,
            ep_size=4,
            dcp_size=2,
        ),
        role="scheduler",
    )
    p = get_parallel()
    assert (p.attn_dp_size, p.attn_tp_size, p.attn_dcp_size, p.dcp_enabled) == (2, 2, 2, True)
    assert (p.moe_ep_size, p.moe_tp_size) == (4, 2)
    publish(ServerArgs(model_path="dummy", tp_size=2), role="scheduler")
    p = get_parallel()
    assert (p.attn_tp_size, p.attn_dp_size, p.dcp_enabled, p.moe_tp_size) == (2, 1, False, 2)


def test_ranks_raise_before_init_and_leaves_before_publish() -> None:
    with pytest.raises(TopologyNotInitializedError):
        _ = get_parallel().tp_rank
    with pytest.raises(ConfigNotPublishedError):
        _ = get_parallel().tp_size
    publish(ServerArgs(model_path="dummy", tp_size=2), role="scheduler")
    assert get_parallel().tp_size == 2
    with pytest.raises(TopologyNotInitializedError):
        _ = get_parallel().tp_group


def test_scoped_override_of_leaves_and_live_names() -> None:
    publish(ServerArgs(model_path="dummy", tp_size=4), role="scheduler")
    p = get_parallel()
    draft = {"tp_size": 1, "tp_rank": 0, "tp_group": "draft-group"}
    with p.override(**draft, attn_tp_size=1, moe_tp_size=1):
        assert (p.tp_size, p.tp_rank, p.tp_group, p.attn_tp_size) == (1, 0, "draft-group", 1)
    assert (p.tp_size, p.attn_tp_size) == (4, 4)
    with pytest.raises(TopologyNotInitializedError):
        _ = p.tp_rank  # the scoped live value is gone again
    # A size override does not move its quotient, and the view refuses the mismatch.
    with pytest.raises(ParallelTopologyError, match="attn_tp_size"):
        p.override(**draft)
    with pytest.raises(UnknownLeafError):
        p.override(tp_size=2, tp_rnak=1)
    assert p.tp_size == 4
    get_context().override("elastic", ep_size=2)
    assert get_parallel().ep_size == 2 and get_parallel().moe_ep_size == 1


def test_validation_refuses_what_sglang_refuses() -> None:
    publish(ServerArgs(model_path="dummy"), role="scheduler")
    p = get_parallel()
    with pytest.raises(ParallelTopologyError, match="tp_rank=7 is not a rank of tp_size=1"):
        p.override(tp_rank=7)
    with pytest.raises(ParallelTopologyError):
        p.override_permanently(tp_rank=7)
    assert p.stamp() == {}  # refused as a whole: nothing stamped
    with pytest.raises(ParallelTopologyError, match="tp_group has 2 ranks; tp_size=1"):
        p.override(tp_group=SimpleNamespace(world_size=2, rank_in_group=0))
    publish(
        ServerArgs(model_path="dummy", tp_size=4, dp_size=2, enable_dp_attention=True),
        role="scheduler",
    )
    p = get_parallel()
    attn = {"attn_dp_rank": 1, "attn_cp_rank": 0, "attn_tp_rank": 1}
    with pytest.raises(ParallelTopologyError, match=r"tp_rank=1 != \(attn_dp_rank"):
        p.override(tp_rank=1, **attn)  # (1 * 1 + 0) * 2 + 1 lays out rank 3
    with p.override(tp_rank=3, **attn):
        assert (p.tp_rank, p.attn_dp_rank) == (3, 1)
    with pytest.raises(ParallelTopologyError, match="moe_ep_size"):
        p.override(moe_ep_size=3)  # 4 != 3 * 1 * 4
    with pytest.raises(ParallelTopologyError, match="attn_dp_rank=2 is not a rank"):
        p.override(attn_dp_rank=2)


def test_the_stamp_sits_between_a_scope_and_the_published_leaf() -> None:
    publish(ServerArgs(model_path="dummy", tp_size=2), role="scheduler")
    p = get_parallel()
    p.override_permanently(tp_rank=1)
    assert p.tp_rank == 1  # no topology yet: the stamp answers
    with p.override(tp_rank=0):
        assert p.tp_rank == 0  # a scope over the stamp
    assert p.tp_rank == 1
    p.override_permanently(tp_size=4, attn_tp_size=4, moe_tp_size=4)
    get_context().override("elastic", tp_size=8)  # the published layer moves ...
    assert p.tp_size == 4  # ... under the stamp
    assert get_context().overrides_log()[-1].new == 8  # the log records the write
    publish(ServerArgs(model_path="dummy", tp_size=4), role="scheduler")
    p = get_parallel()
    assert (p.tp_rank, p.tp_size) == (1, 4)  # a re-publish keeps the stamp
    p.clear_stamp()
    assert p.tp_size == 4 and p.stamp() == {}
    with pytest.raises(TopologyNotInitializedError):
        _ = p.tp_rank
    reset_context()
    get_parallel().override_permanently(tp_rank=0)  # stamping before publish works
    assert get_parallel().tp_rank == 0
    with pytest.raises(ConfigNotPublishedError):
        _ = get_parallel().tp_size
    reset_context()
    with pytest.raises(TopologyNotInitializedError):
        _ = get_parallel().tp_rank  # reset drops the stamp


def test_a_stamped_leaf_is_still_a_plain_attribute_under_compile() -> None:
    import torch

    publish(ServerArgs(model_path="dummy", tp_size=2), role="scheduler")
    get_parallel().override_permanently(tp_size=4, attn_tp_size=4, moe_tp_size=4)
    compiled = torch.compile(lambda x: x * get_parallel().tp_size, fullgraph=True, backend="eager")
    assert compiled(torch.ones(1)).item() == 4
    get_parallel().clear_stamp()
    assert compiled(torch.ones(1)).item() == 2  # the guard saw the stamp go
    torch._dynamo.reset()


def test_live_topology_after_init(single_rank_world: None) -> None:
    publish(ServerArgs(model_path="dummy"), role="scheduler")
    with pytest.raises(TopologyNotInitializedError):
        _ = get_parallel().attn_tp_rank
    initialize_model_parallel()
    p = get_parallel()
    assert (p.world_rank, p.tp_rank, p.pp_rank, p.attn_tp_rank, p.moe_ep_rank) == (0, 0, 0, 0, 0)
    assert isinstance(p.tp_group, dist.ProcessGroup)
    assert dist.get_world_size(p.tp_group) == p.tp_size == 1
    assert p.dcp_group is None  # the one optional group: only with dcp_size > 1
    assert (p.moe_tp_rank, dist.get_world_size(p.moe_tp_group)) == (0, p.moe_tp_size)


def test_patch_tensor_parallel_group_is_a_draft_scope(single_rank_world: None) -> None:
    publish(ServerArgs(model_path="dummy"), role="scheduler")
    initialize_model_parallel()
    p = get_parallel()
    target_group, draft_group = p.tp_group, dist.new_group([0])
    with patch_tensor_parallel_group(draft_group, owns_attention=True) as inner:
        assert inner is p
        assert (p.tp_group, p.attn_tp_group, p.moe_tp_group) == (draft_group,) * 3
        assert (p.tp_size, p.tp_rank, p.attn_cp_group, p.moe_ep_group) == (1, 0, None, None)
        with pytest.raises(RuntimeError, match="already active"):
            patch_tensor_parallel_group(draft_group, owns_attention=True).__enter__()
    assert p.tp_group is target_group and p.attn_cp_group is not None
    with (
        pytest.raises(ValueError, match="boom"),
        patch_tensor_parallel_group(draft_group, owns_attention=False),
    ):
        raise ValueError("boom")
    assert p.tp_group is target_group  # restored on exception, and re-enterable
    with pytest.raises(ValueError, match="process group"):
        patch_tensor_parallel_group("not-a-group", owns_attention=True)


def test_a_draft_group_narrower_than_the_target_keeps_its_attention_only_if_it_fits() -> None:
    publish(ServerArgs(model_path="dummy", tp_size=2), role="scheduler")
    narrow = SimpleNamespace(world_size=1, rank_in_group=0)
    with pytest.raises(ParallelTopologyError, match="attn_tp_size"):
        patch_tensor_parallel_group(narrow, owns_attention=False).__enter__()
    with patch_tensor_parallel_group(narrow, owns_attention=True):
        assert (get_parallel().tp_size, get_parallel().attn_tp_size) == (1, 1)
    assert get_parallel().tp_size == 2
