"""SGLang's memory rules by release, one row per release read (the arithmetic is sglang_defaults.py).

Each row was read in the released package (the PyPI wheel `sglang==X`, the same files as the tag);
a release between two read rows takes the rules of the latest read row at or below it, and a version
kvlint cannot read (no image tag, `latest`) takes the newest row, and says so. Where each row was
read (file:lines in the wheel; srt/ omitted):

  v0.4.4 server_args.py:204-214, model_runner.py:242-243; v0.4.5 model_runner.py:274; v0.4.6
  server_args.py:224-238; v0.4.6.post2 :241-247; v0.4.7 :252-283; v0.4.8 :274-315, model_runner.py:414-415;
  v0.4.9 :325-329; v0.4.10 :335, 1946; v0.5.3 :542-672; v0.5.5 :717; v0.5.5.post1 :822-824 (v0.5.6
  :856-857, .post1 :864, .post2 :884); v0.5.7 :898-902, 943-945; v0.5.8 :974-981, 1012-1014; v0.5.9 :1046;
  v0.5.10 :1078-1139 (_handle_piecewise_cuda_graph: off for speculative decoding, DP attention, PP > 1,
  non-CUDA, LoRA, multimodal, ...), :1263-1267 (prefill-graph max tokens capped at --max-total-tokens);
  v0.5.11 :1194-1261 (speculative decoding no longer turns the prefill graph off), :1294-1495;
  v0.5.12 and v0.5.12.post1 :1401-1602 (the fraction unchanged; configs/model_config.py:1558 adds
  DeepSeek-V4 to the architectures without a prefill graph); v0.5.13 :1579-1585 (max tokens clamped to a
  stated --context-length, #21112; model_config.py:1579 drops the DSA archs from that list; v0.5.13.post1
  read, no change); v0.5.14 :3122-3329 (no speculative
  reserve), :2942-2944 (--disable-cuda-graph turns the prefill graph off, the decode reserve stays),
  model_executor/model_runner_kv_cache_mixin.py:990-991 (a stated --max-running-requests is capped at
  tokens // 2, up to v0.5.13 at the request pool, :885); v0.5.15 :3469-3704 (decode reserve only for a
  captured decode graph), model_executor/cuda_graph_config.py:95-101 (breakable prefill graph by default
  on CUDA, tc_piecewise elsewhere, whose non-CUDA rule turns it off), server_args.py:3341-3384 (breakable
  off for MLA, DP attention, LoRA, multimodal; PP no longer); v0.5.15.post1 and v0.5.16 read, no change
  for kvlint's inputs (v0.5.16 :3900-4103 only moves the PD-disaggregation reserve; the context clamp
  :4039); v0.5.17 :4452-4520 ("MLA attention (non-DSA)"; the DP-attention and LoRA rules are gone, the
  context clamp too); v0.5.18 :4666-4730 (no MLA rule), mem_cache/kv_cache_configurator.py:130-152, 1785
  (SGLANG_VLM_CACHE_SIZE_MB, default 100, environ.py:1146, taken off a multimodal model's KV budget);
  v0.5.19 arg_groups/memory_hook.py:26-290, arg_groups/cuda_graph_hook.py:106-168 (PP > 1 turns the
  breakable prefill graph off again); v0.5.20 memory_hook.py:102-116 (20-35 GB cards: chunked prefill
  4096, decode graph bs 48 / 160), :318-322 (0.95 when the GPU memory is unknown); v0.5.21 read, no
  change; v0.5.22 memory_hook.py:182-189 (a defaulted decode graph max bs is capped at
  --max-running-requests), model_executor/cuda_graph_config.py:119-123 (no prefill graph off CUDA);
  v0.5.23 memory_hook.py:85-160, 280-340, 355-399, 417-457, cuda_graph_hook.py:45-65, 163-240,
  mem_cache/kv_cache_configurator.py:202-219, 3034-3038, environ.py:1598 (the MLA prefill-graph max
  tokens become min(8192, chunk); the MLA reserve is a flat 1.5 GiB, so no change to the fraction).
  The per-token cell (model_executor/pool_configurator.py _compute_cell_size: MHA/GQA, MLA, DSA
  indexer) is the same v0.5.11-v0.5.23 for the inputs kvlint models.

The multimodal architectures that keep a prefill graph (model_config.py multimodal_breakable_ /
multimodal_piecewise_cuda_graph_supported_model_archs) are listed by release from v0.5.14 (v0.5.16
server_args.py:3660-3675 moves the piecewise-listed ones to tc_piecewise). Not modelled (read, named
here): PD disaggregation (--disaggregation-mode, v0.5.15 on), DeepEP (+2 GiB, v0.5.15 on),
SGLANG_ENABLE_POST_CAPTURE_KV_SIZING (off by default, v0.5.16 on), SGLang's own 4096-token prefill-graph
cap for model paths containing "llama-2", the aiter x 0.85 above 8K context when ROCm picks aiter by
default (a stated `--attention-backend aiter` is applied, sglang.py), and the draft model's KV cell
and weights that v0.5.14 on size with the target's pool (pool_configurator eagle_draft_num_layers:
cell x (1 + draft layers / layers); kvlint does not read the draft model).
"""

