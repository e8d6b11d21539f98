"""Read a Hugging Face config.json (or kvlint's compact copy of one) into a ModelArch.

The readings follow vLLM's, with the code they mirror named at each step:
- head size: vllm/transformers_utils/config (ModelConfig.get_head_size): MLA kv_lora_rank +
  qk_rope_head_dim; else `head_dim`; else hidden_size // num_attention_heads.
- KV heads: ModelConfig.get_total_num_kv_heads: Falcon multi_query -> 1; else the first of
  n_head_kv, num_kv_heads, num_key_value_heads, multi_query_group_num; else the query heads.
- max_model_len: vllm/config/model.py `_get_and_verify_max_len`: the minimum over the length keys,
  scaled by rope_scaling unless the rope type already states the extended length.
Parameter counts follow the architectures' published module shapes (the formulas are in
../shared/reference/engine_accounting.md section E, checked against the calibration logs).
"""

from __future__ import annotations

from typing import Any

from kvlint.catalog.arch import CHUNKED, FULL, NONE, SLIDING, LayerParams, ModelArch, Quant

# The keys under which configs state the longest context (derive_max_len takes the smallest given).
_LENGTH_KEYS = (
    "max_position_embeddings",
    "n_positions",
    "max_seq_len",
    "seq_length",
    "model_max_length",
    "max_sequence_length",
    "max_seq_length",
    "seq_len",
)

# The keys kvlint keeps from a config.json in its compact catalog (everything else is dropped).
KEEP_KEYS = frozenset(
    {
        "architectures",
        "model_type",
        "num_hidden_layers",
        "n_layer",
        "num_layers",
        "hidden_size",
        "n_embd",
        "d_model",
        "intermediate_size",
        "ffn_dim",
        "n_inner",
        "moe_intermediate_size",
        "shared_expert_intermediate_size",
        "intermediate_size_mlp",
        "num_attention_heads",
        "n_head",
        "num_key_value_heads",
        "n_head_kv",
        "num_kv_heads",
        "multi_query_group_num",
        "multi_query",
        "new_decoder_architecture",
        "head_dim",
        "hidden_size_per_head",
        "vocab_size",
        "padded_vocab_size",
        *_LENGTH_KEYS,
        "rope_scaling",
        "rope_parameters",
        "sliding_window",
        "use_sliding_window",
        "max_window_layers",
        "layer_types",
        "sliding_window_pattern",
        "attention_chunk_size",
        "no_rope_layers",
        "nope_layer_interval",
        "tie_word_embeddings",
        "torch_dtype",
        "dtype",
        "quantization_config",
        "compression_config",
        "num_local_experts",
        "num_experts",
        "n_routed_experts",
        "n_shared_experts",
        "num_experts_per_tok",
        "experts_per_token",
        "first_k_dense_replace",
        "moe_layer_freq",
        "decoder_sparse_step",
        "mlp_only_layers",
        "interleave_moe_layer_step",
        "kv_lora_rank",
        "q_lora_rank",
        "qk_nope_head_dim",
        "qk_rope_head_dim",
        "v_head_dim",
        "num_nextn_predict_layers",
        "attention_bias",
        "qkv_bias",
        "mlp_bias",
        "bias",
        "num_kv_shared_layers",
        "text_config",
        "vision_config",
        "audio_config",
        "word_embed_proj_dim",
        "partial_rotary_factor",
        "original_max_position_embeddings",
        "parallel_attn",
        "alibi",
    }
)
VISION_KEEP = frozenset(
    {
        "model_type",
        "hidden_size",
        "intermediate_size",
        "num_hidden_layers",
        "depth",
        "num_attention_heads",
        "patch_size",
        "image_size",
        "num_channels",
        "in_chans",
        "projector_input_dim",
        "projector_output_dim",
        "vision_output_dim",
        "out_hidden_size",
        "spatial_merge_size",
        "embed_dim",
        "mlp_ratio",
    }
)
QUANT_KEEP = frozenset(
    {
        "quant_method",
        "bits",
        "group_size",
        "zero_point",
        "sym",
        "desc_act",
        "version",
        "fmt",
        "activation_scheme",
        "weight_block_size",
        "modules_to_not_convert",
        "ignore",
        "format",
        "config_groups",
        "kv_cache_scheme",
        "load_in_4bit",
        "load_in_8bit",
        "bnb_4bit_quant_type",
        "bnb_4bit_use_double_quant",
        "quant_algo",
        "kv_cache_quant_algo",
        "exclude_modules",
        "quantization_status",
        "weight_dtype",
    }
)


