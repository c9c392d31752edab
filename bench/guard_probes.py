"""A tiny sglang-shaped tree and the probe snippets `compare_guard_tests.py` runs
through SGLang's guard tests (reconstructed, bench/sglang_guards/) and ctxlint.

The base tree mirrors the 0.5.23 layout where the guards and the `sglang` profile
look: `sglang/srt/runtime_context.py` (the accessors, `publish`,
`ROLE_NAMESPACE_SETS`), `sglang/srt/server_args.py` (a `ServerArgs` assembled from
the `_NS_PATH` classes under `arg_groups/fields/`, listed in `_INPUT_NAMESPACES`),
a scheduler process entry, the speculative plugin base `CustomSpecAlgo` and its
built-in twin, one abstract plugin base with an implementation, and a tokenizer
manager that records a post-publish override. It follows the design and is clean
for every guard and every rule (the comparison checks that, and counts a
detection only as what a probe adds over the base).

Each probe adds one module (`sglang/srt/probe.py`) or edits base files, and says
whether the design calls it a violation (`positive`). `family` names the guard
and the ctxlint rule that replaces it (`FAMILIES`). `ctxlint_known` records a
measured disagreement of ctxlint with the design, so the smoke test notices when
it changes; `note` says why.
"""

from __future__ import annotations

from dataclasses import dataclass, field

PROBE = "sglang/srt/probe.py"

# family -> (guard, ctxlint rules that replace it)
FAMILIES: dict[str, tuple[str, tuple[str, ...]]] = {
    "read": ("test_server_args_read_ratchet.py", ("CTX101",)),
    "mutation": ("test_server_args_mutation_ratchet.py", ("CTX201",)),
    "copy": ("test_server_args_no_instance_mutation_entry.py", ("CTX202",)),
    "exposure": ("test_supplied_instance_exposure_ratchet.py", ("CTX102",)),
    "publish": ("test_publish_precedes_bag_reads.py", ("CTX301",)),
    "plugin": ("test_plugin_hook_signatures.py", ("CTX501",)),
    "accessor": ("ruff --select F811", ("CTX401",)),
    "bags": ("test_runtime_context_config_bags.py", ("CTX601",)),
}


@dataclass(frozen=True)
class Probe:
    name: str
    family: str
    form: str  # what the probe shows, for the table
    positive: bool  # the design calls it a violation
    files: dict[str, str] = field(default_factory=dict)  # added (or replaced) files
    edits: tuple[tuple[str, str, str], ...] = ()  # (path, old, new) on base files
    ctxlint_known: str = ""  # "missed" / "false positive": a measured disagreement
    note: str = ""


def _mod(body: str, imports: str = "") -> dict[str, str]:
    head = "from __future__ import annotations\n\n" + imports.strip() + "\n\n\n"
    return {PROBE: head + body.strip() + "\n"}


RC = "from sglang.srt.runtime_context import "
SA = "from sglang.srt.server_args import ServerArgs"

# -- the base tree ---------------------------------------------------------------
_NS = {  # file -> [(class, _NS_PATH, [(field, resolvable)])]
    "parallel.py": [("Parallel", "parallel", [("tp_size", True), ("dp_size", True)])],
    "exec_.py": [
        ("ExecKernel", "exec.kernel", [("attention_backend", True), ("grammar_backend", False)]),
        ("ExecMoe", "exec.moe", [("moe_runner_backend", True)]),
    ],
    "model.py": [("Model", "model", [("model_path", False), ("load_format", False)])],
    "schedule.py": [
        ("Schedule", "schedule", [("max_running_requests", True), ("chunked_prefill_size", True)])
    ],
    "serving.py": [("Serving", "serving", [("host", False), ("port", False)])],
    "memory.py": [("Memory", "memory", [("mem_fraction_static", True)])],
    "spec.py": [("Spec", "spec", [("speculative_algorithm", False)])],
    "observability.py": [("Observability", "observability", [("log_level", False)])],
    "disagg.py": [("Disagg", "disagg", [("disaggregation_mode", False)])],
    "lora.py": [("Lora", "lora", [("max_loras_per_batch", False)])],
    "mm.py": [("Mm", "mm", [("mm_attention_backend", False)])],
    "device.py": [("Device", "device", [("device", False)])],
}
_DEFAULTS = {"tp_size": "1", "dp_size": "1", "port": "30000", "max_running_requests": "0"}
_DEFAULTS |= {"chunked_prefill_size": "0", "max_loras_per_batch": "8"}
_DEFAULTS |= {"mem_fraction_static": "0.8"}


def _fields_file(classes: list[tuple[str, str, list[tuple[str, bool]]]]) -> str:
    out = [
        "import msgspec",
        "",
        "from sglang.srt.arg_groups.arg_utils import A, Arg",
    ]
    for cls, ns, fields in classes:
        out += ["", "", f"class {cls}(msgspec.Struct):", f'    """Namespace ``{ns}``."""', ""]
        out.append(f'    _NS_PATH = "{ns}"')
        for name, resolvable in fields:
            kind = "float" if name == "mem_fraction_static" else "int"
            kind = kind if name in _DEFAULTS else "str"
            default = _DEFAULTS.get(name, '"auto"')
            arg = "Arg(resolvable=True)" if resolvable else "Arg()"
            out.append(f"    {name}: A[{kind}, {arg}] = {default}")
    return "\n".join(out) + "\n"


