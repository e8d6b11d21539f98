"""Vision towers: their weights (estimated from the config's vision block) and the encoder tokens a
cross-attention decoder caches per request.

A multimodal config states its tower under `vision_config` (most families) or `visual` (Qwen-VL 1.0,
in its own key names: width, layers, heads, mlp_ratio, output_dim). The tower's module shapes follow
the families' model code, named where they differ from a plain ViT:
- a ViT layer: q, k, v, o projections with biases, a two-matrix MLP with biases, two LayerNorms;
  a gated (silu, SwiGLU) MLP has three matrices (Qwen2.5-VL's tower, Pixtral's PixtralMLP);
- Qwen2-VL / Qwen2.5-VL PatchMerger: LayerNorm, then an MLP (h*m^2 -> h*m^2 -> out_hidden_size),
  m = spatial_merge_size; Qwen3-VL adds one more merger per deepstack_visual_indexes entry;
- Qwen-VL's Resampler (its visual.py): 256 learned queries, a kv projection width -> output_dim,
  one multi-head attention of output_dim, then a final output_dim x output_dim projection;
- mllama (transformers MllamaVisionModel, vLLM mllama.py): num_hidden_layers local plus
  num_global_layers gated global layers, a class token, a gated position embedding with a
  per-aspect-ratio tile table of (ratios + 1) x tiles x patches x hidden, pre/post tile position
  embeddings, and a single Linear(vision_output_dim -> text hidden) projector;
- GLM-4.1V / GLM-4.5V (vision model_type glm4v, glm4v_moe; vLLM glm4_1v.py Glm4vVisionTransformer): its
  blocks' gated MLP is out_hidden_size wide and intermediate_size is the PatchMerger's width (see _glm4v);
- InternVL (model_type internvl_chat: llm_config + an InternViT vision_config, model_type intern_vit_6b for
  both the 300M and the 6B towers): see _intern_vit and _internvl_mlp1.
"""

from __future__ import annotations

from typing import Any

from kvlint.catalog.conformer import conformer_params, implied_vision_block

# Qwen-VL's Resampler: a 16 x 16 grid of learned queries (Qwen/Qwen-VL visual.py, n_queries=256)
_QWEN_VL_QUERIES = 256


