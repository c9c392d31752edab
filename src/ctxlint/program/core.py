"""The program: everything the whole-program phase sees, queried by every rule."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from ctxlint.facts.typed import Decoded, decoder

T = TypeVar("T")


class FileTable(dict[str, dict[str, Any]]):
    """Program.files: path -> that file's facts, counting its changes (the
    fixed point adds files between rounds; what was built from fewer is stale)."""

    version = 0

    def __setitem__(self, key: str, value: dict[str, Any]) -> None:
        self.version += 1
        super().__setitem__(key, value)

    def __delitem__(self, key: str) -> None:
        self.version += 1
        super().__delitem__(key)

    def update(self, *args: Any, **kwargs: Any) -> None:
        self.version += 1
        super().update(*args, **kwargs)

    def pop(self, *args: Any) -> Any:
        self.version += 1
        return super().pop(*args)

    def setdefault(self, key: str, default: Any = None) -> Any:
        self.version += 1
        return super().setdefault(key, default)

    def clear(self) -> None:
        self.version += 1
        super().clear()


if TYPE_CHECKING:
    from ctxlint.config.settings import Config
    from ctxlint.facts.vocab import Vocabulary


def _typed(facts: dict[str, Any], key: str, found: Any, read: Callable[[Any], T]) -> T:
    """A part's facts decoded, once per file entry: the typed facts then stand in
    the entry for their JSON, which is not kept beside them."""
    if type(found) is Decoded:
        if found.read is not read:
            raise TypeError(f"facts {key!r} asked as another kind than they were read as")
        return found.value  # type: ignore[no-any-return]
    value = read(found)
    facts[key] = Decoded(value, read)
    return value


@dataclass
class Carried:
    """Whole-program answers kept from one program to the next by a resident
    front end (engine.check_memo), each with a token of the facts it read:
    `token(reads)` says what the files and those facts keys are in the program
    asking now (None: it cannot be told), so an answer whose token is the same
    is the one a build would make again (a statement edit inside a function
    changes no class: the class index stays)."""

    token: Callable[[tuple[str, ...]], str | None]
    values: dict[str, tuple[str, Any]] = field(default_factory=dict)  # key -> (token, answer)
    asked: set[str] = field(default_factory=set)  # the keys this program asked


@dataclass
class Program:
    """Everything the whole-program phase sees."""

    config: Config
    vocab: Vocabulary
    files: dict[str, dict[str, Any]]  # path -> {"module", "facts": {rule: ...}, "suppressions"}
    sets: dict[str, dict[str, Any]] = field(default_factory=dict)  # rule -> derived sets
    pinned: dict[str, dict[str, Any]] = field(default_factory=dict)  # rule -> baseline pins
    # every checked file (discovery's list, parsed or not): a rule's set of files
    # by convention (test files, say) does not depend on what other rules parse
    paths: tuple[str, ...] = ()
    # whole-program indexes built once per state of `files` (the call graph, the
    # class index), and per-file values built once per file entry (its summaries)
    _memo: dict[str, tuple[int, Any]] = field(default_factory=dict, repr=False, compare=False)
    _per_file: dict[tuple[str, str], tuple[Any, Any]] = field(
        default_factory=dict, repr=False, compare=False
    )
    # answers kept from an earlier program (a resident's), while its check runs
    carried: Carried | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.files, FileTable):
            self.files = FileTable(self.files)

    def facts(self, rule_id: str) -> Iterator[tuple[str, str, Any]]:
        """(path, module, facts) of every file that has facts for `rule_id`, by path."""
        for path in sorted(self.files):
            entry = self.files[path]
            f = entry["facts"].get(rule_id)
            if f:
                yield path, entry["module"], f

    def typed_facts(self, key: str, kind: type[T] | Any) -> Iterator[tuple[str, str, T]]:
        """(path, module, facts) as `facts(key)`, the facts decoded as `kind` (the
        visitor's typed facts, facts.typed) once per file entry."""
        read = decoder(kind)
        for path in sorted(self.files):
            entry = self.files[path]
            facts = entry["facts"].get(key)
            if facts:
                yield path, entry["module"], _typed(entry["facts"], key, facts, read)

    def typed_file(self, path: str, key: str, kind: type[T] | Any) -> T | None:
        """One file's facts for `key` decoded as `kind` (None: it has none)."""
        facts = self.files[path]["facts"]
        found = facts.get(key)
        return _typed(facts, key, found, decoder(kind)) if found else None

    def module_path(self, module: str) -> str | None:
        for path, entry in self.files.items():
            if entry["module"] == module:
                return path
        return None

    def memo(self, key: str, build: Callable[[], T], reads: tuple[str, ...] | None = None) -> T:
        """`build()` once per run (per Program) and state of its files: the parts
        of the model every rule that asks shares, instead of a module global
        that outlives the run. A fixed-point round that adds files rebuilds it.
        `reads`: every facts key the answer depends on (besides the files,
        their modules, the vocabulary and the config): while a resident's
        answers are `carried`, one built from the same of these is reused."""
        version = self.files.version  # type: ignore[attr-defined]
        hit = self._memo.get(key)
        carried = self.carried if reads is not None else None
        token = carried.token(reads) if carried is not None and reads is not None else None
        if hit is None or hit[0] != version:
            kept = carried.values.get(key) if carried is not None and token is not None else None
            value = kept[1] if kept is not None and kept[0] == token else build()
            hit = self._memo[key] = (version, value)
        if carried is not None and token is not None:  # (one built before, by a round, too)
            carried.values[key] = (token, hit[1])
            carried.asked.add(key)
        return hit[1]  # type: ignore[no-any-return]

    def built(self, key: str) -> bool:
        """Whether `memo(key, ...)` would answer without building."""
        hit = self._memo.get(key)
        return hit is not None and hit[0] == self.files.version  # type: ignore[attr-defined]

    def release(self) -> None:
        """Drop what the queries built (the memo, the per-file values): a
        resident front end calls it on the program a newer check replaced. A
        memoised part that keeps its program (the config index, the plugin
        graph) makes a cycle, which only the cyclic GC would free, late: the
        server held every replaced program until a full collection."""
        self._memo.clear()
        self._per_file.clear()

    def per_file(self, key: str, path: str, build: Callable[[dict[str, Any]], T]) -> T:
        """`build(facts entry of path)` once per entry: what one file's facts make
        (its call summary, say) is reused by every rebuild of the whole."""
        entry = self.files[path]
        hit = self._per_file.get((key, path))
        if hit is None or hit[0] is not entry:
            hit = self._per_file[(key, path)] = (entry, build(entry))
        return hit[1]  # type: ignore[no-any-return]