_ACCESSORS = [
    "device",
    "model",
    "exec",
    "schedule",
    "memory",
    "spec",
    "lora",
    "mm",
    "disagg",
    "serving",
    "observability",
]

BASE: dict[str, str] = {
    "sglang/__init__.py": "",
    "sglang/srt/__init__.py": "",
    "sglang/srt/arg_groups/__init__.py": "",
    "sglang/srt/arg_groups/arg_utils.py": """\
from typing import Annotated as A


class Arg:
    def __init__(self, help: str = "", resolvable: bool = False) -> None:
        self.help = help
        self.resolvable = resolvable


__all__ = ["A", "Arg"]
""",
    "sglang/srt/arg_groups/fields/__init__.py": '''\
def collect_input_fields(sources: list) -> tuple[dict, dict, dict]:
    """Annotations, defaults and the field-to-namespace map of the sources."""
    namespaces = {}
    for source in sources:
        for name in source.__annotations__:
            namespaces[name] = source._NS_PATH
    return {}, {}, namespaces
''',
    **{f"sglang/srt/arg_groups/fields/{f}": _fields_file(c) for f, c in _NS.items()},
    "sglang/srt/arg_groups/overrides.py": """\
def declare_resolution(server_args, source: str, **fields) -> None:
    server_args._stash.append((source, fields))
""",
    "sglang/srt/server_args.py": '''\
from __future__ import annotations

from sglang.srt.arg_groups.fields import collect_input_fields
from sglang.srt.arg_groups.fields.device import Device
from sglang.srt.arg_groups.fields.disagg import Disagg
from sglang.srt.arg_groups.fields.exec_ import ExecKernel, ExecMoe
from sglang.srt.arg_groups.fields.lora import Lora
from sglang.srt.arg_groups.fields.memory import Memory
from sglang.srt.arg_groups.fields.mm import Mm
from sglang.srt.arg_groups.fields.model import Model
from sglang.srt.arg_groups.fields.observability import Observability
from sglang.srt.arg_groups.fields.parallel import Parallel
from sglang.srt.arg_groups.fields.schedule import Schedule
from sglang.srt.arg_groups.fields.serving import Serving
from sglang.srt.arg_groups.fields.spec import Spec


class ServerArgs:
    """Raw server configuration, sealed when resolution starts."""

    def resolve_once(self) -> None:
        self._resolution_finished = True

    def resolved_dict(self) -> dict:
        return dict(vars(self))


_INPUT_NAMESPACES = [
    Model,
    ExecKernel,
    ExecMoe,
    Parallel,
    Schedule,
    Serving,
    Memory,
    Spec,
    Observability,
    Disagg,
    Lora,
    Mm,
    Device,
]

_annotations, _defaults, _namespaces = collect_input_fields(_INPUT_NAMESPACES)
''',
    "sglang/srt/runtime_context.py": '''\
"""Process-wide configuration: the seed record, the namespace bags, publish."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sglang.srt.server_args import ServerArgs


class _ConfigBag:
    def __init__(self, path: str) -> None:
        self._path = path


class RuntimeContext:
    def __init__(self) -> None:
        self._server_args: ServerArgs | None = None
        self._config_bags: dict[str, _ConfigBag] = {}

    @property
    def server_args(self) -> ServerArgs:
        return self._server_args

    def config_bag(self, name: str) -> _ConfigBag:
        return self._config_bags[name]

    def override(self, source: str, **fields: Any) -> None:
        for name in fields:
            self._config_bags[name] = _ConfigBag(source)


_CONTEXT = RuntimeContext()


def get_context() -> RuntimeContext:
    return _CONTEXT


def get_server_args() -> ServerArgs:
    return _CONTEXT.server_args


def get_parallel() -> _ConfigBag:
    return _CONTEXT.config_bag("parallel")


'''
    + "\n\n".join(
        f'def get_{ns}() -> _ConfigBag:\n    return _CONTEXT.config_bag("{ns}")\n'
        for ns in _ACCESSORS
    )
    + """

ROLE_NAMESPACE_SETS: dict[str, frozenset[str] | None] = {
    "scheduler": None,
    "tokenizer": None,
    "dp_controller": frozenset({"exec", "parallel", "device"}),
}


def publish(server_args: ServerArgs, *, role: str, ranks: Any = None) -> RuntimeContext:
    _CONTEXT._server_args = server_args
    return _CONTEXT


def assert_published(server_args: ServerArgs, *, role: str) -> RuntimeContext:
    if _CONTEXT._server_args is not server_args:
        raise RuntimeError(f"{role}: publish(server_args, role=...) first")
    return _CONTEXT
""",
    "sglang/srt/speculative/__init__.py": "",
    "sglang/srt/speculative/spec_registry.py": '''\
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from sglang.srt.server_args import ServerArgs


class CustomSpecAlgo:
    """A plugin-registered speculative algorithm; plugins subclass it."""

    def __init__(self, name: str, factory: Callable) -> None:
        self.name = name
        self.factory = factory

    def is_none(self) -> bool:
        return False

    def is_eagle(self) -> bool:
        return False

    def supports_mixed_chunk(self) -> bool:
        return False

    def get_num_tokens_per_req_for_target_verify(
        self, num_draft_tokens: int, is_draft_worker: bool
    ) -> int:
        return num_draft_tokens

    def create_worker(self, server_args: ServerArgs) -> type:
        return self.factory(server_args)


_REGISTRY: dict[str, CustomSpecAlgo] = {}
''',
    "sglang/srt/speculative/spec_info.py": """\
from __future__ import annotations

from enum import Enum, auto
from typing import TYPE_CHECKING, Optional, Union

from sglang.srt.speculative.spec_registry import _REGISTRY, CustomSpecAlgo

if TYPE_CHECKING:
    from sglang.srt.server_args import ServerArgs


class SpeculativeAlgorithm(Enum):
    NONE = auto()
    EAGLE = auto()

    @classmethod
    def from_string(cls, name: Optional[str]) -> Union[SpeculativeAlgorithm, CustomSpecAlgo]:
        if name is None:
            return cls.NONE
        return _REGISTRY.get(name.upper(), cls.EAGLE)

    def is_none(self) -> bool:
        return self is SpeculativeAlgorithm.NONE

    def is_eagle(self) -> bool:
        return self is SpeculativeAlgorithm.EAGLE

    def supports_mixed_chunk(self) -> bool:
        return False

    def get_num_tokens_per_req_for_target_verify(
        self, num_draft_tokens: int, is_draft_worker: bool
    ) -> int:
        return 1 if is_draft_worker else num_draft_tokens

    def create_worker(self, server_args: ServerArgs) -> type:
        return type(self.name, (), {})
""",
    "sglang/srt/layers/__init__.py": "",
    "sglang/srt/layers/quant_base.py": '''\
from __future__ import annotations

from abc import ABC, abstractmethod


class QuantizeMethodBase(ABC):
    """Out-of-tree quantization methods subclass this."""

    @abstractmethod
    def apply(self, layer: object, x: object) -> object:
        raise NotImplementedError


class Fp8Method(QuantizeMethodBase):
    def apply(self, layer: object, x: object) -> object:
        return x


def run_layer(method: QuantizeMethodBase, layer: object, x: object) -> object:
    return method.apply(layer, x)
''',
    "sglang/srt/managers/__init__.py": "",
    "sglang/srt/managers/scheduler.py": """\
from __future__ import annotations

from sglang.srt.runtime_context import get_exec, get_schedule, get_spec, publish
from sglang.srt.server_args import ServerArgs
from sglang.srt.speculative.spec_info import SpeculativeAlgorithm


class Scheduler:
    def __init__(self, server_args: ServerArgs) -> None:
        self.attention_backend = get_exec().kernel.attention_backend
        self.max_running_requests = get_schedule().max_running_requests
        self.spec_algorithm = SpeculativeAlgorithm.from_string(get_spec().speculative_algorithm)
        self.worker_cls = self.spec_algorithm.create_worker(server_args)
        self.tokens = self.spec_algorithm.get_num_tokens_per_req_for_target_verify(
            4, is_draft_worker=False
        )

    def event_loop(self) -> None:
        while self.max_running_requests:
            self.max_running_requests -= 1


def run_scheduler_process(server_args: ServerArgs, gpu_id: int) -> None:
    publish(server_args, role="scheduler")
    scheduler = Scheduler(server_args)
    scheduler.event_loop()
""",
    "sglang/srt/managers/tokenizer_manager.py": """\
from __future__ import annotations

from typing import Any

from sglang.srt.runtime_context import assert_published, get_context, get_model
from sglang.srt.server_args import ServerArgs


class TokenizerManager:
    def __init__(self, server_args: ServerArgs) -> None:
        assert_published(server_args, role="tokenizer")
        self.server_args = server_args
        self.model_path = get_model().model_path

    def record_config_updates(self, source: str, **fields: Any) -> None:
        get_context().override(source, **fields)

    def update_weights(self, load_format: str) -> None:
        self.record_config_updates("tokenizer.update_weights", load_format=load_format)
""",
    "sglang/srt/constrained/__init__.py": "",
    "sglang/srt/constrained/grammar_backend.py": """\
from sglang.srt.runtime_context import get_context, get_exec


def create_grammar_backend() -> str:
    try:
        import xgrammar  # noqa: F401
    except ImportError:
        get_context().override("grammar.import_fallback", grammar_backend="none")
    return get_exec().kernel.grammar_backend
""",
    "sglang/srt/entrypoints/__init__.py": "",
    "sglang/srt/entrypoints/engine.py": """\
from __future__ import annotations

import multiprocessing as mp

from sglang.srt.managers.scheduler import run_scheduler_process
from sglang.srt.managers.tokenizer_manager import TokenizerManager
from sglang.srt.runtime_context import publish
from sglang.srt.server_args import ServerArgs


def launch(server_args: ServerArgs) -> TokenizerManager:
    server_args.resolve_once()
    proc = mp.Process(target=run_scheduler_process, args=(server_args, 0))
    proc.start()
    publish(server_args, role="tokenizer")
    return TokenizerManager(server_args)
""",
}

