"""The resolution pipeline and its one declaration writer, derived from the code.

From the part "resolution"'s facts (program.resolution_facts) and the call graph:

- the stash: a private slot of the record that some function appends to through
  its parameter and that a view reads (a class defining `__getattr__`, or what
  its methods call, reads the slot);
- the declaration function: the function appending to the stash through its
  parameter that most functions call (SGLang's `declare_resolution`);
- the view functions: functions returning a view (or another view function's
  result), and the names their results are conventionally bound to;
- the registered callables: functions decorated by a registrar defined beside
  the declaration function or a view function (`register_model_override`);
- the pass runners: functions that call a parameter handing it a view and then
  reach the declaration function (`run_post_process_pass`), and the passes
  handed to them; the foreign-default wrappers: the others calling a parameter
  before declaring (`record_foreign_defaults`), and the resolvers handed to them;
- the pipeline: the record's `__post_init__` (and, where it does not resolve,
  the record's methods reaching the declaration function) and everything it
  reaches (calls, and functions it hands by name as an argument), every function
  taking a record of the modules it runs in beside the declaration function (the
  resolution modules) and of the field-class modules, the registered callables,
  the passes and the wrapped resolvers, closed again over calls.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ctxlint.program.call_model import Global
from ctxlint.program.calls import CallGraph, call_graph, short
from ctxlint.program.core import Program
from ctxlint.program.resolution_schema import ResolutionFileFacts

if TYPE_CHECKING:
    from ctxlint.facts.vocab import Vocabulary

KEY = "resolution"  # the part's key (program.resolution_facts keeps its visitor)

__all__ = ["KEY", "Resolution", "resolution", "start_tokens"]


def resolution(program: Program) -> Resolution:
    """The derived pipeline, once per run (and fixed-point round)."""
    return program.memo(KEY, lambda: Resolution(program))


def start_tokens(vocab: Vocabulary) -> set[str]:
    """`module:` tokens of the files the pipeline is derived from first: the
    record's module and the field classes' modules."""
    modules = {vocab.record_module, *(q.rpartition(".")[0] for q in vocab.field_classes)}
    return {f"module:{m}" for m in modules}


def _package(module: str) -> str:
    return module.rpartition(".")[0]


class Resolution:
    def __init__(self, program: Program) -> None:
        self.graph = call_graph(program)
        self.files: list[tuple[str, str, ResolutionFileFacts]] = list(
            program.typed_facts(KEY, ResolutionFileFacts)
        )
        self.consts = {
            f"{module}.{name}": value
            for _, module, f in self.files
            for name, value in f.consts.items()
        }
        self._find_stash()
        self._find_registrars()
        self._find_runners()
        self._find_pipeline(program.vocab)

    def declaration_call(self) -> str | None:
        """The declaration function's call as this tree declares it
        (`declare_resolution(server_args, source, **fields)`; a method's receiver
        left out), for a hint to name; None where no signature was recorded."""
        if self.declaration is None:
            return None
        sig = next(
            (s for _, _, f in self.files if (s := f.signatures.get(self.declaration))),
            None,
        )
        if sig is None:
            return None
        name = self.declaration.rpartition(".")[2]
        if self.graph.funcs[self.declaration].cls is not None:
            sig = "(" + sig[1:-1].partition(",")[2].lstrip() + ")"  # the receiver left out
        return f"{name}{sig}"

    def declaration_hint(self) -> str:
        """The declaration call as this tree's def spells it (the design's spelling
        where the tree derives none)."""
        return self.declaration_call() or "declare_resolution(record, source, **fields)"

    def entry_reaching(self, q: str) -> str | None:
        """The pipeline entry that reaches function `q`, shortened for a message
        (None: `q` is not resolution code)."""
        if q not in self.pipeline or self.declaration is None:
            return None
        seed = self.chain(q)[0]
        return short(seed, self.graph.funcs[seed].module)

    def slot(self, key: str) -> str | None:
        """The slot a stash fact names: itself, or the constant's value (`@module.NAME`)."""
        return self.consts.get(key[1:]) if key.startswith("@") else key

    # -- the stash: appended through a parameter, read by a view --------
    def _find_stash(self) -> None:
        """The stash, the view functions and classes, the declaration function."""
        g = self.graph
        appended, reads = self._appended_and_read()
        getattr_classes = {c for _, _, f in self.files for c in f.getattr_classes}
        built = self._built(getattr_classes)
        methods: dict[str, list[str]] = {}
        for q, fn in g.funcs.items():
            if fn.cls in getattr_classes:
                methods.setdefault(fn.cls, []).append(q)
        read_by: dict[str, set[str]] = {}  # candidate -> slots it or its view's methods read
        for q, classes in built.items():
            seeds = [q, *(m for c in sorted(classes) for m in methods.get(c, ()))]
            read_by[q] = {k for x in _forward(g, seeds, 3) for k in reads.get(x, ())}
        # the stash: appended through a parameter, read by a view
        self.stash: set[str] = set(appended) & {k for ks in read_by.values() for k in ks}
        self.view_functions: set[str] = {q for q, ks in read_by.items() if ks & self.stash}
        self.view_classes: set[str] = {c for q in self.view_functions for c in built[q]}
        # how code names the stash: its slot, or a constant holding it
        self.slot_names = self.stash | {
            q.rpartition(".")[2] for q, v in self.consts.items() if v in self.stash
        }
        appenders = sorted({q for k in self.stash for q in appended[k] if q in g.funcs})
        self.appenders = appenders
        self.declaration: str | None = None
        if appenders:
            self.declaration = max(appenders, key=lambda q: (len(g.callers.get(q, ())), q))
        self.view_bindings: dict[str, set[str]] = {}
        for _, _, f in self.files:
            for name, callee in f.view_bindings:
                if any(t in self.view_functions for t in g.resolve_global(callee)):
                    self.view_bindings.setdefault(name, set()).add(callee.rpartition(".")[2])

    def _appended_and_read(self) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
        """slot -> the functions appending to it through a parameter, and
        function -> the slots it reads."""
        appended: dict[str, set[str]] = {}
        reads: dict[str, set[str]] = {}
        for _, _, f in self.files:
            for s in f.stash:
                k = self.slot(s.slot)
                if k and s.how == "append" and s.param and s.fn:
                    appended.setdefault(k, set()).add(s.fn)
            for fn, key in f.slot_reads:
                k = self.slot(key)
                if k and fn:
                    reads.setdefault(fn, set()).add(k)
        return appended, reads

    def _built(self, getattr_classes: set[str]) -> dict[str, set[str]]:
        """The candidates: functions returning an object of a class defining
        __getattr__ (or another candidate's result), with the classes each builds."""
        g = self.graph
        returns = {q: r for _, _, f in self.files for q, r in f.returns.items()}
        built: dict[str, set[str]] = {}
        changed = True
        while changed:
            changed = False
            for q, names in returns.items():
                if q not in g.funcs:
                    continue
                found: set[str] = set()
                for n in names:
                    cls = g.resolve_class(n)
                    if cls in getattr_classes:
                        found.add(cls)
                    for t in g.resolve_global(n) if cls is None else ():
                        found |= built.get(t, set())
                if found - built.get(q, set()):
                    built.setdefault(q, set()).update(found)
                    changed = True
        return built

    # -- registrars, runners and what is handed to them ------------------
    def _find_registrars(self) -> None:
        """The registrars beside the declaration or a view function, and what they register."""
        g = self.graph
        core = {q.rpartition(".")[0] for q in self.view_functions}
        if self.declaration:
            core.add(g.funcs[self.declaration].module)
        self.core_modules = core
        self.decorator_like = {q for _, _, f in self.files for q in f.decorator_like}
        self.registrars: set[str] = set()
        self.registered: set[str] = set()
        for _, _, f in self.files:
            for q, decos in f.decorators.items():
                for d in decos:
                    found = [
                        t
                        for t in g.resolve_global(d)
                        if g.funcs[t].module in core and t in self.decorator_like
                    ]
                    if found and q in g.funcs:
                        self.registrars.update(found)
                        self.registered.add(q)

    def _find_runners(self) -> None:
        """The pass runners and the foreign-default wrappers, and the passes and
        resolvers handed to them."""
        g, core = self.graph, self.core_modules
        reach_decl = g.reaching([self.declaration]) if self.declaration else set()
        self.pass_runners: set[str] = set()
        self.wrappers: set[str] = set()
        for _, _, f in self.files:
            for q, handed in f.param_calls.items():
                if q not in reach_decl or q == self.declaration or g.funcs[q].module not in core:
                    continue
                if any(self.is_view(n) for n in handed if n != "?"):
                    self.pass_runners.add(q)
                else:
                    self.wrappers.add(q)
        self.passes: set[str] = set()
        self.resolvers: set[str] = set()
        self.raw_handed: dict[str, list[tuple[str, ...]]] = {}  # function -> names it hands
        # functions that handed a name the facts did not keep (a local: it names no function)
        self.local_handed = {q for _, _, f in self.files for q in f.local_handed}
        self._handed: dict[str, set[str]] = {}  # handed(): resolved on first ask
        runners = self.pass_runners | self.wrappers
        for _, _, f in self.files:
            for h in f.handed:
                self.raw_handed.setdefault(h.fn, []).append(h.refs)
                # a handed name is resolved only where it matters here (handed to
                # a runner); the closure resolves the rest of the functions it visits
                if not runners:
                    continue
                callee = set(g.resolve_global(h.callee))
                if not callee & runners:
                    continue
                refs = {t for r in h.refs for t in self._functions(r)}
                if callee & self.pass_runners:
                    self.passes |= refs
                else:
                    self.resolvers |= refs

    # -- the pipeline ---------------------------------------------------
    def _find_pipeline(self, vocab: Vocabulary) -> None:
        """The entries, the resolution modules, the seeds and their closure."""
        g = self.graph
        # the record's __post_init__; where it does not resolve (SGLang 0.5.23
        # leaves it empty and resolves in `resolve_once`, which launchers and
        # publishers call), the record's methods reaching the declaration
        # function. Where it does, resolution is over when the record is built:
        # a method it does not reach runs later (0.5.17's `check_server_args`,
        # which reaches `run_post_process_pass`, runs from the launcher)
        reach_decl = g.reaching([self.declaration]) if self.declaration else set()
        built_resolved = any(f"{c}.__post_init__" in reach_decl for c in vocab.record_classes)
        self.entries = sorted(
            q
            for q, fn in g.funcs.items()
            if fn.cls in vocab.record_classes
            and (q == f"{fn.cls}.__post_init__" or (q in reach_decl and not built_resolved))
        )
        self.via: dict[str, str] = {}  # a pipeline function -> what brought it in
        first = self._close(self.entries)
        home = _package(g.funcs[self.declaration].module) if self.declaration else None
        field_modules = {q.rpartition(".")[0] for q in vocab.field_classes}
        self.resolution_modules = sorted(
            {g.funcs[q].module for q in first if home and _package(g.funcs[q].module) == home}
            | (field_modules & {fn.module for fn in g.funcs.values()})
        )
        modules = set(self.resolution_modules)
        takers = {q for q, fn in g.funcs.items() if fn.takes_record and fn.module in modules}
        self.seeds = set(self.entries) | takers | self.registered | self.passes | self.resolvers
        self.via = {q: p for q, p in self.via.items() if q not in self.seeds}
        self.pipeline = self._close(sorted(self.seeds | first))

    def is_view(self, name: str) -> bool:
        """A call of `name` returns a view (a view class, or a view function)."""
        g = self.graph
        cls = g.resolve_class(name)
        if cls is not None:
            return cls in self.view_classes
        return any(t in self.view_functions for t in g.resolve_global(name))

    def handed(self, q: str) -> set[str]:
        """The functions `q` hands by name as an argument (a hook to its runner,
        a pass to the pass runner)."""
        found = self._handed.get(q)
        if found is None:
            names = (r for refs in self.raw_handed.get(q, ()) for r in refs)
            found = self._handed[q] = {t for r in names for t in self._functions(r)}
        return found

    def _functions(self, name: str) -> list[str]:
        """The functions a name handed by reference stands for (not a class)."""
        g = self.graph
        if g.resolve_class(name) is not None:
            return []
        return g.resolve_global(name)

    def _close(self, seeds: Iterable[str]) -> set[str]:
        """`seeds` and every function they call or hand by name, transitively."""
        g = self.graph
        out: set[str] = set()
        todo = sorted(q for q in seeds if q in g.funcs)
        out.update(todo)
        while todo:  # breadth first: `via` keeps a shortest way in
            q = todo.pop(0)
            # calls, and functions handed by name as an argument (a hook to its
            # runner, a pass to the pass runner); not every name the function
            # mentions (the call graph's refs count `req.attention_backends` as
            # a reference to an imported `attention_backends`)
            nxt = [t for targets in g.edges.get(q, ()) for t in targets]
            nxt += sorted(self.handed(q))
            for t in nxt:
                if t not in out:
                    out.add(t)
                    self.via.setdefault(t, q)
                    todo.append(t)
        return out

    def chain(self, q: str) -> list[str]:
        """How the pipeline reaches `q`: from a seed, the functions in between."""
        out = [q]
        while out[-1] in self.via and len(out) < 12:
            out.append(self.via[out[-1]])
        return out[::-1]

    def wanted_tokens(self) -> set[str]:
        """`module:` tokens for the pipeline's first calls that resolve to nothing yet,
        and the names of the declaration, view and registrar functions (the
        files using them: hooks, overrides, late declarers)."""
        g = self.graph
        tops = {m.partition(".")[0] for m in g.modules}
        out: set[str] = set()
        # the first layer only (the seeds and what they call directly): following
        # the whole closure would parse half the tree; deeper reads are found
        # where other rules' tokens (every bag reader) already parse their files
        first = self.seeds | {t for q in self.seeds for ts in g.edges.get(q, ()) for t in ts}
        for q in sorted(first):
            fn = g.funcs[q]
            names = [t.name for e in fn.events for t in e.targets if isinstance(t, Global)]
            names += [r for h in self.raw_handed.get(q, ()) for r in h]
            for name in names:
                parts = name.split(".")
                if parts[0] not in tops or "." not in name or g.resolve_global(name):
                    continue
                out.update(f"module:{'.'.join(parts[:i])}" for i in range(1, len(parts)))
            if q in self.local_handed:  # what its unkept `module.local` names asked for
                parts = fn.module.split(".")
                out.update(f"module:{'.'.join(parts[:i])}" for i in range(1, len(parts) + 1))
        registrars = {q for q in self.decorator_like if g.funcs[q].module in self.core_modules}
        for q in {*self.view_functions, *registrars, *filter(None, [self.declaration])}:
            if q in g.funcs and g.funcs[q].cls is None:
                out.add(q.rpartition(".")[2])
        return out


def _forward(g: CallGraph, seeds: list[str], depth: int) -> set[str]:
    """`seeds` and what they call, up to `depth` calls deep."""
    out = set(seeds)
    layer = list(seeds)
    for _ in range(depth):
        nxt = [t for q in layer for targets in g.edges.get(q, ()) for t in targets if t not in out]
        out.update(nxt)
        layer = nxt
    return out
