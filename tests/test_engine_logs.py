"""Engine accounting terms checked against the figures public start-up logs state.

Every assertion compares one kvlint term with the number a log printed for it (the logs' figures are
in tests/data/vllm_logs.yaml, carried from ../shared/calibration/vllm_startup_logs.yaml, and
benchmarks/calibration/*.yaml, each with its source link), never with kvlint's own constants.
"""

from __future__ import annotations

import sys

import pytest
from conftest import ROOT, vllm_logs

sys.path.insert(0, str(ROOT / "benchmarks"))

from calibration_cases import DATA, build_vllm, load_yaml, vllm_version  # noqa: E402

from kvlint.catalog import gpus as gpu_catalog  # noqa: E402
from kvlint.catalog import models as model_catalog  # noqa: E402
from kvlint.engines.sglang import defaults as sglang_defaults
from kvlint.engines.sglang import dsa as sglang_dsa
from kvlint.engines.sglang import plan as sglang  # noqa: E402
from kvlint.engines.vllm import plan as vllm
from kvlint.resolve import Defaults, resolve  # noqa: E402

GIB = 1 << 30


def _sglang_cases():
    return load_yaml(DATA / "sglang_startup_logs.yaml")["sglang_cases"]


def _with(cases, *keys):
    return [c for c in cases if all((c.get("measured") or {}).get(k) is not None for k in keys)]


@pytest.mark.parametrize(
    "case",
    [
        c
        for c in _with(
            _sglang_cases(), "avail_after_gib", "weights_gib", "k_size_gib", "max_total_num_tokens"
        )
        if (c["settings"].get("mem_fraction_static") is not None or "avail_before_gib" in c["measured"])
        # the fraction in use is known: stated, or printed in server_args (s-060's log elides them)
        and (c["settings"].get("mem_fraction_static") or c["measured"].get("mem_fraction_static_printed"))
    ],
    ids=lambda c: c["id"],
)
def test_sglang_tokens_follow_from_the_free_memory_it_logged(case):
    """profile_max_num_token: (free after load - free before x (1 - fraction)) // cell reproduces
    the #tokens the log states from the free-memory figures it states (2-decimal GiB; free before
    is the logged 'Load weight begin' figure, or free after + the weights' 'mem usage'). The
    fraction is the one stated on the command line or printed in server_args, times the release's
    multimodal reduction for a checkpoint with a vision tower (s-054, Llama 3.2 Vision on v0.4.3,
    whose log states the reduced 0.836)."""
    m = case["measured"]
    fraction = case["settings"].get("mem_fraction_static") or m["mem_fraction_static_printed"]
    if "ForConditionalGeneration" in " ".join(map(str, case.get("quotes") or [])):
        version = sglang_defaults.parse_version(case["engine_version"])
        defaulted = case["settings"].get("mem_fraction_static") is None
        fraction *= sglang_defaults.multimodal_factor(version, defaulted, None, None)
    before = m.get("avail_before_gib", m["avail_after_gib"] + m["weights_gib"])
    cell = int(2 * m["k_size_gib"] * GIB / m["max_total_num_tokens"])  # K + V bytes per token, from the log
    got = sglang.profile_max_num_token(int(before * GIB), int(m["avail_after_gib"] * GIB), fraction, cell)
    limit = case["settings"].get("max_total_tokens")
    assert min(got, limit or got) == pytest.approx(m["max_total_num_tokens"], rel=0.01)
    assert before - m["avail_after_gib"] == pytest.approx(m["weights_gib"], abs=0.011)