from __future__ import annotations

from kvlint.record import record, replace

# What turns the default-on prefill (piecewise / breakable) CUDA graph off, so that it reserves nothing:
# speculative decoding, DP attention, PP > 1, an AMD GPU, a multimodal checkpoint, LoRA, any MLA model,
# an MLA model without DeepSeek sparse attention
SPEC, DPA, PP, AMD, MM, LORA, MLA, MLA_NON_DSA = "spec", "dp", "pp", "amd", "mm", "lora", "mla", "mla-non-dsa"
TC_OFF = (DPA, PP, AMD, LORA)  # tc_piecewise's rules that kvlint reads (v0.5.14 on)
_C2V, _K25, _K3 = "Cohere2Vision", "KimiK25", "KimiK3"
_Q35 = ("Qwen3_5", "Qwen3_5Moe")
_MM3 = ("MiniMaxM3SparseForCausalLM", "MiniMaxM3Sparse")


def _archs(*names: str) -> tuple[str, ...]:
    return tuple(n if n.endswith("CausalLM") else n + "ForConditionalGeneration" for n in names)


_MM_TC = _archs(_C2V, _K25, *_MM3)  # v0.5.16 model_config.py:1776 (multimodal_piecewise_...)
_MM_BCG_18 = _archs("InternS2Mobius", *_Q35, "MuseGlimmer", _K3, _K25)  # v0.5.18 model_config.py:1921
_MM_BCG_19 = _archs(_C2V, "InternS2Mobius", "PaddleOCRVL", *_Q35, "MuseGlimmer", _K3, _K25)  # v0.5.19 :1985
_MM_BCG_20 = _archs(_C2V, "Glm5Next") + _MM_BCG_19[1:]  # v0.5.20 :2207
_MM_BCG_22 = _MM_BCG_20 + _archs("Qwen4Exp", *_MM3)  # v0.5.22 :2388