def compact(config: dict[str, Any]) -> dict[str, Any]:
    """The subset of a config.json that kvlint reads (what the shipped catalog stores)."""
    out: dict[str, Any] = {}
    for key, value in config.items():
        if key not in KEEP_KEYS:
            continue
        if key == "text_config" and isinstance(value, dict):
            value = compact(value)
        elif key in ("vision_config", "audio_config") and isinstance(value, dict):
            value = {k: v for k, v in value.items() if k in VISION_KEEP}
        elif key in ("quantization_config", "compression_config") and isinstance(value, dict):
            value = {k: v for k, v in value.items() if k in QUANT_KEEP}
            if isinstance(value.get("config_groups"), dict):
                value["config_groups"] = {
                    g: {k: v for k, v in body.items() if k in ("weights", "input_activations", "targets")}
                    for g, body in value["config_groups"].items()
                    if isinstance(body, dict)
                }
        out[key] = value
    return out


class ConfigError(ValueError):
    """The config lacks a fact kvlint needs; the message names the key."""


# Families whose MLP is not gated (two matrices, not three).
_UNGATED = {"falcon", "phi", "opt", "gpt2", "gpt_neox", "gpt_bigcode", "bloom", "starcoder2", "gptj", "mpt"}
# Families whose tie_word_embeddings defaults to True when the key is absent (their HF config class default).
_TIED_BY_DEFAULT = {
    "gemma",
    "gemma2",
    "gemma3",
    "gemma3_text",
    "opt",
    "falcon",
    "gpt2",
    "gpt_bigcode",
    "bloom",
}
# Families with four norms per decoder layer (pre/post attention and pre/post feed-forward).
_FOUR_NORMS = {"gemma2", "gemma3", "gemma3_text"}
_ARCH_FAMILY = {
    "Gemma3ForCausalLM": "gemma3_text",
    "Gemma3ForConditionalGeneration": "gemma3",
    "Gemma2ForCausalLM": "gemma2",
    "GemmaForCausalLM": "gemma",
    "LlamaForCausalLM": "llama",
    "MistralForCausalLM": "mistral",
    "MixtralForCausalLM": "mixtral",
    "Qwen2ForCausalLM": "qwen2",
    "Qwen3ForCausalLM": "qwen3",
    "Qwen3MoeForCausalLM": "qwen3_moe",
    "Phi3ForCausalLM": "phi3",
    "FalconForCausalLM": "falcon",
    "OPTForCausalLM": "opt",
    "DeepseekV3ForCausalLM": "deepseek_v3",
    "DeepseekV2ForCausalLM": "deepseek_v2",
}


def _first(cfg: dict[str, Any], *keys: str, default=None):
    for key in keys:
        value = cfg.get(key)
        if value is not None:
            return value
    return default


def _need(cfg: dict[str, Any], *keys: str) -> int:
    value = _first(cfg, *keys)
    if value is None:
        raise ConfigError(f"config has no {' / '.join(keys)}")
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
        raise ConfigError(f"config {keys[0]} is {value!r}, expected a positive number")
    return int(value)


