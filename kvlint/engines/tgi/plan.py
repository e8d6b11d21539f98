"""TGI's memory accounting, from its source (huggingface/text-generation-inference, tags v1.0.0-v3.3.7).

server/text_generation_server/models/flash_causal_lm.py `warmup`: the warm-up batch gets its KV
blocks, a prefill of max_batch_prefill_tokens runs (what it allocated stays in PyTorch's cache:
`get_free_memory` reads torch.cuda.mem_get_info, no empty_cache in between), then
    v3.0 and later: free = mem_get_info free - (1 - CUDA_MEMORY_FRACTION x TGI_WIGGLE_ROOM) x total
                    num_blocks = free // block_bytes + warm-up blocks
    v1.4.1-v2.4:    free = mem_get_info free - (1 - CUDA_MEMORY_FRACTION) x total
                    num_blocks = int(free x wiggle // block_bytes) + warm-up blocks
                    (`int((free_memory * 0.95) // total_cache_size) + cache_manager.num_blocks`,
                    TGI_WIGGLE_ROOM from v2.3), so the warm-up blocks escape the wiggle room
    up to v1.4.0:   num_blocks = free // block_bytes + warm-up blocks
    block_bytes = layers x BLOCK_SIZE x kv_heads/GPU x head_dim x 2 x bytes;
    "KV-cache blocks: N, size: BLOCK_SIZE"; the router logs "Setting max batch total tokens to N x BLOCK_SIZE".
Wiggle room (globals.py TGI_WIGGLE_ROOM): 0.95 in v1.4.1-v2.3 and v3.0, 0.90 in v2.4, 0.93 in v3.1-v3.2,
0.90 from v3.3. BLOCK_SIZE: 16 (paged) before v2.3; flashinfer, the launcher's default attention from
v2.3 (resolve_attention), uses 1. The launcher defaults (launcher/src/main.rs) are in tgi_launcher; the
router (backends/v3/src/main.rs) refuses to start when "`max_total_tokens` must be <=
`max_batch_total_tokens`" or the prefill budget exceeds the batch.
"""

from __future__ import annotations

import math

from kvlint.capacity.course import longest_context
from kvlint.capacity.kv import bytes_per_token_layer, kv_dtype_bytes, run_dtype
from kvlint.capacity.plan import EngineSettings, Plan, Term, default_label
from kvlint.capacity.weights import weights as weight_bytes
from kvlint.catalog.arch import ModelArch, Quant
from kvlint.catalog.gpus import GpuSpec
from kvlint.engines import native
from kvlint.engines.base import WARMUP_FAILS, SettingRefused
from kvlint.engines.filling import Filling
from kvlint.engines.tgi import defaults as tgi_defaults
from kvlint.engines.tgi import vlm as tgi_vlm
from kvlint.engines.tgi.launcher import BLOCK_SIZES, default_shards
from kvlint.engines.tgi.releases import NEWEST_MODELLED, parse_version
from kvlint.record import replace
from kvlint.units import GIB, gib, tokens

# TGI's plain `--quantize bitsandbytes` is 8-bit (layers/bnb.py Linear8bitLt)
BNB8 = Quant("bitsandbytes", 8.0, "bitsandbytes LLM.int8 at load (int8 + per-row scales)", min_capability=70)
LAYER_LIVE_HIDDEN = 7  # hidden-size tensors a layer holds while its MLP runs (prefill_bytes)
CONTEXT_BYTES = int(0.5 * GIB)  # CUDA context and NCCL state held before the warm-up measures free memory


def _settled(s: EngineSettings) -> tgi_defaults.Settled:
    """What the server settled for these settings (none: settings made by hand, as tests make them)."""
    return s.own if isinstance(s.own, tgi_defaults.Settled) else tgi_defaults.Settled()


