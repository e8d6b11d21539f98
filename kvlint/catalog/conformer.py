"""Phi-4-multimodal's encoders, which its config states outside `vision_config`.

A Conformer audio encoder stated the way Phi-4-multimodal states it: `audio_processor` {"name": "cascades",
"config": {...}} with its projection to the language model under `embd_layer.audio_embd_layer`.

Module shapes follow transformers' port of the model (huggingface/transformers
src/transformers/models/phi4_multimodal/modeling_phi4_multimodal.py, Phi4MultimodalAudio*):
- a conformer block: two macaron feed-forwards (LayerNorm, a GLU Linear(d -> 2 x linear_units) and
  Linear(linear_units -> d), biased), self-attention (q, k, v, o with biases), a convolution module (LayerNorm,
  a GLU point-wise conv d -> 2 x ext_pw_out_channel with biases and two GLU bias vectors, a depth-wise conv of
  kernel_size, a point-wise conv to depthwise_seperable_out_channel, a point-wise conv d -> ext_pw_out_channel)
  and two more LayerNorms;
- the NeMo-style subsampling: Conv2d(1 -> C, 3x3), then per further halving a depth-wise 3x3 and a point-wise
  C x C conv, and Linear(C x frequency bins left -> d);
- a relative attention bias table of 2 x t5_bias_max_distance rows per head;
- the projection to the language model (Phi4MMAudioEmbedding, projection_cls "mlp"): Linear(d -> LM) + GELU +
  Linear(LM -> LM), once for speech and once for speech alongside vision.

Its image encoder is named only by `embd_layer.image_embd_layer` ("tune_image"): the engines build a fixed
SigLIP-so400m for it (vLLM phi4mm.py get_navit_vision_model(layer_idx=-2): 26 of its 27 layers; SGLang sets
SiglipVisionConfig(hidden_size=1152, intermediate_size=4304, num_hidden_layers=26, image_size=448,
patch_size=14) for Phi4MMForCausalLM), projected by img_projection_up / _down (1152 -> LM -> LM).
"""

from __future__ import annotations

import math
from typing import Any


def _int(block: dict[str, Any], key: str, default: int) -> int:
    value = block.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else default


def conformer_params(config: dict[str, Any], text_hidden: int) -> int:
    """Weights of a `cascades` conformer encoder and its projections (0 when the config states none)."""
    proc = config.get("audio_processor")
    c = proc.get("config") if isinstance(proc, dict) else None
    if not isinstance(c, dict):
        return 0
    d, blocks, ff = _int(c, "attention_dim", 0), _int(c, "num_blocks", 0), _int(c, "linear_units", 0)
    if not d or not blocks or not ff:
        return 0
    ext = _int(c, "ext_pw_out_channel", d)
    sep = _int(c, "depthwise_seperable_out_channel", d)
    wide = d * _int(c, "depthwise_multiplier", 1)
    kernel = _int(c, "kernel_size", 3)
    mlp = 2 * d + d * 2 * ff + 2 * ff + ff * d + d
    attn = 4 * (d * d + d)
    conv = (
        2 * d
        + (d * 2 * ext + 2 * ext + 2 * ext)
        + (wide * kernel + wide)
        + (wide * sep + sep)
        + (d * ext + ext)
    )
    per_block = 2 * mlp + attn + conv + 2 * 2 * d
    nemo = c.get("nemo_conv_settings")
    chans = _int(nemo, "conv_channels", d) if isinstance(nemo, dict) else d
    halvings = int(math.log2(_int(c, "time_reduction", 8)))
    bins = _int(c, "input_size", 80)
    for _ in range(halvings):
        bins = (bins - 1) // 2 + 1
    subsampling = 10 * chans + (halvings - 1) * (10 * chans + chans * chans + chans) + chans * bins * d + d
    rel = c.get("relative_attention_bias_args")
    distance = _int(rel, "t5_bias_max_distance", 1000) if isinstance(rel, dict) else 1000
    heads = _int(c, "attention_heads", 16)
    total = blocks * per_block + subsampling + 2 * distance * heads
    embd = config.get("embd_layer")
    audio_embd = embd.get("audio_embd_layer") if isinstance(embd, dict) else None
    if isinstance(audio_embd, dict) and audio_embd.get("projection_cls") == "mlp":
        total += 2 * (d * text_hidden + text_hidden + text_hidden * text_hidden + text_hidden)
    return total


# the SigLIP-so400m tower the engines build for a "tune_image" embedding (see the module docstring)
_TUNE_IMAGE_TOWER = {
    "hidden_size": 1152,
    "intermediate_size": 4304,
    "num_hidden_layers": 26,
    "num_attention_heads": 16,
    "patch_size": 14,
    "projector_input_dim": 1152,
}


def implied_vision_block(config: dict[str, Any]) -> dict[str, Any]:
    """The vision block a config implies without a vision_config (Phi-4-multimodal's image embedding), in
    vision_config's key names; {} when it implies none."""
    embd = config.get("embd_layer")
    image = embd.get("image_embd_layer") if isinstance(embd, dict) else None
    if not isinstance(image, dict) or image.get("embedding_cls") != "tune_image":
        return {}
    return dict(_TUNE_IMAGE_TOWER, image_size=_int(image, "crop_size", 448))
