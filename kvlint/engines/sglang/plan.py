"""SGLang's memory accounting, from its source (model_runner / model_runner_kv_cache_mixin.py).

    pre_model_load_memory = free GPU memory after the distributed init (min over ranks), GiB; load the weights
    rest = free after loading - pre_model_load_memory x (1 - mem_fraction_static) = pre_model_load_memory x
           mem_fraction_static - weights (less --cpu-offload-gb; - 100 MB for a multimodal model, v0.5.18 on)
    max_total_num_tokens = rest // cell            (profile_max_num_token)
        cell = kv_heads per attention-TP rank x (head_dim + v_head_dim) x layers x bytes
               (MLA: (kv_lora_rank + qk_rope_head_dim) x layers x bytes, one latent, not split by TP;
                DSA models add the indexer's fp8 keys + fp32 scales: (128 + 4) x layers x 1 B)
    then min(.., --max-total-tokens), down to --page-size, min over pipeline ranks; <= 0: "Not enough memory"
Hybrid sliding-window models split it into a full pool and a SWA pool of swa_full_tokens_ratio (0.8) times as
many tokens (set_num_tokens_hybrid_swa; SGLang reports the full one). Defaults by release: sglang_defaults.py.
"""

from __future__ import annotations

from kvlint.capacity.course import longest_context
from kvlint.capacity.kv import bytes_per_token_layer, kv_dtype_bytes, pp_partitions, run_dtype
from kvlint.capacity.plan import EngineSettings, Plan, Term
from kvlint.capacity.state import has_state
from kvlint.capacity.weights import spare_experts
from kvlint.capacity.weights import weights as weight_bytes
from kvlint.catalog.arch import CHUNKED, NONE, SLIDING, ModelArch
from kvlint.catalog.gpus import GpuSpec
from kvlint.engines.sglang import defaults as sd
from kvlint.engines.sglang import lora
from kvlint.engines.sglang.dsa import dsa_indexer_bytes
from kvlint.engines.sglang.state import MambaPool, sglang_state
from kvlint.record import record
from kvlint.units import GIB, gib, tokens

MB = 1 << 20
# Free memory SGLang measures before loading = total - CUDA context - distributed-init buffers.
# The context figure is the gap between torch's total and "Load weight begin. avail mem" on
# single-GPU logs; the distributed-init figures are what "Init torch distributed ends. mem usage="
# logs: about 2 GiB with custom all-reduce (NVLink GPUs, or at most two PCIe GPUs: sglang PR #11716,
# TP 8 on H200: 1.77-2.01 GB), 0.13 GB when SGLang disables it ("Custom allreduce is disabled because
# it's not supported on more than two PCIe-only GPUs", sglang#4127, TP 4 on A10G).
CONTEXT_BYTES = int(0.5 * GIB)
DIST_INIT_CUSTOM_AR = int(2.0 * GIB)
DIST_INIT_NCCL_ONLY = int(0.13 * GIB)
PCIE_ONLY = ("a10", "a10g", "l4", "l40", "l40s", "t4", "rtx", "4090", "3090", "5090", "a6000", "pcie")
SWA_FULL_TOKENS_RATIO = 0.8  # ServerArgs.swa_full_tokens_ratio default


@record(frozen=True)
class Release:
    """What SGLang's plan needs of the release in force (engines/sglang/settings.py)."""

    version_known: bool = False  # a release kvlint read (a newer one is said in the plan)
    era: str | None = None  # how its memory fraction is picked (sglang/defaults.py era)
    mm_reserve_bytes: int = 0  # what it holds back for a vision tower's activations
    dsa_latent_bytes: int = 0  # a DeepSeek-sparse-attention latent's bytes per token, when it differs
    mamba_pool: str = "auto"  # how a hybrid model's mamba pool is sized (data/releases.json mamba_pool)
    radix_off: bool = False  # the release turns the radix cache off for this hybrid model (state.py)


def _release(s: EngineSettings) -> Release:
    """The release facts of these settings (none: settings made by hand, as tests make them)."""
    return s.own if isinstance(s.own, Release) else Release()


def dist_init_bytes(tp: int, pp: int, gpu: GpuSpec) -> tuple[int, str]:
    if tp * pp <= 1:
        return 0, "no distributed init buffers on one GPU"
    pcie = any(part in gpu.id.lower() for part in PCIE_ONLY)
    if tp > 1 and (not pcie or tp * pp <= 2):
        return DIST_INIT_CUSTOM_AR, "NCCL and custom all-reduce buffers (Init torch distributed)"
    return DIST_INIT_NCCL_ONLY, "NCCL buffers only (custom all-reduce is off on more than two PCIe GPUs)"


def profile_max_num_token(free_before: int, free_after: int, mem_fraction_static: float, cell: int) -> int:
    """model_runner profile_max_num_token: (free after loading - free before x (1 - fraction)) // cell."""
    rest = free_after - free_before * (1 - mem_fraction_static)
    return max(0, int(rest)) // cell if cell else 0