@pytest.mark.parametrize(
    "case",
    # a fraction set on the command line is printed as set: only the logs that left it to the default
    [
        c
        for c in _with(_sglang_cases(), "mem_fraction_static_printed")
        if c["settings"].get("mem_fraction_static") is None
    ],
    ids=lambda c: c["id"],
)
def test_sglang_default_fraction_is_the_printed_one(case):
    """The printed server_args fraction: the release's default on the log's GPU (with the reserve
    --enable-piecewise-cuda-graph adds where the release has one), times the multimodal reduction
    where server_args applies it (v0.4.9 on; up to v0.4.8 the model runner reduces it after printing)."""
    gpu = gpu_catalog.lookup(case["gpu"])
    assert gpu is not None and (gpu.smi_total_mib or gpu.engine_bytes)
    # the plan's own fallback (sglang.py): the engine total where no nvidia-smi total is known (AMD)
    gpu_mb = gpu.smi_total_mib or gpu.engine_bytes / (1 << 20)
    version = sglang_defaults.parse_version(case["engine_version"])
    piecewise = True if case["settings"].get("enable_piecewise_cuda_graph") else None
    picked = sglang_defaults.defaults(gpu_mb, case["tensor_parallel_size"], 1, version, piecewise=piecewise)
    arch = model_catalog.resolve(case["model"].split(" (")[0]).arch
    factor = 1.0
    if arch is not None and arch.vision_params and sglang_defaults.rules(version).multimodal != "runner":
        factor = sglang_defaults.multimodal_factor(version, True, arch.vision_layers, arch.vision_hidden)
    printed = case["measured"]["mem_fraction_static_printed"]
    assert picked.mem_fraction_static * factor == pytest.approx(printed, abs=1e-9)
    if case["measured"].get("chunked_prefill_size"):
        assert picked.chunked_prefill_size == case["measured"]["chunked_prefill_size"]


@pytest.mark.parametrize("case", _with(_sglang_cases(), "dist_init_gib"), ids=lambda c: c["id"])
def test_sglang_distributed_init_memory(case):
    gpu = gpu_catalog.lookup(case["gpu"])
    got, _ = sglang.dist_init_bytes(case["tensor_parallel_size"], 1, gpu)
    assert got / GIB == pytest.approx(case["measured"]["dist_init_gib"], abs=0.01)


def _vllm_cases():
    cases = vllm_logs()
    from calibration_cases import model_ref

    # logs of a model kvlint matches only by a name rule are scored on their own (accuracy.py "matched by name")
    return [
        c
        for c in cases
        if c.get("scorable", True)
        and str(c.get("engine_version") or "").startswith("0.19")
        and model_ref(c["model"])
    ]


def _vllm_plan(case):
    d, why = build_vllm(case, vllm_version(case))
    if d is None:
        pytest.skip(why)
    return resolve(d, Defaults()).plan


@pytest.fixture(scope="module")
def vllm019():
    return _vllm_cases()


def test_vllm_terms_against_the_v019_logs(vllm019):
    """Weights, non-torch memory and the profile run's activation peak, each against the figure
    vLLM 0.19 logged for it ('Model loading took', 'non-torch', 'torch peak memory increase'):
    weights within 2 %, the working-memory terms within 0.25 GiB (0.3 % of an 80 GB GPU). The
    largest gaps today: activation 0.24 GiB (gemma-3-27b), non-torch 0.21 GiB (granite-3.1-8b)."""
    checked = 0
    for case in vllm019:
        d, _ = build_vllm(case, vllm_version(case))
        if d is None or case.get("outcome") != "started":
            continue
        r = resolve(d, Defaults())
        p, m = r.plan, case["measured"]
        # every worker logs its own figures; the calibration quotes rank 0, the first pipeline stage
        act = vllm.activation_bytes(r.model, r.settings, 2.0, last_stage=r.settings.pp == 1)[0]
        assert p.weights_per_gpu / GIB == pytest.approx(m["weights_gib"], rel=0.02), case["id"]
        assert p.term("non-torch") / GIB == pytest.approx(m["non_torch_gib"], abs=0.25), case["id"]
        assert act / GIB == pytest.approx(m["activation_peak_gib"], abs=0.25), case["id"]
        checked += 1
    assert checked >= 15


def test_image_tags_give_the_sglang_and_tgi_version():
    from kvlint.extract.pod.container import image_version

    assert image_version("lmsysorg/sglang:v0.4.6.post1-cu124", "sglang") == "0.4.6.post1"
    assert image_version("vllm/vllm-openai:v0.6.1.post2", "vllm") == "0.6.1"
    assert image_version("ghcr.io/huggingface/text-generation-inference:3.0.1", "tgi") == "3.0.1"
    assert image_version("lmsysorg/sglang:latest", "sglang") is None
    assert image_version("vllm/vllm-openai:v0.10.0", "sglang") is None  # another project's image


