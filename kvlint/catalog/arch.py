"""ModelArch: the architecture facts capacity arithmetic needs, and where each came from."""

from __future__ import annotations

from typing import Any

from kvlint.record import field, record

# Layer kinds, as vLLM sizes their KV cache (vllm/v1/kv_cache_interface.py spec classes).
FULL = "full"  # FullAttentionSpec: every token of the context
SLIDING = "sliding"  # SlidingWindowSpec: about window + batched tokens per request
CHUNKED = "chunked"  # ChunkedLocalAttentionSpec (Llama 4): about chunk + batched tokens
NONE = (
    "none"  # no growing KV: Mamba / linear-attention layers (a fixed state, see hybrid.py), MLP-only layers
)
# CrossAttentionSpec: a decoder layer attending to encoder (image) tokens, e.g. mllama's cross-attention
# layers. Its KV holds the request's encoder tokens (ModelArch.encoder_tokens), not its text tokens.
CROSS = "cross"

# Encoder-only families: bidirectional attention over the whole input, nothing decoded, so the engine
# keeps no KV cache (vLLM serves them as pooling models with EncoderOnlyAttentionSpec). Embedding and
# reranking models (BERT, RoBERTa / XLM-R, ...) and vision towers served alone (CLIP, SigLIP).
ENCODER_ONLY = frozenset(
    {
        "bert",
        "roberta",
        "xlm-roberta",
        "distilbert",
        "electra",
        "deberta",
        "deberta-v2",
        "mpnet",
        "nomic_bert",
        "modernbert",
        # NVIDIA's bidirectional Llama (LlamaBidirectionalModel / ...ForSequenceClassification: NeMo Retriever
        # embedding and reranking models): Llama layers without the causal mask, pooled, nothing decoded
        "llama_bidirec",
        "clip",
        "clip_vision_model",
        "siglip",
        "siglip_vision_model",
    }
)


@record(frozen=True)
class Quant:
    """Weight quantization of the checkpoint, summarised to what memory arithmetic needs."""

    method: str  # fp8, compressed-tensors, awq, gptq, mxfp4, bitsandbytes, modelopt, ...
    bits: float  # effective bits per quantized linear weight, scales and zero points included
    scheme: str  # human description, e.g. "int4 weights, group 128, fp16 scales"
    # which linear groups it applies to: attention, dense MLP, routed experts, shared experts
    covers: frozenset[str] = frozenset({"attn", "mlp", "experts", "shared"})
    kv_cache_dtype: str | None = None  # a KV-cache scheme the checkpoint carries (fp8)
    min_capability: int | None = None  # vLLM get_min_capability() of the method, e.g. 80 for sm80
    # a GGUF file's llama.cpp file type and its default ggml type ("q4_k_m:q4_k"): each tensor role is
    # priced at the type llama.cpp gives it (kvlint.catalog.gguf_roles); "" for every other format
    ggml_file_type: str = ""
    # a GGUF's routed experts kept at the checkpoint's own ggml type ("mxfp4": gpt-oss), whatever the
    # file type (kvlint.catalog.gguf_roles); "" when the quantizer chose them
    kept_experts: str = ""
    # modules the config leaves in 16-bit in one layer only ((group, layer), kvlint.catalog.quant_modules),
    # other schemes some groups get (group, bits), and patterns kvlint could not place (the weights are
    # then open upward: those modules may be 16-bit)
    skip_layers: frozenset[tuple[str, int]] = frozenset()
    group_bits: tuple[tuple[str, float], ...] = ()
    unplaced: tuple[str, ...] = ()


@record(frozen=True)
class LayerParams:
    attn: int  # attention linear weights (TP-sharded, quantizable)
    mlp: int  # dense MLP linear weights (TP-sharded, quantizable)
    experts: int  # routed + shared expert weights (TP- or EP-sharded, quantizable)
    replicated: int  # norms, router, biases: full copy on every TP rank, 16-bit
    shared: int = 0  # the shared experts' part of `experts` (a checkpoint may keep them 16-bit)