def wiggle_room(version: tuple[int, ...] | None) -> tuple[float, bool]:
    """(factor, applied inside the fraction) for the server's KV sizing, by release: inside
    (`get_free_memory(self.device, MEMORY_FRACTION * TGI_WIGGLE_ROOM)`) from v3.0; on the measured
    free memory (`int((free_memory * TGI_WIGGLE_ROOM) // total_cache_size)`) in v1.4.1-v2.4."""
    if version is None or version >= (3, 3):
        return 0.90, True
    if version >= (3, 1):
        return 0.93, True
    if version >= (3, 0):
        return 0.95, True
    if version >= (2, 4):
        return 0.90, False
    if version >= (1, 4, 1):
        return 0.95, False  # "Leave 5% for some wiggle room" first in v1.4.1 flash_causal_lm.py warmup
    return 1.0, False


def block_size(version: tuple[int, ...] | None, attention: str | None) -> int:
    """server/text_generation_server/models/globals.py BLOCK_SIZE for the attention backend in force."""
    if version is not None and version < (2, 3):
        return 16
    return BLOCK_SIZES.get(attention or "flashinfer", 16)


def settings(d, arch: ModelArch, gpu: GpuSpec | None, version_text: str | None) -> EngineSettings:
    """EngineSettings for TGI; every default applied is named in its `in_force`."""
    from kvlint.deployment import default

    version = parse_version(version_text)
    f = Filling.of(d)
    native.carry(f, "tgi")
    _prequantized(d, arch)
    if f.tensor_parallel is None:
        f.tensor_parallel = default_shards(d)
    shards = int(f.tensor_parallel.value)
    if "cuda_memory_fraction" not in f.options:
        f.options["cuda_memory_fraction"] = default(1.0, "TGI default CUDA_MEMORY_FRACTION 1.0")
    fraction = float(f.options["cuda_memory_fraction"].value)
    settled = tgi_defaults.fill(f, arch, gpu, version, fraction)
    attention = settled.attention
    if f.max_sequences is None:
        f.max_sequences = default(128, "TGI default max_concurrent_requests 128")
    known = version is not None and version[:2] <= NEWEST_MODELLED  # newer: said in the plan
    assert f.max_context is not None
    return EngineSettings(
        engine="tgi",
        version=version_text,
        generation="-",
        tp=shards,
        pp=1,
        dp=1,
        max_model_len=int(f.max_context.value),
        max_num_seqs=int(f.max_sequences.value),
        max_batched_tokens=int(f.options["max_batch_prefill_tokens"].value),
        dtype=str(d.dtype.value) if d.dtype else None,
        quantization=str(d.quantization.value) if d.quantization else None,
        kv_cache_dtype=str(f.kv_cache_dtype.value) if f.kv_cache_dtype else "auto",
        utilization=fraction,
        utilization_default=default_label(f.options["cuda_memory_fraction"], "TGI"),
        block_size=block_size(version, attention),
        enforce_eager=False,
        hybrid_kv_cache_manager=False,
        chunked_prefill=version is None or version >= (3, 0),
        extra={k: v.value for k, v in f.options.items()},
        in_force=f.in_force(),
        own=replace(settled, version_known=known),
    )


# launcher/src/main.rs enum Quantization: awq, exl2, gptq and marlin each "Requires a specific …
# quantized model"; their loaders stop on a checkpoint without their tensors (layers/gptq, layers/marlin,
# layers/exl2: "Cannot load `gptq` weight, make sure the model is already quantized").
PREQUANTIZED = ("awq", "exl2", "gptq", "marlin")


def _prequantized(d, arch: ModelArch) -> None:
    method = str(d.quantization.value).strip().lower() if d.quantization is not None else ""
    if method in PREQUANTIZED and arch.quant is None:
        raise SettingRefused(
            f"TGI --quantize {method} loads a checkpoint already quantized with {method} (launcher `Quantization`:"
            f" 'Requires a specific {method.upper()} quantized model'); {arch.id} has no"
            f" quantization_config, so TGI stops while loading it ('Cannot load `{method}` weight, make sure the"
            " model is already quantized')",
            d.quantization.where,
        )


