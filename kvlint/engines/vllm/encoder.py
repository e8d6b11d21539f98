"""vLLM's multimodal encoder profile: the dummy images (or videos) the profile run feeds the vision tower.

V1 (vllm==0.19.0:vllm/v1/worker/gpu_model_runner.py:5721-5795 profile_run; the same at
vllm==0.10.1.1:gpu_model_runner.py:2566-2632 and vllm==0.8.5:gpu_model_runner.py:1585-1660): unless
--skip-mm-profiling (vllm==0.19.0:vllm/config/multimodal.py:164, present from 0.10.1.1, absent in 0.8.5),
the runner builds one dummy item of the modality with the most tokens per item, batches it `items` times
(`_get_mm_dummy_batch`, on the GPU), runs the encoder on the batch, keeps its outputs in the encoder cache,
and only then runs the text dummy forward and the sampler. The batch (`batched_dummy_mm_inputs`, a local of
profile_run) and the outputs stay alive through the text forward, so the torch peak is the text peak plus
both; the encoder's own working set is a peak of its own, before the text forward.
    items (0.10.1.1 on: vllm==0.19.0:vllm/multimodal/encoder_budget.py:140-180) =
        max(1, min(budget // tokens, max_num_seqs x max(1, min(limit, max_model_len // tokens))))
      (before 0.10: min(cdiv(budget, tokens), max_num_seqs x limit), vllm==0.8.5 gpu_model_runner.py:1603-1618)
    budget = max(max_num_batched_tokens, tokens)   (max_num_encoder_input_tokens and encoder_cache_size are
      max_num_batched_tokens: vllm==0.19.0:vllm/config/scheduler.py:234-235; encoder_cache_manager.py:309-314)
    limit: --limit-mm-per-prompt, 999 when unstated (vllm==0.19.0:vllm/config/multimodal.py:270-272); a
      modality of limit 0 is not profiled, every modality 0: no encoder profile (encoder_budget.py:73-77,
      encoder_cache_manager.py:288-294).
The dummy pixel values are cast to the model dtype (vllm==0.19.0:vllm/multimodal/processing/context.py:
232-233; vllm==0.10.1.1:vllm/inputs/registry.py:168-169).

V0 (vllm==0.6.3:vllm/worker/model_runner.py:1242-1277 profile_run): the dummy sequences each carry the
model's dummy multimodal data (limit 1 per modality by default in V0, vllm==0.10.1.1:vllm/config/
__init__.py:2560), and their number shrinks to max_num_batched_tokens // (limit x tokens per item), at
least 1, so the sampler sees that many rows; the encoder runs inside the model's forward.

The dummy item is each family's largest, from its config and vLLM's processing info (see `dummy_item`).
"""

from __future__ import annotations

import json
from collections.abc import Callable

from kvlint.capacity.plan import EngineSettings
from kvlint.catalog.arch import ModelArch
from kvlint.engines.vllm.versions import parse_version
from kvlint.record import record, replace
from kvlint.units import GIB

# --limit-mm-per-prompt unstated: V1's default count per modality (vllm==0.19.0:vllm/config/multimodal.py:272)
V1_LIMIT = 999
V0_LIMIT = 1  # V0's (vllm==0.10.1.1:vllm/config/__init__.py:2560)
# Qwen2-VL / Qwen2.5-VL: the checkpoints' preprocessor_config.json max_pixels (Qwen/Qwen2-VL-7B-Instruct,
# Qwen/Qwen2.5-VL-7B-Instruct: 12845056), which kvlint does not read: assumed for every such model
QWEN_MAX_PIXELS = 12845056
# vllm==0.19.0:vllm/model_executor/models/qwen2_vl.py:115 _MAX_FRAMES_PER_VIDEO
QWEN_MAX_FRAMES = 14
# Llama 4's image processor max_patches (transformers Llama4ImageProcessorFast default 16), assumed
LLAMA4_MAX_TILES = 16
ACT_BYTES = 2  # bf16 / fp16: the model dtype the dummy pixels are cast to, and the tower's activations


