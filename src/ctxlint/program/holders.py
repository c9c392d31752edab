"""What kind of record holder an expression is: the record tracker's verdicts.

Apart from program.records (which defines the tracker, a LibCST visitor) so that
rules can name the kinds without importing LibCST: a warm run imports every rule
module and parses nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

# Functions whose result is a copy of their first argument: a copy of a record
# is a record (CTX202 reports the copy; writes to it are still record writes).
COPY_FUNCTIONS = (
    "dataclasses.replace",
    "copy.copy",
    "copy.deepcopy",
    "copy.replace",
    "msgspec.structs.replace",
)


class HolderKind(Enum):
    """What kind of record holder an expression is (the values are the facts' `k`)."""

    SEED = "seed"  # the seed accessor's result, or an alias of it
    BUILT = "built"  # a new record: `ServerArgs(...)`
    ANNOTATED = "annotated"  # a name annotated with the record class
    NAME = "name"  # any other name: a record if the codebase's convention says so
    RECEIVER = "self"  # the method's own `self`/`cls`
    SELF_ATTR = "selfattr"  # `self.X`: known once the class is complete (settle)
    ATTR = "attr"  # `<expr>.X`: a record if X is a record parameter name


@dataclass(frozen=True, slots=True)
class Holder:
    kind: HolderKind
    name: str | None = None  # NAME, SELF_ATTR, ATTR: the name or the attribute
    cls: str | None = None  # SELF_ATTR: the class whose method it is in
    via: str | None = None  # ATTR: what the attribute is read off, as written

    @classmethod
    def of_fact(cls, fact: dict[str, Any]) -> Holder:
        """The holder a plain fact stands for (`fact()`, or records' `settle` of one)."""
        return cls(HolderKind(fact["k"]), fact.get("n"), fact.get("cls"))

    def fact(self) -> dict[str, Any]:
        """The plain facts a rule stores (SELF_ATTR waits for `settle`)."""
        out: dict[str, Any] = {"k": self.kind.value}
        if self.kind is HolderKind.SELF_ATTR:
            out["cls"] = self.cls
        if self.name is not None:
            out["n"] = self.name
        return out