@record(frozen=True)
class ModelArch:
    id: str
    source: str  # where the facts came from: catalog entry + upstream, local file, HF cache
    family: str  # model_type (text model)
    layers: int
    hidden_size: int
    query_heads: int
    kv_heads: int  # total KV heads (vLLM get_total_num_kv_heads)
    head_dim: int  # KV head size (vLLM get_head_size; MLA: kv_lora_rank + qk_rope_head_dim)
    vocab_size: int
    max_positions: int  # the max_model_len vLLM derives from the config
    max_positions_note: str
    layer_kinds: tuple[str, ...]
    sliding_window: int | None = None
    attention_chunk_size: int | None = None
    mla: bool = False
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    v_head_dim: int | None = None  # when V differs from K (not MLA): vLLM head_size_v
    mla_dims: tuple[int, int, int] | None = None  # MLA (qk_nope_head_dim, qk_rope_head_dim, v_head_dim)
    # DeepSeek sparse attention (config has index_topk): the indexer's key size (0: not DSA) and the
    # IndexCache layer rule as stated (index_topk_freq, index_skip_topk_offset, index_topk_pattern)
    dsa_index_head_dim: int = 0
    dsa_index_rule: tuple[int, int, str] = (1, 2, "")
    intermediate_size: int = 0
    num_experts: int = 0
    experts_per_token: int = 0
    moe_intermediate_size: int = 0
    moe_layers: int = 0
    dtype: str = "bfloat16"  # checkpoint torch_dtype
    quant: Quant | None = None
    embed_params: int = 0
    lm_head_params: int = 0  # 0 when tied to the embedding, or replaced by a score head
    head_params: int = 0  # a classification / reward model's score head (in place of the lm_head)
    layer_params: tuple[LayerParams, ...] = ()
    final_params: int = 0  # final norm
    vision_params: int = 0  # vision / multimodal tower and projector, loaded by vLLM
    vision_note: str = ""
    # vision_config num_hidden_layers / hidden_size as stated (None: absent); SGLang sizes its
    # multimodal mem_fraction_static reduction from them (adjust_mem_fraction_for_vlm)
    vision_layers: int | None = None
    vision_hidden: int | None = None
    mtp_params: int = 0  # multi-token-prediction layers, loaded only for MTP speculative decoding
    rope_cache_elems: int = (
        0  # cos/sin cache the engine builds: positions x rotary_dim, summed over rope kinds
    )
    state_bytes_per_seq: int = 0  # hybrid models: fixed Mamba / linear-attention state per running sequence
    state_layers: tuple[int, ...] = ()  # the layers holding that state (Mamba / linear attention), in order
    # the SSM / recurrent part of that state: its elements per sequence and the width state_bytes_per_seq
    # prices them at (the config's mamba_ssm(_cache)_dtype, else the model dtype); an engine that keeps it
    # at another width (SGLang's --mamba-ssm-dtype, float32 by default) reprices it (engines/sglang/state.py)
    state_ssm_elems: int = 0
    state_ssm_width: float = 0.0
    encoder_tokens: int = 0  # cross-attention models: encoder (image) tokens one request's CROSS layers cache
    checkpoint_bytes: int | None = None  # safetensors total_size when known
    checkpoint_bytes_source: str = ""
    gated_mlp: bool = True
    # the smallest of the config's length keys before any RoPE scaling (LMDeploy's default session_len,
    # lmdeploy/utils.py _get_and_verify_max_len); 0 when no config was read (max_positions then)
    config_positions: int = 0
    notes: tuple[str, ...] = ()
    facts: dict[str, str] = field(default_factory=dict, compare=False)  # fact -> where it came from
    # what parse_config read (config, id, source, hf_quant, checkpoint bytes, their source), so engine
    # options that change the model (--hf-overrides …) can be applied to the same config
    parsed_from: tuple[Any, ...] | None = field(default=None, compare=False)

    @property
    def params(self) -> int:
        body = sum(p.attn + p.mlp + p.experts + p.replicated for p in self.layer_params)
        head = self.lm_head_params + self.head_params
        return self.embed_params + head + body + self.final_params + self.vision_params

    @property
    def attention_layers(self) -> int:
        return sum(1 for k in self.layer_kinds if k != NONE)

    @property
    def cross_layers(self) -> int:
        """Layers whose KV holds encoder tokens (counted in attention_layers: V0 and SGLang give
        them a slot per text token as well)."""
        return sum(1 for k in self.layer_kinds if k == CROSS)

    @property
    def has_sliding(self) -> bool:
        return any(k in (SLIDING, CHUNKED) for k in self.layer_kinds)