@record(frozen=True)
class DummyItem:
    modality: str
    tokens: int  # what one item takes of the encoder budget (the embeddings the encoder returns for it)
    pixels: int  # pixel-value elements fed to the tower
    patches: int  # patches the tower runs on
    how: str
    image: DummyItem | None = None  # Qwen: the image profiled when the video's limit is 0


def _int(d: dict, key: str, default: int) -> int:
    v = d.get(key)
    return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else default


def _gemma3(config: dict, v: dict) -> DummyItem:
    """vllm==0.19.0 gemma3_mm.py:194-210: (crops + 1) x image_seq_length tokens, no crops with pan-and-scan off
    (the processor default); one image_size^2 image per item."""
    n, p = _int(v, "image_size", 896), _int(v, "patch_size", 14)
    tokens = _int(config, "mm_tokens_per_image", 256)
    return DummyItem("image", tokens, 3 * n * n, (n // p) ** 2, f"one {n}x{n} image, {tokens} tokens")


def _pixtral(config: dict, v: dict) -> DummyItem:
    """vllm==0.19.0 mistral3.py:186-201 and pixtral.py:946-994: a square image_size image, the image tokens
    (ncols x nrows of patch_size x spatial_merge_size; the break tokens carry no embedding, mistral3.py:303)."""
    n, p = _int(v, "image_size", 1024), _int(v, "patch_size", 16)
    merge = _int(config, "spatial_merge_size", 2 if config.get("model_type") == "mistral3" else 1)
    grid = n // (p * merge)  # Mistral3Config's default merge is 2 (transformers), Llava has none
    return DummyItem(
        "image", grid * grid, 3 * n * n, (n // p) ** 2, f"one {n}x{n} image, {grid * grid:,} tokens"
    )


def _llama4(config: dict, v: dict) -> DummyItem:
    """vllm==0.19.0 mllama4.py:562-582, 668-677: a 16:1 image of max_patches tiles plus the global tile,
    each (image_size / patch)^2 / (1 / pixel_shuffle_ratio^2) patch tokens."""
    n, p = _int(v, "image_size", 336), _int(v, "patch_size", 14)
    ratio = v.get("pixel_shuffle_ratio")
    shuffle = round(1 / ratio**2) if isinstance(ratio, (int, float)) and 0 < ratio < 1 else 4
    chunks = LLAMA4_MAX_TILES + 1
    tokens = chunks * (n // p) ** 2 // shuffle
    return DummyItem(
        "image",
        tokens,
        chunks * 3 * n * n,
        chunks * (n // p) ** 2,
        f"{chunks} tiles of {n}x{n}, {tokens:,} tokens",
    )


def _qwen2_vl(config: dict, v: dict, max_model_len: int) -> DummyItem:
    """vllm==0.19.0 qwen2_vl.py:820-1030: an image of max_pixels / (patch x merge)^2 tokens, and a video of
    as many frames of that size as max_model_len holds (frames padded to temporal_patch_size, at most 14);
    the modality with more tokens is profiled (a tie: video, encoder_budget.py:182-186)."""
    p, m, t = _int(v, "patch_size", 14), _int(v, "spatial_merge_size", 2), _int(v, "temporal_patch_size", 2)
    per_frame = QWEN_MAX_PIXELS // (p * m) ** 2
    steps = 1  # temporal steps of the video: frames up to max_model_len, padded to t (qwen2_vl.py:866-868)
    for frames in range(2, QWEN_MAX_FRAMES + 1):
        grid_t = (frames + frames % t) // t
        if grid_t * per_frame > max_model_len:
            break
        steps = grid_t
    patches = steps * per_frame * m * m
    image = DummyItem(
        "image",
        per_frame,
        per_frame * m * m * 3 * t * p * p,
        per_frame * m * m,
        f"one image at max_pixels {QWEN_MAX_PIXELS:,} (assumed), {per_frame:,} tokens",
    )
    return DummyItem(
        "video",
        steps * per_frame,
        patches * 3 * t * p * p,
        patches,
        f"a video of {steps * t} frames at max_pixels {QWEN_MAX_PIXELS:,} (the checkpoints' preprocessor value, "
        f"assumed), {steps * per_frame:,} tokens",
        image,
    )


def dummy_item(arch: ModelArch, max_model_len: int) -> DummyItem | None:
    """The largest dummy item vLLM profiles for this model family, or None (not multimodal, or a family
    kvlint does not size)."""
    config = arch.parsed_from[0] if arch.parsed_from else None
    if not isinstance(config, dict) or not arch.vision_params:
        return None
    v = config.get("vision_config")
    v = v if isinstance(v, dict) else {}
    kind, tower = config.get("model_type"), v.get("model_type")
    if kind == "gemma3":
        return _gemma3(config, v)
    if kind in ("mistral3", "llava") and tower == "pixtral":
        return _pixtral(config, v)
    if kind == "llama4":
        return _llama4(config, v)
    if kind in ("qwen2_vl", "qwen2_5_vl"):
        return _qwen2_vl(config, v, max_model_len)
    return None


def family(arch: ModelArch) -> str:
    config = arch.parsed_from[0] if arch.parsed_from else None
    return str(config.get("model_type")) if isinstance(config, dict) else arch.family


# V0 Qwen2-VL: max_pixels capped at 1280 x 28 x 28, i.e. 1,280 tokens an image (vllm==0.6.3:
# vllm/model_executor/models/qwen2_vl.py:655-666)
V0_QWEN_TOKENS = 1280


def _v0_item(item: DummyItem, version: tuple[int, ...] | None) -> tuple[DummyItem, int]:
    """(the item V0 profiles, max_mm_tokens: the tokens per item summed over the model's modalities, which
    sets how many dummy sequences run: vllm==0.6.3:vllm/multimodal/registry.py:190-194, vllm==0.8.5:
    registry.py:163-170, model_runner.py:1296-1301). Qwen2-VL before 0.7 capped max_pixels at 1280 x 28 x 28
    and profiled one image a sequence (vllm==0.6.3:vllm/model_executor/models/qwen2_vl.py:655-735)."""
    if item.image is None:
        return item, item.tokens
    if version is not None and version < (0, 7):
        patches = V0_QWEN_TOKENS * 4  # 2 x 2 merge
        per_patch = item.pixels // item.patches
        how = f"one image, {V0_QWEN_TOKENS:,} tokens"
        return DummyItem("image", V0_QWEN_TOKENS, patches * per_patch, patches, how), 2 * V0_QWEN_TOKENS
    return item, item.tokens + item.image.tokens


def limits(extra: dict) -> dict[str, int]:
    """--limit-mm-per-prompt as counts per modality (the JSON object, counts or {"count": n}); {} unstated."""
    text = extra.get("limit_mm_per_prompt")
    try:
        value = json.loads(text) if isinstance(text, str) else text
    except ValueError:
        return {}
    if not isinstance(value, dict):
        return {}
    out: dict[str, int] = {}
    for modality, v in value.items():
        count = v.get("count") if isinstance(v, dict) else v
        if isinstance(count, int) and not isinstance(count, bool) and count >= 0:
            out[str(modality)] = count
    return out


def _tower(arch: ModelArch) -> tuple[int, int, bool]:
    """(width, MLP width, gated) of the vision tower's blocks."""
    config = arch.parsed_from[0] if arch.parsed_from else {}
    v = config.get("vision_config") if isinstance(config, dict) else None
    v = v if isinstance(v, dict) else {}
    h = _int(v, "embed_dim", 0) or _int(v, "hidden_size", 1024)
    inter = _int(v, "intermediate_size", 0) or int(h * float(v.get("mlp_ratio") or 4))
    return h, inter, v.get("hidden_act") == "silu" or v.get("model_type") == "pixtral"


def _items(s: EngineSettings, tokens: int, limit: int, version: tuple[int, ...] | None) -> int:
    """Dummy items per batch, by release: before 0.10 cdiv(budget, tokens) against max_num_seqs x limit
    (vllm==0.8.5:vllm/v1/worker/gpu_model_runner.py:1600-1618); 0.10.0 the floor, at least 1
    (vllm==0.10.0 gpu_model_runner.py:2358-2378); from 0.10.1 also at most max_model_len // tokens items a
    prompt, and with chunked prefill off max_num_batched_tokens // tokens requests (vllm==0.10.1.1:
    vllm/v1/worker/utils.py:82-122; vllm==0.19.0:vllm/multimodal/encoder_budget.py:140-180)."""
    budget = max(s.max_batched_tokens, tokens)
    if version is not None and version < (0, 10):
        return max(1, min(-(-budget // tokens), s.max_num_seqs * limit))
    if version is not None and version < (0, 10, 1):
        return max(1, min(budget // tokens, s.max_num_seqs * limit))
    per_prompt = max(1, min(limit, s.max_model_len // tokens))
    reqs = s.max_num_seqs if s.chunked_prefill else min(s.max_num_seqs, s.max_batched_tokens // tokens)
    return max(1, min(budget // tokens, reqs * per_prompt))


@record(frozen=True)
class EncoderProfile:
    items: int  # dummy items the encoder runs on (V0: dummy sequences, one item each)
    held: int  # bytes alive through the text forward: the dummy batch and the encoder's outputs
    peak: int  # the encoder's own peak (an estimate: the tower's MLP working set over every patch)
    note: str


def profile(arch: ModelArch, s: EngineSettings, act_bytes: float) -> EncoderProfile | str | None:
    """The encoder profile at these settings; a note when vLLM profiles an encoder kvlint does not size;
    None when there is none (text-only, limits of 0, --skip-mm-profiling)."""
    if not arch.vision_params:
        return None
    version = parse_version(s.version)
    v0 = s.generation == "V0"
    if not v0 and s.extra.get("skip_mm_profiling") and (version is None or version >= (0, 10, 1)):
        return None
    item = None if arch.encoder_tokens else dummy_item(arch, s.max_model_len)  # mllama: not sized
    stated = limits(s.extra)
    if item is None:
        if stated and not any(stated.values()):
            return None
        return f"vLLM's profile run also runs the {family(arch)} vision encoder on dummy images, which kvlint does not size"
    mm_tokens = item.tokens
    if v0:
        item, mm_tokens = _v0_item(item, version)
    limit = stated.get(item.modality, V0_LIMIT if v0 else V1_LIMIT)
    if limit == 0 and item.image is not None:  # Qwen with videos off: the image is profiled instead
        item = item.image
        limit = stated.get("image", V0_LIMIT if v0 else V1_LIMIT)
    if limit == 0:
        return None
    if v0:
        items = max(1, min(s.max_num_seqs, s.max_batched_tokens // (limit * mm_tokens)))
    else:
        items = _items(s, item.tokens, limit, version)
    inputs = items * item.pixels * act_bytes
    outputs = items * item.tokens * arch.hidden_size * act_bytes
    h, inter, gated = _tower(arch)
    tp = max(1, s.tp)
    # --mm-encoder-tp-mode data: each rank runs ceil(items / TP) items on whole weights, then the outputs are
    # gathered (vllm==0.19.0:vllm/model_executor/models/vision.py:291-306); weights: the MLP is split by TP
    data = s.extra.get("mm_encoder_tp_mode") == "data" and tp > 1
    ranked, split = (-(-items // tp), 1) if data else (items, tp)
    peak = (
        inputs + outputs + ranked * item.patches * (3 * h + (3 if gated else 2) * inter // split) * act_bytes
    )
    note = (
        f"{'V0' if v0 else 'V1'} encoder profile: {items:,} x {item.how}"
        f" ({inputs / GIB:.2f} GiB of dummy input and {outputs / GIB:.2f} GiB of embeddings held through the text pass)"
    )
    return EncoderProfile(items, int(inputs + outputs), int(peak), note)


def profile_peak(
    arch: ModelArch,
    s: EngineSettings,
    text_peak: Callable[[EngineSettings], tuple[int, str]],
) -> tuple[int, str]:
    """The profile run's activation peak with the encoder profile: max(text peak + what the encoder profile
    holds, the encoder's own peak). V0's text pass runs one dummy sequence per item (the sampler's rows)."""
    p = profile(arch, s, ACT_BYTES)
    if not isinstance(p, EncoderProfile):
        peak, note = text_peak(s)
        return peak, note + (f"; {p}" if p else "")
    peak, note = text_peak(replace(s, max_num_seqs=p.items) if s.generation == "V0" else s)
    if p.peak > peak + p.held:
        return p.peak, f"activation peak of the vision encoder's profile ({p.note}; estimated)"
    return peak + p.held, f"{note}; {p.note}"
