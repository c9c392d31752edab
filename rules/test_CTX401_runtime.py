"""CTX401 accessor-binding, on the reference runtime: a same-named import after the
accessor's silently rebinds the name for the whole module. The module imports fine
and every other function in it works; the read fails with ``TypeError`` only when
its path runs."""

from __future__ import annotations

import importlib
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxrt.context import get_model, publish, reset_context
from ctxrt.record import ServerArgs

LOADER = '''
def get_model(model_path):
    """Loads weights: the name collides with the bag accessor."""
    return {"weights": model_path}
'''

READER = """
from ctxrt.context import get_model
from ctxlint_shadow_loader import get_model  # the shadowing import


def served_name():
    return get_model().served_model_name


def page_tokens(n):
    return n * 16
"""


@pytest.fixture(autouse=True)
def _fresh_context() -> Iterator[None]:
    reset_context()
    yield
    reset_context()


def test_a_shadowed_accessor_fails_only_when_its_path_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "ctxlint_shadow_loader.py").write_text(textwrap.dedent(LOADER))
    (tmp_path / "ctxlint_shadow_reader.py").write_text(textwrap.dedent(READER))
    monkeypatch.syspath_prepend(str(tmp_path))
    publish(ServerArgs(model_path="tiny-lm"), role="scheduler")

    reader = importlib.import_module("ctxlint_shadow_reader")  # imports fine
    assert reader.page_tokens(2) == 32  # the rest of the module works
    assert get_model().served_model_name == "tiny-lm"  # the real accessor answers
    with pytest.raises(TypeError, match="model_path"):
        reader.served_name()  # ... the shadowed one only fails here
    assert reader.get_model is not get_model
