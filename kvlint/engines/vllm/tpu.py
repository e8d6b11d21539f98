"""vLLM on Google TPUs: the tpu-inference worker's memory accounting (the GPU path is settings.py / plan.py).

vLLM runs on TPU through the tpu-inference plugin (the `vllm/vllm-tpu` image; vllm/v1/worker/tpu_worker.py
hands over to tpu_inference's TPUWorker). An unpinned image (`latest`) is taken to be that path, and its
sources are read at vllm-project/tpu-inference@v0.27.0:

    available KV = sum over the worker's chips of bytes_limit x gpu_memory_utilization
                   - sum of bytes_in_use after the weights are loaded
        (tpu_inference/worker/tpu_worker.py:511-520; no profile run, no CUDA graphs, no activation term;
         it raises "... exceeds ... Please consider increasing --gpu-memory-utilization" when <= 0, :563-568)
    page per layer = block_size x align(2 x KV heads per chip, packing) x align(head_dim, 128) x dtype bytes
        (tpu_inference/runner/kv_cache.py:56-101 get_kv_cache_shape_with_mesh, :208-220 page size;
         kernels/ragged_paged_attention/v3/kernel.py:261-275: K and V heads combined, padded to the dtype's
         packing 32 / bits; head_dim 64 packs K and V in 128 lanes, kernel_hd64.py:236-251)
    KV heads padded to the TP size when TP > heads (tpu_inference/utils.py:240-246 get_padded_num_heads;
        runner/kv_cache_manager.py:536-539), head_dim padded to a multiple of 128 except 64 (utils.py:231-237)
    num_blocks = available // (page x layers)   (vLLM's kv_cache_utils over the sum; the pages cover every
        chip, so per chip the same division holds)
Every layer is sized as full attention: the JAX path sets sliding_window None (kv_cache_manager.py:540-541).
MLA models (one padded latent per page) and hybrid models (attention and Mamba state padded to one page) are laid
out otherwise (_layout_not_modelled): not planned, a KV004.
Default block size when not stated (tpu_inference/platforms/tpu_platform.py:333-353,
layers/vllm/backends/flash_attn.py:112-143): 16 above 8,192 tokens of max_model_len, else
next_power_of_2(max_model_len) // 16 within [16, 256], raised to the smallest page the SMEM holds.
"""

from __future__ import annotations

from kvlint.capacity.kv import cdiv, kv_dtype_bytes, run_dtype
from kvlint.capacity.plan import EngineSettings, Plan, Term
from kvlint.capacity.weights import weights as weight_bytes
from kvlint.catalog import tpus
from kvlint.catalog.arch import ModelArch
from kvlint.catalog.gpus import GpuSpec
from kvlint.deployment import default
from kvlint.engines.base import NotPlanned
from kvlint.engines.vllm.plan import override_blocks, override_note
from kvlint.engines.vllm.plan import plan as gpu_plan
from kvlint.record import replace
from kvlint.units import gib, tokens

SOURCE = "vllm-project/tpu-inference@v0.27.0"
ASSUMED = (
    "vLLM on TPU is taken to run the tpu-inference worker (the vllm/vllm-tpu image; an unpinned tag is "
    f"read as the current one, {SOURCE})"
)


# Before tpu-inference #1652 (2026-02-06; the first release read with it is v0.18.0) the TPU platform set the page
# size whatever --block-size said: the page-size rule ran outside `if cache_config.block_size is None`
# (tpu-inference@v0.13.2 tpu_inference/platforms/tpu_platform.py:134-161, v0.12.0 :136-181, v0.11.1
# tpu_jax.py:129-177; vLLM's own TPU platform the same, vllm==0.13.0:vllm/platforms/tpu.py:139-182). From v0.18.0
# a stated block size is kept (v0.27.0 tpu_platform.py:333 `not cache_config.user_specified_block_size`). The rule
# is the same throughout: vllm==0.11.1:vllm/v1/attention/backends/pallas.py:137-169 get_min_page_size /
# get_page_size, tpu-inference@v0.27.0 flash_attn.py:112-143. A vllm/vllm-tpu release X ships tpu-inference X;
# 0.14-0.17 were not read and are taken as before the change.
KEEPS_STATED_BLOCK_SIZE = (0, 18, 0)