# -- the probes ------------------------------------------------------------------
_SCHED = "sglang/srt/managers/scheduler.py"
_REG = "sglang/srt/speculative/spec_registry.py"
_INFO = "sglang/srt/speculative/spec_info.py"
_RECORD = "sglang/srt/server_args.py"

PROBES: list[Probe] = [
    # seed reads: the read ratchet / CTX101
    Probe(
        "read-direct",
        "read",
        "`get_server_args().tp_size`",
        True,
        _mod("def width() -> int:\n    return get_server_args().tp_size", RC + "get_server_args"),
    ),
    Probe(
        "read-getattr",
        "read",
        '`getattr(get_server_args(), "attention_backend", "auto")`',
        True,
        _mod(
            'def backend() -> str:\n    return getattr(get_server_args(), "attention_backend", "auto")',
            RC + "get_server_args",
        ),
    ),
    Probe(
        "read-local-alias",
        "read",
        "`sa = get_server_args(); sa.tp_size`",
        True,
        _mod(
            "def width() -> int:\n    sa = get_server_args()\n    return sa.tp_size * 2",
            RC + "get_server_args",
        ),
    ),
    Probe(
        "read-alias-of-alias",
        "read",
        "alias copied: `sa = get_server_args(); cfg = sa; cfg.tp_size`",
        True,
        _mod(
            "def width() -> int:\n    sa = get_server_args()\n    cfg = sa\n    return cfg.tp_size",
            RC + "get_server_args",
        ),
    ),
    Probe(
        "read-walrus-alias",
        "read",
        "walrus alias `(sa := get_server_args()).tp_size`",
        True,
        _mod(
            "def width() -> int:\n    if (sa := get_server_args()) is not None:\n"
            "        return sa.tp_size\n    return 1",
            RC + "get_server_args",
        ),
    ),
    Probe(
        "read-import-as",
        "read",
        "accessor imported as `seed`, `seed().tp_size`",
        True,
        _mod("def width() -> int:\n    return seed().tp_size", RC + "get_server_args as seed"),
    ),
    Probe(
        "read-module-call",
        "read",
        "`rc.get_server_args().tp_size` (module import)",
        True,
        _mod(
            "def width() -> int:\n    return rc.get_server_args().tp_size",
            "from sglang.srt import runtime_context as rc",
        ),
    ),
    Probe(
        "read-parked-self",
        "read",
        "parked `self._sa = get_server_args()`, read `self._sa.tp_size` in another method",
        True,
        _mod(
            "class Runner:\n    def __init__(self) -> None:\n        self._sa = get_server_args()\n\n"
            "    def width(self) -> int:\n        return self._sa.tp_size",
            RC + "get_server_args",
        ),
    ),
    Probe(
        "read-runtime-name",
        "read",
        "`getattr(get_server_args(), name)` with a runtime name",
        True,
        _mod(
            "def leaf(name: str) -> object:\n    return getattr(get_server_args(), name)",
            RC + "get_server_args",
        ),
        ctxlint_known="missed",
        note="design: outside the ratchet by construction; use config_leaf(name)",
    ),
    Probe(
        "read-docstring",
        "read",
        "docstring / string that mentions `get_server_args().tp_size`",
        False,
        _mod(
            'def width() -> int:\n    """Never `get_server_args().tp_size`: read get_parallel()."""\n'
            '    text = "get_server_args().tp_size"\n    return len(text)',
        ),
    ),
    Probe(
        "read-method-and-handoff",
        "read",
        "method call `get_server_args().resolved_dict()`, hand-off `dump(get_server_args())`",
        False,
        _mod(
            "def dump(obj: object) -> str:\n    return repr(obj)\n\n\n"
            "def report() -> str:\n    return dump(get_server_args()) + str(get_server_args().resolved_dict())",
            RC + "get_server_args",
        ),
    ),
    Probe(
        "read-shadowed-accessor",
        "read",
        "a local helper named `get_server_args` (not the seed), `.tp_size` off it",
        False,
        _mod(
            "class _Cfg:\n    tp_size = 1\n\n\ndef get_server_args() -> _Cfg:\n    return _Cfg()\n\n\n"
            "def width() -> int:\n    return get_server_args().tp_size",
        ),
        note="CTX401 reports the shadowing itself; CTX101 must not call it a seed read",
    ),
    Probe(
        "read-bag",
        "read",
        "the fix: `get_parallel().tp_size`",
        False,
        _mod("def width() -> int:\n    return get_parallel().tp_size", RC + "get_parallel"),
    ),
    # record writes: the mutation ratchet / CTX201
    Probe(
        "write-plain",
        "mutation",
        "`server_args.tp_size = 2`",
        True,
        _mod("def tune(server_args: ServerArgs) -> None:\n    server_args.tp_size = 2", SA),
    ),
    Probe(
        "write-self",
        "mutation",
        "`self.server_args.tp_size = 2`",
        True,
        _mod(
            "class Runner:\n    def __init__(self, server_args: ServerArgs) -> None:\n"
            "        self.server_args = server_args\n\n    def tune(self) -> None:\n"
            "        self.server_args.tp_size = 2",
            SA,
        ),
    ),
    Probe(
        "write-seed",
        "mutation",
        "`get_server_args().tp_size = 2`",
        True,
        _mod("def tune() -> None:\n    get_server_args().tp_size = 2", RC + "get_server_args"),
    ),
    Probe(
        "write-alias",
        "mutation",
        "alias `sa = get_server_args(); sa.tp_size = 2`",
        True,
        _mod(
            "def tune() -> None:\n    sa = get_server_args()\n    sa.tp_size = 2",
            RC + "get_server_args",
        ),
    ),
    Probe(
        "write-augmented",
        "mutation",
        "augmented `server_args.max_running_requests += 1`",
        True,
        _mod(
            "def tune(server_args: ServerArgs) -> None:\n    server_args.max_running_requests += 1",
            SA,
        ),
    ),
    Probe(
        "write-tuple",
        "mutation",
        "tuple target `a, server_args.dp_size = 1, 2`",
        True,
        _mod(
            "def tune(server_args: ServerArgs) -> int:\n    a, server_args.dp_size = 1, 2\n    return a",
            SA,
        ),
    ),
    Probe(
        "write-tuple-multiline",
        "mutation",
        "tuple target split over lines `(a,\\n server_args.dp_size) = ...`",
        True,
        _mod(
            "def tune(server_args: ServerArgs) -> int:\n    (\n        a,\n        server_args.dp_size,\n"
            "    ) = (1, 2)\n    return a",
            SA,
        ),
    ),
    Probe(
        "write-annotated",
        "mutation",
        'annotated `server_args.model_path: str = "m"`',
        True,
        _mod(
            'def tune(server_args: ServerArgs) -> None:\n    server_args.model_path: str = "m"', SA
        ),
    ),
    Probe(
        "write-setattr",
        "mutation",
        '`setattr(server_args, "tp_size", 4)`',
        True,
        _mod(
            'def tune(server_args: ServerArgs) -> None:\n    setattr(server_args, "tp_size", 4)', SA
        ),
    ),
    Probe(
        "write-object-setattr",
        "mutation",
        '`object.__setattr__(server_args, "tp_size", 4)`',
        True,
        _mod(
            'def tune(server_args: ServerArgs) -> None:\n    object.__setattr__(server_args, "tp_size", 4)',
            SA,
        ),
    ),
    Probe(
        "write-del",
        "mutation",
        "`del server_args.tp_size`",
        True,
        _mod("def tune(server_args: ServerArgs) -> None:\n    del server_args.tp_size", SA),
    ),
    Probe(
        "write-vars",
        "mutation",
        '`vars(server_args)["tp_size"] = 2`',
        True,
        _mod(
            'def tune(server_args: ServerArgs) -> None:\n    vars(server_args)["tp_size"] = 2', SA
        ),
    ),
    Probe(
        "write-docstring",
        "mutation",
        "docstring that mentions `server_args.tp_size = 1`",
        False,
        _mod(
            'def tune(server_args: ServerArgs) -> int:\n    """Do not write server_args.tp_size = 1 here."""\n'
            "    return 0",
            SA,
        ),
    ),
    Probe(
        "write-comparison",
        "mutation",
        "comparisons `server_args.tp_size == 1`, `>= 2`, walrus read",
        False,
        _mod(
            "def check(server_args: ServerArgs) -> bool:\n"
            "    if (n := server_args.tp_size) >= 2:\n        return n == 2\n"
            "    return server_args.tp_size == 1",
            SA,
        ),
    ),
    Probe(
        "write-other-class",
        "mutation",
        "a parameter named `server_args` typed as another class (`DiffusionArgs`)",
        False,
        _mod(
            "class DiffusionArgs:\n    tp_size = 1\n\n\n"
            "def tune(server_args: DiffusionArgs) -> None:\n    server_args.tp_size = 2",
        ),
    ),
    # the no-copy contract / CTX202
    Probe(
        "copy-derive-call",
        "copy",
        "`server_args.derive(tp_size=2)`",
        True,
        _mod(
            "def variant(server_args: ServerArgs) -> ServerArgs:\n    return server_args.derive(tp_size=2)",
            SA,
        ),
    ),
    Probe(
        "copy-seed-override",
        "copy",
        "`get_server_args().override(tp_size=2)`",
        True,
        _mod(
            "def variant() -> None:\n    get_server_args().override(tp_size=2)",
            RC + "get_server_args",
        ),
    ),
    Probe(
        "copy-method-defined",
        "copy",
        "`ServerArgs` gains a `derive` method",
        True,
        edits=(
            (
                _RECORD,
                "    def resolved_dict(self) -> dict:",
                "    def derive(self, **fields) -> ServerArgs:\n        return self\n\n"
                "    def resolved_dict(self) -> dict:",
            ),
        ),
    ),
    Probe(
        "copy-dataclasses-replace",
        "copy",
        "`dataclasses.replace(server_args, tp_size=2)`",
        True,
        _mod(
            "def variant(server_args: ServerArgs) -> ServerArgs:\n"
            "    return dataclasses.replace(server_args, tp_size=2)",
            "import dataclasses\n\n" + SA,
        ),
    ),
    Probe(
        "copy-copy",
        "copy",
        "`copy.copy(server_args)`",
        True,
        _mod(
            "def variant(server_args: ServerArgs) -> ServerArgs:\n    return copy.copy(server_args)",
            "import copy\n\n" + SA,
        ),
    ),
    Probe(
        "copy-deepcopy-alias",
        "copy",
        "`from copy import deepcopy as clone; clone(get_server_args())`",
        True,
        _mod(
            "def variant() -> object:\n    return clone(get_server_args())",
            "from copy import deepcopy as clone\n\n" + RC + "get_server_args",
        ),
    ),
    Probe(
        "copy-deepcopy-self",
        "copy",
        "`copy.deepcopy(self.server_args)`",
        True,
        _mod(
            "class Runner:\n    def __init__(self, server_args: ServerArgs) -> None:\n"
            "        self.server_args = server_args\n\n    def variant(self) -> ServerArgs:\n"
            "        return copy.deepcopy(self.server_args)",
            "import copy\n\n" + SA,
        ),
    ),
    Probe(
        "copy-other-class",
        "copy",
        "`copy.copy(server_args)` where the parameter is typed as another class",
        False,
        _mod(
            "class DiffusionArgs:\n    tp_size = 1\n\n\n"
            "def variant(server_args: DiffusionArgs) -> DiffusionArgs:\n"
            "    return copy.copy(server_args)",
            "import copy",
        ),
    ),
    Probe(
        "copy-context-override",
        "copy",
        'the fix: `get_context().override("x", tp_size=2)`, `get_exec().override(...)`',
        False,
        _mod(
            'def variant() -> None:\n    get_context().override("probe", tp_size=2)\n'
            '    with get_exec().override(attention_backend="fa3"):\n        pass',
            RC + "get_context, get_exec",
        ),
    ),
    # reads off a handed record: the exposure ratchet / CTX102
    Probe(
        "expose-param",
        "exposure",
        "`server_args.attention_backend` (resolution fills it) on a parameter",
        True,
        _mod(
            "def build(server_args: ServerArgs) -> str:\n    return server_args.attention_backend",
            SA,
        ),
    ),
    Probe(
        "expose-getattr",
        "exposure",
        '`getattr(server_args, "attention_backend", None)`',
        True,
        _mod(
            'def build(server_args: ServerArgs) -> str:\n    return getattr(server_args, "attention_backend", None)',
            SA,
        ),
    ),
    Probe(
        "expose-parked",
        "exposure",
        "parked `self.cfg = server_args`, read `self.cfg.attention_backend` in another method",
        True,
        _mod(
            "class Runner:\n    def __init__(self, server_args: ServerArgs) -> None:\n"
            "        self.cfg = server_args\n\n    def backend(self) -> str:\n"
            "        return self.cfg.attention_backend",
            SA,
        ),
    ),
    Probe(
        "expose-parked-tuple",
        "exposure",
        "parked by tuple assignment `self.n, self.cfg = 1, server_args`, read `self.cfg.attention_backend`",
        True,
        _mod(
            "class Runner:\n    def __init__(self, server_args: ServerArgs) -> None:\n"
            "        self.n, self.cfg = 1, server_args\n\n    def backend(self) -> str:\n"
            "        return self.cfg.attention_backend",
            SA,
        ),
    ),
    Probe(
        "expose-recorded-field",
        "exposure",
        "`self.server_args.load_format`: a field `record_config_updates` moves",
        True,
        _mod(
            "class Loader:\n    def __init__(self, server_args: ServerArgs) -> None:\n"
            "        self.server_args = server_args\n\n    def fmt(self) -> str:\n"
            "        return self.server_args.load_format",
            SA,
        ),
    ),
    Probe(
        "expose-chained",
        "exposure",
        "another object's record: `runner.server_args.attention_backend`",
        True,
        _mod(
            "class Runner:\n    def __init__(self, server_args: ServerArgs) -> None:\n"
            "        self.server_args = server_args\n\n\n"
            "def backend(runner: Runner) -> str:\n    return runner.server_args.attention_backend",
            SA,
        ),
    ),
    Probe(
        "expose-renamed-param",
        "exposure",
        "a parameter typed `ServerArgs` but named `args`: `args.attention_backend`",
        True,
        _mod("def build(args: ServerArgs) -> str:\n    return args.attention_backend", SA),
    ),
    Probe(
        "expose-allowed-class",
        "exposure",
        "inside `GrammarManager` (the design's allow-list)",
        False,
        _mod(
            "class GrammarManager:\n    def __init__(self, server_args: ServerArgs) -> None:\n"
            "        self.server_args = server_args\n        self.backend = server_args.attention_backend",
            SA,
        ),
    ),
    Probe(
        "expose-factory",
        "exposure",
        "factory `create_kt_config_from_server_args(server_args)`",
        False,
        _mod(
            "def create_kt_config_from_server_args(server_args: ServerArgs) -> dict:\n"
            '    return {"tp": server_args.tp_size}',
            SA,
        ),
    ),
    Probe(
        "expose-new-factory",
        "exposure",
        "a new factory `LoRAConfig.from_server_args(cls, server_args)` (not in the hand list)",
        False,
        _mod(
            "class LoRAConfig:\n    def __init__(self, backend: str) -> None:\n"
            "        self.backend = backend\n\n    @classmethod\n"
            "    def from_server_args(cls, server_args: ServerArgs) -> LoRAConfig:\n"
            "        return cls(server_args.attention_backend)",
            SA,
        ),
        note="the design exempts factories that build from the record; the guard lists two by name",
    ),
    Probe(
        "expose-unresolved-field",
        "exposure",
        "whole-object pass reading `server_args.host` (resolution never fills it, nothing overrides it)",
        False,
        _mod("def bind(server_args: ServerArgs) -> str:\n    return server_args.host", SA),
        note="the design keeps parameter reads of such fields: CTX102 lists them apart",
    ),
    Probe(
        "expose-docstring",
        "exposure",
        "docstring that mentions `server_args.attention_backend`",
        False,
        _mod(
            'def build(server_args: ServerArgs) -> int:\n    """Not server_args.attention_backend: read the bag."""\n'
            "    return 0",
            SA,
        ),
    ),
    # publish order: test_publish_precedes_bag_reads / CTX301
    Probe(
        "publish-read-above",
        "publish",
        "hand-listed entry reads `get_schedule()` above its `publish`",
        True,
        edits=(
            (
                _SCHED,
                '    publish(server_args, role="scheduler")\n',
                "    chunk = get_schedule().chunked_prefill_size\n"
                '    publish(server_args, role="scheduler")\n    del chunk\n',
            ),
        ),
    ),
    Probe(
        "publish-helper-above",
        "publish",
        "hand-listed entry calls a helper that reads `get_exec()` before `publish`",
        True,
        edits=(
            (
                _SCHED,
                "def run_scheduler_process(server_args: ServerArgs, gpu_id: int) -> None:\n    publish(",
                "def _configure(gpu_id: int) -> str:\n    return get_exec().kernel.attention_backend\n\n\n"
                "def run_scheduler_process(server_args: ServerArgs, gpu_id: int) -> None:\n"
                "    _configure(gpu_id)\n    publish(",
            ),
        ),
    ),
    Probe(
        "publish-constructor-above",
        "publish",
        "hand-listed entry builds `Scheduler(...)` (reads bags in `__init__`) before `publish`",
        True,
        edits=(
            (
                _SCHED,
                '    publish(server_args, role="scheduler")\n    scheduler = Scheduler(server_args)\n',
                '    scheduler = Scheduler(server_args)\n    publish(server_args, role="scheduler")\n',
            ),
        ),
    ),
    Probe(
        "publish-same-statement",
        "publish",
        "`publish(server_args, role=..., ranks=get_parallel().tp_size)`: the argument runs first",
        True,
        edits=(
            (
                _SCHED,
                '    publish(server_args, role="scheduler")\n',
                '    publish(server_args, role="scheduler", ranks=get_parallel().tp_size)\n',
            ),
            (_SCHED, "get_exec, get_schedule,", "get_exec, get_parallel, get_schedule,"),
        ),
    ),
    Probe(
        "publish-new-entry",
        "publish",
        "a new `mp.Process(target=...)` entry, not in `_ENTRY_POINTS`, reads before it publishes",
        True,
        _mod(
            "def run_encoder_worker(server_args: ServerArgs) -> None:\n"
            "    backend = get_mm().mm_attention_backend\n"
            '    publish(server_args, role="encoder")\n    del backend\n\n\n'
            "def launch_encoders(server_args: ServerArgs) -> None:\n"
            "    mp.Process(target=run_encoder_worker, args=(server_args,)).start()",
            "import multiprocessing as mp\n\n" + RC + "get_mm, publish\n" + SA,
        ),
    ),
    Probe(
        "publish-ray-actor",
        "publish",
        "a new `@ray.remote` actor whose `__init__` reads `get_exec()` before `publish`",
        True,
        _mod(
            "@ray.remote\nclass EncoderActor:\n    def __init__(self, server_args: ServerArgs) -> None:\n"
            "        self.backend = get_exec().kernel.attention_backend\n"
            '        publish(server_args, role="encoder")',
            "import ray\n\n" + RC + "get_exec, publish\n" + SA,
        ),
    ),
    Probe(
        "publish-read-after",
        "publish",
        "hand-listed entry reads `get_schedule()` after its `publish`",
        False,
        edits=(
            (
                _SCHED,
                '    publish(server_args, role="scheduler")\n',
                '    publish(server_args, role="scheduler")\n'
                "    chunk = get_schedule().chunked_prefill_size\n    del chunk\n",
            ),
        ),
    ),
    Probe(
        "publish-business-read",
        "publish",
        "a business function reading `get_exec()` that no entry runs before publishing",
        False,
        _mod(
            "def backend() -> str:\n    return get_exec().kernel.attention_backend", RC + "get_exec"
        ),
    ),
    # plugin hooks: test_plugin_hook_signatures / CTX501
    Probe(
        "plugin-base-drift",
        "plugin",
        "`CustomSpecAlgo.create_worker` gains a required parameter; the built-in does not",
        True,
        edits=(
            (
                _REG,
                "def create_worker(self, server_args: ServerArgs) -> type:",
                "def create_worker(self, server_args: ServerArgs, draft: bool) -> type:",
            ),
        ),
    ),
    Probe(
        "plugin-both-drift",
        "plugin",
        "base and built-in rename `is_draft_worker` together; a dispatch still passes it by keyword",
        True,
        edits=(
            (_REG, "is_draft_worker: bool", "is_draft: bool"),
            (_INFO, "is_draft_worker: bool", "is_draft: bool"),
            (_INFO, "1 if is_draft_worker else", "1 if is_draft else"),
        ),
    ),
    Probe(
        "plugin-subclass-drift",
        "plugin",
        "in-tree `class MySpec(CustomSpecAlgo)` overrides `create_worker` with a new required parameter",
        True,
        _mod(
            "class MySpec(CustomSpecAlgo):\n"
            "    def create_worker(self, server_args: ServerArgs, extra: int) -> type:\n"
            "        return type(self.name, (), {})",
            "from sglang.srt.speculative.spec_registry import CustomSpecAlgo\n" + SA,
        ),
    ),
    Probe(
        "plugin-dispatch-drift",
        "plugin",
        "a dispatch site passes an extra positional: `spec_algorithm.create_worker(server_args, True)`",
        True,
        edits=(
            (
                _SCHED,
                "self.spec_algorithm.create_worker(server_args)",
                "self.spec_algorithm.create_worker(server_args, True)",
            ),
        ),
    ),
    Probe(
        "plugin-derived-base-drift",
        "plugin",
        "an abstract base not in the hand list (`QuantizeMethodBase.apply`) drops a parameter",
        True,
        edits=(
            (
                "sglang/srt/layers/quant_base.py",
                "    @abstractmethod\n    def apply(self, layer: object, x: object) -> object:",
                "    @abstractmethod\n    def apply(self, x: object) -> object:",
            ),
        ),
    ),
    Probe(
        "plugin-compatible-override",
        "plugin",
        "in-tree subclass adds an optional parameter `extra: int = 0`",
        False,
        _mod(
            "class MySpec(CustomSpecAlgo):\n"
            "    def create_worker(self, server_args: ServerArgs, extra: int = 0) -> type:\n"
            "        return type(self.name, (), {})",
            "from sglang.srt.speculative.spec_registry import CustomSpecAlgo\n" + SA,
        ),
    ),
    # accessor names: ruff F811 (the design's named check) / CTX401
    Probe(
        "accessor-import-collision",
        "accessor",
        "`from loader import get_model` next to the bag's `get_model`",
        True,
        {
            "sglang/srt/model_loader.py": "def get_model(path: str) -> object:\n    return path\n",
            **_mod(
                'def load() -> object:\n    return get_model("weights")',
                RC + "get_model\nfrom sglang.srt.model_loader import get_model",
            ),
        },
    ),
    Probe(
        "accessor-member-call",
        "accessor",
        "member call `manager.get_disagg()`",
        True,
        _mod(
            "def mode(manager: object) -> str:\n    return manager.get_disagg().disaggregation_mode"
        ),
    ),
    Probe(
        "accessor-self-bind",
        "accessor",
        "`self.get_exec = get_exec`",
        True,
        _mod(
            "class Runner:\n    def __init__(self) -> None:\n        self.get_exec = get_exec",
            RC + "get_exec",
        ),
    ),
    Probe(
        "accessor-arguments",
        "accessor",
        '`get_exec("kernel")`',
        True,
        _mod('def kernel() -> object:\n    return get_exec("kernel")', RC + "get_exec"),
    ),
    Probe(
        "accessor-local-shadow",
        "accessor",
        "a local variable named `get_model` shadows the accessor",
        True,
        _mod(
            "def load(loaders: dict) -> object:\n    get_model = loaders['hf']\n"
            "    return get_model()",
            RC + "get_model",
        ),
    ),
    Probe(
        "accessor-def",
        "accessor",
        "a business module that never binds the runtime's accessor defines its own "
        "`def get_exec()`",
        # nothing collides where the runtime's accessor is not bound (issue 36's
        # triage, rules/CTX401.md): CTX401 lists it apart in `ctxlint sets`
        False,
        _mod("def get_exec() -> dict:\n    return {}"),
    ),
    Probe(
        "accessor-clean",
        "accessor",
        "the accessor imported once and called bare; `tensor.get_device()` on a library type",
        False,
        _mod(
            "def path(tensor: torch.Tensor) -> str:\n"
            "    return get_model().model_path + str(tensor.get_device())",
            "import torch\n\n" + RC + "get_model",
        ),
    ),
    # two-way coverage of the bags: test_runtime_context_config_bags (no ctxlint rule)
    Probe(
        "accessor-local-module-import",
        "accessor",
        "`import sglang.srt.runtime_context as rc` inside a function, then `rc.get_exec()`",
        False,
        _mod(
            "def backend() -> object:\n    import sglang.srt.runtime_context as rc\n\n"
            "    return rc.get_exec()",
        ),
    ),
    Probe(
        "bags-unlisted-class",
        "bags",
        "a new `_NS_PATH` class that `_INPUT_NAMESPACES` does not list",
        True,
        {
            "sglang/srt/arg_groups/fields/offload.py": _fields_file(
                [("ExecOffload", "exec.offload", [("cpu_offload_gb", False)])]
            )
        },
    ),
    Probe(
        "bags-duplicate-field",
        "bags",
        "`tp_size` declared by two namespace classes",
        True,
        edits=(
            (
                "sglang/srt/arg_groups/fields/serving.py",
                "    port: A[int, Arg()] = 30000\n",
                "    port: A[int, Arg()] = 30000\n    tp_size: A[int, Arg()] = 1\n",
            ),
        ),
    ),
    Probe(
        "bags-namespace-without-accessor",
        "bags",
        "a new top-level namespace `kv` (listed) with no `get_kv()`",
        True,
        {
            "sglang/srt/arg_groups/fields/kv.py": _fields_file(
                [("Kv", "kv", [("kv_cache_dtype", False)])]
            )
        },
        edits=(
            (
                _RECORD,
                "_INPUT_NAMESPACES = [\n",
                "from sglang.srt.arg_groups.fields.kv import Kv  # noqa: E402\n\n"
                "_INPUT_NAMESPACES = [\n    Kv,\n",
            ),
        ),
    ),
]
