"""The ``model`` namespace: what to load and how."""

from __future__ import annotations

from ctxrt.fields.base import Derived, arg


class Model:
    _NS_PATH = "model"

    model_path: str = arg(help="Model identifier; the toy configs live in ctxrt.hf_configs.")
    served_model_name: str | None = arg(None, resolvable=True, help="Defaults to model_path.")
    load_format: str = arg("auto", resolvable=True, help="'auto' resolves per model.")
    context_length: int | None = arg(None, resolvable=True, help="Defaults to the HF config.")
    dtype: str = arg("auto", resolvable=True, help="'auto' resolves per device.")
    random_seed: int = arg(0, help="Seed for dummy weights and sampling.")
    is_random_weights: bool = Derived(
        fn=lambda cfg: cfg.load_format.startswith("dummy"),
        help="True when the weights are generated rather than read from a checkpoint.",
    )
