"""The record and resolution: declarations instead of writes, the whitelist, the
strict mutation guard, views, model overrides, and the no-copy contract."""

from __future__ import annotations

import copy
import pickle

import pytest
from rt_fixtures import fresh_context  # noqa: F401 - autouse: empty context per test

from ctxrt.context import get_parallel, publish
from ctxrt.errors import DeclarationError, RecordMutationError, SealedError
from ctxrt.fields.base import Derived
from ctxrt.fields.layout import TOP_NAMESPACES
from ctxrt.record import _INPUT_NAMESPACES, LAYOUT, ServerArgs
from ctxrt.resolution import (
    _MODEL_OVERRIDE_FNS,
    MODEL_OVERRIDES,
    RESOLVED_SLOT,
    declarations,
    declare_resolution,
    register_model_override,
    resolution_result,
    resolved_view,
    resolving_view,
)


def test_every_field_class_names_a_namespace_and_every_leaf_has_one_home() -> None:
    paths = {cls._NS_PATH for cls in _INPUT_NAMESPACES}
    assert {p.split(".")[0] for p in paths} == set(TOP_NAMESPACES)
    assert set(LAYOUT.leaf_paths.values()) <= paths
    declared = [n for cls in _INPUT_NAMESPACES for n in cls.__annotations__ if n[0] != "_"]
    assert sorted(declared) == sorted(LAYOUT.leaf_paths)  # unique across namespaces
    record_fields = {n for n in ServerArgs.__dataclass_fields__ if n[0] != "_"}
    assert record_fields == set(LAYOUT.leaf_paths) - set(LAYOUT.derived)
    assert set(ServerArgs.__dataclass_fields__) - record_fields == {RESOLVED_SLOT}
    assert all(isinstance(d, Derived) for d in LAYOUT.derived.values())


def test_resolution_declares_and_leaves_the_input_pristine() -> None:
    sa = ServerArgs(model_path="tiny-lm")
    # The point of this case is that the record stayed pristine, so it reads fields.
    assert sa.context_length is None and sa.load_format == "auto" and sa.device == "auto"
    assert resolution_result(sa, "context_length") == 128
    assert resolution_result(sa, "load_format") == "dummy"
    assert resolution_result(sa, "device") in ("cpu", "cuda")
    assert all(decl.source for decl in declarations(sa))
    resolved = sa.resolved_dict()
    assert resolved["served_model_name"] == "tiny-lm"
    assert resolved["is_random_weights"] is True  # a Derived leaf, computed from the above
    assert set(resolved) == set(LAYOUT.leaf_paths)


def test_mutation_guard_refuses_every_write_after_resolution() -> None:
    sa = ServerArgs(model_path="dummy", tp_size=2)
    with pytest.raises(RecordMutationError):
        sa.tp_size = 4
    with pytest.raises(RecordMutationError):
        setattr(sa, "context_length", 7)  # noqa: B010 - the dynamic spelling is guarded too
    with pytest.raises(RecordMutationError):
        sa._ctx_published = False  # bookkeeping slots are not a way around it
    with pytest.raises(RecordMutationError):
        del sa.tp_size
    assert resolution_result(sa, "tp_size") == 2


def test_declaring_a_non_resolvable_or_unknown_field_raises_and_appends_nothing() -> None:
    sa = ServerArgs(model_path="dummy")
    before = declarations(sa)
    with pytest.raises(DeclarationError, match="not resolvable"):
        declare_resolution(sa, "test", tp_size=2)
    with pytest.raises(DeclarationError, match="not record fields"):
        declare_resolution(sa, "test", nccl_port=1234, no_such_field=1)
    assert declarations(sa) == before
    assert resolution_result(sa, "nccl_port") is None


def test_a_pre_publish_declaration_travels_into_the_bags_and_publish_closes_the_stash() -> None:
    sa = ServerArgs(model_path="dummy")
    declare_resolution(sa, "launcher", nccl_port=29500)
    assert sa.nccl_port is None  # the field is still the operator's input
    publish(sa, role="tokenizer")
    assert get_parallel().nccl_port == 29500
    with pytest.raises(DeclarationError, match="already published"):
        declare_resolution(sa, "late", nccl_port=1)
    declare_resolution(sa, "validation-only")  # an empty declaration stays legal


