"""CTX602 import-time-config, on the reference runtime: a read at import time
fails before publish, a cached global and a process-wide memo miss the override
the bag follows, the legacy accessor warns, and the `.config` hop is gone."""

from __future__ import annotations

import functools
import sys
import types
from collections.abc import Iterator

import pytest

from ctxrt.context import (
    get_context,
    get_parallel,
    get_schedule,
    get_tensor_model_parallel_world_size,
    publish,
    reset_context,
)
from ctxrt.errors import ConfigNotPublishedError
from ctxrt.record import ServerArgs


@pytest.fixture(autouse=True)
def _fresh_context() -> Iterator[None]:
    reset_context()
    yield
    reset_context()


def test_a_module_reading_a_bag_at_import_fails_before_any_publish() -> None:
    source = "from ctxrt.context import get_schedule\nLIMIT = get_schedule().max_running_requests\n"
    module = types.ModuleType("import_time_reader")
    with pytest.raises(ConfigNotPublishedError):
        exec(compile(source, "import_time_reader.py", "exec"), module.__dict__)
    assert "import_time_reader" not in sys.modules


def test_a_cached_global_and_a_memo_keep_the_first_answer_after_an_override() -> None:
    publish(ServerArgs(model_path="dummy", max_running_requests=8), role="scheduler")
    cache: dict[str, int] = {}

    def cached_limit() -> int:  # the `global _X; _X = get_schedule().x` shape
        if "limit" not in cache:
            cache["limit"] = get_schedule().max_running_requests
        return cache["limit"]

    @functools.cache
    def memo_limit() -> int:
        return get_schedule().max_running_requests

    assert cached_limit() == memo_limit() == 8
    get_context().override("test", max_running_requests=16)

    assert get_schedule().max_running_requests == 16  # the decision in force
    assert cached_limit() == 8  # stale
    assert memo_limit() == 8  # stale


def test_the_legacy_accessor_is_deprecated_and_the_parallel_view_has_no_config_hop() -> None:
    publish(ServerArgs(model_path="dummy", tp_size=2), role="scheduler")
    with pytest.warns(DeprecationWarning, match=r"get_parallel\(\)\.tp_size"):
        assert get_tensor_model_parallel_world_size() == 2
    assert get_parallel().tp_size == 2  # the one spelling left
    with pytest.raises(AttributeError):
        get_parallel().config  # noqa: B018
