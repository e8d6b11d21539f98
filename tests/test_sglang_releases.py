"""SGLang's release rows v0.5.10-v0.5.23, each change checked where a deployment meets it.

Every release was read in its PyPI wheel (kvlint/engines/sglang/data/releases.json names the
file:line of each change). The tests compare two releases that differ only in the rule under test, so
the difference is that rule's own term (a reserve in MiB over the GPU's nvidia-smi total), not a
restated default fraction.
"""

from __future__ import annotations

import json

import pytest
from conftest import lint

from kvlint.engines.sglang import defaults as sd
from kvlint.engines.sglang import releases as sr

H100, H200, B200, L4 = 81559, 143771, 183359, 23034  # nvidia-smi MiB (gpus.yaml)
STEP = 0.0011  # the fraction is rounded to 3 decimals: a difference is exact to within 0.001


def _f(gpu_mb, version, tp=1, **kw) -> float:
    return sd.defaults(gpu_mb, tp, 1, version, **kw).mem_fraction_static


def test_each_release_read_is_served_by_its_own_row():
    """Every release a row names as read resolves to that row (no row shadows another), and every
    release on PyPI from v0.5.10 to the newest, v0.5.23, is named by one."""
    named = set()
    for row in sr.releases():
        for text in row.read_at.split(", "):
            assert sd.rules(sd.parse_version(text)) is row, text
            named.add(text)
    pypi = "0.5.10 0.5.11 0.5.12 0.5.12.post1 0.5.13 0.5.13.post1 0.5.14 0.5.15 0.5.15.post1 0.5.16 0.5.17"
    pypi += " 0.5.18 0.5.19 0.5.20 0.5.21 0.5.22 0.5.23"
    assert {f"v{v}" for v in pypi.split()} <= named
    assert sr.newest_read() in sr.releases()[-1].read_at
    assert sr.newest_read() in sd.source(None)


def test_every_row_starts_at_a_release_read():
    """A row's `since` is a release a read_at row names, so each release read folds every change at it."""
    from kvlint.engines import facts

    rows = facts.changes("sglang", width=4)
    read = {c.since for c in rows if c.key == "read_at"}
    assert {c.since for c in rows} == read
    assert [r.first for r in sr.releases()] == sorted(read)


def test_speculative_decoding_keeps_the_prefill_graph_from_v0_5_11_and_its_reserve_ends_in_v0_5_14():
    """v0.5.10 _handle_piecewise_cuda_graph turns the prefill graph off for speculative decoding,
    v0.5.11 no longer does (58 capture sizes up to 8192 tokens x 8 MB); v0.5.14 drops the 4 GiB EAGLE
    reserve. Llama-3.1-8B-sized settings on an H100 (reserve above the 10 GiB floor)."""
    sizes = len(sd.prefill_graph_sizes(8192, sd.rules((0, 5, 11, 0))))
    v510, v511, v513, v514 = (_f(H100, (0, 5, m, 0), speculative="EAGLE") for m in (10, 11, 13, 14))
    assert v510 - v511 == pytest.approx(sizes * 8 / H100, abs=STEP)
    assert v514 - v513 == pytest.approx(4096 / H100, abs=STEP)
    assert _f(H100, (0, 5, 10, 0)) == _f(H100, (0, 5, 11, 0))  # without speculative decoding: the same


def test_mla_prefill_graph_reserve_by_release():
    """DeepSeek-V3 (MLA) on 8 x H200: the flat 1.5 GiB MLA prefill-graph reserve is taken under
    v0.5.14's tc_piecewise default, not under v0.5.15's breakable default ("MLA attention" rule),
    not for a non-DSA MLA model in v0.5.17 ("MLA attention (non-DSA)") and again from v0.5.18 (no
    MLA rule). A DSA model (GLM-5, DeepSeek-V3.2) keeps it from v0.5.17."""
    v = {m: _f(H200, (0, 5, m, 0), tp=8, mla=True) for m in (14, 15, 17, 18)}
    assert v[15] - v[14] == pytest.approx(1536 / H200, abs=STEP)
    assert v[17] == v[15] and v[18] == v[14]
    dsa = {m: _f(H200, (0, 5, m, 0), tp=8, mla=True, dsa=True) for m in (15, 17)}
    assert dsa[15] == v[15] and dsa[17] == v[14]