def _implied_fraction(m):
    """mem_fraction_static as a log's own figures give it: free after load - free before x (1 - f)
    = K + V, with free before = free after + the weights' 'mem usage'."""
    before = m["avail_after_gib"] + m["weights_gib"]
    return 1 - (m["avail_after_gib"] - 2 * m["k_size_gib"]) / before


@pytest.mark.parametrize(
    "case",
    [
        c
        for c in _with(_sglang_cases(), "avail_after_gib", "weights_gib", "k_size_gib")
        if c["engine_version"] is not None
        and c.get("scorable", True)  # s-066: the fraction may be stated in the part of the log not quoted
        and c["settings"].get("mem_fraction_static") is None
        and c.get("outcome") == "started"
        and gpu_catalog.lookup(str(c["gpu"])) is not None
    ],
    ids=lambda c: c["id"],
)
def test_sglang_release_default_fraction_is_the_one_its_log_implies(case):
    """The default mem_fraction_static the release's rules give on the log's GPU (times its
    multimodal reduction) is the fraction the log's own free-memory figures imply: v0.4.4 on an H100
    and an H200 (s-010, s-003 with the vision-tower x 0.95), v0.5.10 on 4 x B200 (s-009, with the
    prefill CUDA-graph reserve that release adds by default)."""
    gpu = gpu_catalog.lookup(case["gpu"])
    version = sglang_defaults.parse_version(case["engine_version"])
    picked = sglang_defaults.defaults(gpu.smi_total_mib, case["tensor_parallel_size"], 1, version)
    multimodal = "ForConditionalGeneration" in " ".join(map(str, case.get("quotes") or []))
    factor = sglang_defaults.multimodal_factor(version, True, None, None) if multimodal else 1.0
    assert picked.mem_fraction_static * factor == pytest.approx(
        _implied_fraction(case["measured"]), abs=0.003
    )


def test_untagged_sglang_gets_the_newest_read_release_and_says_so():
    """No version: the rules of the newest release read, named as such. On a 24 GB card at TP 4 they
    differ from v0.5.3's (chunked prefill 4096 instead of 2048, graph bs 160, prefill-graph reserve)."""
    newest = sglang_defaults.releases()[-1]
    picked = sglang_defaults.defaults(23034, 4, 1, None)
    assert "no version given" in picked.source and newest.read_at in picked.source
    assert (
        picked.mem_fraction_static == sglang_defaults.defaults(23034, 4, 1, newest.first).mem_fraction_static
    )
    assert (
        picked.mem_fraction_static < sglang_defaults.defaults(23034, 4, 1, (0, 5, 3, 0)).mem_fraction_static
    )


def _refused(case):
    return case.get("outcome") == "failed" and case.get("failure_class") == "negative_kv_budget"


@pytest.mark.parametrize(
    "case",
    [c for c in _with(_sglang_cases(), "avail_after_gib", "weights_gib") if _refused(c)],
    ids=lambda c: c["id"],
)
def test_sglang_refusals_follow_from_the_logged_free_memory(case):
    """A logged 'Not enough memory' refusal is what profile_max_num_token gives from the free memory
    the log states: no token fits. For a multimodal checkpoint on SGLang v0.4.4 (s-006, Gemma 3 AWQ
    on an RTX 4090) the refusal needs model_runner's reduction of the fraction (x 0.95 up to v0.4.4):
    with the printed 0.88 alone the rest would have been positive."""
    m = case["measured"]
    before = int((m["avail_after_gib"] + m["weights_gib"]) * GIB)
    after = int(m["avail_after_gib"] * GIB)
    printed = case["settings"].get("mem_fraction_static") or m["mem_fraction_static_printed"]
    version = sglang_defaults.parse_version(case["engine_version"])
    multimodal = "ForConditionalGeneration" in " ".join(map(str, case.get("quotes") or []))
    defaulted = case["settings"].get("mem_fraction_static") is None
    factor = sglang_defaults.multimodal_factor(version, defaulted, None, None) if multimodal else 1.0
    reduce = factor < 1.0
    fraction = printed * factor
    cell = 1 << 17  # any positive cell: the rest itself is negative
    assert sglang.profile_max_num_token(before, after, fraction, cell) == 0
    if reduce:
        assert sglang.profile_max_num_token(before, after, printed, cell) > 0


