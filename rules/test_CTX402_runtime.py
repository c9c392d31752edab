"""CTX402 test-double, on the reference runtime: a replaced accessor binding
misses a reader that imported the accessor, a stand-in record is never read by
code that reads the bag, and the publishing test override reaches both and is
restored afterwards."""

from __future__ import annotations

import types
from collections.abc import Iterator

import pytest

import ctxrt.context as runtime
from ctxrt.context import get_context, get_parallel, reset_context
from ctxrt.errors import ConfigNotPublishedError

READER = """\
from ctxrt.context import get_parallel


def shard(n: int, server_args: object = None) -> int:
    return n // get_parallel().tp_size
"""


@pytest.fixture(autouse=True)
def _fresh_context() -> Iterator[None]:
    reset_context()
    yield
    reset_context()


@pytest.fixture
def reader() -> types.ModuleType:
    module = types.ModuleType("ctx402_reader")
    exec(compile(READER, "ctx402_reader.py", "exec"), module.__dict__)
    return module


def test_a_replaced_binding_misses_the_reader_that_imported_the_accessor(
    reader: types.ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    stand_in = types.SimpleNamespace(tp_size=4)
    monkeypatch.setattr(runtime, "get_parallel", lambda: stand_in)
    assert runtime.get_parallel().tp_size == 4  # the stub answers where it was put...
    with pytest.raises(ConfigNotPublishedError):
        reader.shard(8)  # ...but the reader bound the real accessor at import


def test_a_stand_in_record_is_never_read_by_code_that_reads_the_bag(
    reader: types.ModuleType,
) -> None:
    with pytest.raises(ConfigNotPublishedError):
        reader.shard(8, server_args=types.SimpleNamespace(tp_size=4))


def test_the_publishing_override_reaches_every_reader_and_is_restored(
    reader: types.ModuleType,
) -> None:
    with get_context().override_server_args(tp_size=4):
        assert reader.shard(8) == 2
        assert get_parallel().tp_size == 4
    assert not get_context().is_published  # restored: nothing leaks into the next test
