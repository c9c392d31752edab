"""The program: everything the whole-program phase sees, queried by every rule."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

T = TypeVar("T")

if TYPE_CHECKING:
    from ctxlint.config.settings import Config
    from ctxlint.facts.vocab import Vocabulary


@dataclass
class Program:
    """Everything the whole-program phase sees."""

    config: Config
    vocab: Vocabulary
    files: dict[str, dict[str, Any]]  # path -> {"module", "facts": {rule: ...}, "suppressions"}
    sets: dict[str, dict[str, Any]] = field(default_factory=dict)  # rule -> derived sets
    pinned: dict[str, dict[str, Any]] = field(default_factory=dict)  # rule -> baseline pins
    # whole-program indexes built once per run (the call graph, the class index)
    _memo: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def facts(self, rule_id: str) -> Iterator[tuple[str, str, Any]]:
        """(path, module, facts) of every file that has facts for `rule_id`, by path."""
        for path in sorted(self.files):
            entry = self.files[path]
            f = entry["facts"].get(rule_id)
            if f:
                yield path, entry["module"], f

    def module_path(self, module: str) -> str | None:
        for path, entry in self.files.items():
            if entry["module"] == module:
                return path
        return None

    def memo(self, key: str, build: Callable[[], T]) -> T:
        """`build()` once per run (per Program): the parts of the model every
        rule that asks shares, instead of a module global that outlives the run."""
        if key not in self._memo:
            self._memo[key] = build()
        return self._memo[key]
