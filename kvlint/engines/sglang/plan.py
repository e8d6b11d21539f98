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
from kvlint.capacity.plan import EngineSettings, Plan, Term, default_label
from kvlint.capacity.state import has_state
from kvlint.capacity.weights import spare_experts
from kvlint.capacity.weights import weights as weight_bytes
from kvlint.catalog.arch import CHUNKED, NONE, SLIDING, ModelArch
from kvlint.catalog.gpus import GpuSpec
from kvlint.engines import native
from kvlint.engines.sglang import defaults as sd
from kvlint.engines.sglang import lora
from kvlint.engines.sglang.dsa import dsa_fp8_default, dsa_indexer_bytes, dsa_latent_bytes
from kvlint.engines.sglang.state import sglang_state
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
CHECKPOINT_KV_FROM = (0, 5, 3)  # the first release read that takes the checkpoint's fp8 KV scheme
SPEC_48 = ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM", "DFLASH")  # max_running_requests 48 by default
SPEC_48_FROM = (0, 5, 3, 0)
AITER_FROM = (0, 5, 5, 0)  # --attention-backend aiter x 0.85 above 8K context
# SGLang splits the pool into full and sliding-window parts only for the architectures
# python/sglang/srt/configs/model_config.py `is_hybrid_swa_model` lists (Llama4, DeepseekV4, GptOss,
# MiMoV2, Step3p5/3p7, Gemma4, Laguna; read at sgl-project/sglang 001adf56); every other sliding-window
# model (Gemma 2/3, Mistral) keeps every layer's KV for every token ("is_hybrid_swa = False, no separate
# SWA pool is created, and every token allocates KV slots in all ... layers", sgl-project/sglang PR 39310).
HYBRID_SWA_FAMILIES = (
    "llama4",
    "deepseek_v4",
    "gpt_oss",
    "mimo_v2",
    "step3p5",
    "step3p7",
    "gemma4",
    "laguna",
)


def _int(d, name: str, default: int) -> int:
    v = getattr(d, name, None)
    return int(v.value) if v is not None and v.value is not None else default


def _extra(d, key: str):
    v = d.extra.get(key)
    return v.value if v is not None else None


