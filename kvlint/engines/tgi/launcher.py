"""TGI launcher defaults (launcher/src/main.rs of huggingface/text-generation-inference): the
`max_batch_prefill_tokens` a release picks when the flag is unset, and the inputs it uses
(the card's compute from ComputeType::f16_flop, the model's flop per token, the VRAM estimate)."""

from __future__ import annotations

from functools import cache

from kvlint.catalog.arch import ModelArch
from kvlint.catalog.gpus import GpuSpec
from kvlint.engines import facts


@cache
def card_tflops() -> dict[str, int]:
    """The cards TGI knows by their nvidia-smi name -> f16 TFLOPs (data/cards.json: launcher/src/main.rs
    ComputeType::f16_flop)."""
    return {row["card"]: row["tflops"] for row in facts.load("tgi", "cards")["rows"]}


def model_flop(arch: ModelArch) -> int | None:
    """launcher Config::flop (per token): attention and MLP matmuls of every layer; None for VLMs."""
    if arch.vision_params:
        return None
    nh, nkv, d, h = arch.query_heads, arch.kv_heads, arch.head_dim, arch.hidden_size
    inter = (arch.intermediate_size or arch.moe_intermediate_size) * max(1, arch.experts_per_token or 1)
    attn = 2 * nh * d * h * 4 + 2 * nkv * d * h * 2
    return (attn + 2 * 3 * h * inter) * arch.layers


def _card(gpu: GpuSpec | None) -> str | None:
    name = gpu.nvidia_smi_name if gpu else None
    return name.replace(" ", "-").lower() if name else None


