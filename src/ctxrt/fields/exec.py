"""The ``exec`` namespace and its sub-namespaces (kernel choice, MoE, graphs)."""

from __future__ import annotations

from ctxrt.fields.base import Derived, arg


class Exec:
    _NS_PATH = "exec"

    enable_torch_compile: bool = arg(False, help="Compile the model forward.")


class ExecKernel:
    _NS_PATH = "exec.kernel"

    attention_backend: str | None = arg(None, resolvable=True, help="Resolved per device.")
    kv_cache_dtype: str = arg("auto", resolvable=True, help="'auto' follows the model dtype.")
    sampling_backend: str = arg("torch", help="Sampler implementation.")


class ExecMoe:
    _NS_PATH = "exec.moe"

    moe_runner_backend: str = arg("auto", resolvable=True, help="Expert compute kernel.")
    moe_a2a_backend: str = arg("none", help="All-to-all backend for expert parallelism.")
    expert_distribution_recorder_mode: str | None = arg(
        None, help="'stat' records which experts each layer selects; None: no recording."
    )
    moe_uses_a2a: bool = Derived(
        fn=lambda cfg: cfg.moe_a2a_backend != "none" and cfg.ep_size > 1,
        help="Expert dispatch goes through an all-to-all (spans exec.moe and parallel).",
    )


class ExecGraph:
    _NS_PATH = "exec.graph"

    disable_cuda_graph: bool = arg(False, resolvable=True, help="Forced on without CUDA.")
    cuda_graph_max_bs: int | None = arg(None, resolvable=True, help="Largest captured batch.")