def settings(d, arch: ModelArch, gpu: GpuSpec | None, version_text: str | None) -> EngineSettings:
    """EngineSettings for SGLang; every default applied is written back on the deployment, named."""
    from kvlint.deployment import default

    version = sd.parse_version(version_text)
    native.carry(d, "sglang")
    tp, pp, dp = _int(d, "tensor_parallel", 1), _int(d, "pipeline_parallel", 1), _int(d, "data_parallel", 1)
    stated_context = _int(d, "max_context", 0) or None  # read before the model's own length is written back
    if d.tensor_parallel is None:
        d.tensor_parallel = default(1, "SGLang default --tp-size 1")
    if d.pipeline_parallel is None:
        d.pipeline_parallel = default(1, "SGLang default --pp-size 1")
    if d.max_context is None:
        d.max_context = default(
            arch.max_positions,
            f"SGLang context_length derived from the model config ({arch.max_positions_note})",
        )
    dp_attention = bool(_extra(d, "enable_dp_attention"))
    spec = _extra(d, "speculative_algorithm")
    gpu_mb = gpu.smi_total_mib or (gpu.engine_bytes / MB if gpu.engine_bytes else None) if gpu else None
    stated_chunked = _extra(d, "chunked_prefill_size")
    picked = sd.defaults(
        gpu_mb,
        tp,
        pp,
        version,
        dp=dp,
        dp_attention=dp_attention,
        speculative=str(spec) if spec else None,
        chunked=int(stated_chunked) if stated_chunked else None,
        graph_bs=int(_extra(d, "cuda_graph_max_bs") or 0) or None,
        mla=arch.mla,
        piecewise=_piecewise(d),
        piecewise_max_tokens=int(_extra(d, "piecewise_cuda_graph_max_tokens") or 0) or None,
        cuda_graph=not _extra(d, "disable_cuda_graph"),
        decode_graph=_decode_graph(d),
        family=arch.family,
        arch_name=_arch_name(arch),
        multimodal=bool(arch.vision_params),
        amd=bool(gpu and gpu.vendor == "amd"),
        dsa=bool(dsa_indexer_bytes(arch)),
        lora=bool(_extra(d, "enable_lora") or _extra(d, "lora_adapters")),
        max_total_tokens=int(_extra(d, "max_total_tokens") or 0) or None,
        context_length=stated_context,
        max_running=_int(d, "max_sequences", 0) or None,
    )
    if "chunked_prefill_size" not in d.extra:
        d.extra["chunked_prefill_size"] = default(
            picked.chunked_prefill_size, f"SGLang default chunked_prefill_size ({picked.source})"
        )
    if "mem_fraction_static" not in d.extra:
        d.extra["mem_fraction_static"] = default(
            picked.mem_fraction_static, f"SGLang default mem_fraction_static ({picked.source})"
        )
    if d.kv_cache_dtype is None and dsa_fp8_default(arch, gpu):
        d.kv_cache_dtype = default(
            "fp8_e4m3",
            "SGLang default kv_cache_dtype for a DeepSeek-sparse-attention model on SM100+: fp8_e4m3",
        )
    if d.kv_cache_dtype is None and checkpoint_kv_fp8(arch, version):
        d.kv_cache_dtype = default(
            "fp8_e4m3",
            "SGLang default kv_cache_dtype auto: the checkpoint's KV scheme (ModelOpt kv_cache_quant_algo FP8)",
        )
    if d.kv_cache_dtype is None:
        d.kv_cache_dtype = default("auto", "SGLang default kv_cache_dtype auto (the model's dtype)")
    kv_dtype = str(d.kv_cache_dtype.value)
    if kv_dtype.lower() == "auto" and (dsa_fp8_default(arch, gpu) or checkpoint_kv_fp8(arch, version)):
        kv_dtype = "fp8_e4m3"  # SGLang rewrites a stated auto the same way
    if d.block_size is None:
        page, note = _page_size(d)
        d.block_size = default(page, note)
    spec_48 = bool(spec) and str(spec).upper() in SPEC_48 and (version or SPEC_48_FROM) >= SPEC_48_FROM
    if d.max_sequences is None and spec_48:
        # _handle_speculative_decoding, after the memory defaults (v0.5.3 server_args.py:1058-1060, 1131-1133;
        # v0.5.11 :3430-3433, 3452-3455, 3563-3566; v0.5.23 arg_groups/speculative_hook.py:1086-1094);
        # v0.4.3 kept the request pool (s-055: max_running_requests=4097 with EAGLE)
        d.max_sequences = default(
            48, f"SGLang default max_running_requests 48 with --speculative-algorithm {spec}"
        )
    extra = {k: v.value for k, v in d.extra.items()}
    extra["version_known"] = version is not None and version[:3] <= sd.rules(None).first[:3]  # newer: said
    extra["era"] = sd.era(version)
    extra["mm_reserve_bytes"] = sd.rules(version).mm_reserve_mb * MB if arch.vision_params else 0
    extra["dsa_latent_bytes"] = dsa_latent_bytes(arch, gpu, version, kv_dtype)
    es = EngineSettings(
        engine="sglang",
        version=version_text,
        generation="-",
        tp=tp,
        pp=pp,
        dp=dp,
        max_model_len=int(d.max_context.value),
        max_num_seqs=_int(d, "max_sequences", 0),
        max_batched_tokens=int(d.extra["chunked_prefill_size"].value),
        dtype=str(d.dtype.value) if d.dtype else None,
        quantization=str(d.quantization.value) if d.quantization else None,
        kv_cache_dtype=kv_dtype,
        utilization=_fraction(d, arch, version),
        utilization_default=default_label(d.extra["mem_fraction_static"], "SGLang"),
        block_size=int(d.block_size.value),
        enforce_eager=bool(_extra(d, "disable_cuda_graph")),
        hybrid_kv_cache_manager=hybrid_swa(arch) and not bool(_extra(d, "disable_hybrid_swa_memory")),
        chunked_prefill=int(d.extra["chunked_prefill_size"].value) > 0,
        extra=extra,
    )
    if d.max_sequences is None and gpu is not None and gpu.engine_bytes:
        # max_running_requests follows from the pool SGLang sizes (scheduler: min(tokens // 2, request pool))
        d.max_sequences = default(
            plan(arch, gpu, es).max_num_seqs,
            "SGLang default max_running_requests = min(max_total_num_tokens // 2, request pool)",
        )
    return es