@pytest.mark.parametrize("version", [(0, 5, 14, 0), (0, 5, 15, 0), (0, 5, 19, 0), None])
def test_amd_gpus_capture_no_prefill_graph(version):
    """ROCm: tc_piecewise turned off by its non-CUDA rule (v0.5.14-v0.5.21), no prefill graph by
    default from v0.5.22 (cuda_graph_config.default_prefill_backend): no reserve, as with the graph
    explicitly disabled; an NVIDIA GPU of the same size reserves for it."""
    mi300x = 196592
    off = _f(mi300x, version, tp=8, piecewise=False)
    assert _f(mi300x, version, tp=8, amd=True) == off
    assert _f(mi300x, version, tp=8) < off


def test_pipeline_parallel_prefill_graph_by_release():
    """PP > 1: off under tc_piecewise (v0.5.14), kept by the breakable default (v0.5.15-v0.5.18, no PP
    rule), opt-in again from v0.5.19 (cuda_graph_hook.apply_cuda_graph_compatibility)."""
    sizes = len(sd.prefill_graph_sizes(8192, sd.rules((0, 5, 15, 0))))

    def pp2(minor: int) -> float:
        return sd.defaults(H100, 1, 2, (0, 5, minor, 0)).mem_fraction_static

    assert pp2(14) - pp2(15) == pytest.approx(sizes * 8 / H100, abs=STEP)
    assert pp2(19) == pp2(14)


def test_small_cards_take_the_v0_5_20_class():
    """20-35 GB cards (an L4): chunked prefill 2048 / decode graph bs 24 up to v0.5.19, 4096 / 48 from
    v0.5.20 (memory_hook.py); at TP 4 the graph bs goes 80 -> 160."""
    old, new = sd.defaults(L4, 1, 1, (0, 5, 19, 0)), sd.defaults(L4, 1, 1, (0, 5, 20, 0))
    assert (old.chunked_prefill_size, old.cuda_graph_max_bs) == (2048, 24)
    assert (new.chunked_prefill_size, new.cuda_graph_max_bs) == (4096, 48)
    assert sd.defaults(L4, 4, 1, (0, 5, 20, 0)).cuda_graph_max_bs == 160
    assert sd.defaults(None, 1, 1, (0, 5, 19, 0)).mem_fraction_static == 0.88
    assert sd.defaults(None, 1, 1, (0, 5, 20, 0)).mem_fraction_static == 0.95  # GPU memory unknown


def test_v0_5_22_caps_a_defaulted_decode_graph_at_max_running_requests():
    """--max-running-requests 64 on an H100: v0.5.22 captures decode graphs up to 64, not 256, and
    reserves (256 - 64) x 2 MiB less; a stated --cuda-graph-max-bs is kept."""
    v521, v522 = (_f(H100, (0, 5, m, 0), max_running=64) for m in (21, 22))
    assert v522 - v521 == pytest.approx((256 - 64) * 2 / H100, abs=STEP)
    assert _f(H100, (0, 5, 22, 0), max_running=64, graph_bs=256) == v521


def test_prefill_graph_capped_at_max_total_tokens_and_a_stated_context_length():
    """The prefill graph's largest capture: capped at --max-total-tokens from v0.5.10, clamped to a
    stated --context-length in v0.5.13-v0.5.16 only. B200 (chunk 16384): 74 sizes, 42 up to 2048."""
    full, short = (len(sd.prefill_graph_sizes(n, sd.rules((0, 5, 13, 0)))) for n in (16384, 2048))
    assert (full, short) == (74, 42)
    expected = (full - short) * 8 / B200
    assert _f(B200, (0, 5, 13, 0), context_length=2048) - _f(B200, (0, 5, 12, 0), context_length=2048) == (
        pytest.approx(expected, abs=STEP)
    )
    assert _f(B200, (0, 5, 17, 0), context_length=2048) == _f(B200, (0, 5, 12, 0))
    v510 = _f(B200, (0, 5, 10, 0), max_total_tokens=2048) - _f(B200, (0, 5, 10, 0))
    assert v510 == pytest.approx(expected, abs=STEP)