@record(frozen=True)
class Rules:
    """What one read release does (sglang_defaults.py applies it)."""

    first: tuple[int, int, int, int]  # the first release these rules hold for
    read_at: str  # the release(s) they were read at
    fraction: str  # tp | tp-13g | tp-48g | tp-b200 | gpu-tiers | reserved
    multimodal: str  # runner (any fraction) | default (only a defaulted one) | vit (default, by ViT size)
    multimodal_factor: float = 0.90
    small_chunked: int = 2048  # chunked_prefill_size under 35 GiB (reserved era)
    small_graph_bs: int = 16  # decode graph max bs under 35 GiB at TP < 4 (reserved era)
    small_graph_bs_tp4: int = 80
    spec_mb: int = 2048  # EAGLE-style speculative reserve (STANDALONE: +4096 more), reserved era
    piecewise: str = "none"  # none | opt-in (--enable-piecewise-cuda-graph) | default
    # how the piecewise reserve is sized: "sizes" (capture sizes x 8 MB, before the 10 GiB floor, v0.5.8
    # on), "tokens/4" / "tokens/8" (piecewise_cuda_graph_max_tokens // 4 or // 8 MiB, after the floor
    # and the speculative reserve: v0.5.5.post1-v0.5.6.post2 / v0.5.7)
    piecewise_form: str = "sizes"
    prefill_graph_64_from: int = 640  # where the 64-step run of prefill capture sizes starts
    prefill_off: tuple[str, ...] = (SPEC, DPA, PP, AMD, MM, LORA)  # what turns a default prefill graph off
    # ... and for which model families (model_type) it is off: the release's piecewise_cuda_graph_disabled_
    # model_archs (configs/model_config.py) under tc_piecewise, its breakable rules from v0.5.15
    prefill_off_families: tuple[str, ...] = ()
    # multimodal architectures (config architectures[0]) that keep a prefill graph: under the row's default
    # backend and its rules, or switched to tc_piecewise and its rules (TC_OFF); model_config.py
    # multimodal_breakable_ / multimodal_piecewise_cuda_graph_supported_model_archs, v0.5.14 on
    mm_default_archs: tuple[str, ...] = ()
    mm_tc_archs: tuple[str, ...] = ()
    cap_total: bool = False  # prefill-graph max tokens capped at --max-total-tokens (v0.5.10 on)
    cap_context: bool = False  # ... and clamped to a stated --context-length (v0.5.13-v0.5.16)
    prefill_gated: bool = False  # --disable-cuda-graph turns the prefill graph (and its reserve) off
    graph_gated: bool = False  # ... and the decode graph's reserve too
    # multimodal: taken off the KV budget for the embedding cache (SGLANG_VLM_CACHE_SIZE_MB,
    # kv_cache_configurator.mm_runtime_reservation_gb)
    mm_reserve_mb: int = 0
    unknown_fraction: float = 0.88  # when the GPU memory is unknown
    graph_bs_capped: bool = False  # a defaulted decode graph max bs <= --max-running-requests
    stated_reqs_cap: str = ""  # a stated --max-running-requests capped at: "" none read | pool | tokens