def settings(d, arch: ModelArch, gpu: GpuSpec | None, version_text: str | None) -> EngineSettings:
    """vLLM's settings (settings.py); on a TPU chip the default block size is tpu-inference's."""
    from kvlint.engines.vllm.settings import settings as gpu_settings
    from kvlint.engines.vllm.versions import parse_version

    s = gpu_settings(d, arch, gpu, version_text)
    if not tpus.is_tpu(gpu):
        return s
    unmodelled = _layout_not_modelled(arch)
    if unmodelled:
        raise NotPlanned(
            f"{unmodelled}: kvlint does not model that layout on TPU", d.model.where if d.model else None
        )
    version = parse_version(version_text)
    overwritten = d.block_size is not None and version is not None and version < KEEPS_STATED_BLOCK_SIZE
    if d.block_size is not None and not overwritten:
        return s
    size = default_block_size(s.max_model_len, s.max_num_seqs)
    note = f"tpu-inference's default page size {size} for max_model_len {s.max_model_len:,} ({SOURCE} flash_attn.py:112-143)"
    if overwritten:
        note = (
            f"vLLM {version_text} on TPU sets the page size {size} for max_model_len {s.max_model_len:,} whatever "
            f"--block-size says (tpu-inference@v0.13.2 tpu_inference/platforms/tpu_platform.py:134-161; a stated "
            "block size is kept from v0.18.0)"
        )
    in_force = replace(s.in_force, block_size=default(size, note)) if s.in_force is not None else None
    return replace(s, block_size=size, in_force=in_force)


def _layout_not_modelled(arch: ModelArch) -> str:
    """How tpu-inference lays out this model's cache where it is not the paged K+V layout planned here, or ''."""
    if arch.mla:
        return (
            "tpu-inference keeps an MLA model's cache as one latent (kv_lora_rank and the rope part, each padded to "
            f"128) in 1,024-token pages ({SOURCE} tpu_inference/kernels/mla/v2/"
            "kernel.py:83-106, runner/kv_cache_manager.py:472-482, layers/vllm/backends/flash_attn_mla.py:46-47)"
        )
    if arch.state_bytes_per_seq:
        return (
            "tpu-inference pads every layer of a hybrid model to one page holding attention and the Mamba / "
            f"linear-attention state ({SOURCE} tpu_inference/runner/kv_cache_manager.py:270-283)"
        )
    return ""