@pytest.mark.parametrize("case", _with(_sglang_cases(), "swa_layer_tokens"), ids=lambda c: c["id"])
def test_sglang_sliding_window_pool_ratio_is_the_logged_one(case):
    """'Use sliding window memory pool. full_layer_tokens=N, swa_layer_tokens=M': M / N is the
    swa_full_tokens_ratio kvlint splits a hybrid model's pool with."""
    m = case["measured"]
    assert m["swa_layer_tokens"] / m["max_total_num_tokens"] == pytest.approx(
        sglang.SWA_FULL_TOKENS_RATIO, abs=1e-3
    )


def _cases(engine):
    name, key = {
        "sglang": ("sglang_startup_logs.yaml", "sglang_cases"),
        "tgi": ("tgi_startup_logs.yaml", "tgi_cases"),
    }[engine]
    return load_yaml(DATA / name)[key]


TOKENS = {"sglang": "max_total_num_tokens", "tgi": "max_batch_total_tokens"}


@pytest.mark.parametrize("engine", ["sglang", "tgi"])
def test_every_logged_token_count_is_a_quoted_line(engine):
    """The token count a case scores against is one of the lines quoted from its source, and each
    case carries a link; a case left out of scoring says why."""
    quoted = 0
    for case in _cases(engine):
        assert str(case["source"]["url"]).startswith("https://github.com/"), case["id"]
        assert case["split"] in ("fit", "scored"), case["id"]
        if not case.get("scorable", True):
            assert str(case.get("scorable_reason") or "").strip(), case["id"]
        if case.get("quotes"):
            figure = (case.get("measured") or {}).get(TOKENS[engine])
            if figure is None:
                # a start-up that failed before sizing the cache quotes the engine's refusal instead
                assert case["outcome"] == "failed", case["id"]
                assert any("memory" in str(q) for q in case["quotes"]), case["id"]
            else:
                # a source may print the count with thousands separators ("39,078 tokens")
                assert any(str(figure) in str(q).replace(",", "") for q in case["quotes"]), case["id"]
            quoted += 1
    assert quoted >= 1


@pytest.mark.parametrize("engine", ["sglang", "tgi"])
def test_split_is_fixed_by_source(engine):
    """Every log of one thread / repository sits in one split (the split is the source's, not the case's)."""
    by_source: dict[str, set[str]] = {}
    for case in _cases(engine):
        by_source.setdefault(case["source"]["url"].split("#")[0], set()).add(case["split"])
    assert all(len(splits) == 1 for splits in by_source.values()), by_source


def _tgi_plan(case):
    from calibration_cases import build_tgi

    d, why = build_tgi(case, case.get("engine_version"))
    assert d is not None, why
    return resolve(d, Defaults()).plan


@pytest.mark.parametrize(
    "case",
    _with([c for c in _cases("tgi") if c.get("scorable", True)], "max_batch_total_tokens"),
    ids=lambda c: c["id"],
)
def test_tgi_warmup_logits_term_moves_the_pool_toward_the_logged_batch(case):
    """The warm-up requests ask for prefill logprobs, so the logits of every prefill token are still
    held when TGI measures free memory (tgi.warmup_logits_bytes). Against the batch total the log
    states, the pool with that term is closer than the pool without it."""
    p = _tgi_plan(case)
    logged = case["measured"]["max_batch_total_tokens"]
    term = p.term("warm-up logits")
    assert term > 0
    per_token = p.kv_per_token
    without = p.kv_tokens + term // per_token  # the same pool had the term not been held back
    assert abs(p.kv_tokens - logged) < abs(without - logged)