def _block(config: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """(the vision block in vision_config's key names, whether it is Qwen-VL's `visual`). Towers that
    state their size in OpenCLIP's names (width, layers, mlp_ratio: Qwen-VL's `visual`, DeepSeek-VL2's
    vision_config) are read under the transformers names."""
    v = config.get("vision_config")
    qwen_vl = not (isinstance(v, dict) and v)
    if qwen_vl:
        v = config.get("visual")
    if not isinstance(v, dict) or not v:
        return implied_vision_block(config), False  # Phi-4-multimodal names its tower elsewhere
    if v.get("hidden_size") is None and v.get("embed_dim") is None and v.get("width") is not None:
        v = {**v, "hidden_size": v.get("width"), "num_hidden_layers": v.get("layers")}
    return v, qwen_vl


def _int(v: dict[str, Any], *keys: str) -> int | None:
    for key in keys:
        value = v.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def _tile_embeddings(v: dict[str, Any], h: int, patches: int) -> int:
    """mllama: class token, gated position + tile position tables, pre/post tile embeddings, 2 norms."""
    tiles = _int(v, "max_num_tiles") or 1
    ratios = v.get("supported_aspect_ratios")
    ids = (len(ratios) if isinstance(ratios, list) else 8) + 1  # max_aspect_ratio_id + 1 rows
    position = patches * h + 1 + ids * tiles * patches * h
    pre_post = 2 * (ids * tiles * h + 1)
    return h + position + pre_post + 2 * 2 * h


def _projector(v: dict[str, Any], h: int, text_hidden: int, qwen_vl: bool) -> int:
    if qwen_vl:
        out = _int(v, "output_dim") or text_hidden
        # queries + their sincos positions, kv_proj, MultiheadAttention (in/out with biases), ln_q, ln_kv,
        # then ln_post and the output_dim x output_dim proj
        return 2 * _QWEN_VL_QUERIES * out + h * out + 4 * out * out + 4 * out + 4 * out + 2 * h + out * out
    if _int(v, "max_num_tiles"):  # mllama: one Linear(vision_output_dim -> text hidden) with bias
        vision_out = _int(v, "vision_output_dim") or h
        return vision_out * text_hidden + text_hidden
    merge = _int(v, "spatial_merge_size")
    if merge and _int(v, "embed_dim", "hidden_size"):  # Qwen2-VL PatchMerger (Qwen3-VL: + deepstack ones)
        wide = h * merge * merge
        out = _int(v, "out_hidden_size") or text_hidden
        deepstack = v.get("deepstack_visual_indexes")
        mergers = 1 + (len(deepstack) if isinstance(deepstack, list) else 0)
        return mergers * (h + wide * wide + wide + wide * out + out)
    proj_in = _int(v, "projector_input_dim") or h
    proj_out = _int(v, "projector_output_dim", "vision_output_dim") or text_hidden
    return proj_in * proj_out + proj_out * text_hidden


# GLM-4V towers, by their vision_config model_type (transformers Glm4vVisionConfig / Glm4vMoeVisionConfig)
_GLM4V = ("glm4v", "glm4v_moe", "glm4v_moe_vision")
# models whose vision blocks always use a SwiGLU MLP (fc1/fc3 gated, fc2 down): rednote-hilab's dots NaViT
_SWIGLU_TOWER_MODELS = ("dots_ocr", "dots_vlm")


def _glm4v(v: dict[str, Any], h: int, layers: int) -> int:
    """GLM-4.1V / GLM-4.5V tower, as vLLM builds it (vllm-project/vllm@002d181a
    vllm/model_executor/models/glm4_1v.py, Glm4vVisionTransformer): `depth` blocks of width h with a
    bias-free qkv and proj, two RMSNorms and a bias-free gated MLP of out_hidden_size (not intermediate_size);
    a Linear patch embedding over in_channels x temporal_patch_size x patch^2 with bias (temporal 2, the
    config class default); a learned (image_size / patch)^2 position table; post-conv and post-block
    RMSNorms; a Conv2d downsample h -> out over merge x merge with bias; and the PatchMerger: out x out
    proj, a LayerNorm, a gated MLP out -> intermediate_size -> out, all without bias."""
    out = _int(v, "out_hidden_size") or h
    inter = _int(v, "intermediate_size") or out
    patch, merge = _int(v, "patch_size") or 14, _int(v, "spatial_merge_size") or 2
    chans = _int(v, "num_channels", "in_chans") or 3
    block = 4 * h * h + 3 * h * out + 2 * h
    embed = chans * 2 * patch * patch * h + h + ((_int(v, "image_size") or 336) // patch) ** 2 * h
    merger = out * out + 2 * out + 3 * out * inter
    return layers * block + embed + 2 * h + h * out * merge * merge + out + merger


def _intern_vit(v: dict[str, Any], h: int, layers: int, inter: int) -> int:
    """InternViT (OpenGVLab/InternVL@1fbcd6a1 internvl_chat/internvl/model/internvl_chat/modeling_intern_vit.py):
    per layer a fused qkv (bias when qkv_bias), a proj with bias, q/k RMSNorms of width h when
    qk_normalization, a two-matrix MLP with biases, two norms (LayerNorm weight + bias for norm_type
    layer_norm, RMSNorm weight otherwise) and the layer-scale vectors ls1, ls2; embeddings: a class token,
    a Conv2d patch embedding with bias, (patches + 1) positions. Absent keys take InternVisionConfig's
    defaults (qkv_bias False, qk_normalization True, norm_type rms_norm: the 6B tower's)."""
    norm = 2 * h if v.get("norm_type") == "layer_norm" else h
    attn = (
        4 * h * h
        + (3 * h if v.get("qkv_bias") else 0)
        + h
        + (2 * h if v.get("qk_normalization", True) else 0)
    )
    layer = attn + 2 * h * inter + inter + h + 2 * norm + 2 * h
    patch, image = _int(v, "patch_size") or 14, _int(v, "image_size") or 448
    chans = _int(v, "num_channels", "in_chans") or 3
    embed = h + chans * patch * patch * h + h + ((image // patch) ** 2 + 1) * h
    return layers * layer + embed


def _internvl_mlp1(config: dict[str, Any], h: int, text_hidden: int) -> int | None:
    """InternVL's projector mlp1 (OpenGVLab/InternVL@dd363520 modeling_internvl_chat.py): the pixel shuffle
    folds (1 / downsample_ratio)^2 patches into one token, then LayerNorm, Linear(-> LLM hidden) with bias,
    GELU, Linear(LLM hidden -> LLM hidden) with bias. None when the config states no downsample_ratio."""
    ratio = config.get("downsample_ratio")
    if not isinstance(ratio, (int, float)) or isinstance(ratio, bool) or not 0 < ratio < 1:
        return None
    wide = h * int(1 / ratio) ** 2
    return 2 * wide + wide * text_hidden + text_hidden + text_hidden * text_hidden + text_hidden


def vision_params(config: dict[str, Any], text_hidden: int) -> tuple[int, str]:
    """The vision tower and projector, estimated from the vision block (counted, loaded by the engine)."""
    v, qwen_vl = _block(config)
    audio = audio_params(config, text_hidden)
    if not v:
        return (audio, "audio encoder estimated from audio_config, bf16") if audio else (0, "")
    # Qwen2-VL's vision_config states the tower's width as embed_dim; its hidden_size is the text model's
    h = _int(v, "embed_dim", "hidden_size")
    layers = _int(v, "num_hidden_layers", "depth")
    if not h or not layers:
        return 0, "vision tower present but its size is not in the config (not counted)"
    note = f"vision tower estimated from its config ({layers} layers x hidden {h})"
    if v.get("model_type") in _GLM4V:
        return _glm4v(v, h, layers) + audio, f"{note}, GLM-4V layout, bf16"
    layers += _int(v, "num_global_layers") or 0
    inter = _int(v, "intermediate_size") or int(h * float(v.get("mlp_ratio") or 4))
    mlp1 = _internvl_mlp1(config, h, text_hidden) if v.get("model_type") == "intern_vit_6b" else None
    if mlp1 is not None:
        return _intern_vit(v, h, layers, inter) + mlp1 + audio, f"{note}, InternViT + mlp1 layout, bf16"
    # a gated MLP (gate, up and down): silu towers (Qwen2.5-VL) and Pixtral's (PixtralMLP, whatever its act)
    # and the dots NaViT towers, whose vision_config names no activation (vLLM dots_ocr.py DotsSwiGLUFFN)
    gated = v.get("hidden_act") == "silu" or v.get("model_type") == "pixtral"
    mats = 3 if gated or config.get("model_type") in _SWIGLU_TOWER_MODELS else 2
    patch = _int(v, "patch_size") or 14
    chans = _int(v, "num_channels", "in_chans") or 3
    image = _int(v, "image_size") or 336
    per_layer = 4 * h * h + 4 * h + mats * h * inter + (mats - 1) * inter + h + 4 * h
    patches = (image // patch) ** 2
    if _int(v, "max_num_tiles"):
        embed = chans * patch * patch * h + _tile_embeddings(v, h, patches + 1)
    else:
        embed = chans * patch * patch * h + patches * h
    total = layers * per_layer + embed + _projector(v, h, text_hidden, qwen_vl) + audio
    also = " and the audio encoder" if audio else ""
    return int(total), f"vision tower estimated from its config ({layers} layers x hidden {h}){also}, bf16"


def audio_params(config: dict[str, Any], text_hidden: int) -> int:
    """A Whisper-style audio encoder (Qwen2.5-Omni audio_config): encoder_layers of d_model with biased
    attention (k without bias) and a two-matrix encoder_ffn_dim MLP, two LayerNorms each; two
    convolutions over num_mel_bins (kernel 3), a final LayerNorm and a d_model -> output_dim projection."""
    a = config.get("audio_config")
    if not isinstance(a, dict):
        return conformer_params(config, text_hidden)  # Phi-4-multimodal's `audio_processor`
    h, layers, ffn = _int(a, "d_model"), _int(a, "encoder_layers"), _int(a, "encoder_ffn_dim")
    if not h or not layers or not ffn:
        return 0
    per_layer = 4 * h * h + 3 * h + 2 * h * ffn + ffn + h + 4 * h
    mels = _int(a, "num_mel_bins") or 128
    convs = 3 * mels * h + h + 3 * h * h + h
    out = _int(a, "output_dim") or text_hidden
    return layers * per_layer + convs + 2 * h + h * out + out


def encoder_tokens(config: dict[str, Any]) -> tuple[int, str]:
    """Image tokens one request's cross-attention layers cache: a tiled tower's largest image, every tile
    a full set of patches plus its class token (vLLM mllama.py get_max_mllama_image_tokens:
    max_num_tiles x ((image_size // 14) ** 2 + 1), 14 being the patch size)."""
    v, _ = _block(config)
    tiles, image, patch = _int(v, "max_num_tiles"), _int(v, "image_size"), _int(v, "patch_size") or 14
    if not image:
        return 0, ""
    per_tile = (image // patch) ** 2 + 1
    n = (tiles or 1) * per_tile
    return n, (
        f"cross-attention KV holds the image tokens: {tiles or 1} tiles x {per_tile:,} "
        f"((image_size {image} / patch {patch})^2 + 1) = {n:,} per image"
    )


def cross_layer_extra(head_dim: int) -> int:
    """What a cross-attention decoder layer has beyond a self-attention one (vLLM mllama.py
    MllamaTextCrossAttention q_norm / k_norm RMSNorms of head_dim, and the layer's two tanh gates
    cross_attn_attn_gate / cross_attn_mlp_gate)."""
    return 2 * head_dim + 2