def default_block_size(max_model_len: int, max_num_seqs: int) -> int:
    """tpu-inference's page size when --block-size is not stated (flash_attn.py:112-143)."""
    if max_model_len > 8192:
        size = 16
    else:
        size = min(256, max(16, (1 << max(0, max_model_len - 1).bit_length()) // 16))
    per_req = 1024 * 1024 // 2 // max(1, max_num_seqs) // 4
    smallest = 1 << (cdiv(max_model_len, max(1, per_req)) - 1).bit_length()
    return max(size, smallest)


def page_bytes(
    arch: ModelArch, tp: int, kv_bytes: float, block_size: int, per: str = "chip"
) -> tuple[int, str]:
    """One block of one layer on one JAX device (`per`: a chip, a TPU7x TensorCore), as the ragged paged
    attention kernel lays it out."""
    heads = arch.kv_heads if arch.kv_heads >= tp else tp  # get_padded_num_heads
    per_chip = max(1, heads // max(1, tp))
    packing = max(1, int(4 // kv_bytes))  # values per 32-bit word (get_dtype_packing)
    if arch.head_dim == 64:
        rows, lanes = cdiv(per_chip, packing) * packing, 128
        how = f"{per_chip} KV heads/{per} (K and V packed in 128 lanes, head_dim 64)"
    else:
        rows, lanes = cdiv(2 * per_chip, packing) * packing, cdiv(arch.head_dim, 128) * 128
        how = f"2 x {per_chip} KV heads/{per} -> {rows} rows x head_dim {arch.head_dim} -> {lanes}"
    if heads != arch.kv_heads:
        how += f" ({arch.kv_heads} KV heads padded to TP {tp})"
    return int(block_size * rows * lanes * kv_bytes), how


def plan(arch: ModelArch, gpu: GpuSpec, s: EngineSettings) -> Plan:
    """vLLM's plan: tpu-inference's on a TPU chip, plan.py's on a GPU."""
    if not tpus.is_tpu(gpu):
        return gpu_plan(arch, gpu, s)
    return tpu_plan(arch, gpu, s)


def tpu_plan(arch: ModelArch, gpu: GpuSpec, s: EngineSettings) -> Plan:
    total = gpu.engine_bytes or 0
    tp = max(1, s.tp)
    kv_bytes = kv_dtype_bytes(s.kv_cache_dtype, run_dtype(arch.dtype, s.dtype))
    w = weight_bytes(arch, s.tp, s.pp, s.dtype, s.quantization, moe_ranks=s.tp * s.dp)
    budget = int(total * s.utilization)
    weights = Term("weights", w.per_stage[0], f"{w.source}; the {gpu.unit}'s bytes_in_use after loading")
    pool = budget - weights.bytes
    layers = arch.attention_layers
    page, how = page_bytes(arch, tp, kv_bytes, s.block_size, gpu.unit)
    per_block = page * max(1, layers)
    from_memory = max(0, pool) // per_block if per_block else 0
    num_blocks, pool = override_blocks(s, from_memory, pool, per_block)  # vLLM's core applies it on TPU too
    usable = max(0, num_blocks - 1)  # vLLM's block pool keeps the null block
    need = cdiv(s.max_model_len, s.block_size)
    seq_blocks = usable // s.max_num_seqs if s.max_num_seqs else 0
    p = Plan(
        engine="vllm",
        generation=s.generation,
        gpu_total=total,
        utilization=s.utilization,
        budget=budget,
        terms=[weights],
        kv_pool=pool,
        kv_per_token=page // s.block_size * layers,
        page_bytes=page,
        block_size=s.block_size,
        layers_per_block=layers,
        kv_groups=1,
        group_slots=layers,
        num_blocks=num_blocks,
        kv_tokens=num_blocks * s.block_size,
        max_model_len=s.max_model_len,
        max_num_seqs=s.max_num_seqs,
        request_bytes=need * per_block,
        max_concurrency=usable / need if need else 0.0,
        max_len_that_fits=usable * s.block_size,
        context_at_max_seqs=seq_blocks * s.block_size,
        pool_units=usable,
        request_units=need,
        weights_per_gpu=weights.bytes,
        weights_total=w.total,
        weights_source=w.source,
    )
    p.notes.append(ASSUMED)
    p.notes.extend(override_note(s, from_memory))
    if s.kv_cache_memory_bytes:
        p.notes.append(
            "--kv-cache-memory-bytes is not read on TPU: the tpu-inference worker sizes the pool from "
            f"bytes_limit x gpu_memory_utilization ({SOURCE} has no kv_cache_memory_bytes)"
        )
    if arch.has_sliding:
        p.notes.append("sliding-window layers are sized for the full context (tpu-inference's JAX path)")
    p.lines = _lines(p, gpu, s, how) + override_note(s, from_memory)
    return p


def _lines(p: Plan, gpu: GpuSpec, s: EngineSettings, how: str) -> list[str]:
    tp, per = max(1, s.tp), gpu.unit
    return [
        f"TPU HBM the engine sees per {per} ({gpu.name}, JAX bytes_limit): {gib(p.gpu_total)} x "
        f"gpu_memory_utilization {s.utilization:g}{s.utilization_default} = {gib(p.budget)}; summed over "
        f"{tp} {per}{'s' if tp > 1 else ''}",
        *(f"  - {t.label}: {gib(t.bytes)}  ({t.note})" for t in p.terms),
        f"  = KV-cache pool per {per}: {gib(p.kv_pool)} (no profile run or CUDA graphs on TPU: {SOURCE} "
        "tpu_inference/worker/tpu_worker.py:511-520)",
        f"page per layer per {per}: {s.block_size} tokens x {how} = {p.page_bytes:,} B",
        f"blocks: {gib(max(0, p.kv_pool))} / ({p.page_bytes:,} B x {p.layers_per_block} layers) = "
        f"{p.num_blocks:,} blocks = {tokens(p.kv_tokens)} tokens",
        f"one request of {tokens(s.max_model_len)} tokens needs {gib(p.request_bytes)}; the pool holds "
        f"{p.max_concurrency:.2f} of them at once",
    ]
