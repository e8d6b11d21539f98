"""Weight bytes per GPU, per pipeline stage, as the engine shards them.

Source: ../shared/reference/engine_accounting.md section E and A.6 (vLLM): linear layers are split
by TP; embeddings and lm_head are split by TP with the vocabulary padded to a multiple of 64 per
partition (DEFAULT_VOCAB_PADDING_SIZE); norms and MoE routers are replicated on every rank; with
PP each stage holds its own layers, the embedding on the first and lm_head on the last.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvlint import engines
from kvlint.capacity.kv import DTYPE_BYTES, cdiv, pp_partitions
from kvlint.catalog.arch import LayerParams, ModelArch, Quant
from kvlint.deployment import DEFAULT_ENGINE
from kvlint.record import record

if TYPE_CHECKING:  # the GGUF tensor roles load for a GGUF file type only
    from kvlint.catalog.gguf_roles import Priced

VOCAB_PAD = 64
ONLINE_QUANT = {
    # --quantization / --quantize on an unquantized checkpoint: the engine quantizes linear weights at load.
    "fp8": Quant("fp8", 8.0, "fp8 weights quantized at load", min_capability=75),
    # vLLM in-flight bitsandbytes is 4-bit nf4 with an fp32 absmax per 64 values.
    "bitsandbytes": Quant("bitsandbytes", 4.5, "bitsandbytes nf4 at load (block 64)", min_capability=70),
    # TGI server/text_generation_server/layers/bnb.py: Params4bit(compress_statistics=True) -> nf4/fp4 with
    # double-quantised statistics: 4 bits + an 8-bit absmax per 64 + an fp32 scale per 256 absmax values.
    "bitsandbytes-nf4": Quant(
        "bitsandbytes",
        4 + 8 / 64 + 32 / (64 * 256),
        "bitsandbytes nf4 at load (double quant)",
        min_capability=70,
    ),
    "bitsandbytes-fp4": Quant(
        "bitsandbytes",
        4 + 8 / 64 + 32 / (64 * 256),
        "bitsandbytes fp4 at load (double quant)",
        min_capability=70,
    ),
    "eetq": Quant("eetq", 8.0, "EETQ int8 weights at load", min_capability=75),
}


def weight_dtype_bytes(dtype: str | None, checkpoint_dtype: str) -> float:
    """vLLM dtype auto: bf16 checkpoints stay bf16; fp32 and fp16 checkpoints load as fp16."""
    name = (dtype or "auto").lower()
    if name == "auto":
        return (
            2.0
            if DTYPE_BYTES.get(checkpoint_dtype.lower(), 2.0) >= 2
            else DTYPE_BYTES[checkpoint_dtype.lower()]
        )
    return DTYPE_BYTES.get(name, 2.0)


@record(frozen=True)
class Weights:
    per_stage: tuple[int, ...]  # bytes per GPU on each pipeline stage
    total: int  # bytes of the whole model (all GPUs of one replica together, before sharding)
    quant: Quant | None
    source: str  # how the figure was obtained, for messages

    @property
    def per_gpu_max(self) -> int:
        return max(self.per_stage)


def effective_quant(arch: ModelArch, quantization: str | None, engine: str = DEFAULT_ENGINE) -> Quant | None:
    if arch.quant is not None:
        return arch.quant
    name = (quantization or "").lower()
    return engines.get(engine).online_quant(name) or ONLINE_QUANT.get(name)


def _round_up(n: int, m: int) -> int:
    return -(-n // m) * m


def _mxfp4_experts_per_gpu(arch: ModelArch, tp: int, wide: float) -> float:
    """One MoE layer's MXFP4 experts on one GPU as vLLM allocates them: the Marlin MXFP4 MoE
    backend pads the per-partition intermediate size to a multiple of 128 and the hidden size to
    a multiple of 256 (vllm/model_executor/layers/quantization/mxfp4.py, Mxfp4MoEMethod.
    create_weights); 4-bit values plus one E8M0 scale per 32, bf16 biases."""
    inter = _round_up(arch.moe_intermediate_size // tp, 128)
    hidden = _round_up(arch.hidden_size, 256)
    values = arch.num_experts * 3 * inter * hidden  # w13 (2 x inter x hidden) and w2 (hidden x inter)
    biases = arch.num_experts * (2 * inter + hidden)
    return values * 4.25 / 8 + biases * wide


def _gguf_roles(arch: ModelArch, quant: Quant | None) -> Priced | None:
    """A GGUF file type's tensors by role (kvlint.catalog.gguf_roles); None for every other format."""
    if quant is None or not quant.ggml_file_type or len(arch.layer_params) != arch.layers:
        return None
    from kvlint.catalog.gguf_roles import price

    ftype, _, default = quant.ggml_file_type.partition(":")
    return price(arch, ftype, default)