def text_part(config: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The text model's config (multimodal configs nest it under text_config) and its family."""
    arch_names = config.get("architectures") or []
    outer = config.get("model_type") or (_ARCH_FAMILY.get(arch_names[0]) if arch_names else None) or ""
    text = config.get("text_config")
    if isinstance(text, dict) and text:
        merged = dict(text)
        for key in ("quantization_config", "compression_config", "tie_word_embeddings"):
            if key not in merged and key in config:
                merged[key] = config[key]
        if "torch_dtype" not in merged and "dtype" not in merged:
            merged["torch_dtype"] = config.get("torch_dtype") or config.get("dtype")
        family = merged.get("model_type") or outer
        return merged, family
    return config, outer


def derive_max_len(cfg: dict[str, Any], family: str) -> tuple[int, str]:
    """vLLM `_get_and_verify_max_len`: min over the length keys, rope-scaled where the type says so."""
    found = [(cfg[k], k) for k in _LENGTH_KEYS if isinstance(cfg.get(k), (int, float)) and cfg[k] > 0]
    if not found:
        return 2048, "no length key in config; vLLM falls back to 2048"
    value, key = min(found)
    value = int(value)
    note = f"{key}={value:,}"
    rope = cfg.get("rope_scaling") or cfg.get("rope_parameters")
    if isinstance(rope, dict):
        rtype = rope.get("rope_type") or rope.get("type") or ""
        factor = rope.get("factor")
        # vLLM: Gemma 3's max_position_embeddings already includes the scaling (skip it); su/longrope/
        # llama3 state the extended length already; yarn uses original_max_position_embeddings * factor.
        if (
            isinstance(factor, (int, float))
            and rtype not in ("su", "longrope", "llama3", "mrope", "default")
            and ("gemma3" not in family)
        ):
            if rtype == "yarn":
                original = rope.get("original_max_position_embeddings") or cfg.get(
                    "original_max_position_embeddings"
                )
                if isinstance(original, (int, float)):
                    value = int(original * factor)
                    note = f"rope_scaling yarn original_max_position_embeddings={int(original):,} x factor {factor}"
                else:
                    value = int(value * factor)
                    note += f" x yarn factor {factor}"
            else:
                value = int(value * factor)
                note += f" x rope_scaling {rtype or 'factor'} {factor}"
    return value, note


def rope_cache_elems(cfg: dict[str, Any], family: str, head_dim: int) -> int:
    """Elements of the RoPE cos/sin cache vLLM builds once per GPU (vllm/model_executor/layers/
    rotary_embedding: a [max_position, rotary_dim] tensor in the model dtype). Its length is
    max_position_embeddings, times the factor for linear/dynamic scaling, original x factor for
    YaRN; MLA rotates only qk_rope_head_dim; Gemma 3 keeps a second, unscaled cache for its
    local layers."""
    max_pos = int(cfg.get("max_position_embeddings") or cfg.get("n_positions") or 2048)
    rope = cfg.get("rope_scaling") or cfg.get("rope_parameters") or {}
    rtype = (rope.get("rope_type") or rope.get("type") or "") if isinstance(rope, dict) else ""
    factor = rope.get("factor") if isinstance(rope, dict) else None
    positions = max_pos
    if isinstance(factor, (int, float)):
        if rtype in ("linear", "dynamic"):
            positions = int(max_pos * factor)
        elif rtype == "yarn":
            original = (
                rope.get("original_max_position_embeddings")
                or cfg.get("original_max_position_embeddings")
                or max_pos
            )
            positions = int(original * factor)
    if cfg.get("kv_lora_rank"):
        rotary = int(cfg.get("qk_rope_head_dim") or 64)
    else:
        rotary = int(head_dim * float(cfg.get("partial_rotary_factor") or 1.0))
    elems = positions * rotary
    if family in ("gemma3", "gemma3_text"):
        elems += max_pos * rotary  # the local layers' cache (rope_local_base_freq, no scaling)
    return elems


def _layer_kinds(cfg: dict[str, Any], family: str, layers: int, window: int | None) -> tuple[str, ...]:
    types = cfg.get("layer_types")
    if isinstance(types, list) and len(types) == layers:
        table = {
            "full_attention": FULL,
            "sliding_attention": SLIDING,
            "chunked_attention": CHUNKED,
            "linear_attention": NONE,
            "mamba": NONE,
            "conv": NONE,
        }
        return tuple(table.get(str(t), FULL) for t in types)
    chunk = cfg.get("attention_chunk_size")
    if family.startswith("llama4") and chunk:
        # Llama 4: layers with RoPE use chunked local attention; every `nope_layer_interval`-th (4th)
        # layer is a global NoPE layer (transformers Llama4TextConfig no_rope_layers default).
        nope = cfg.get("no_rope_layers")
        if isinstance(nope, list) and len(nope) == layers:
            return tuple(CHUNKED if flag else FULL for flag in nope)
        interval = cfg.get("nope_layer_interval") or 4
        return tuple(FULL if (i + 1) % interval == 0 else CHUNKED for i in range(layers))
    if not window:
        return (FULL,) * layers
    if family == "gemma2":  # transformers Gemma2: even layers slide, odd layers are global
        return tuple(SLIDING if i % 2 == 0 else FULL for i in range(layers))
    if family in ("gemma3", "gemma3_text"):
        pattern = cfg.get("sliding_window_pattern") or 6  # Gemma3TextConfig default: 5 local, 1 global
        return tuple(FULL if (i + 1) % pattern == 0 else SLIDING for i in range(layers))
    if family in ("qwen2", "qwen2_moe", "qwen3", "qwen3_moe"):
        if not cfg.get("use_sliding_window"):
            return (FULL,) * layers  # vLLM get_sliding_window: Qwen2 with use_sliding_window false
        first_full = cfg.get("max_window_layers") or layers
        return tuple(SLIDING if i >= first_full else FULL for i in range(layers))
    return (SLIDING,) * layers  # Mistral-style: every layer windowed


def _dtype(cfg: dict[str, Any]) -> str:
    dtype = str(_first(cfg, "torch_dtype", "dtype", default="bfloat16"))
    return {"float": "float32", "half": "float16", "bf16": "bfloat16", "fp16": "float16"}.get(dtype, dtype)


def read_quant(cfg: dict[str, Any], hf_quant: dict[str, Any] | None = None) -> Quant | None:
    """Summarise the checkpoint's quantization_config (or ModelOpt hf_quant_config.json)."""
    q = cfg.get("quantization_config") or cfg.get("compression_config")
    if not isinstance(q, dict) and isinstance(hf_quant, dict):
        algo = (hf_quant.get("quantization") or {}).get("quant_algo")
        kv = (hf_quant.get("quantization") or {}).get("kv_cache_quant_algo")
        if algo:
            q = {"quant_method": "modelopt", "quant_algo": algo, "kv_cache_quant_algo": kv}
    if not isinstance(q, dict):
        return None
    method = str(q.get("quant_method") or "").lower()
    skip = [
        str(m) for m in (q.get("modules_to_not_convert") or q.get("ignore") or q.get("exclude_modules") or [])
    ]
    covers = {"attn", "mlp", "experts"}
    if any("self_attn" in m and "layers.0." not in m for m in skip) or any(
        m.endswith("self_attn") for m in skip
    ):
        covers.discard("attn")
    kv_dtype = None
    if method == "fp8":
        block = q.get("weight_block_size")
        if isinstance(block, list) and len(block) == 2 and all(isinstance(b, int) and b > 0 for b in block):
            bits = 8 + 32 / (block[0] * block[1])  # one fp32 scale per block
            scheme = f"fp8 e4m3 weights, {block[0]}x{block[1]} block scales"
        else:
            bits, scheme = 8.0, "fp8 weights, per-tensor scales"
        return Quant("fp8", bits, scheme, frozenset(covers), None, 75)
    if method == "compressed-tensors":
        bits, scheme = 8.0, "compressed-tensors"
        groups = q.get("config_groups") or {}
        for body in groups.values() if isinstance(groups, dict) else []:
            weights = (body or {}).get("weights") or {}
            nbits = weights.get("num_bits")
            if not isinstance(nbits, int):
                continue
            wtype = weights.get("type", "int")
            strategy = weights.get("strategy", "tensor")
            gsize = weights.get("group_size")
            if nbits == 4 and wtype == "float" and gsize == 16:
                bits = 4 + 8 / 16 + 32 / (16 * 1024)  # NVFP4: fp8 scale per 16, global fp32
                scheme = "NVFP4 weights (fp8 scale per 16)"
            elif strategy == "group" and isinstance(gsize, int) and gsize > 0:
                zero = 0 if weights.get("symmetric", True) else nbits  # packed zero point per group
                bits = nbits + (16 + zero) / gsize
                scheme = f"{wtype}{nbits} weights, group {gsize}, bf16 scales"
            else:
                bits = float(nbits)
                scheme = f"{wtype}{nbits} weights, {strategy} scales"
            acts = (body or {}).get("input_activations") or {}
            if acts.get("num_bits"):
                scheme = scheme.replace(
                    " weights", f" weights / {acts.get('type', 'int')}{acts['num_bits']} activations"
                )
            break
        kv = q.get("kv_cache_scheme")
        if isinstance(kv, dict) and kv.get("num_bits") == 8:
            kv_dtype = "fp8"
        return Quant("compressed-tensors", bits, scheme, frozenset(covers), kv_dtype, 70)
    if method in ("awq", "gptq", "awq_marlin", "gptq_marlin"):
        nbits = int(q.get("bits") or q.get("w_bit") or 4)
        gsize = int(q.get("group_size") or q.get("q_group_size") or 128)
        gsize = gsize if gsize > 0 else 4096  # -1 = per channel
        # packed int weights + fp16 scale per group + packed zero point per group (AWQ always, GPTQ qzeros)
        bits = nbits + (16 + nbits) / gsize
        base = "awq" if method.startswith("awq") else "gptq"
        return Quant(
            base,
            bits,
            f"int{nbits} weights, group {gsize}, fp16 scales + zeros",
            frozenset(covers),
            None,
            75 if base == "awq" else 60,
        )
    if method == "mxfp4":
        covers = {"experts"} if "attn" not in covers else covers
        # gpt-oss: only the MoE experts are MXFP4 (modules_to_not_convert lists attention, router, embeddings)
        return Quant(
            "mxfp4", 4.25, "MXFP4 experts (4-bit E2M1 + E8M0 scale per 32)", frozenset({"experts"}), None, 80
        )
    if method == "bitsandbytes":
        if q.get("load_in_8bit"):
            return Quant("bitsandbytes", 8 + 32 / 4096, "bitsandbytes int8", frozenset(covers), None, 70)
        double = bool(q.get("bnb_4bit_use_double_quant"))
        bits = 4 + (8 / 64 + 32 / (64 * 256)) if double else 4 + 32 / 64
        return Quant(
            "bitsandbytes",
            bits,
            "bitsandbytes nf4" + (" double-quant" if double else ""),
            frozenset(covers),
            None,
            70,
        )
    if method == "modelopt":
        algo = str(q.get("quant_algo") or "").upper()
        kv = q.get("kv_cache_quant_algo")
        kv_dtype = "fp8" if kv and "FP8" in str(kv).upper() else None
        if "FP4" in algo:
            return Quant("modelopt_fp4", 4.5, "ModelOpt NVFP4", frozenset(covers), kv_dtype, 75)
        return Quant("modelopt", 8.0, "ModelOpt FP8", frozenset(covers), kv_dtype, 89)
    return Quant(
        method or "unknown",
        16.0,
        f"{method} (not modelled: counted as 16-bit)",
        frozenset(covers),
        None,
        None,
    )


def _attn_params(cfg: dict[str, Any], family: str, h: int, nq: int, nkv: int, d: int) -> int:
    if cfg.get("kv_lora_rank"):
        q_lora = cfg.get("q_lora_rank")
        nope = int(cfg.get("qk_nope_head_dim") or 128)
        rope = int(cfg.get("qk_rope_head_dim") or 64)
        v = int(cfg.get("v_head_dim") or nope)
        kv_lora = int(cfg["kv_lora_rank"])
        q = h * q_lora + q_lora + q_lora * nq * (nope + rope) if q_lora else h * nq * (nope + rope)
        return q + h * (kv_lora + rope) + kv_lora + kv_lora * nq * (nope + v) + nq * v * h
    params = h * nq * d + 2 * h * nkv * d + nq * d * h
    if (
        cfg.get("attention_bias")
        or cfg.get("qkv_bias")
        or family in ("qwen2", "qwen2_moe", "qwen2_vl", "phi", "opt")
    ):
        params += nq * d + 2 * nkv * d
        if family in ("phi", "opt") or cfg.get("bias"):
            params += h
    return params


def _norms(cfg: dict[str, Any], family: str, h: int, nq: int, nkv: int, d: int) -> int:
    n = 4 * h if family in _FOUR_NORMS else 2 * h
    if family in ("qwen3", "qwen3_moe", "gemma3", "gemma3_text") or cfg.get("use_qk_norm"):
        n += 2 * d
    if family in ("phi", "opt", "falcon", "gpt2", "gpt_neox", "starcoder2"):
        n *= 2  # LayerNorm has a bias beside the weight
    if cfg.get("kv_lora_rank"):
        pass  # MLA's q_a/kv_a layernorms are counted in _attn_params
    return n


def _is_moe_layer(cfg: dict[str, Any], family: str, i: int, experts: int) -> bool:
    if not experts:
        return False
    if family.startswith("deepseek") or family == "kimi_k2" or cfg.get("n_routed_experts"):
        first = int(cfg.get("first_k_dense_replace") or 0)
        freq = int(cfg.get("moe_layer_freq") or 1)
        return i >= first and i % freq == 0
    if family in ("qwen2_moe", "qwen3_moe"):
        if i in (cfg.get("mlp_only_layers") or []):
            return False
        step = int(cfg.get("decoder_sparse_step") or 1)
        return (i + 1) % step == 0
    if family.startswith("llama4"):
        step = int(cfg.get("interleave_moe_layer_step") or 1)
        return (i + 1) % step == 0
    return True  # Mixtral, gpt-oss, ...: every layer


def _vision_params(config: dict[str, Any], text_hidden: int) -> tuple[int, str]:
    v = config.get("vision_config")
    if not isinstance(v, dict) or not v:
        return 0, ""
    h = v.get("hidden_size") or v.get("embed_dim")
    layers = v.get("num_hidden_layers") or v.get("depth")
    if not isinstance(h, int) or not isinstance(layers, int):
        return 0, "vision tower present but its size is not in the config (not counted)"
    inter = v.get("intermediate_size") or int(h * (v.get("mlp_ratio") or 4))
    patch = v.get("patch_size") or 14
    chans = v.get("num_channels") or v.get("in_chans") or 3
    image = v.get("image_size") or 336
    per_layer = 4 * h * h + 4 * h + 2 * h * inter + inter + h + 4 * h  # attn + mlp (+biases, 2 LayerNorms)
    patches = (image // patch) ** 2 if isinstance(image, int) and isinstance(patch, int) and patch else 0
    embed = chans * patch * patch * h + patches * h
    proj_in = v.get("projector_input_dim") or h
    proj_out = v.get("projector_output_dim") or v.get("vision_output_dim") or text_hidden
    projector = proj_in * proj_out + proj_out * text_hidden
    total = layers * per_layer + embed + projector
    return int(total), f"vision tower estimated from vision_config ({layers} layers x hidden {h}), bf16"


def parse_config(
    config: dict[str, Any],
    model_id: str,
    source: str,
    hf_quant: dict[str, Any] | None = None,
    checkpoint_bytes: int | None = None,
    checkpoint_source: str = "",
) -> ModelArch:
    """Build a ModelArch from a config dict. Raises ConfigError naming the missing key."""
    if not isinstance(config, dict):
        raise ConfigError("config.json is not a JSON object")
    cfg, family = text_part(config)
    layers = _need(cfg, "num_hidden_layers", "n_layer", "num_layers")
    h = _need(cfg, "hidden_size", "n_embd", "d_model")
    nq = _need(cfg, "num_attention_heads", "n_head")
    if family == "falcon" and cfg.get("multi_query") and not cfg.get("new_decoder_architecture"):
        nkv = 1
    else:
        nkv = int(
            _first(
                cfg, "n_head_kv", "num_kv_heads", "num_key_value_heads", "multi_query_group_num", default=nq
            )
        )
    vocab = _need(cfg, "vocab_size", "padded_vocab_size")
    mla = bool(cfg.get("kv_lora_rank"))
    if mla:
        head_dim = int(cfg["kv_lora_rank"]) + int(cfg.get("qk_rope_head_dim") or 0)
        attn_dim = int(cfg.get("qk_nope_head_dim") or 128) + int(cfg.get("qk_rope_head_dim") or 64)
    else:
        head_dim = int(_first(cfg, "head_dim", "hidden_size_per_head", default=0) or h // nq)
        attn_dim = head_dim
    max_len, max_note = derive_max_len(cfg, family)

    window = cfg.get("sliding_window")
    if family in ("qwen2", "qwen2_moe", "qwen3", "qwen3_moe") and not cfg.get("use_sliding_window"):
        window = None
    window = int(window) if isinstance(window, int) and not isinstance(window, bool) and window > 0 else None
    kinds = _layer_kinds(cfg, family, layers, window)
    if SLIDING not in kinds:
        window = None if not cfg.get("layer_types") else window

    experts = int(_first(cfg, "num_local_experts", "num_experts", "n_routed_experts", default=0) or 0)
    top_k = int(_first(cfg, "num_experts_per_tok", "experts_per_token", default=0) or 0)
    inter = int(_first(cfg, "intermediate_size", "ffn_dim", "n_inner", default=0) or 0)
    if not inter:
        inter = 4 * h
    if family.startswith("llama4"):
        dense_inter = int(cfg.get("intermediate_size_mlp") or inter)
        moe_inter = inter
    else:
        dense_inter = inter
        moe_inter = int(cfg.get("moe_intermediate_size") or inter)
    gated = family not in _UNGATED
    mlp_mats = 3 if gated else 2

    layer_params: list[LayerParams] = []
    moe_layers = 0
    for i in range(layers):
        attn = _attn_params(cfg, family, h, nq, nkv, attn_dim)
        norms = _norms(cfg, family, h, nq, nkv, attn_dim)
        if _is_moe_layer(cfg, family, i, experts):
            moe_layers += 1
            routed = experts * mlp_mats * h * moe_inter
            shared = 0
            if cfg.get("n_shared_experts"):
                shared = int(cfg["n_shared_experts"]) * mlp_mats * h * moe_inter
            elif cfg.get("shared_expert_intermediate_size"):
                shared = (
                    mlp_mats * h * int(cfg["shared_expert_intermediate_size"]) + h
                )  # + shared_expert_gate
            elif family.startswith("llama4"):
                shared = mlp_mats * h * moe_inter
            router = h * experts
            if family == "gpt_oss":
                routed += experts * (2 * moe_inter + h)  # expert biases
                router += experts
            layer_params.append(LayerParams(attn, 0, routed + shared, norms + router))
        else:
            mlp = mlp_mats * h * dense_inter
            if cfg.get("mlp_bias") or family in ("phi", "opt", "falcon"):
                mlp += (mlp_mats - 1) * dense_inter + h if family != "falcon" else 0
            layer_params.append(LayerParams(attn, mlp, 0, norms))

    tied = cfg.get("tie_word_embeddings")
    if tied is None:
        tied = config.get("tie_word_embeddings")
    if tied is None:
        tied = family in _TIED_BY_DEFAULT
    embed = vocab * h
    if family == "opt":
        embed += (int(cfg.get("max_position_embeddings") or 2048) + 2) * h  # learned positions
    lm_head = 0 if tied else vocab * h
    final = 2 * h if family in ("phi", "opt", "falcon", "gpt2", "gpt_neox", "starcoder2") else h
    vision, vision_note = _vision_params(config, h)
    mtp = 0
    if cfg.get("num_nextn_predict_layers"):
        per = layer_params[-1]
        mtp = int(cfg["num_nextn_predict_layers"]) * (
            per.attn + per.mlp + per.experts + per.replicated + 2 * h * h
        )

    notes: list[str] = []
    if mla:
        notes.append(
            f"MLA: one latent of {head_dim} values per token per layer (kv_lora_rank + qk_rope_head_dim)"
        )
    if family in ("gemma3", "gemma3_text") and isinstance(cfg.get("rope_scaling"), dict):
        notes.append(
            "Gemma 3's max_position_embeddings already includes its rope scaling (vLLM skips the factor)"
        )

    return ModelArch(
        id=model_id,
        source=source,
        family=family or "unknown",
        layers=layers,
        hidden_size=h,
        query_heads=nq,
        kv_heads=1 if mla else nkv,
        head_dim=head_dim,
        vocab_size=vocab,
        max_positions=max_len,
        max_positions_note=max_note,
        layer_kinds=kinds,
        sliding_window=window,
        attention_chunk_size=int(cfg["attention_chunk_size"]) if CHUNKED in kinds else None,
        mla=mla,
        kv_lora_rank=int(cfg["kv_lora_rank"]) if mla else None,
        qk_rope_head_dim=int(cfg.get("qk_rope_head_dim") or 0) if mla else None,
        mla_dims=(
            int(cfg.get("qk_nope_head_dim") or 128),
            int(cfg.get("qk_rope_head_dim") or 64),
            int(cfg.get("v_head_dim") or cfg.get("qk_nope_head_dim") or 128),
        )
        if mla
        else None,
        intermediate_size=dense_inter,
        num_experts=experts,
        experts_per_token=top_k,
        moe_intermediate_size=moe_inter if experts else 0,
        moe_layers=moe_layers,
        dtype=_dtype(cfg),
        quant=read_quant(cfg, hf_quant),
        embed_params=embed,
        lm_head_params=lm_head,
        layer_params=tuple(layer_params),
        final_params=final,
        vision_params=vision,
        vision_note=vision_note,
        mtp_params=mtp,
        rope_cache_elems=rope_cache_elems(cfg, family, attn_dim if not mla else head_dim),
        checkpoint_bytes=checkpoint_bytes,
        checkpoint_bytes_source=checkpoint_source,
        gated_mlp=gated,
        notes=tuple(notes),
        facts={"kv_heads_query_heads": f"{nkv} KV heads, {nq} query heads"},
    )


def total_params_b(arch: ModelArch) -> str:
    """Parameters in billions, for messages."""
    return f"{arch.params / 1e9:.2f}B" if arch.params >= 1e9 else f"{arch.params / 1e6:.0f}M"


__all__ = ["ConfigError", "KEEP_KEYS", "compact", "parse_config", "read_quant", "text_part"]