def checkpoint_kv_fp8(arch: ModelArch, version: tuple[int, ...] | None) -> bool:
    """kv_cache_dtype auto on a ModelOpt checkpoint whose quant config says kv_cache_quant_algo FP8: SGLang
    allocates an fp8 (e4m3) pool (model_runner configure_kv_cache_dtype: read in sglang 0.5.3 :1399-1402,
    0.5.11 :2210-2227 and 0.5.23 mem_cache/kv_cache_dtype.py:49-58; absent in 0.4.3, the releases between
    not read). Only the ModelOpt quant configs carry the attribute up to v0.5.22 (layers/quantization)."""
    quant = arch.quant
    fp8 = quant is not None and quant.kv_cache_dtype == "fp8" and quant.method.startswith("modelopt")
    return fp8 and (version is None or tuple(version) >= CHECKPOINT_KV_FROM)


def _arch_name(arch: ModelArch) -> str:
    """The config's architectures[0] (SGLang's allowlists name model classes), '' when not known."""
    names = arch.parsed_from[0].get("architectures") if arch.parsed_from else None
    return str(names[0]) if isinstance(names, list) and names else ""


def hybrid_swa(arch: ModelArch) -> bool:
    """Whether SGLang gives this model a separate sliding-window pool (`is_hybrid_swa_model`)."""
    return arch.family.startswith(HYBRID_SWA_FAMILIES)


def _piecewise(d) -> bool | None:
    """--enable-piecewise-cuda-graph (v0.5.3-v0.5.9) / --disable-piecewise-cuda-graph (v0.5.10 on);
    from v0.5.14 --disable-prefill-cuda-graph and --cuda-graph-backend-prefill (an explicit backend
    skips the rules that would turn it off)."""
    backend = str(_extra(d, "cuda_graph_backend_prefill") or "").lower()
    if _extra(d, "disable_piecewise_cuda_graph") or backend == "disabled":
        return False
    return True if _extra(d, "enable_piecewise_cuda_graph") or backend else None


def _decode_graph(d) -> bool:
    """Whether decode CUDA graphs are captured (--disable-cuda-graph; v0.5.14 on also per phase)."""
    off = _extra(d, "disable_decode_cuda_graph") or _extra(d, "disable_cuda_graph")
    return not off and str(_extra(d, "cuda_graph_backend_decode") or "").lower() != "disabled"


def _fraction(d, arch: ModelArch, version: tuple[int, ...] | None) -> float:
    """The mem_fraction_static the model runner uses: the stated or default value, reduced for a
    checkpoint with a vision tower as the release does (sglang_defaults.multimodal_factor)."""
    value = d.extra["mem_fraction_static"]
    # --attention-backend aiter (ROCm) above 8K context: x 0.85 for its workspace, stated or default fraction
    # (server_args.py _handle_attention_backend_compatibility from v0.5.5 :1272, v0.5.11 :2673; v0.5.23
    # arg_groups/attention_hook.py:268; absent in v0.5.4). Only when stated: SGLang picks it later otherwise.
    aiter = str(_extra(d, "attention_backend") or "") == "aiter" and int(d.max_context.value) > 8192
    fraction = float(value.value) * (0.85 if aiter and (version or AITER_FROM) >= AITER_FROM else 1.0)
    if not arch.vision_params:
        return fraction
    factor = sd.multimodal_factor(version, value.origin == "default", arch.vision_layers, arch.vision_hidden)
    return fraction * factor  # unrounded, as server_args / the model runner keep it


def _page_size(d) -> tuple[int, str]:
    """--page-size defaults to 1; the MLA kernels that need pages force their own (server_args.py:
    "FlashMLA only supports a page_size of 64", "Cutlass MLA only supports a page_size of 128")."""
    backend = str(_extra(d, "attention_backend") or "")
    if backend == "flashmla":
        return 64, "SGLang sets page_size 64 for --attention-backend flashmla"
    if backend == "cutlass_mla":
        return 128, "SGLang sets page_size 128 for --attention-backend cutlass_mla"
    return 1, "SGLang default --page-size 1"


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
    latent = s.extra.get("dsa_latent_bytes") or bytes_per_token_layer(arch, attn_tp, kv_bytes)
    per_layer = latent + dsa_indexer_bytes(arch)
    kinds = [k for k in arch.layer_kinds if k != NONE]
    sliding = sum(1 for k in kinds if k in (SLIDING, CHUNKED)) if s.hybrid_kv_cache_manager else 0
    share = layers / max(1, len(kinds))
    swa = int(round(sliding * share))
    return per_layer * layers, layers - swa, swa