def _sglang_plan(case):
    from calibration_cases import build_sglang

    d, why = build_sglang(case, case.get("engine_version"))
    assert d is not None, why
    return resolve(d, Defaults()).plan


def _buildable(cases):
    """Cases whose model and GPU kvlint resolves (QwQ-32B of s-001 is not in the catalog)."""
    from calibration_cases import gpu_ref, model_ref

    return [c for c in cases if model_ref(c["model"]) and gpu_ref(c.get("gpu"))]


@pytest.mark.parametrize(
    "case", _buildable(_with(_sglang_cases(), "k_size_gib", "max_total_num_tokens")), ids=lambda c: c["id"]
)
def test_sglang_cell_is_what_the_log_allocated_per_token(case):
    """K + V bytes per token, as the log's 'KV Cache is allocated. #tokens: N, K size: X GB' gives
    them, equal kvlint's per-token cell (2-decimal GB rounding: within 0.5 %). For Gemma 3 this holds
    only because sliding layers keep a full-size pool in SGLang (model_config.is_hybrid_swa_model)."""
    m = case["measured"]
    logged_cell = 2 * m["k_size_gib"] * GIB / m["max_total_num_tokens"]
    assert _sglang_plan(case).kv_per_token == pytest.approx(logged_cell, rel=0.005)


@pytest.mark.parametrize(
    "case", [c for c in _sglang_cases() if "48 GB card" in str(c.get("gpu"))], ids=lambda c: c["id"]
)
def test_ecc_off_48gb_totals_hold_what_a_log_had_free(case):
    """A log with more free memory before loading than an ECC-on 48 GB card gives CUDA at all (s-004,
    47.24 GiB) fits the ECC-off totals kvlint carries for the RTX A6000 and the RTX 6000 Ada."""
    m = case["measured"]
    free_before = (m["avail_after_gib"] + m["weights_gib"]) * GIB
    for ecc_on in ("L40S", "L20"):
        assert gpu_catalog.lookup(ecc_on).engine_bytes < free_before
    for ecc_off in ("RTX A6000", "RTX 6000 Ada"):
        assert free_before < gpu_catalog.lookup(ecc_off).engine_bytes


def test_sglang_classifier_weights_have_a_score_head_not_an_lm_head():
    """The same build and GPU load Llama-3.1-8B-Instruct (s-050) and its sequence-classification
    fine-tune Skywork-Reward-Llama-3.1-8B-v0.2 (s-053): the log's weights differ by the LM head
    (128,256 x 4,096 bf16 = 0.98 GB), which a *ForSequenceClassification checkpoint replaces with a
    num_labels-row score head; kvlint's weights differ by the same amount, and its pool for the
    reward model is the logged one."""
    by_id = {c["id"]: c for c in _sglang_cases()}
    causal, reward = by_id["s-050"], by_id["s-053"]
    logged = causal["measured"]["weights_gib"] - reward["measured"]["weights_gib"]
    planned = (_sglang_plan(causal).weights_per_gpu - _sglang_plan(reward).weights_per_gpu) / GIB
    assert planned == pytest.approx(logged, abs=0.02)
    assert _sglang_plan(reward).kv_tokens == pytest.approx(
        reward["measured"]["max_total_num_tokens"], rel=0.005
    )


B200_POD = """apiVersion: v1
kind: Pod
metadata: {{name: sg}}
spec:
  nodeSelector: {{cloud.google.com/gke-accelerator: nvidia-b200}}
  containers:
    - name: sglang
      image: lmsysorg/sglang:{tag}
      command: ["python3", "-m", "sglang.launch_server"]
      args: {args}
      resources: {{limits: {{nvidia.com/gpu: "1"}}}}
"""