def weights(
    arch: ModelArch,
    tp: int,
    pp: int,
    dtype: str | None = None,
    quantization: str | None = None,
    engine: str = DEFAULT_ENGINE,
    moe_ranks: int = 0,
    expert_parallel: bool = False,
    redundant_experts: int = 0,
) -> Weights:
    """Weights per pipeline stage on one GPU, and in all. `moe_ranks` (0: the TP size) is how many GPUs
    share each MoE layer's experts: vLLM shards them over TP x DP whether or not expert parallelism is
    on (FusedMoEParallelConfig.make flattens TP across DP; with --enable-expert-parallel each of the
    TP x DP ranks holds whole experts, ceil(experts / EP) of them, instead of a slice of every one),
    while attention, dense MLP and embeddings are split by TP only (vllm-project/vllm
    vllm/model_executor/layers/fused_moe/config.py). `redundant_experts`: EPLB's extra physical copies, which
    the ranks hold beside the experts (vllm==0.33.0:vllm/config/parallel.py:77 num_redundant_experts;
    sglang==0.5.23 arg_groups/fields/exec_.py:914 ep_num_redundant_experts); MXFP4 experts leave them out."""
    tp, pp = max(1, tp), max(1, pp)
    moe_ranks = max(tp, moe_ranks)
    ep_share = _expert_share(arch, moe_ranks, expert_parallel, redundant_experts)
    wide = weight_dtype_bytes(dtype, arch.dtype)  # bytes of a 16-bit-class parameter
    quant = effective_quant(arch, quantization, engine)

    group_bits = dict(quant.group_bits) if quant is not None else {}

    def linear_bytes(params: int, group: str, layer: int = -1) -> float:
        """One module group's bytes: at its scheme's bits where the checkpoint quantizes it, else 16-bit."""
        if quant is None or group not in quant.covers or (group, layer) in quant.skip_layers:
            return params * wide
        return params * group_bits.get(group, quant.bits) / 8

    def experts_bytes(lp: LayerParams, layer: int) -> float:
        return linear_bytes(lp.experts - lp.shared, "experts", layer) + linear_bytes(
            lp.shared, "shared", layer
        )

    priced = _gguf_roles(arch, quant)
    embed_width = wide if priced is None else priced.embed / max(1, arch.embed_params)
    head_width = wide if priced is None else priced.output / max(1, arch.lm_head_params)
    embed_rank, head_rank = _embedding_ranks(arch, tp, pp, (embed_width, head_width, wide))

    mxfp4 = quant is not None and quant.method == "mxfp4" and arch.num_experts > 0
    stages: list[int] = []
    start = 0
    parts = pp_partitions(arch.layers, pp)
    # vLLM and SGLang build a [max_position, rotary_dim] cos/sin cache on every GPU at load. TGI builds its
    # cache on demand for the longest forward so far (v1.0.0-v3.3.7 PositionRotaryEmbedding
    # `_update_cos_sin_cache`: `if seqlen > self._seq_len_cached`), never for max_position_embeddings:
    # at its warm-up measure that is the longest warm-up prompt, [max_s, rotary_dim] (4,095 x 128 x 2 B
    # = 1 MiB for Llama 3.1), left out; a Llama 4 Scout's 10M-position cache (2.5 GiB) is not TGI's.
    rope = arch.rope_cache_elems * wide if engines.get(engine).rope_cache_at_load else 0
    for s, n in enumerate(parts):
        total = float(rope)
        for i, lp in enumerate(arch.layer_params[start : start + n], start):
            if priced is not None:
                attn, mlp, experts = priced.layers[i]
                total += (attn + mlp) / tp + experts * ep_share + lp.replicated * wide
                continue
            if mxfp4 and lp.experts:
                experts = _mxfp4_experts_per_gpu(arch, moe_ranks, wide)
            else:
                experts = experts_bytes(lp, i) * ep_share
            total += (linear_bytes(lp.attn, "attn", i) + linear_bytes(lp.mlp, "mlp", i)) / tp + experts
            total += lp.replicated * wide
        start += n
        if s == 0:
            total += embed_rank + arch.vision_params * wide / tp
        if s == len(parts) - 1:
            total += head_rank + arch.final_params * wide
        stages.append(int(total))

    whole = (
        arch.embed_params * embed_width
        + arch.lm_head_params * head_width
        + arch.head_params * wide
        + arch.final_params * wide
        + arch.vision_params * wide
    )
    for i, lp in enumerate(arch.layer_params):
        if priced is not None:
            whole += sum(priced.layers[i])
        else:
            whole += linear_bytes(lp.attn, "attn", i) + linear_bytes(lp.mlp, "mlp", i) + experts_bytes(lp, i)
        whole += lp.replicated * wide
    source = _arithmetic_source(arch, quant, wide, dtype, by_role=priced is not None)
    if arch.checkpoint_bytes and (quantization is None or arch.quant is not None):
        # The checkpoint's exact size replaces the arithmetic; keep the engine's split between GPUs.
        scale = arch.checkpoint_bytes / (whole + arch.mtp_params * wide) if whole else 1.0
        stages = [int(b * scale) for b in stages]
        whole = arch.checkpoint_bytes
        source = f"checkpoint size {arch.checkpoint_bytes:,} B ({arch.checkpoint_bytes_source}), sharded as the engine splits it"
    if redundant_experts and arch.num_experts:
        source += f"; + {redundant_experts} redundant experts per MoE layer (EPLB)"
    return Weights(tuple(stages), int(whole), quant, source)