def _cell(arch: ModelArch, s: EngineSettings, kv_bytes: float, layers: int) -> tuple[int, int, int]:
    """(cell bytes per token over the stage's attention layers, full layers, sliding layers)."""
    attn_tp = max(1, s.tp // s.dp) if s.extra.get("enable_dp_attention") and s.dp > 1 else s.tp
    latent = _release(s).dsa_latent_bytes or bytes_per_token_layer(arch, attn_tp, kv_bytes)
    per_layer = latent + dsa_indexer_bytes(arch)
    kinds = [k for k in arch.layer_kinds if k != NONE]
    sliding = sum(1 for k in kinds if k in (SLIDING, CHUNKED)) if s.hybrid_kv_cache_manager else 0
    share = layers / max(1, len(kinds))
    swa = int(round(sliding * share))
    return per_layer * layers, layers - swa, swa


def _state_terms(pool: MambaPool) -> list[Term]:
    if not pool.bytes:
        return []
    radix = "radix cache on: a third of the slots" if pool.radix else "radix cache off: one slot each"
    note = (
        f"SGLang mamba pool (handle_max_mamba_cache): {pool.slots:,} state slots of {pool.per_req:,} B, taken "
        f"before the KV pool; max_running_requests at most {pool.cap:,} ({radix})"
    )
    return [Term("Mamba/linear state", pool.bytes, note)]


def _state_line(pool: MambaPool) -> list[str]:
    if not pool.bytes:
        return []
    return [
        f"  - mamba state pool: {gib(pool.bytes)} ({pool.slots:,} slots x {pool.per_req:,} B: "
        f"max_mamba_cache_size {pool.slots:,})"
    ]


def _state_layers(n_state: int, pool: MambaPool) -> str:
    """What the hybrid's state layers hold, beside the attention layers that price the cell."""
    return f"; {n_state} state layers hold one slot per request, no tokens" if pool.slots else ""


def _running_line(s: EngineSettings, max_running: int, pool: MambaPool) -> str:
    if pool.slots and max_running == pool.cap:
        ratio = "a third of them with the radix cache on" if pool.radix else "one each, the radix cache off"
        return f"max_running_requests {max_running:,} (the mamba pool's {pool.slots:,} slots, {ratio})"
    return f"max_running_requests {max_running:,}" + (
        "" if s.max_num_seqs else " (SGLang default: min(tokens // 2, request pool))"
    )


def _swa_split(kv_tokens: int, cell: int, layers: int, full_layers: int, swa_layers: int) -> tuple[int, str]:
    """A hybrid SWA pool: the full layers' tokens when the sliding layers hold swa_full_tokens_ratio as many."""
    if not swa_layers or not kv_tokens:
        return kv_tokens, ""
    per_layer = cell // max(1, layers)
    memory = kv_tokens * cell
    kv_tokens = int(memory / (per_layer * full_layers + SWA_FULL_TOKENS_RATIO * per_layer * swa_layers))
    return kv_tokens, (
        f"hybrid SWA pool: {full_layers} full layers hold {tokens(kv_tokens)} tokens, {swa_layers} "
        f"sliding layers {tokens(int(kv_tokens * SWA_FULL_TOKENS_RATIO))} (swa_full_tokens_ratio 0.8)"
    )


def _max_running(s: EngineSettings, kv_tokens: int, ctx: int, cap: int) -> int:
    """max_running_requests: stated (as the release caps it), else min(tokens // 2, request pool); the mamba
    pool's cap over both (init_memory: max_num_reqs <= max_mamba_cache_size // ratio)."""
    pool_reqs = sd.max_num_reqs(kv_tokens, ctx) + (1 if _release(s).era == sd.TP_TIERS else 0)
    dp_div = s.dp if s.extra.get("enable_dp_attention") and s.dp > 1 else 1
    max_running = min(max(1, kv_tokens // 2), pool_reqs)
    if s.max_num_seqs:
        max_running = sd.stated_running(s.version, s.max_num_seqs // dp_div, pool_reqs, kv_tokens)
    return min(max_running, cap) if cap else max_running


def _notes(arch: ModelArch, s: EngineSettings, swa_note: str) -> list[str]:
    notes = [swa_note] if swa_note else []
    if arch.encoder_tokens:
        notes.append(f"each request's {arch.encoder_tokens:,} image tokens take pool slots beside its text")
    if str(s.extra.get("speculative_algorithm") or "").upper() not in ("", "NGRAM"):  # NGRAM: host lookup
        notes.append(
            "speculative decoding: the draft model's weights and its KV pool (as many tokens as the target's) "
            "come out of the memory mem_fraction_static leaves free (the v0.4.8-v0.5.9 defaults reserve 2 GiB more "
            "for them, v0.5.10-v0.5.13 4 GiB, none from v0.5.14)"
        )
    if not _release(s).version_known:
        notes.append(
            f"SGLang version unknown or newer than the newest release kvlint read ({sd.newest_read()}): its defaults apply"
        )
    return notes


def plan(arch: ModelArch, gpu: GpuSpec, s: EngineSettings) -> Plan:
    total = gpu.engine_bytes or 0
    w = weight_bytes(arch, s.tp, s.pp, s.dtype, s.quantization, "sglang", 0, False, spare_experts(s.extra))
    kv_bytes = kv_dtype_bytes(s.kv_cache_dtype, run_dtype(arch.dtype, s.dtype))
    dist, dist_note = dist_init_bytes(s.tp, s.pp, gpu)
    free_before = total - CONTEXT_BYTES - dist
    budget = int(free_before * s.utilization)
    layers = max(pp_partitions(arch.attention_layers, s.pp))
    cell, full_layers, swa_layers = _cell(arch, s, kv_bytes, layers)
    offload = int(float(s.extra.get("cpu_offload_gb") or 0) * GIB)  # sglang==0.5.23 utils/offloader.py:69-71
    stage_weights = max(0, w.per_gpu_max - offload)
    wsrc = w.source + (f"; minus {gib(offload)} offloaded to CPU (--cpu-offload-gb)" if offload else "")
    mamba, n_state = MambaPool(0, 0, 0, 0, True), 0
    if has_state(arch):  # handle_max_mamba_cache: the state pool comes out of the rest memory first
        rest = int(free_before * s.utilization) - stage_weights
        n_state = max(pp_partitions(len(arch.state_layers), s.pp))
        rel = _release(s)
        mamba = sglang_state(
            arch, s.tp, n_state, rest, s.extra, s.max_num_seqs, rel.mamba_pool, rel.radix_off
        )
    state_bytes, cap = mamba.bytes, mamba.cap
    mm_reserve = _release(s).mm_reserve_bytes
    pool = budget - stage_weights - state_bytes - mm_reserve
    kv_tokens = profile_max_num_token(
        free_before, free_before - stage_weights - state_bytes - mm_reserve, s.utilization, cell
    )
    kv_tokens, swa_note = _swa_split(kv_tokens, cell, layers, full_layers, swa_layers)
    limit = s.extra.get("max_total_tokens")
    if isinstance(limit, int) and limit > 0:
        kv_tokens = min(kv_tokens, limit)
    page = max(1, s.block_size)
    kv_tokens = kv_tokens // page * page
    ctx = s.max_model_len
    # encoder-decoder (mllama): a request's image tokens take slots of the same pool beside its text
    # (sgl-project/sglang@fd3907ee python/sglang/srt/managers/schedule_batch.py prepare_encoder_info_extend
    # splits out_cache_loc into encoder and decoder slots, encoder_lens = num_image_tokens)
    need = ctx + arch.encoder_tokens
    max_running = _max_running(s, kv_tokens, ctx, cap)
    full_cell = cell if not swa_layers else (cell // max(1, layers)) * layers
    p = Plan(
        engine="sglang",
        generation="-",
        gpu_total=total,
        utilization=s.utilization,
        budget=budget,
        terms=[Term("weights", stage_weights, wsrc)] + _state_terms(mamba),
        kv_pool=pool,
        kv_per_token=full_cell,
        page_bytes=cell * page,
        block_size=page,
        layers_per_block=layers,
        num_blocks=kv_tokens // page,
        kv_tokens=kv_tokens,
        max_model_len=ctx,
        max_num_seqs=max_running,
        request_bytes=need * pool // kv_tokens if kv_tokens else need * cell,
        max_concurrency=kv_tokens / need if need else 0.0,
        max_len_that_fits=max(0, kv_tokens - arch.encoder_tokens),
        context_at_max_seqs=longest_context(kv_tokens, max_running, 1) if max_running else 0,
        pool_units=kv_tokens,
        request_units=need,
        weights_per_gpu=stage_weights,
        weights_total=w.total,
        weights_source=wsrc,
        state_slots=mamba.slots,
        state_cap=mamba.cap,
        state_layers=n_state if mamba.slots else 0,
    )
    p.notes.extend(_notes(arch, s, swa_note))
    p.lines = [
        f"free GPU memory before loading: {gib(total)} - {gib(CONTEXT_BYTES)} (CUDA context)"
        + (f" - {gib(dist)} ({dist_note})" if dist else "")
        + f" = {gib(free_before)}",
        f"x mem_fraction_static {s.utilization:g}{s.utilization_default} = {gib(budget)} for weights + KV pool",
        f"  - weights: {gib(stage_weights)}  ({wsrc})",
        *(
            [f"  - multimodal embedding cache: {gib(mm_reserve)} (SGLANG_VLM_CACHE_SIZE_MB, v0.5.18 on)"]
            if mm_reserve
            else []
        ),
        *_state_line(mamba),
        f"  = KV pool per GPU: {gib(pool)}",
        f"cell per token: {cell:,} B ({layers} attention layers{_state_layers(n_state, mamba)}) -> "
        f"max_total_num_tokens {tokens(kv_tokens)}" + (f" (page size {page})" if page > 1 else ""),
        _running_line(s, max_running, mamba),
    ]
    lora_note = lora.note(s.extra)
    if lora_note:
        p.notes.append(lora_note)
        p.lines.append(lora_note)
    return p