POD = """apiVersion: v1
kind: Pod
metadata: {{name: sg}}
spec:
  nodeSelector: {{cloud.google.com/gke-accelerator: nvidia-h100-80gb}}
  containers:
    - name: sglang
      image: lmsysorg/sglang:{tag}
      command: ["python3", "-m", "sglang.launch_server"]
      args: {args}
      resources: {{limits: {{nvidia.com/gpu: "1"}}}}
"""


def _plan(tag: str, *flags: str):
    args = json.dumps(["--model-path", "meta-llama/Llama-3.1-8B-Instruct", *flags])
    r = lint(POD.format(tag=tag, args=args))
    assert r.deployments and r.deployments[0].plan is not None, [f.message for f in r.findings]
    return r.deployments[0].plan


def test_manifest_flags_reach_the_release_rules():
    """From a manifest: LoRA turns the prefill graph off up to v0.5.16 (v0.5.17 dropped the rule); a
    stated --max-running-requests above the request pool is cut to it in v0.5.10-v0.5.13 and to
    tokens // 2 from v0.5.14 (_resolve_max_num_reqs)."""
    lora = ("--enable-lora", "--max-lora-rank", "16")
    assert _plan("v0.5.16", *lora).utilization > _plan("v0.5.16").utilization
    assert _plan("v0.5.17", *lora).utilization == _plan("v0.5.17").utilization
    many = ("--max-running-requests", "100000")
    assert _plan("v0.5.9", *many).max_num_seqs == 100000  # read before v0.5.10: as stated
    v513 = _plan("v0.5.13", *many)  # the request pool: 2048-4096 requests by tokens / context length
    assert v513.max_num_seqs == sd.max_num_reqs(v513.kv_tokens, v513.max_model_len) < 100000
    v514 = _plan("v0.5.14", *many)
    assert v514.max_num_seqs == min(100000, v514.kv_tokens // 2)


def test_per_phase_graph_options_of_v0_5_14_on_reach_the_fraction():
    """v0.5.14 renamed the graph options per phase (the old ones became aliases): --cuda-graph-max-bs-decode
    is --cuda-graph-max-bs, --cuda-graph-backend-prefill disabled / --disable-prefill-cuda-graph are
    --disable-piecewise-cuda-graph; --disable-decode-cuda-graph drops the decode-graph reserve
    (256 x 2 MiB on an H100) from v0.5.15, while v0.5.14 still counts it."""
    tag = "v0.5.15"
    assert _plan(tag, "--cuda-graph-max-bs-decode", "64").utilization == (
        _plan(tag, "--cuda-graph-max-bs", "64").utilization
    )
    off = _plan(tag, "--disable-piecewise-cuda-graph").utilization
    assert off > _plan(tag).utilization
    assert _plan(tag, "--cuda-graph-backend-prefill", "disabled").utilization == off
    assert _plan(tag, "--disable-prefill-cuda-graph").utilization == off
    no_decode = _plan(tag, "--disable-decode-cuda-graph").utilization - _plan(tag).utilization
    assert no_decode == pytest.approx(256 * 2 / H100, abs=STEP)
    assert _plan("v0.5.14", "--disable-decode-cuda-graph").utilization == _plan("v0.5.14").utilization


def test_architectures_without_a_prefill_graph_by_release():
    """The architectures each release keeps off the prefill graph: tc_piecewise's
    piecewise_cuda_graph_disabled_model_archs (v0.5.10-v0.5.12: DeepSeek-V3.2, GLM-5, Qwen3-Next; v0.5.13 on:
    Qwen3-Next and DeepSeek-V4), the breakable rules from v0.5.15 (DeepSeek-V4; NemotronH in v0.5.17 only). Checked
    with the family kvlint's catalog gives the model, against a model the lists do not name."""
    from kvlint.catalog import models

    def fam(model_id: str) -> str:
        arch = models.resolve(model_id).arch
        assert arch is not None
        return arch.family

    def on(family: str, minor: int, **kw) -> bool:
        return _f(H100, (0, 5, minor, 0), family=family, **kw) < _f(
            H100, (0, 5, minor, 0), piecewise=False, **kw
        )

    qwen3_next, nemotron_h = fam("Qwen/Qwen3-Next-80B-A3B-Instruct"), fam("nvidia/NVIDIA-Nemotron-Nano-9B-v2")
    glm5 = fam("zai-org/GLM-5-FP8")
    assert [on(qwen3_next, m) for m in (13, 14, 15)] == [False, False, True]
    assert [on(nemotron_h, m) for m in (16, 17, 18)] == [True, False, True]
    assert [on(glm5, m, mla=True, dsa=True) for m in (12, 13)] == [False, True]
    assert all(on("llama", m) for m in (13, 14, 15, 17))


def test_modelopt_checkpoints_with_an_fp8_kv_scheme_get_an_fp8_pool():
    """kv_cache_dtype auto on a ModelOpt checkpoint whose quant config states kv_cache_quant_algo FP8
    (nvidia/Qwen3-32B-NVFP4): SGLang allocates fp8 e4m3 KV (configure_kv_cache_dtype, v0.5.3 on), one
    byte a value, as with --kv-cache-dtype fp8_e4m3 stated; v0.4.3 had no such rule (two bytes)."""
    from kvlint.catalog import models

    quant = models.resolve("nvidia/Qwen3-32B-NVFP4").arch.quant
    assert quant is not None and quant.kv_cache_dtype == "fp8"

    def cell(tag: str, *flags: str) -> int:
        args = json.dumps(["--model-path", "nvidia/Qwen3-32B-NVFP4", *flags])
        r = lint(POD.format(tag=tag, args=args).replace("nvidia-h100-80gb", "nvidia-b200"))
        assert r.deployments and r.deployments[0].plan is not None, [f.message for f in r.findings]
        return r.deployments[0].plan.kv_per_token

    assert cell("v0.5.19") == cell("v0.5.19", "--kv-cache-dtype", "fp8_e4m3") == cell("latest")
    assert cell("v0.4.3") == 2 * cell("v0.5.19")
    assert cell("v0.5.19", "--kv-cache-dtype", "bfloat16") == 2 * cell("v0.5.19")


def test_dp_attention_divides_the_chunk_after_the_reserve_is_sized():
    """SGLang sizes the reserve (chunked prefill x 1.5 MiB) in _handle_gpu_memory_settings and only then
    divides the chunk by the DP size (_handle_data_parallelism, v0.5.3 and v0.5.11 server_args.py, v0.5.19
    arg_groups/pipeline.py): 8 x H200 with DP attention 8 reserves for the whole 8192-token chunk, as when
    8192 is stated, and runs 1024-token chunks."""
    for version in ((0, 5, 11, 0), (0, 5, 19, 0)):
        kw = {"dp": 8, "dp_attention": True, "mla": True}
        defaulted = sd.defaults(H200, 8, 1, version, **kw)
        assert (
            defaulted.mem_fraction_static
            == sd.defaults(H200, 8, 1, version, chunked=8192, **kw).mem_fraction_static
        )
        assert defaulted.chunked_prefill_size == 1024


def test_speculative_decoding_defaults_max_running_requests_to_48_from_v0_5_3():
    """_handle_speculative_decoding sets max_running_requests 48 when it is not stated (EAGLE / EAGLE3 /
    NEXTN / STANDALONE / NGRAM; v0.5.3, v0.5.11, v0.5.23 read); v0.4.3 kept the request pool (s-055's log:
    max_running_requests=4097 with EAGLE). A stated value is kept."""
    eagle = ("--speculative-algorithm", "EAGLE")
    assert _plan("v0.5.19", *eagle).max_num_seqs == 48
    assert _plan("latest", "--speculative-algorithm", "NGRAM").max_num_seqs == 48
    assert _plan("v0.4.3", *eagle).max_num_seqs > 48
    assert _plan("v0.5.19", *eagle, "--max-running-requests", "96").max_num_seqs == 96
    assert _plan("v0.5.19").max_num_seqs > 48


def test_multimodal_architectures_that_keep_a_prefill_graph_by_release():
    """Multimodal checkpoints lose the prefill graph (and its reserve) except the architectures each
    release lists: Qwen3.5 (Qwen3_5MoeForConditionalGeneration) keeps breakable from v0.5.16, not in
    v0.5.15; Kimi-K2.5 (MLA) is moved to tc_piecewise in v0.5.16-v0.5.17 (flat 1.5 GiB MLA reserve) and
    kept on breakable from v0.5.18; Qwen2.5-VL is listed by none. The architecture is the config's."""
    from kvlint.catalog import models
    from kvlint.engines.sglang import settings as sglang_settings

    def name(model_id: str) -> str:
        arch = models.resolve(model_id).arch
        assert arch is not None and arch.vision_params
        return sglang_settings._arch_name(arch)

    qwen35, kimi, qwen25 = (
        name(m) for m in ("Qwen/Qwen3.5-35B-A3B", "moonshotai/Kimi-K2.5", "Qwen/Qwen2.5-VL-7B-Instruct")
    )
    assert qwen35 == "Qwen3_5MoeForConditionalGeneration" and kimi == "KimiK25ForConditionalGeneration"
    sizes = len(sd.prefill_graph_sizes(8192, sd.rules((0, 5, 16, 0))))

    def f(minor: int, arch_name: str, **kw) -> float:
        return _f(H100, (0, 5, minor, 0), multimodal=True, arch_name=arch_name, **kw)

    assert f(15, qwen35) - f(16, qwen35) == pytest.approx(sizes * 8 / H100, abs=STEP)
    assert f(16, qwen25) == f(15, qwen25) == f(23, qwen25)
    mla = {
        m: _f(H200, (0, 5, m, 0), tp=8, mla=True, multimodal=True, arch_name=kimi) for m in (15, 16, 17, 18)
    }
    assert mla[15] - mla[16] == pytest.approx(1536 / H200, abs=STEP)
    assert mla[16] == mla[17] == mla[18]
    assert _f(
        H200, (0, 5, 17, 0), tp=8, mla=True, multimodal=True, arch_name=kimi, dp_attention=True, dp=8
    ) == (
        _f(
            H200,
            (0, 5, 17, 0),
            tp=8,
            mla=True,
            multimodal=True,
            arch_name=kimi,
            dp_attention=True,
            dp=8,
            piecewise=False,
        )
    )  # tc_piecewise keeps its DP-attention rule


AMD_POD = """apiVersion: v1
kind: Pod
metadata: {{name: sg}}
spec:
  nodeSelector: {{amd.com/gpu.product-name: AMD_Instinct_MI300X_OAM}}
  containers:
    - name: sglang
      image: lmsysorg/sglang:{tag}
      command: ["python3", "-m", "sglang.launch_server"]
      args: {args}
      resources: {{limits: {{amd.com/gpu: "1"}}}}
"""


def test_aiter_attention_above_8k_context_scales_the_fraction_by_0_85():
    """--attention-backend aiter with a context above 8192 tokens: _handle_attention_backend_compatibility
    multiplies mem_fraction_static (stated or default) by 0.85, from v0.5.5 (absent in v0.5.4)."""

    def util(tag: str, *flags: str) -> float:
        args = json.dumps(
            ["--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--mem-fraction-static", "0.8", *flags]
        )
        r = lint(AMD_POD.format(tag=tag, args=args))
        assert r.deployments and r.deployments[0].plan is not None, [f.message for f in r.findings]
        return r.deployments[0].plan.utilization

    aiter = ("--attention-backend", "aiter")
    assert util("v0.5.19", *aiter) == pytest.approx(0.8 * 0.85)
    assert util("v0.5.19", *aiter, "--context-length", "8192") == pytest.approx(0.8)
    assert util("v0.5.4", *aiter) == pytest.approx(0.8) == util("v0.5.19")