_V058 = Rules((0, 5, 8, 0), "v0.5.8", "reserved", "vit", small_graph_bs=24, piecewise="opt-in")
_V0510 = replace(
    _V058,
    first=(0, 5, 10, 0),
    read_at="v0.5.10",
    spec_mb=4096,
    piecewise="default",
    prefill_graph_64_from=576,  # v0.5.9 moved the 64-step run to 576
    cap_total=True,
    stated_reqs_cap="pool",
    # model_config.py:1352 DeepseekV32ForCausalLM, Qwen3NextForCausalLM, GlmMoeDsaForCausalLM (v0.5.10, v0.5.11)
    prefill_off_families=("deepseek_v32", "qwen3_next", "glm_moe_dsa"),
)
_FAM_12 = ("deepseek_v32", "qwen3_next", "glm_moe_dsa", "deepseek_v4")
_FAM_13 = ("deepseek_v4", "qwen3_next")
_V0511 = replace(
    _V0510,
    first=(0, 5, 11, 0),
    read_at="v0.5.11",
    prefill_off=(DPA, PP, AMD, MM, LORA),
)
_V0514 = replace(
    _V0511,
    first=(0, 5, 14, 0),
    read_at="v0.5.14",
    mm_default_archs=_archs(_C2V),  # model_config.py:1725, under tc_piecewise
    spec_mb=0,  # draft weights and KV are sized with the target's pool (sgl-project/sglang PR 23862)
    cap_context=True,
    prefill_gated=True,
    stated_reqs_cap="tokens",
    prefill_off_families=_FAM_13,  # model_config.py:1713, as in v0.5.13
)
_V0515 = replace(
    _V0514,
    first=(0, 5, 15, 0),
    read_at="v0.5.15, v0.5.15.post1",
    prefill_off=(MLA, DPA, AMD, MM, LORA),
    graph_gated=True,
    prefill_off_families=("deepseek_v4",),  # breakable: "DeepSeek-V4 (heavy capture-pool memory pressure)"
    mm_default_archs=(),  # breakable's "multimodal model" rule has no exceptions in v0.5.15
)
# v0.5.16 server_args.py:3660-3675: allowlisted multimodal archs keep breakable, or move to tc_piecewise
_V0516 = replace(
    _V0515, first=(0, 5, 16, 0), read_at="v0.5.16", mm_default_archs=_archs(*_Q35), mm_tc_archs=_MM_TC
)
_V0517 = replace(
    _V0516,
    first=(0, 5, 17, 0),
    read_at="v0.5.17",
    prefill_off=(MLA_NON_DSA, AMD, MM),
    cap_context=False,
    prefill_off_families=("deepseek_v4", "nemotron_h"),  # v0.5.17 only: "NemotronH (hybrid Mamba2 prefill)"
)
_V0518 = replace(
    _V0517,
    first=(0, 5, 18, 0),
    read_at="v0.5.18",
    prefill_off=(AMD, MM),
    mm_reserve_mb=100,
    mm_default_archs=_MM_BCG_18,
    prefill_off_families=("deepseek_v4",),
)
_V0519 = replace(
    _V0518,
    first=(0, 5, 19, 0),
    read_at="v0.5.19",
    prefill_off=(AMD, MM, PP),
    mm_default_archs=_MM_BCG_19,
    mm_tc_archs=_archs(_K25, *_MM3),  # model_config.py:1973
)
_V0520 = replace(
    _V0519,
    first=(0, 5, 20, 0),
    read_at="v0.5.20, v0.5.21",
    small_chunked=4096,
    small_graph_bs=48,
    small_graph_bs_tp4=160,
    unknown_fraction=0.95,
    mm_default_archs=_MM_BCG_20,
)
_V0522 = replace(
    _V0520, first=(0, 5, 22, 0), read_at="v0.5.22", graph_bs_capped=True, mm_default_archs=_MM_BCG_22
)
NEWEST_READ = "v0.5.23"  # the newest SGLang release on PyPI when these rows were read (2026-12-01)
RELEASES: tuple[Rules, ...] = (
    Rules((0, 4, 3, 0), "v0.4.4", "tp", "runner", 0.95),
    Rules((0, 4, 5, 0), "v0.4.5", "tp", "runner"),
    Rules((0, 4, 6, 0), "v0.4.6, v0.4.6.post1", "tp-13g", "runner"),
    Rules((0, 4, 6, 2), "v0.4.6.post2, v0.4.6.post3, v0.4.6.post5", "tp-48g", "runner"),
    Rules((0, 4, 7, 0), "v0.4.7", "tp-b200", "runner"),
    Rules((0, 4, 8, 0), "v0.4.8", "gpu-tiers", "runner"),
    Rules((0, 4, 9, 0), "v0.4.9", "gpu-tiers", "default"),
    Rules((0, 4, 10, 0), "v0.4.10, v0.5.2", "gpu-tiers", "vit"),
    Rules((0, 5, 3, 0), "v0.5.3, v0.5.4", "reserved", "vit"),
    Rules((0, 5, 5, 0), "v0.5.5", "reserved", "vit", small_graph_bs=24),
    Rules(
        (0, 5, 5, 1),
        "v0.5.5.post1, v0.5.5.post3, v0.5.6, v0.5.6.post1, v0.5.6.post2",
        "reserved",
        "vit",
        small_graph_bs=24,
        piecewise="opt-in",
        piecewise_form="tokens/4",
    ),
    Rules(
        (0, 5, 7, 0),
        "v0.5.7",
        "reserved",
        "vit",
        small_graph_bs=24,
        piecewise="opt-in",
        piecewise_form="tokens/8",
    ),
    _V058,
    replace(_V058, first=(0, 5, 9, 0), read_at="v0.5.9", prefill_graph_64_from=576),
    _V0510,
    _V0511,
    # v0.5.12 model_config.py:1558 adds DeepSeek-V4; v0.5.13 :1579 drops the DSA archs (and clamps to the context)
    replace(_V0511, first=(0, 5, 12, 0), read_at="v0.5.12, v0.5.12.post1", prefill_off_families=_FAM_12),
    replace(
        _V0511,
        first=(0, 5, 13, 0),
        read_at="v0.5.13, v0.5.13.post1",
        cap_context=True,
        prefill_off_families=_FAM_13,
    ),
    _V0514,
    _V0515,
    _V0516,
    _V0517,
    _V0518,
    _V0519,
    _V0520,
    _V0522,
    # v0.5.23 model_config.py:2501 adds MuseSpark to the breakable multimodal archs
    replace(
        _V0522, first=(0, 5, 23, 0), read_at=NEWEST_READ, mm_default_archs=_MM_BCG_22 + _archs("MuseSpark")
    ),
)