def test_sglang_piecewise_flags_reach_the_default_fraction_by_release():
    """--enable-piecewise-cuda-graph / --piecewise-cuda-graph-max-tokens read from a manifest move the
    default fraction as the release reserves for them: nothing in v0.5.5, max_tokens // 4 MiB in
    v0.5.5.post1-v0.5.6.post2 (s-014's printed 0.851 base on a B200 with the 4096 default)."""
    import json

    from conftest import lint

    def fraction(tag: str, *flags: str) -> float:
        args = json.dumps(["--model-path", "meta-llama/Llama-3.1-8B-Instruct", *flags])
        r = lint(B200_POD.format(tag=tag, args=args))
        assert r.deployments and r.deployments[0].plan is not None, [f.message for f in r.findings]
        return r.deployments[0].plan.utilization

    case = next(c for c in _sglang_cases() if c["id"] == "s-014")
    vit = sglang_defaults.multimodal_factor((0, 5, 5, 3), True, None, 1280)
    logged_base = case["measured"]["mem_fraction_static_printed"] / vit
    assert fraction("v0.5.6", "--enable-piecewise-cuda-graph") == pytest.approx(logged_base, abs=1e-9)
    assert fraction("v0.5.5", "--enable-piecewise-cuda-graph") > logged_base + 0.005  # no reserve yet
    gpu_mb = gpu_catalog.lookup("B200").smi_total_mib
    wider = fraction("v0.5.6", "--enable-piecewise-cuda-graph", "--piecewise-cuda-graph-max-tokens", "8192")
    assert logged_base - wider == pytest.approx((8192 - 4096) // 4 / gpu_mb, abs=0.001)


def test_sglang_dsa_cell_counts_the_indexer_keys_and_reproduces_s061():
    """DeepSeek sparse attention (GLM-5, DeepSeek-V3.2): SGLang's cell adds the lightning indexer's fp8
    keys + fp32 scales, (128 + 4) B per layer, to the MLA latent. s-061 (GLM-5-FP8, fp8_e4m3 KV, 8 x
    MI355X) states 'Load weight begin' 283.50 GB, 'Load weight end' 193.92 GB at the printed 0.908:
    78 x (576 + 132) B per token reproduces its 3,262,823 tokens, the latent alone (44,928 B) does not.
    Every other MLA model keeps the plain latent."""
    assert sglang_dsa.DSA_INDEXER_BYTES == 132
    glm5 = model_catalog.resolve("zai-org/GLM-5-FP8").arch
    assert glm5.family == "glm_moe_dsa" and sglang_dsa.dsa_indexer_bytes(glm5) == 132
    assert sglang_dsa.dsa_indexer_bytes(model_catalog.resolve("deepseek-ai/DeepSeek-V3.2").arch) == 132
    assert sglang_dsa.dsa_indexer_bytes(model_catalog.resolve("deepseek-ai/DeepSeek-V3").arch) == 0
    assert sglang_dsa.dsa_indexer_bytes(model_catalog.resolve("Qwen/Qwen3-8B").arch) == 0
    cell = 78 * (576 + 132)
    got = sglang.profile_max_num_token(int(283.50 * GIB), int(193.92 * GIB), 0.908, cell)
    assert got == pytest.approx(3_262_823, rel=0.01)
    assert (
        sglang.profile_max_num_token(int(283.50 * GIB), int(193.92 * GIB), 0.908, 78 * 576) > 1.2 * 3_262_823
    )
    case = next(c for c in _sglang_cases() if c["id"] == "s-061")
    p = _sglang_plan(case)
    assert p.kv_per_token == cell
    assert p.kv_tokens == pytest.approx(3_262_823, rel=0.03)


def test_sglang_dsa_kv_dtype_default_and_scaled_fp8_layout_by_release_and_gpu():
    """SGLang turns kv_cache_dtype auto into fp8_e4m3 for a DSA model on SM100+ (0.5.8.post1 server_args,
    0.5.17 / 0.5.23 arg_groups/overrides.py), bfloat16 below and on ROCm; from 0.5.17 the cell takes the
    scaled fp8 latent (512 + 16 + 64 x 2 = 656 B) for the backends that read it, the Hopper fp8 default
    flashmla_kv, while trtllm (the SM100 default) and ROCm's kernels keep the raw 576 B."""
    v32 = model_catalog.resolve("deepseek-ai/DeepSeek-V3.2").arch
    h200, b200, mi355 = (gpu_catalog.lookup(g) for g in ("H200", "B200", "MI355X"))
    assert sglang_dsa.dsa_fp8_default(v32, b200) and not sglang_dsa.dsa_fp8_default(v32, h200)
    assert not sglang_dsa.dsa_fp8_default(v32, mi355)
    assert not sglang_dsa.dsa_fp8_default(model_catalog.resolve("deepseek-ai/DeepSeek-V3").arch, b200)
    assert sglang_dsa.dsa_latent_bytes(v32, h200, (0, 5, 17), "fp8_e4m3") == 656
    assert (
        sglang_dsa.dsa_latent_bytes(v32, h200, None, "fp8_e4m3") == 656
    )  # untagged: the newest release read
    assert sglang_dsa.dsa_latent_bytes(v32, h200, (0, 5, 16), "fp8_e4m3") == 0
    assert sglang_dsa.dsa_latent_bytes(v32, b200, (0, 5, 19), "fp8_e4m3") == 0
    assert sglang_dsa.dsa_latent_bytes(v32, mi355, (0, 5, 19), "fp8_e4m3") == 0
    assert sglang_dsa.dsa_latent_bytes(v32, h200, (0, 5, 19), "auto") == 0

    def plan(gpu, version, kv="auto"):
        case = {
            "id": "t",
            "model": "deepseek-ai/DeepSeek-V3.2",
            "gpu": gpu,
            "gpu_count": 8,
            "tensor_parallel_size": 8,
            "settings": {"kv_cache_dtype": kv},
        }
        return _sglang_plan(dict(case, engine_version=version))

    assert plan("B200", "0.5.19").kv_per_token == 61 * (576 + 132)  # auto -> fp8_e4m3, trtllm layout
    assert plan("H200", "0.5.19").kv_per_token == 61 * (1152 + 132)  # auto -> bfloat16
    assert plan("H200", "0.5.19", "fp8_e4m3").kv_per_token == 61 * (656 + 132)
    assert plan("H200", "0.5.16", "fp8_e4m3").kv_per_token == 61 * (576 + 132)


def test_sglang_dsa_fp8_default_reproduces_s064_kv_size():
    """s-064 (GLM-5.2-FP8, RTX PRO 6000 Blackwell = SM120, v0.5.13.post1) stated no --kv-cache-dtype and its
    pool came out torch.float8_e4m3fn with 'KV size 0.21 GB' for 4,096 tokens: kvlint's SGLang plan takes
    fp8 for the unstated dtype and a cell of 78 x (576 + 132) B, which rounds to the logged 0.21."""
    case = next(c for c in _sglang_cases() if c["id"] == "s-064")
    p = _sglang_plan(case)
    assert p.kv_per_token == 78 * (576 + 132)
    assert p.kv_tokens == 4096
    assert round(p.kv_tokens * p.kv_per_token / GIB, 2) == 0.21


def _trtllm_engine_cases():
    cases = load_yaml(DATA / "trtllm_startup_logs.yaml")["trtllm_cases"]
    engine = [
        c for c in cases if c.get("scorable", True) and (c.get("settings") or {}).get("backend") == "trt"
    ]
    return _with(engine, "free_after_engine_gib")


@pytest.mark.parametrize("case", _trtllm_engine_cases(), ids=lambda c: c["id"])
def test_trtllm_decoder_workspace_moves_the_free_memory_toward_the_logged_one(case):
    """On the engine-build path the decoder's layer buffers (sampling.py) are held when the KV cache manager reads
    free memory. Where they are a material term (here over 1 GiB: a large max_batch_size times the vocabulary), the
    free memory with them is closer to the log's "available" than without them; where they are not, they change
    the plan by less than a block of the pool."""
    from calibration_cases import build_trtllm

    d, why = build_trtllm(case, case.get("engine_version"))
    assert d is not None, why
    p = resolve(d, Defaults()).plan
    term = p.term("decoder sampling workspace")
    free = p.gpu_total - sum(t.bytes for t in p.terms)
    logged = case["measured"]["free_after_engine_gib"] * GIB
    if term > GIB:
        assert abs(free - logged) < abs(free + term - logged)
    else:
        assert 0 < term * p.utilization < p.page_bytes * p.num_blocks / 100
