"""Dense attention masks in TGI's multimodal warm-up (huggingface/text-generation-inference, v3.2.0-v3.3.7).

The router's warm-up puts an image in its first request (backends/v3/src/client/grpc_client.rs
`warmup`: `if n_tokens == 0 { input_chunks.push(Chunk::Image(...)) }`, "1 request is enough to test
vision heads"), so the warm-up of a vision-language checkpoint always runs the image prefill path.
For Gemma 3 (model_type gemma3, Gemma3ForConditionalGeneration; TGI's model file
server/text_generation_server/models/custom_modeling/flash_gemma3_modeling.py) that path builds
dense [batch, 1, S, S] masks, S the longest warm-up request (bidirectional over image tokens):

v3.2.0-v3.2.3  `forward`: `if pixel_values is not None: attention_mask = self.get_attention_mask(...)`
               (`torch.where(full_attention_mask, 0, min_dtype)`, the model dtype), then
               `sliding_window_mask` (bool) and `attention_mask_local` (`torch.where`, model dtype),
               locals held until the forward returns; each attention layer's prefill with a mask runs
               `F.scaled_dot_product_attention(..., attn_mask=attention_mask, enable_gqa=...)`.
               PyTorch's flash kernel takes no mask (pytorch `check_for_attn_mask`; transformers PR
               39412: "FlashAttention backend doesn't support attention mask and it will fall back to
               Math backend"), and in the torch TGI ships (Dockerfile `ARG PYTORCH_VERSION=2.6`) only
               the flash kernel accepts `enable_gqa` (pytorch#139586, 2024-11: "this is only enabled
               on the flash attention backend"; memory-efficient GQA came with pytorch PR 191085,
               2026), and cuDNN attention comes after math in that torch's order (pytorch#142132,
               2.6 nightly: not chosen automatically; PR 162073 made it the default on SM 9.0/10.0
               for 2.9), so a grouped-query model runs the math backend. Since torch 2.5 that backend
               upcasts fp16/bf16 to fp32 (pytorch PR 128922 "Always use high precision for SDPA math
               backend"; PR 135964's `allow_fp16_bf16_reduction_math_sdp` defaults to False) and
               materialises the scores q @ k^T and their softmax, each [batch, heads/GPU, S, S].
v3.3.0-v3.3.7  vlm_causal_lm.py `forward` builds the mask for every Gemma 3 prefill
               (`get_attention_mask(..., bool_mask=True)`, kept, and `attention_mask_forward =
               torch.where(...)`, model dtype), the model adds the same sliding-window pair; with
               flashinfer (the launcher's default; PR 3167 "Support flashinfer for Gemma3 prefill")
               the layers take the mask in the kernel (`if attention_mask is None or ATTENTION ==
               "flashinfer"`), any other backend still goes through the SDPA above (torch 2.6/2.7).

What is priced: the masks held through the forward, and, where SDPA runs, the two fp32 score
tensors of one layer at a time. What is left out (so the figure is a lower bound): the q/k/v copies
SDPA pads, upcasts and repeats for GQA (linear in S), the transient tensors of the mask build, the
vision tower's activations.
"""

from __future__ import annotations

from kvlint.catalog.arch import ModelArch

# TGI model files that build dense prefill masks (flash_gemma3_modeling.py)
MASK_FAMILIES = frozenset({"gemma3"})
SCORE_BYTES = 4  # fp32: the math backend's upcast (torch >= 2.5; TGI v3.2+ ships 2.6 / 2.7)


def dense_mask_path(arch: ModelArch, version: tuple[int, ...] | None) -> bool:
    """The warm-up of this checkpoint builds Gemma 3's dense masks (the release has that model file and
    the checkpoint has the vision tower the image request needs). Unknown versions: the newest (v3.3)."""
    if arch.family not in MASK_FAMILIES or not arch.vision_params:
        return False
    return version is None or version >= (3, 2)


def runs_sdpa(version: tuple[int, ...] | None, attention: str | None) -> bool:
    """The masked prefill goes through F.scaled_dot_product_attention: always in v3.2.x, in v3.3+ unless
    the attention backend is flashinfer (the launcher default when ATTENTION is unset)."""
    if version is not None and version < (3, 3):
        return True
    return (attention or "flashinfer") != "flashinfer"


def warmup_mask_bytes(
    arch: ModelArch,
    lengths: list[int],
    tp: int,
    version: tuple[int, ...] | None,
    attention: str | None,
    dtype_bytes: float,
) -> tuple[int, int]:
    """(masks held through the warm-up forward, one layer's SDPA score tensors) in bytes per GPU for a
    warm-up batch of requests of these token counts; (0, 0) off the dense-mask path."""
    if not lengths or not dense_mask_path(arch, version):
        return 0, 0
    batch, seq = len(lengths), max(lengths)
    square = batch * seq * seq
    # v3.2: attention_mask + attention_mask_local (model dtype), sliding_window_mask (bool);
    # v3.3: the bool mask vlm_causal_lm keeps besides those three
    bool_masks = 1 if version is not None and version < (3, 3) else 2
    masks = int(square * (2 * dtype_bytes + bool_masks))
    scores = 0
    if runs_sdpa(version, attention):
        heads = max(1, arch.query_heads // max(1, tp))
        scores = 2 * square * heads * SCORE_BYTES  # q @ k^T and its softmax, fp32
    return masks, scores
