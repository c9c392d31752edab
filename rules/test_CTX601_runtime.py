"""CTX601 bag-coverage, on the reference runtime: a namespace class nobody assembles
imports fine, yet no bag carries its fields (an ``AttributeError`` at the first read)
and no record takes them; a field two namespace classes declare makes assembling
the record fail at import."""

from __future__ import annotations

import importlib
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxrt.context import get_exec, publish, reset_context
from ctxrt.fields.base import arg
from ctxrt.record import LAYOUT, ServerArgs


class ExecSampling:
    """A new sub-namespace whose class was never added to the record's list."""

    _NS_PATH = "exec.sampling"

    top_k_default: int = arg(1, help="Sampling breadth.")


DUPLICATE = """
from ctxrt.fields.base import arg
from ctxrt.fields.layout import collect_input_fields
from ctxrt.fields.memory import Memory


class KvPaging:
    _NS_PATH = "memory.paging"

    page_size: int = arg(16, help="Also declared by Memory.")


LAYOUT = collect_input_fields([Memory, KvPaging])
"""


@pytest.fixture(autouse=True)
def _fresh_context() -> Iterator[None]:
    reset_context()
    yield
    reset_context()


def test_an_unassembled_namespace_class_is_an_attribute_error_at_the_read() -> None:
    assert ExecSampling.top_k_default is not None  # the class itself is fine
    publish(ServerArgs(model_path="dummy"), role="scheduler")
    assert "top_k_default" not in LAYOUT.leaf_paths
    with pytest.raises(AttributeError, match="sampling"):
        _ = get_exec().sampling.top_k_default
    with pytest.raises(TypeError, match="top_k_default"):
        ServerArgs(model_path="dummy", top_k_default=4)  # type: ignore[call-arg]


def test_a_field_declared_twice_fails_at_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "ctxlint_duplicate_fields.py").write_text(textwrap.dedent(DUPLICATE))
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(TypeError, match=r"'page_size' declared in 'memory' and 'memory\.paging'"):
        importlib.import_module("ctxlint_duplicate_fields")