def prefill_bytes(arch: ModelArch, tokens_: int, tp: int, version: tuple[int, ...] | None = None) -> int:
    """Peak of the warm-up prefill's layer activations, 2 bytes per value.

    Layer frame (flash_llama / flash_mistral / flash_mixtral `*Layer.forward`, the same v1.0.0-v3.3.7):
    `normed_hidden_states, res`, `attn_output` and `normed_attn_res_output, attn_res` are locals that
    stay alive while the MLP runs, beside the caller's `hidden_states, residual` (the model loop
    rebinds them only when the layer returns): 7 hidden-size tensors per token (LAYER_LIVE_HIDDEN).
    Dense MLP (`self.down_proj(self.act(gate_up_states[:, 0]) * gate_up_states[:, 1])`): the gate/up
    output (2 x intermediate) stays alive while the activation and the product (one intermediate
    each) are built. MoE: in v2.0.x Mixtral calls vLLM's fused_moe (flash_mixtral_modeling.py, the
    vLLM forks pinned in server/Makefile-vllm; Narsil/vllm@b5dfc61d fused_moe.py), whose
    intermediate caches (M, topk, 2 x ffn/TP), (M x topk, ffn/TP) and (M, topk, hidden) are allocated
    for every prefill token at once and whose output is written in place (`inplace=True`); other
    releases keep the fused-MoE estimate shared with vLLM's forward term."""
    h = arch.hidden_size
    mlp = 0
    if not arch.num_experts or arch.moe_layers < arch.layers:
        mlp = 4 * (arch.intermediate_size // max(1, tp))
    if arch.num_experts and arch.moe_layers:
        mi = arch.moe_intermediate_size // max(1, tp)
        k = max(1, arch.experts_per_token)
        if version is not None and (2, 0) <= version < (2, 1):
            moe = k * (2 * mi + mi + h)
        else:
            moe = k * (max(2 * mi, h) + mi)
        mlp = max(mlp, moe)
    return int(tokens_) * (LAYER_LIVE_HIDDEN * h + mlp) * 2


def warmup_logits_bytes(arch: ModelArch, tokens_: int, tp: int, version: tuple[int, ...] | None) -> int:
    """Logits the warm-up prefill keeps until free memory is measured. Every warm-up request sets
    `prefill_logprobs: true` (router/client/src/client.rs `warmup` up to v2.3,
    backends/v3/src/client/grpc_client.rs from v2.4), so before v3.0 the head runs over every
    prefill token: the full-vocabulary logits and their log_softmax (flash_causal_lm.py
    `generate_token`), 2 bytes each, plus the all-gathered copy TensorParallelHead builds when the
    head is sharded. From v3.0 (PR #2797 "Auto max prefill") FlashCausalLMBatch.from_pb drops
    prefill logprobs unless REQUEST_LOGPROBS is set ("This consumes so much memory on long
    requests"), so the term is 0."""
    if version is None or version >= (3, 0):
        return 0
    copies = 2 + (1 if tp > 1 else 0)
    return int(tokens_) * arch.vocab_size * 2 * copies


def warmup_requests(s: EngineSettings) -> list[int]:
    """Token counts of the warm-up batch's requests. The router's `warmup` (router/client/src/client.rs
    v1.2-v2.1, backends/v3/src/client/grpc_client.rs later) sends requests of
    `truncate = min(max_input_length, max_prefill_tokens - n_tokens)` tokens until the prefill budget
    is used."""
    prefill = max(1, s.max_batched_tokens)
    if _settled(s).input_unset:
        return [prefill]  # `truncate = max_prefill_tokens - n_tokens` when max_input_tokens is None
    max_input = max(1, int(s.extra.get("max_input_tokens") or s.max_model_len - 1))
    return [max_input] * (prefill // max_input) + ([prefill % max_input] if prefill % max_input else [])


def warmup_kv_tokens(arch: ModelArch, s: EngineSettings, version: tuple[int, ...] | None, block: int) -> int:
    """KV tokens the warm-up batch holds while free memory is measured. Each warm-up request
    (warmup_requests) carries `max_new_tokens: max_total_tokens - truncate` from v1.2
    (router/client/src/client.rs; `max_new_tokens: 2` up to v1.1; v3 with max_total_tokens
    unset: 1); FlashCausalLMBatch.from_pb gives each
    `ceil((input_length + max_new_tokens - 1) / BLOCK_SIZE)` blocks, capped at the sliding window's
    blocks in flash_mistral.py up to v2.0.x."""
    total = 0
    for truncate in warmup_requests(s):
        if _settled(s).total_default:
            tokens_ = truncate  # max_new_tokens 1: the prompt's own slots
        elif version is not None and version < (1, 2):
            tokens_ = truncate + 1  # max_new_tokens 2
        else:
            tokens_ = max(1, s.max_model_len - 1)
        blocks = math.ceil(tokens_ / block)
        if arch.sliding_window and version is not None and version < (2, 1):
            blocks = min(blocks, math.ceil(arch.sliding_window / block))
        total += blocks * block
    return total


def phase(logits: int, masks: int, scores: int, acts: int) -> str:
    """What the warm-up's largest phase holds, for the failure message."""
    if logits > masks + max(acts, scores):
        return "logits"
    if scores > acts:
        return "dense image-prefill masks and SDPA scores (tgi_vlm)"
    return "dense image-prefill masks and activations" if masks else "activations"


def warmup_blocks_added_back(s: EngineSettings, version: tuple[int, ...] | None) -> bool:
    """v2.1.0-v2.4.0 flash_causal_lm.py `warmup` reads `batch_num_blocks = batch.num_blocks if batch is
    not None else 0` after `_, batch, _ = self.generate_token(batch)`, which returns no batch when every
    warm-up request stopped at its first token (max_new_tokens = max_total_tokens - truncate = 1): the
    warm-up's blocks stay allocated but are not added back. Up to v2.0.x (`cache_manager.num_blocks`)
    and from v2.4.1 (read before the prefill) they are."""
    if version is None or not (2, 1) <= version < (2, 4, 1) or _settled(s).total_default:
        return True
    return any(s.max_model_len - truncate > 1 for truncate in warmup_requests(s))


def _measured_pool(
    budget: int, used: int, warm_kv: int, wiggle: float, inside: bool, back: bool = True
) -> int:
    """Free memory measured with the warm-up batch's blocks still held (get_free_memory clamps it at
    0), the wiggle room on it (v1.4.1-v2.4) or inside the fraction (v3), the warm-up blocks added back."""
    rest = max(0, budget - used - warm_kv)
    return (rest if inside else int(rest * wiggle)) + (warm_kv if back else 0)


def allocator_edge(low: int, high: int, prefill: int, limit: int) -> str:
    """The note for a warm-up whose allocations exceed the allocator's limit."""
    return (
        f"on the allocator's edge: the warm-up's allocations exceed {gib(limit)}, so PyTorch frees cached"
        f" blocks and retries; how much of the {gib(prefill)} of activation blocks it can free depends on"
        f" which cached segments are still shared, so TGI sets max_batch_total_tokens between {tokens(low)}"
        f" (nothing left free: the warm-up batch's own blocks, shown) and {tokens(high)} (all freed)"
    )


def plan(arch: ModelArch, gpu: GpuSpec, s: EngineSettings) -> Plan:
    """KV pool per GPU as the warm-up of the release computes it. When the warm-up's allocations
    (weights, the warm-up batch's KV blocks, the prefill activations, the logits) do not fit under
    the allocator's limit (`torch.cuda.set_per_process_memory_fraction(MEMORY_FRACTION)` in
    utils/dist.py, and the device), PyTorch's CUDACachingAllocator `malloc` frees its cached
    blocks and retries ("Free all non-split cached blocks and retry alloc"). Which activation
    blocks it can free depends on which cached segments no live tensor shares, which the sizes do
    not determine: TGI then finds between nothing free (the least the retry needs) and every
    activation block free. kvlint reports the lower end (the warm-up batch's own blocks) and names
    the upper end in a note (allocator_edge)."""
    total = gpu.engine_bytes or 0
    version = parse_version(s.version)
    w = weight_bytes(arch, s.tp, 1, s.dtype, s.quantization, engine="tgi")
    kv_bytes = kv_dtype_bytes(s.kv_cache_dtype, run_dtype(arch.dtype, s.dtype))
    wiggle, inside = wiggle_room(version)
    per_token = bytes_per_token_layer(arch, s.tp, kv_bytes) * arch.attention_layers
    block = max(1, s.block_size)
    warm_kv = warmup_kv_tokens(arch, s, version, block) * per_token
    acts = prefill_bytes(arch, s.max_batched_tokens, s.tp, version)
    lengths = warmup_requests(s)
    masks, scores = tgi_vlm.warmup_mask_bytes(
        arch, lengths, s.tp, version, _settled(s).attention, kv_dtype_bytes(s.dtype, arch.dtype)
    )
    # the dense masks live through the forward; one layer's SDPA scores at a time, then the MLP's
    prefill = masks + max(acts, scores)
    logits = warmup_logits_bytes(arch, s.max_batched_tokens, s.tp, version)
    other = int(s.extra.get("gpu_memory_in_use") or 0)
    limit = min(int(total * s.utilization), total - CONTEXT_BYTES - other)
    # the warm-up needs its largest phase live at once (the forward's activations, or the logits after
    # them); past that, PyTorch can free only cached blocks and the warm-up raises
    peak = w.per_gpu_max + warm_kv + max(prefill, logits)
    warmup_fails = peak > limit  # "Not enough memory to handle N prefill tokens"
    released = not warmup_fails and w.per_gpu_max + warm_kv + prefill + logits > limit
    acts_note = f"warm-up prefill of {tokens(s.max_batched_tokens)} tokens (activations)"
    if released:
        acts_note += f": with them the warm-up exceeds {gib(limit)}, so PyTorch frees cached blocks"
    masked = f"{len(lengths)} x {max(lengths):,}^2" if lengths else ""
    terms = [
        Term("weights", w.per_gpu_max, w.source),
        Term("prefill warm-up", acts, acts_note),
        *_warmup_terms(logits, prefill - acts if masks else 0, masked, bool(scores)),
        Term("CUDA context", CONTEXT_BYTES, "CUDA context and communication buffers"),
    ]
    if other:
        # warmup measures free memory (mem_get_info), so what other processes hold is not in it
        terms.append(Term("other processes", other, "held on the GPU by other processes when TGI started"))
    used = sum(t.bytes for t in terms)
    budget = int(total * s.utilization * (wiggle if inside else 1.0))
    back = warmup_blocks_added_back(s, version)
    pool = _measured_pool(budget, used, warm_kv, wiggle, inside, back)
    # on the allocator's edge the most TGI can find: every activation block released
    edge = _measured_pool(budget, used - prefill, warm_kv, wiggle, inside, back) if released else 0
    if warmup_fails:
        pool = limit - peak  # the shortfall: TGI never sizes a cache
    kv_tokens = max(0, pool) // (per_token * block) * block if per_token else 0
    ctx = _max_total(s, kv_tokens)
    p = Plan(
        engine="tgi",
        generation="-",
        gpu_total=total,
        utilization=s.utilization,
        budget=budget,
        terms=terms,
        kv_pool=pool,
        kv_per_token=per_token,
        page_bytes=per_token * block,
        block_size=block,
        layers_per_block=arch.attention_layers,
        num_blocks=kv_tokens // block,
        kv_tokens=kv_tokens,
        max_model_len=ctx,
        max_num_seqs=s.max_num_seqs,
        request_bytes=-(-ctx // block) * block * per_token,
        max_concurrency=kv_tokens / ctx if ctx else 0.0,
        max_len_that_fits=kv_tokens,
        context_at_max_seqs=longest_context(kv_tokens, s.max_num_seqs, 1) if s.max_num_seqs else 0,
        pool_units=kv_tokens,
        request_units=ctx,
        weights_per_gpu=w.per_gpu_max,
        weights_total=w.total,
        weights_source=w.source,
        load_budget=int(total * s.utilization),
    )
    how = f"x wiggle room {wiggle}" if inside else f"(the rest less the warm-up blocks x {wiggle})"
    p.lines = [
        f"GPU memory: {gib(total)} x CUDA_MEMORY_FRACTION {s.utilization:g}{s.utilization_default} {how}"
        f" = {gib(budget)}",
        *(f"  - {t.label}: {gib(t.bytes)}  ({t.note})" for t in terms),
        *(
            [
                f"  (warm-up batch KV {gib(warm_kv)} is held, then added back in full)"
                if back
                else f"  (warm-up batch KV {gib(warm_kv)} is held and not added back: every warm-up request"
                " stopped at its first token, so `batch` is None and batch_num_blocks 0, v2.1.0-v2.4.0)"
            ]
            if not inside and wiggle < 1
            else []
        ),
        f"  = KV pool per GPU: {gib(pool)}",
        f"KV per token per GPU: {per_token:,} B (block {block}: {_settled(s).attention_note})"
        f" -> max_batch_total_tokens {tokens(kv_tokens)}",
    ]
    if edge:
        high = edge // (per_token * block) * block
        p.notes.append(allocator_edge(kv_tokens, high, prefill, limit))
        # the range in the arithmetic printed under a finding, too
        p.lines.append(
            f"  on the allocator's edge: between {tokens(kv_tokens)} and {tokens(high)} tokens (the lower shown)"
        )
    if warmup_fails:
        p.warmup_fails = (
            f"{WARMUP_FAILS}: weights {gib(w.per_gpu_max)} + the warm-up batch's KV blocks {gib(warm_kv)} +"
            f" {phase(logits, masks, scores, acts)} {gib(max(prefill, logits))} exceed"
            f" {gib(limit)}; TGI stops with 'Not enough memory to handle {s.max_batched_tokens} prefill tokens'"
        )
        p.notes.append(p.warmup_fails)
    p.notes.extend(_setting_notes(s))
    return p


def _warmup_terms(logits: int, masks: int, masked: str, scores: bool) -> list[Term]:
    """The warm-up's logits and an image request's dense masks, when it allocates them."""
    out = []
    if logits:
        note = "prefill_logprobs over every warm-up token (logits + log_softmax, full vocabulary)"
        out.append(Term("warm-up logits", logits, note))
    if masks:
        how = "dense attention masks of the image warm-up request's batch, " + masked
        if scores:
            how += "; the math SDPA's fp32 scores and softmax of one layer beside them"
        out.append(Term("warm-up image masks", masks, how))
    return out


def _max_total(s: EngineSettings, kv_tokens: int) -> int:
    """max_total_tokens: stated, or as the warm-up picks it (tgi/defaults.py): the KV cache's tokens, capped at
    max_position_embeddings from v3.0.2, or the warm-up's prompt tokens when prefills are not chunked."""
    ctx = s.max_model_len
    if not _settled(s).total_default or kv_tokens <= 0:
        return ctx
    rule = _settled(s).total_rule
    return kv_tokens if rule == "kv" else ctx if rule == "prefill" else min(ctx, kv_tokens)


def _setting_notes(s: EngineSettings) -> list[str]:
    notes = []
    declared = s.extra.get("max_batch_total_tokens")
    if isinstance(declared, int):
        notes.append(
            f"max_batch_total_tokens {declared:,} is stated; flash models ignore it and infer their own"
        )
    if not _settled(s).version_known:
        notes.append("TGI version unknown or newer than the newest modelled release (v3.3): v3.3 applies")
    return notes
