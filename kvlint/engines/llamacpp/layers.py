"""What llama.cpp puts on the GPU, layer by layer: the GGUF weights of the offloaded layers and their KV cache.

Offload (ollama/ollama@v0.15.5 llama/llama.cpp/src/llama-model.cpp:2396-2423, llama.cpp ec98e2002 vendored):
`i_gpu_start = max(n_layer - n_gpu_layers, 0)`, so the *last* n_gpu_layers repeating layers go to the GPU;
the output layer (output.weight, or token_embd duplicated as it when tied) goes there when n_gpu_layers >
n_layer; the input layer (token_embd) always stays on the CPU ("there is very little benefit to offloading
the input layer"). Weights are priced by tensor role (kvlint.catalog.gguf_roles); norms are F32 in a GGUF.

KV cache (llama-kv-cache.cpp:112-134 at the same commit): per layer one K tensor of n_embd_k_gqa x kv_size
x n_stream and one V of n_embd_v_gqa, at --cache-type-k / --cache-type-v; a layer's cache sits on the layer's
device unless --no-kv-offload (offload_kqv). Sliding-window layers get the iSWA cache's smaller size
(llama-kv-cache-iswa.cpp:50). Recurrent ("none") layers keep a fixed state kvlint leaves out (said).
"""

from __future__ import annotations

from typing import Any

from kvlint.catalog import gguf
from kvlint.catalog.arch import CHUNKED, FULL, SLIDING, ModelArch
from kvlint.catalog.gguf import bits_of
from kvlint.catalog.gguf_roles import price
from kvlint.record import replace

# the KV cache types llama.cpp accepts (common/arg.cpp kv_cache_types), each at its ggml block size's bytes
# per value (kvlint.catalog.gguf: q8_0 34 bytes per 32 values, q4_0 18 per 32, ...)
KV_TYPES = ("f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1")
KV_TYPE_BYTES = {t: bits_of(t) / 8 for t in KV_TYPES}
NORM_BYTES = 4  # 1-D tensors (norms, biases) stay F32 in a GGUF (llama-quant.cpp: only 2-D tensors quantized)


def pad(n: int, to: int) -> int:
    return -(-n // to) * to


def as_pulled(arch: ModelArch, file_type: str | None) -> ModelArch:
    """The model as the GGUF an Ollama tag pulls stores it (options.py `gguf_file_type`): its base's
    architecture at that file type; unchanged when no type is stated or the model already names one."""
    if not file_type or (arch.quant is not None and arch.quant.ggml_file_type):
        return arch
    # the table holds only types gguf.quant prices (tests/test_ollama_tags.py)
    quant, _why = gguf.quant(file_type)
    return replace(arch, quant=quant, checkpoint_bytes=None, checkpoint_bytes_source="")


def _parts(arch: ModelArch) -> tuple[list[tuple[float, float, float]], int, int]:
    """(each repeating layer's (attention, dense FFN, experts) bytes, the input embedding, the output layer)."""
    q = arch.quant
    if q is not None and q.ggml_file_type:
        ftype, _, default = q.ggml_file_type.partition(":")
        priced = price(arch, ftype, default)
        embed, output = int(priced.embed), int(priced.output)
        return (
            list(priced.layers),
            embed,
            output if arch.lm_head_params else embed,
        )  # tied: token_embd as output
    width = q.bits / 8 if q is not None else 2.0  # F16/BF16 GGUF
    parts = [(lp.attn * width, lp.mlp * width, lp.experts * width) for lp in arch.layer_params]
    return parts, int(arch.embed_params * width), int((arch.lm_head_params or arch.embed_params) * width)


def weights_by_layer(arch: ModelArch) -> tuple[list[int], int, int]:
    """(bytes of each repeating layer, the input embedding, the output layer as llama.cpp loads it)."""
    parts, embed, output_bytes = _parts(arch)
    layers = [
        int(sum(t)) + lp.replicated * NORM_BYTES for t, lp in zip(parts, arch.layer_params, strict=True)
    ]
    return layers, embed, output_bytes


def groups_by_layer(arch: ModelArch) -> list[tuple[float, float, float, float]]:
    """Each repeating layer's (attention, dense FFN, routed experts, shared experts) bytes, the experts split
    between routed and shared by their parameter counts."""
    out = []
    for (attn, mlp, experts), lp in zip(_parts(arch)[0], arch.layer_params, strict=True):
        shared = experts * lp.shared / lp.experts if lp.experts else 0.0
        out.append((attn, mlp, experts - shared, shared))
    return out


def widths(arch: ModelArch) -> tuple[int, int]:
    """(n_embd_k_gqa, n_embd_v_gqa) of an attention layer (llama-hparams.cpp); MLA caches its latent in K."""
    if arch.mla:
        return (arch.kv_lora_rank or 0) + (arch.qk_rope_head_dim or 0), 0
    return arch.kv_heads * arch.head_dim, arch.kv_heads * (arch.v_head_dim or arch.head_dim)


def cells_of(kind: str, n_ctx_seq: int, streams: int, swa: int, swa_full: bool) -> int:
    """KV cells a layer of this kind keeps, all streams together."""
    if kind == FULL:
        return n_ctx_seq * streams
    if kind in (SLIDING, CHUNKED):
        return (n_ctx_seq if swa_full else min(n_ctx_seq, swa)) * streams
    return 0


def kv_by_layer(
    arch: ModelArch, n_ctx_seq: int, streams: int, swa: int, swa_full: bool, bk: float, bv: float
) -> list[int]:
    """KV bytes of each layer (cells x (K width x K bytes + V width x V bytes))."""
    k, v = widths(arch)
    kinds = arch.layer_kinds or (FULL,) * arch.layers
    return [int(cells_of(kind, n_ctx_seq, streams, swa, swa_full) * (k * bk + v * bv)) for kind in kinds]


def window_cells(arch: ModelArch, n_ctx_seq: int, unified: bool, n_seq: int, n_ubatch: int, to: int) -> int:
    """llama-kv-cache-iswa.cpp:50: `GGML_PAD(min(size_base, n_swa*(unified ? n_seq_max : 1) + n_ubatch), 256)`."""
    window = arch.sliding_window or arch.attention_chunk_size or 0
    return pad(min(n_ctx_seq, window * (n_seq if unified else 1) + n_ubatch), to)


def placed(arch: ModelArch, moved: Any) -> tuple[list[int], int, int]:
    """weights_by_layer less the tensors --override-tensor keeps on the CPU (overrides.Moved; None: none)."""
    layers, embed, output = weights_by_layer(arch)
    if moved is None:
        return layers, embed, output
    for i, (groups, shares) in enumerate(zip(groups_by_layer(arch), moved.layers, strict=True)):
        layers[i] -= int(sum(b * share for b, (share, _) in zip(groups, shares, strict=True)))
    return layers, embed, 0 if moved.output else output


def largest_moved(arch: ModelArch, moved: Any) -> int:
    """The largest tensor --override-tensor keeps on the CPU, in bytes (0: none)."""
    if moved is None:
        return 0
    sizes = (b * big for groups, shares in zip(groups_by_layer(arch), moved.layers, strict=True)
             for b, (_, big) in zip(groups, shares, strict=True))  # fmt: skip
    return int(max(sizes, default=0))
