"""The KV cache TGI's llama.cpp backend asks llama.cpp for (backends/llamacpp/src/backend.rs at v3.3.7:
`n_ctx = max_batch_total_tokens`, `type_k` / `type_v`, `offload_kqv`, the model loaded with
`n_gpu_layers`): one cell per token of n_ctx, in every layer, of KV heads x head size K values and as
many V values. The KV of a layer sits on the GPU when the layer is offloaded and offload_kqv is on
(the default). llama.cpp may round n_ctx up to its own padding; that is not added here.

Only the arithmetic: the weights (a GGUF, Q4_0 unless --model-gguf names another file) and llama.cpp's
compute buffers are not modelled, so the deployment stays not checked (KV004) and the figure is said."""

from __future__ import annotations

from kvlint.catalog.arch import ModelArch
from kvlint.units import gib

# ggml type sizes in bytes per value (ggml block size / values per block: q8_0 34/32, q4_0 18/32, ...)
GGML_BYTES = {
    "f32": 4.0,
    "f16": 2.0,
    "bf16": 2.0,
    "q8_0": 34 / 32,
    "q4_0": 18 / 32,
    "q4_1": 20 / 32,
    "q5_0": 22 / 32,
    "q5_1": 24 / 32,
    "iq4_nl": 18 / 32,
}


def kv_on_gpu(
    arch: ModelArch, n_ctx: int, gpu_layers: int, type_k: str, type_v: str
) -> tuple[int, str] | None:
    """(bytes, how) of the KV cache the offloaded layers keep on the GPU(s); None when the model's cache
    is not one K and one V per KV head per layer (MLA, recurrent or hybrid layers) or a type is unknown."""
    # clap's ValueEnum takes the variant names kebab-cased (Q8_0 -> q8-0); the ggml spelling is read too
    sk, sv = (GGML_BYTES.get(t.lower().replace("-", "_")) for t in (type_k, type_v))
    if sk is None or sv is None or arch.mla or arch.attention_layers != arch.layers:
        return None
    layers = min(gpu_layers, arch.layers)
    total = int(n_ctx * layers * arch.kv_heads * arch.head_dim * (sk + sv))
    how = (
        f"{n_ctx:,} cells x {layers} layers x {arch.kv_heads} KV heads x {arch.head_dim} x"
        f" ({sk:g} + {sv:g} B, {type_k}/{type_v}) = {gib(total)}"
    )
    return total, how
