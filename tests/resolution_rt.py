"""A resolution runtime for the CTX103/CTX104 cases, over the specrt fixture: a
stash slot named by a constant, a live view class reading it, the declaration
function, a snapshot view, a registrar, a pass runner and a foreign-defaults
wrapper; the record's `__post_init__` runs `app.pipeline.resolve`."""

from __future__ import annotations

RUNTIME = {
    "specrt/resolution.py": """\
STASH = "_stash"


class View:
    def __init__(self, server_args) -> None:
        object.__setattr__(self, "_args", server_args)

    def __getattr__(self, name: str) -> object:
        for decided in reversed(getattr(self._args, STASH)):
            if name in decided:
                return decided[name]
        return self._args.__dict__[name]


class Snapshot:
    def __init__(self, values: dict) -> None:
        self.values = values

    def __getattr__(self, name: str) -> object:
        return self.values[name]


def resolving_view(server_args) -> View:
    return View(server_args)


def resolved_view(server_args) -> Snapshot:
    values = dict(server_args.__dict__)
    for decided in server_args.__dict__[STASH]:
        values.update(decided)
    return Snapshot(values)


def declare_resolution(server_args, source: str, **fields: object) -> None:
    getattr(server_args, STASH).append(fields)


def run_post_process_pass(server_args, source: str, fn) -> None:
    declared = fn(resolved_view(server_args))
    declare_resolution(server_args, source, **declared)


def record_foreign_defaults(server_args, source: str, resolve) -> None:
    stand_in = {}
    resolve(stand_in)
    declare_resolution(server_args, source, **stand_in)


def register_model_override(arch: str):
    def register(fn):
        return fn

    return register


def register_pass(fn):
    return fn
""",
    "specrt/record.py": """\
from specrt.fields import ExecKernel, ExecMoe, Memory, Model, Parallel, Schedule


class ServerArgs(Parallel, Model, ExecKernel, ExecMoe, Schedule, Memory):
    def __post_init__(self) -> None:
        from app.pipeline import resolve

        object.__setattr__(self, "_stash", [])
        resolve(self)
        self._check()

    def _check(self) -> None:
        if self.tp_size < 1:
            raise ValueError("tp_size")

    def resolved_dict(self) -> dict:
        return dict(vars(self))
""",
}

# the specrt fields, some declared resolvable (the whitelist, program.resolvable)
WHITELIST_FIELDS = """\
def arg(default: object, *, resolvable: bool = False) -> object:
    return default


class Parallel:
    _NS_PATH = "parallel"
    tp_size: int = arg(1, resolvable=True)
    dp_size: int = arg(1)


class Model:
    _NS_PATH = "model"
    model_path: str = arg("")
    context_length: int = arg(0, resolvable=True)


class ExecKernel:
    _NS_PATH = "exec.kernel"
    attention_backend: str = arg("auto", resolvable=True)


class ExecMoe:
    _NS_PATH = "exec.moe"
    moe_runner_backend: str = arg("auto")


class Schedule:
    _NS_PATH = "schedule"
    max_running_requests: int = arg(0)
    chunked_prefill_size: int = arg(0, resolvable=True)


class Memory:
    _NS_PATH = "memory"
    mem_fraction_static: float = arg(0.8)
"""
GATED = RUNTIME["specrt/resolution.py"].replace(
    "def declare_resolution(server_args, source: str, **fields: object) -> None:\n",
    "def _check_names(fields: dict) -> None:\n"
    "    if not all(getattr(f, 'resolvable', True) for f in fields):\n"
    "        raise ValueError('refused')\n\n\n"
    "def declare_resolution(server_args, source: str, **fields: object) -> None:\n"
    "    _check_names(fields)\n",
)


def whitelisted(gated: bool = False) -> dict[str, str]:
    """RUNTIME with a whitelist; `gated`: the declaration function checks it
    (a function below it names `resolvable`, as sglang 0.5.17's
    `validate_declarations`)."""
    return {
        **RUNTIME,
        "specrt/fields.py": WHITELIST_FIELDS,
        **({"specrt/resolution.py": GATED} if gated else {}),
    }