def _expert_share(arch: ModelArch, moe_ranks: int, expert_parallel: bool, redundant_experts: int) -> float:
    """The share of a MoE layer's experts one GPU holds (whole experts under expert parallelism, else a slice
    of every physical expert)."""
    physical = arch.num_experts + max(0, redundant_experts)
    if expert_parallel and arch.num_experts and moe_ranks > 1:
        return cdiv(physical, moe_ranks) / arch.num_experts
    return (physical / arch.num_experts if arch.num_experts else 1) / moe_ranks


def _embedding_ranks(
    arch: ModelArch, tp: int, pp: int, widths: tuple[float, float, float]
) -> tuple[float, float]:
    """(embedding, head) bytes on one GPU: the vocabulary padded per rank, a score head split by TP.
    `widths`: bytes per parameter of the embedding, of the lm_head, and of a 16-bit-class parameter."""
    embed_width, head_width, wide = widths
    padded_vocab = cdiv(arch.vocab_size, VOCAB_PAD * tp) * VOCAB_PAD  # rows per rank
    embed_rank = (
        padded_vocab * arch.hidden_size * embed_width
        + max(0, arch.embed_params - arch.vocab_size * arch.hidden_size) * embed_width
    )
    head_rank = (
        padded_vocab * arch.hidden_size * head_width
        if (arch.lm_head_params or pp > 1) and not arch.head_params
        else 0
    )
    head_rank += arch.head_params * wide / tp  # a score head: vLLM's Column/RowParallelLinear split by TP
    return embed_rank, head_rank


def _arithmetic_source(
    arch: ModelArch, quant: Quant | None, wide: float, dtype: str | None, by_role: bool = False
) -> str:
    what = (
        f"{quant.scheme}, {'norms and routers' if by_role else 'other weights'} {int(wide * 8)}-bit"
        if quant
        else f"{int(wide * 8)}-bit ({dtype or arch.dtype})"
    )
    source = f"config arithmetic: {arch.params / 1e9:.2f}B params, {what}"
    return source + f"; {arch.vision_note}" if arch.vision_params else source


def spare_experts(extra: dict) -> int:
    """EPLB's redundant experts as a deployment states them (vLLM --num-redundant-experts or --eplb-config's
    num_redundant_experts; SGLang --ep-num-redundant-experts), 0 when it does not."""
    return int(extra.get("num_redundant_experts") or 0)
