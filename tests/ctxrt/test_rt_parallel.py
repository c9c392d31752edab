"""``get_parallel()``: leaves from the published bag, quotients computed at publish,
ranks and groups read through the live topology."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import torch.distributed as dist
from rt_fixtures import fresh_context  # noqa: F401 - autouse: empty context per test

from ctxrt import topology
from ctxrt.context import get_context, get_parallel, publish
from ctxrt.errors import ConfigNotPublishedError, TopologyNotInitializedError, UnknownLeafError
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
    with p.override(tp_size=1, tp_rank=0, tp_group="draft-group"):
        assert (p.tp_size, p.tp_rank, p.tp_group) == (1, 0, "draft-group")
        assert p.attn_tp_size == 4  # a size override does not move its quotient
    assert p.tp_size == 4
    with pytest.raises(TopologyNotInitializedError):
        _ = p.tp_rank  # the scoped live value is gone again
    with pytest.raises(UnknownLeafError):
        p.override(tp_size=2, tp_rnak=1)
    assert p.tp_size == 4
    get_context().override("elastic", ep_size=2)
    assert get_parallel().ep_size == 2 and get_parallel().moe_ep_size == 1


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