def _state_terms(state_bytes: int, slots: int, cap: int) -> list[Term]:
    if not state_bytes:
        return []
    note = (
        f"SGLang mamba pool (handle_max_mamba_cache): {slots:,} state slots, taken before the KV pool; "
        f"max_running_requests at most {cap:,} (max_mamba_cache_size // ratio)"
    )
    return [Term("Mamba/linear state", state_bytes, note)]


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
    state_bytes, slots, cap = 0, 0, 0
    if has_state(arch):  # handle_max_mamba_cache: the state pool comes out of the rest memory first
        rest = int(free_before * s.utilization) - stage_weights
        n_state = max(pp_partitions(len(arch.state_layers), s.pp))
        state_bytes, slots, cap = sglang_state(arch, s.tp, n_state, rest, s.extra, s.max_num_seqs)
    mm_reserve = int(s.extra.get("mm_reserve_bytes") or 0)
    pool = budget - stage_weights - state_bytes - mm_reserve
    kv_tokens = profile_max_num_token(
        free_before, free_before - stage_weights - state_bytes - mm_reserve, s.utilization, cell
    )
    swa_note = ""
    if swa_layers and kv_tokens:
        per_layer = cell // max(1, layers)
        memory = kv_tokens * cell
        kv_tokens = int(memory / (per_layer * full_layers + SWA_FULL_TOKENS_RATIO * per_layer * swa_layers))
        swa_note = (
            f"hybrid SWA pool: {full_layers} full layers hold {tokens(kv_tokens)} tokens, {swa_layers} "
            f"sliding layers {tokens(int(kv_tokens * SWA_FULL_TOKENS_RATIO))} (swa_full_tokens_ratio 0.8)"
        )
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
    pool_reqs = sd.max_num_reqs(kv_tokens, ctx) + (1 if s.extra.get("era") == sd.TP_TIERS else 0)
    dp_div = s.dp if s.extra.get("enable_dp_attention") and s.dp > 1 else 1
    max_running = min(max(1, kv_tokens // 2), pool_reqs)
    if s.max_num_seqs:
        max_running = sd.stated_running(s.version, s.max_num_seqs // dp_div, pool_reqs, kv_tokens)
    if cap:  # init_memory: max_num_reqs <= max_mamba_cache_size // ratio
        max_running = min(max_running, cap)
    full_cell = cell if not swa_layers else (cell // max(1, layers)) * layers
    p = Plan(
        engine="sglang",
        generation="-",
        gpu_total=total,
        utilization=s.utilization,
        budget=budget,
        terms=[Term("weights", stage_weights, wsrc)] + _state_terms(state_bytes, slots, cap),
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
    )
    if swa_note:
        p.notes.append(swa_note)
    if arch.encoder_tokens:
        p.notes.append(f"each request's {arch.encoder_tokens:,} image tokens take pool slots beside its text")
    if str(s.extra.get("speculative_algorithm") or "").upper() not in ("", "NGRAM"):  # NGRAM: host lookup
        p.notes.append(
            "speculative decoding: the draft model's weights and its KV pool (as many tokens as the target's) "
            "come out of the memory mem_fraction_static leaves free (the v0.4.8-v0.5.9 defaults reserve 2 GiB more "
            "for them, v0.5.10-v0.5.13 4 GiB, none from v0.5.14)"
        )
    if not s.extra.get("version_known"):
        p.notes.append(
            f"SGLang version unknown or newer than the newest release kvlint read ({sd.NEWEST_READ}): its defaults apply"
        )
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
        f"  = KV pool per GPU: {gib(pool)}",
        f"cell per token: {cell:,} B ({layers} attention layers) -> max_total_num_tokens {tokens(kv_tokens)}"
        + (f" (page size {page})" if page > 1 else ""),
        f"max_running_requests {max_running:,}"
        + ("" if s.max_num_seqs else " (SGLang default: min(tokens // 2, request pool))"),
    ]
    lora_note = lora.note(s.extra)
    if lora_note:
        p.notes.append(lora_note)
        p.lines.append(lora_note)
    return p