def test_resolving_view_is_live_and_resolved_view_is_a_snapshot() -> None:
    sa = ServerArgs(model_path="dummy")
    live, snap = resolving_view(sa), resolved_view(sa)
    declare_resolution(sa, "test", nccl_port=4000)
    assert live.nccl_port == 4000
    assert snap.nccl_port is None
    with pytest.raises(SealedError):
        live.nccl_port = 1
    with pytest.raises(AttributeError):
        _ = snap.no_such_field


def test_dp_attention_resolution_and_parallel_validation() -> None:
    sa = ServerArgs(model_path="dummy", enable_dp_attention=True)  # dp_size 1: nothing to split
    assert resolution_result(sa, "enable_dp_attention") is False
    dp = ServerArgs(model_path="dummy", tp_size=4, dp_size=2, enable_dp_attention=True)
    assert (
        resolution_result(dp, "chunked_prefill_size") == dp.resolved_dict()["chunked_prefill_size"]
    )
    assert dp.resolved_dict()["attn_tp_size"] == 2
    with pytest.raises(ValueError, match="divisible"):
        ServerArgs(model_path="dummy", tp_size=3, dp_size=2, enable_dp_attention=True)
    with pytest.raises(ValueError, match="unknown model"):
        ServerArgs(model_path="no-such-model")


def test_model_overrides_declare_per_architecture(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(MODEL_OVERRIDES, "TinyLMForCausalLM", {"attention_backend": "sdpa"})
    seen: dict[str, object] = {}
    # Registers for the built-in tiny-lm architecture; monkeypatch undoes it at teardown
    # (setitem records the registry's state first: a delitem of an absent key records
    # nothing, and the registration below would outlive the test)
    monkeypatch.setitem(_MODEL_OVERRIDE_FNS, "TinyLMForCausalLM", None)
    monkeypatch.delitem(_MODEL_OVERRIDE_FNS, "TinyLMForCausalLM")

    @register_model_override("TinyLMForCausalLM")
    def tiny(cfg, hf_config):  # type: ignore[no-untyped-def]
        seen["context_length"] = cfg.context_length
        with pytest.raises(SealedError):
            cfg.context_length = 1  # the callable is handed a read-only snapshot
        return {"context_length": hf_config["max_position_embeddings"] // 2}

    sa = ServerArgs(model_path="tiny-lm")
    assert resolution_result(sa, "attention_backend") == "sdpa"
    assert resolution_result(sa, "context_length") == 64
    assert seen["context_length"] == 128  # it saw the model resolution before it
    assert sa.attention_backend is None and sa.context_length is None
    sources = [d.source for d in declarations(sa)]
    assert "MODEL_OVERRIDES[TinyLMForCausalLM]" in sources
    assert "register_model_override(TinyLMForCausalLM)" in sources


def test_a_dummy_model_returns_early_after_the_model_independent_steps(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """SGLang's ``model_path="dummy"`` short circuit: the device and the parallel
    sizes resolve and validate; nothing model-dependent is decided, no HF config is
    loaded and no model override runs, so those leaves keep the raw input."""
    monkeypatch.setitem(MODEL_OVERRIDES, "DummyForCausalLM", {"attention_backend": "sdpa"})
    for path in ("dummy", "None", "DUMMY"):
        sa = ServerArgs(model_path=path, enable_dp_attention=True)
        assert [d.source for d in declarations(sa)] == ["device", "parallel"]
        assert resolution_result(sa, "device") == "cpu"
        assert resolution_result(sa, "enable_dp_attention") is False  # dp_size 1
        for name, raw in (
            ("load_format", "auto"),
            ("context_length", None),
            ("served_model_name", None),
            ("attention_backend", None),
            ("max_running_requests", None),
        ):
            assert resolution_result(sa, name) == raw, name
    with pytest.raises(ValueError, match="divisible"):
        ServerArgs(model_path="dummy", tp_size=3, ep_size=2)  # still validated
    full = ServerArgs(model_path="tiny-lm")
    assert resolution_result(full, "context_length") == 128
    assert "model" in [d.source for d in declarations(full)]


def test_a_resolved_record_is_not_copied_but_pickles_with_its_stash() -> None:
    sa = ServerArgs(model_path="dummy")
    declare_resolution(sa, "launcher", nccl_port=4242)
    with pytest.raises(TypeError):
        copy.copy(sa)
    with pytest.raises(TypeError):
        copy.deepcopy(sa)
    clone = pickle.loads(pickle.dumps(sa))  # what spawn does: the stash travels
    assert resolution_result(clone, "nccl_port") == 4242
    assert clone.resolved_dict() == sa.resolved_dict()
    with pytest.raises(RecordMutationError):
        clone.nccl_port = 1