def vram_maximum(arch: ModelArch, gpu: GpuSpec | None, shards: int, fraction: float) -> int | None:
    """launcher vram_maximum: (smi total x shards x fraction x 0.95 - model_vram) / token_vram; None
    when quantized or the GPU is unknown. model_vram as the launcher computes it (its attention term
    omits x hidden_size), token_vram = KV per token + the fused-MoE style MLP estimate."""
    if arch.quant is not None or gpu is None or not gpu.smi_total_mib:
        return None
    d, h, inter = arch.head_dim, arch.hidden_size, arch.intermediate_size or arch.moe_intermediate_size
    experts = max(1, arch.num_experts)
    available = int(gpu.smi_total_mib * (1 << 20) * shards * fraction * 0.95)
    layer = 3 * inter * experts * h + (arch.query_heads + 2 * arch.kv_heads) * d + arch.query_heads * d * h
    model = (layer * arch.layers + 2 * h * arch.vocab_size) * 2
    kv = arch.kv_heads * 2 * d * 2 * arch.layers
    mlp = (inter + inter // 2) * experts * 2 * 3
    if available < model:
        return None
    return (available - model) // (kv + mlp)


def vlm_prefill_default(arch: ModelArch, version: tuple[int, ...] | None) -> int:
    """launcher `default_optimal` by the config's model_type: 4096 up to v3.1.0; v3.1.1 adds
    `Some("qwen2_vl") | Some("qwen2_5_vl") => 10_000`, v3.2.0 `Some("gemma3") => 8000`."""
    if arch.family in ("qwen2_vl", "qwen2_5_vl") and (version is None or version >= (3, 1, 1)):
        return 10_000
    if arch.family == "gemma3" and (version is None or version >= (3, 2)):
        return 8000
    return 4096


V2_MAX_DEFAULT = 4096  # launcher/src/main.rs v2.0-v2.4 `let max_default = 4096;`


def v2_positions(arch: ModelArch) -> int:
    """The max_position_embeddings the v2.0-v2.4 launcher derives its defaults from: the model's, capped
    at 4096 ("Model supports up to {max} but tgi will now set its default to {max_default} instead")."""
    return min(arch.max_positions, V2_MAX_DEFAULT)


def launcher_defaults(
    arch: ModelArch,
    gpu: GpuSpec | None,
    version: tuple[int, ...] | None,
    shards: int,
    fraction: float,
    max_input: int | None = None,
) -> tuple[int, str]:
    """max_batch_prefill_tokens when unset, and where it comes from. v2.0-v2.4: `max_input_tokens + 50`
    of the stated max_input_tokens, else of its default (v2_positions - 1)."""
    if version is not None and version < (2, 0):
        return 4096, "TGI v1 default max_batch_prefill_tokens 4096"
    if version is not None and version < (3, 0):
        value = (max_input if max_input else v2_positions(arch) - 1) + 50
        return value, "TGI v2 default max_batch_prefill_tokens = max_input_tokens + 50"
    mpe = arch.max_positions
    flop = model_flop(arch)
    tflops = card_tflops().get(_card(gpu) or "")
    optimal = (tflops * 10**12 * shards) // flop if flop and tflops else None
    optimal = optimal if optimal and optimal > 100 else None
    default_optimal = vlm_prefill_default(arch, version)
    value = min(optimal or default_optimal, mpe)
    vmax = vram_maximum(arch, gpu, shards, fraction)
    if vmax is not None:
        value = min(value, vmax)
    how = (
        "compute-optimal for this GPU"
        if optimal
        else f"{default_optimal} (the GPU's compute is not in TGI's table)"
    )
    return (
        value,
        f"TGI v3 default max_batch_prefill_tokens: {how}, capped at max_position_embeddings and VRAM",
    )


def default_shards(d):
    """--num-shard when unset (launcher/src/main.rs find_num_shards, v1.0-v3.3): `--sharded false` is 1;
    otherwise `num_cuda_devices()`, the entries of CUDA_VISIBLE_DEVICES / NVIDIA_VISIBLE_DEVICES, which a
    Kubernetes pod's NVIDIA device plugin sets to the GPUs it allocates ("By default
    text-generation-inference will use all available GPUs", the launcher's --sharded help)."""
    from kvlint.deployment import default

    sharded = d.extra.get("sharded")
    gpus = d.gpus_seen()
    if sharded is not None and sharded.value is False:
        return default(1, "TGI default --num-shard 1 (one GPU)")
    visible = d.extra.get("cuda_visible_devices")
    if visible is not None:
        # `devices.split(',').count()` of CUDA_VISIBLE_DEVICES, read before NVIDIA_VISIBLE_DEVICES
        n = len(str(visible.value).split(","))
        _check_shards(n, visible.where)
        return default(
            n,
            f"TGI default: --num-shard unset shards over the {n} entries of the stated CUDA_VISIBLE_DEVICES"
            " (launcher num_cuda_devices)",
            visible.where,
        )
    if gpus is None or int(gpus.value) <= 1:
        return default(1, "TGI default --num-shard 1 (one GPU)")
    _check_shards(int(gpus.value), gpus.where)
    return default(
        int(gpus.value),
        "TGI default: --num-shard unset shards over every GPU the container sees (CUDA_VISIBLE_DEVICES /"
        " NVIDIA_VISIBLE_DEVICES, as the NVIDIA device plugin sets them)",
    )


def _check_shards(n: int, where) -> None:
    """A shard count taken from the GPUs the container sees is a tensor-parallel size: one outside the
    bounds table is refused like a stated one (a located KV005, no plan), not planned."""
    from kvlint.bounds import FIELDS
    from kvlint.engines.base import SettingRefused

    problem = FIELDS["tensor_parallel"].problem(n)
    if problem:
        raise SettingRefused(
            f"TGI would shard over the {n:,} GPUs the container sees: tensor-parallel size {problem}", where
        )


BLOCK_SIZES = {"flashinfer": 1, "flashdecoding": 256, "flashdecoding-ipex": 64, "paged": 16}
FALLBACK_MODELS = ("falcon", "deepseek_v2")  # resolve_attention: `Some("falcon") | Some("deepseek_v2")`
FLASHINFER_HEAD_DIMS = (64, 128, 256)


def resolve_attention(
    version: tuple[int, ...] | None, arch: ModelArch, gpu: GpuSpec | None, stated: tuple[str, str] | None
) -> tuple[str, str]:
    """(attention backend, why) as the server sees ATTENTION (globals.py: BLOCK_SIZE 256 flashdecoding,
    1 flashinfer, 64 flashdecoding-ipex, else 16). Before v2.3 the server has no ATTENTION: blocks of
    16 (v2.1-v2.2 only FLASH_DECODING=1 gave 256). From v2.3 the launcher's resolve_attention keeps a
    stated ATTENTION (value, where it comes from), else: a head size flashinfer does not take (get_head_dim not 64/128/256) or a
    falcon / deepseek_v2 model (v2.3.x also gemma2) falls back to "paged" on a GPU of compute
    capability < 8 (v2.3.1+; v3.3 also when it is unknown) and "flashdecoding" otherwise; everything
    else gets "flashinfer"."""
    if version is not None and version < (2, 3):
        return "paged", "TGI before v2.3 pages KV in blocks of 16"
    if stated:
        return stated[0], f"ATTENTION={stated[0]}" + (f", {stated[1]}" if stated[1] else "")
    # gemma2 is in the fallback list of v2.3.0 and v2.3.1 (launcher/src/main.rs resolve_attention), not v2.4.0
    models = FALLBACK_MODELS + (("gemma2",) if version is not None and (2, 3) <= version[:3] < (2, 4) else ())
    head_ok = arch.head_dim in FLASHINFER_HEAD_DIMS
    if head_ok and arch.family not in models:
        return "flashinfer", "TGI default ATTENTION=flashinfer (launcher resolve_attention)"
    cc = gpu.compute_capability if gpu is not None else None
    old_gpu = cc is not None and cc[0] < 8
    if version is not None and version[:3] == (2, 3, 0):
        old_gpu = False  # v2.3.0 always fell back to flashdecoding
    elif cc is None and (version is None or version >= (3, 3)):
        old_gpu = True  # `compute_capability.is_none() || major < 8`
    fallback = "paged" if old_gpu else "flashdecoding"
    why = f"head size {arch.head_dim} not taken by flashinfer" if not head_ok else f"a {arch.family} model"
    return fallback, f"TGI default ATTENTION={fallback} (launcher resolve_attention: {why})"
