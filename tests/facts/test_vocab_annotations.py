"""The vocabulary reads annotations as the program model does: by their CST
(facts.annotations), kept in the schema as the names they give, not by a regex
over their text."""

from __future__ import annotations

import pytest

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.declarations import schema_facts
from ctxlint.facts.vocab_derive import derive_vocabulary

RECORD = """\
from dataclasses import dataclass
from typing import Annotated, Optional
import typing


@dataclass
class ServerArgs:
    tp_size: int = 1


_global: Optional[ServerArgs] = None


def get_server_args() -> {annotation}:
    return _global
"""


def _seed(annotation: str) -> tuple[str, ...]:
    source = RECORD.replace("{annotation}", annotation)
    schemas = {"app.server_args": schema_facts(cst.parse_module(source), "app.server_args", False)}
    schemas["app.runtime"] = schema_facts(cst.parse_module("X = 1\n"), "app.runtime", False)
    vocab = derive_vocabulary(
        "app.runtime", "app.server_args.ServerArgs", schemas.get, lambda _: False
    )
    return vocab.seed_accessors


@pytest.mark.parametrize(
    "annotation",
    [
        "ServerArgs",
        '"ServerArgs"',
        "Optional[ServerArgs]",
        "typing.Optional['ServerArgs']",
        "ServerArgs | None",
        'Annotated[ServerArgs, "the seed"]',  # a regex over the text saw three names here
    ],
)
def test_an_annotation_naming_the_record_makes_a_seed(annotation: str) -> None:
    assert _seed(annotation) == ("get_server_args",)


@pytest.mark.parametrize(
    "annotation", ["list[ServerArgs]", "type[ServerArgs]", "Optional[int]", "dict[str, ServerArgs]"]
)
def test_an_annotation_naming_no_instance_of_the_record_makes_none(annotation: str) -> None:
    assert _seed(annotation) == ()


def test_the_schema_keeps_what_an_annotation_names() -> None:
    facts = schema_facts(
        cst.parse_module(
            "import a.b as m\nclass C:\n    x: 'Optional[m.D]'\n    y: list[m.D]\n"
            "    @property\n    def z(self) -> m.D | None: ...\ndef f() -> Optional[C]: ...\n"
        ),
        "p",
        False,
    )
    assert facts["classes"]["C"]["attr_types"] == {"x": ["m.D"], "z": ["m.D"]}
    assert facts["functions"]["f"]["returns_names"] == ["C"]
    assert facts["functions"]["f"]["returns"] == "Optional[C]"  # the text, for messages
