"""The ``spec`` namespace: speculative decoding."""

from __future__ import annotations

from ctxrt.fields.base import arg


class Spec:
    _NS_PATH = "spec"

    speculative_algorithm: str | None = arg(None, help="Registered algorithm name.")
    speculative_num_draft_tokens: int | None = arg(None, resolvable=True, help="Per step.")
    speculative_draft_model_path: str | None = arg(None, resolvable=True, help="Draft model.")
    speculative_draft_load_format: str | None = arg(None, resolvable=True, help="Draft only.")
    speculative_attention_backend: str | None = arg(None, resolvable=True, help="Draft only.")
    speculative_moe_runner_backend: str | None = arg(
        None, help="The draft's MoE kernel; None runs the target's."
    )
