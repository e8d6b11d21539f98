"""vLLM's release table (kvlint/engines/vllm/data/releases.json): each boundary read from the released wheels,
checked through what a deployment's settings and plan come out as on either side of it."""

import pytest
from conftest import lint, vllm_logs, vllm_settings

from kvlint.catalog.gpus import lookup
from kvlint.engines.vllm import versions as vv

DSV2_LITE = "deepseek-ai/DeepSeek-V2-Lite-Chat"
LLAMA4 = "meta-llama/Llama-4-Scout-17B-16E-Instruct"


def _spec(model: str, gpu: str, version: str | None, **fields) -> tuple:
    fields.setdefault("max_context", 8192)
    lines = ["kind: ServingSpec", "name: t", f"model: {model}", f"gpu: {gpu}"]
    if version:
        lines.append(f'engine_version: "{version}"')
    lines += [f"{k}: {v}" for k, v in fields.items()]
    result = lint("\n".join(lines) + "\n", "spec.yaml")
    (r,) = result.deployments
    assert r.settings is not None and r.plan is not None, result.findings
    return r.settings, r.plan


def _pod(
    model: str,
    tag: str,
    args: list[str],
    env: dict[str, str] | None = None,
    gpu: str = "NVIDIA-H100-80GB-HBM3",
) -> tuple:
    env_lines = [f"    - {{name: {k}, value: '{v}'}}" for k, v in (env or {}).items()]
    lines = [
        "apiVersion: v1",
        "kind: Pod",
        "metadata: {name: t}",
        "spec:",
        f"  nodeSelector: {{nvidia.com/gpu.product: {gpu}}}",
        "  containers:",
        "  - name: vllm",
        f"    image: vllm/vllm-openai:{tag}",
        f"    args: [--model, {model}, {', '.join(args if '--max-model-len' in args else ['--max-model-len', '8192', *args])}]",
        *(["    env:", *env_lines] if env_lines else []),
        "    resources: {limits: {nvidia.com/gpu: 8}}",
    ]
    result = lint("\n".join(lines) + "\n", "pod.yaml")
    (r,) = result.deployments
    assert r.settings is not None and r.plan is not None, result.findings
    return r.settings, r.plan, [f.rule for f in result.findings]


def test_every_row_after_the_first_names_the_wheel_of_the_release_it_starts_at():
    first = {}
    for row in vv.rows():
        first.setdefault(row.key, row.since)
        if row.since != first[row.key]:
            assert f"vllm=={'.'.join(map(str, row.since))}:" in row.source, row
    assert "newer than kvlint's table" in vv.describe("batching", (0, 34, 0))


@pytest.mark.parametrize(
    ("gpu", "version", "expected"),
    [
        ("L4", (0, 8, 0), (1024, 2048)),  # 0.8.0-0.8.3: 1024 sequences everywhere
        ("H100", (0, 8, 3), (1024, 8192)),
        ("L4", (0, 8, 4), (256, 2048)),
        ("A100-80GB", (0, 8, 4), (256, 2048)),  # by name: not an H100/H200
        ("A100-80GB", (0, 8, 5), (1024, 8192)),  # by memory, A100 included
        ("A100-80GB", (0, 9, 0), (256, 2048)),
        ("B200", (0, 27, 1), (1024, 8192)),
        ("B200", (0, 28, 0), (1024, 16384)),
        ("MI300X", (0, 28, 0), (1024, 16384)),
        ("H200", (0, 33, 0), (1024, 8192)),  # 139.7 GiB: under 160
        ("H100", None, (1024, 8192)),
    ],
)
def test_batch_defaults_by_release_and_gpu(gpu, version, expected):
    assert vv.default_batching(lookup(gpu), version, "V1", 8192)[:2] == expected


def test_default_utilization_and_graph_subtraction_change_together_in_0_20_0():
    s, p = _spec("meta-llama/Llama-3.1-8B-Instruct", "H100", "0.19.1")
    assert s.utilization == 0.9 and not p.term("CUDA graphs")
    s, p = _spec("meta-llama/Llama-3.1-8B-Instruct", "H100", "0.20.0")
    assert s.utilization == 0.92 and p.term("CUDA graphs") > 0
    assert not vv.subtracts_cuda_graphs((0, 17, 1), env="1")  # no switch before 0.18.0
    assert vv.subtracts_cuda_graphs((0, 18, 0), env="1") and not vv.subtracts_cuda_graphs((0, 19, 0))
    assert not vv.subtracts_cuda_graphs((0, 33, 0), env="0")
    mi300x = lookup("MI300X")
    assert not vv.subtracts_cuda_graphs((0, 25, 1), mi300x) and vv.subtracts_cuda_graphs((0, 26, 0), mi300x)


def test_the_graph_estimate_switch_reaches_the_plan():
    s, p, _ = _pod(
        "meta-llama/Llama-3.1-8B-Instruct", "v0.33.0", [], {"VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS": "0"}
    )
    assert not s.subtract_cuda_graphs and not p.term("CUDA graphs")
    s, p, _ = _pod(
        "meta-llama/Llama-3.1-8B-Instruct", "v0.19.0", [], {"VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS": "1"}
    )
    assert s.subtract_cuda_graphs and p.term("CUDA graphs") > 0


def test_blackwell_captures_up_to_1024_from_0_28_0():
    b200, h100 = lookup("B200"), lookup("H100")
    assert vv.capture_limit((0, 9, 2), h100, 64) == 512  # fixed list before 0.10
    assert vv.capture_limit((0, 10, 0), h100, 64) == 128
    assert vv.capture_limit((0, 27, 1), b200, 1024) == 512
    assert (
        vv.capture_limit((0, 28, 0), b200, 1024) == 1024 and vv.capture_limit((0, 28, 0), h100, 1024) == 512
    )
    _, old = _spec("meta-llama/Llama-3.1-8B-Instruct", "B200", "0.27.1", max_sequences=1024)
    _, new = _spec("meta-llama/Llama-3.1-8B-Instruct", "B200", "0.28.0", max_sequences=1024)
    assert new.term("CUDA graphs") > old.term("CUDA graphs") > 0


def test_mla_block_size_follows_the_default_backend():
    """DeepSeek-V2-Lite on an H100 with v0.19.0 (calibration log): 1,505,552 KV tokens, a multiple of 16 and
    not of 64, so FLASH_ATTN_MLA's block 16 was in use, not FlashMLA's 64 of the releases before 0.18.0."""
    (case,) = [c for c in vllm_logs() if c["model"] == DSV2_LITE and c.get("engine_version") == "0.19.0"]
    logged = case["measured"]["kv_cache_tokens"]
    s, _ = _spec(DSV2_LITE, "H100", "0.19.0")
    assert s.block_size == 16 and logged % s.block_size == 0 and logged % 64
    assert _spec(DSV2_LITE, "H100", "0.17.1")[0].block_size == 64
    assert _spec(DSV2_LITE, "H100", "0.7.3")[0].block_size == 16
    assert [_spec(DSV2_LITE, "B200", v)[0].block_size for v in ("0.10.2", "0.11.0", "0.15.0", "0.18.0")] == [
        16,
        128,
        64,
        32,
    ]
    assert _spec("meta-llama/Llama-3.1-8B-Instruct", "B200", None)[0].block_size == 16
    b200 = lookup("B200")  # FlashInfer MLA only for the qk_nope_head_dim its kernel takes, else CUTLASS's 128
    assert [vv.mla_block_size((0, 16, 0), b200, n)[0] for n in (128, 64)] == [64, 128]
    assert [vv.mla_block_size(v, b200, 192)[0] for v in ((0, 18, 0), (0, 19, 0))] == [128, 32]
    b300 = lookup("B300")  # 10.3: CUTLASS MLA only once the check became is_device_capability_family (0.13.0)
    assert vv.mla_block_size((0, 12, 0), b300)[0] == 16 and vv.mla_block_size((0, 13, 0), b300)[0] == 128


def test_chunked_local_attention_leaves_the_hybrid_manager_in_0_11_to_0_13():
    def hybrid(tag, env=None):
        return _pod(LLAMA4, tag, ['"--tensor-parallel-size"', '"8"'], env)[0].hybrid_kv_cache_manager

    assert hybrid("v0.10.2") and not hybrid("v0.11.0") and not hybrid("v0.13.0") and hybrid("v0.14.0")
    assert hybrid("v0.12.0", {"VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE": "1"})
    assert not hybrid("v0.14.0", {"VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE": "0"})
    assert not hybrid("v0.9.2")  # ChunkedLocalAttentionSpec from 0.10.0: full attention before
    assert not vv.chunked_local_hybrid((0, 9, 2), env="1")


def test_performance_mode_throughput_doubles_the_defaults_from_0_17_0():
    s, *_ = _pod("meta-llama/Llama-3.1-8B-Instruct", "v0.17.0", ["--performance-mode", "throughput"])
    assert (s.max_num_seqs, s.max_batched_tokens) == (2048, 16384)
    s, *_ = _pod("meta-llama/Llama-3.1-8B-Instruct", "v0.16.0", ["--performance-mode", "throughput"])
    assert (s.max_num_seqs, s.max_batched_tokens) == (1024, 8192)


def test_a_default_max_num_seqs_is_capped_by_the_batched_tokens_from_0_11_0():
    s, *_ = _pod("meta-llama/Llama-3.1-8B-Instruct", "v0.11.0", ["--max-num-batched-tokens", '"512"'])
    assert s.max_num_seqs == 512
    s, *_ = _pod("meta-llama/Llama-3.1-8B-Instruct", "v0.10.2", ["--max-num-batched-tokens", '"512"'])
    assert s.max_num_seqs == 1024


def test_hybrid_prefix_caching_default_starts_at_0_28_0_and_never_for_attention_free_models():
    from kvlint.capacity.kv import MAMBA, MAMBA_ALIGN
    from kvlint.engines.vllm.state import _vllm_state_kind
    from kvlint.record import replace

    _, p271 = _spec("Qwen/Qwen3-Next-80B-A3B-Instruct", "H100", "0.27.1", gpus=4, tensor_parallel=4)
    _, p280 = _spec("Qwen/Qwen3-Next-80B-A3B-Instruct", "H100", "0.28.0", gpus=4, tensor_parallel=4)
    state_groups = 3
    assert p280.request_units - p271.request_units == state_groups
    assert any("vllm==0.28.0" in n for n in p280.notes)
    s = replace(vllm_settings(), version=None)
    assert _vllm_state_kind(s)[0] == MAMBA_ALIGN and _vllm_state_kind(s, attention_free=True)[0] == MAMBA


def test_an_untagged_plan_names_the_newest_release_read():
    _, p = _spec("meta-llama/Llama-3.1-8B-Instruct", "H100", None)
    (note,) = [n for n in p.notes if n.startswith("vLLM version unknown")]
    assert "v0.33.0" in note and "v0.20.0" in note


def test_max_model_len_auto_fits_the_context_to_the_pool_from_0_14_0():
    """Llama-3.1-8B on one L4 at its 131,072-token context needs 16 GiB of KV: with --max-model-len auto
    vLLM 0.14+ starts at the largest length one request fits; 0.13 takes no 'auto' and refuses to start
    (tests/test_vllm_max_model_len_auto.py)."""
    args = ["--max-model-len", "auto"]
    s, p, rules = _pod("meta-llama/Llama-3.1-8B-Instruct", "v0.14.0", args, gpu="NVIDIA-L4")
    assert 0 < p.max_model_len < 131_072 == s.max_model_len and p.max_concurrency >= 1
    assert any("lowers max_model_len from 131,072" in n for n in p.notes)
    assert "KV102" not in rules


def test_the_hybrid_manager_sizes_sliding_window_layers_from_0_9_1():
    """Gemma-3-27B at 131,072 tokens: 0.9.0 turns its sliding-window layers into full attention
    (unify_hybrid_kv_cache_specs), 0.9.1 keeps them to the window, so a request needs far fewer blocks."""
    old, p_old = _spec("google/gemma-3-27b-it", "H100", "0.9.0", max_context=131072)
    new, p_new = _spec("google/gemma-3-27b-it", "H100", "0.9.1", max_context=131072)
    assert not old.hybrid_kv_cache_manager and new.hybrid_kv_cache_manager
    assert p_new.request_bytes < p_old.request_bytes / 3  # 14.2 vs 62.0 GiB


def test_a_stated_max_cudagraph_capture_size_shrinks_the_graph_estimate():
    _, default, _ = _pod("meta-llama/Llama-3.1-8B-Instruct", "v0.33.0", [])
    _, small, _ = _pod(
        "meta-llama/Llama-3.1-8B-Instruct", "v0.33.0", ["--max-cudagraph-capture-size", '"32"']
    )
    assert 0 < small.term("CUDA graphs") < default.term("CUDA graphs")
    assert any("captures up to 32 sequences (--max-cudagraph-capture-size)" in t.note for t in small.terms)


def test_chunked_prefill_off_sets_the_batch_to_max_model_len_by_release():
    """--no-enable-chunked-prefill at max_model_len 4,096 on an H100: V1 0.9 chunks anyway (8,192), 0.10-0.11
    batch exactly max_model_len (4,096), 0.12+ the larger of it and the default (8,192)."""
    args = ["--max-model-len", '"4096"', "--no-enable-chunked-prefill"]
    got = [_pod("meta-llama/Llama-3.1-8B-Instruct", t, args)[0] for t in ("v0.9.0", "v0.10.0", "v0.12.0")]
    assert [s.max_batched_tokens for s in got] == [8192, 4096, 8192]
    assert [s.chunked_prefill for s in got] == [True, False, False]


def test_v0_turns_chunked_prefill_on_for_long_contexts_from_0_5_3():
    """Llama-3.1-8B at 131,072 tokens on an H100 under V0: 0.5.3-0.6.4 chunk at 512 tokens, 0.6.5+ at 2,048,
    0.5.2 profiles the whole context; a stated --enable-chunked-prefill false keeps the whole context."""
    args = ["--max-model-len", '"131072"']
    got = {t: _pod("meta-llama/Llama-3.1-8B-Instruct", t, args) for t in ("v0.5.2", "v0.6.4", "v0.6.5")}
    assert [got[t][0].max_batched_tokens for t in got] == [131072, 512, 2048]
    assert got["v0.6.4"][1].term("activation peak") * 20 < got["v0.5.2"][1].term("activation peak")
    off, *_ = _pod("meta-llama/Llama-3.1-8B-Instruct", "v0.6.5", [*args, "--enable-chunked-prefill=false"])
    assert off.max_batched_tokens == 131072
    gemma, *_ = _pod("google/gemma-2-9b-it", "v0.6.5", ["--max-model-len", '"65536"'])
    assert gemma.max_batched_tokens == 65536  # a sliding window keeps V0 off chunked prefill


@pytest.mark.parametrize(
    ("tag", "connector", "kept"),
    [
        ("v0.21.0", '{"kv_connector":"NixlConnector","kv_role":"kv_both"}', False),
        ("v0.22.0", '{"kv_connector":"NixlConnector","kv_role":"kv_both"}', True),
        ("v0.33.0", '{"kv_connector":"LMCacheConnectorV1","kv_role":"kv_both"}', False),
        ("v0.33.0", "not json", False),
        ("v0.33.0", '{"kv_connector":"MultiConnector","kv_connector_extra_config":"x"}', False),
        (
            "v0.33.0",
            '{"kv_connector":"MultiConnector","kv_connector_extra_config":{"connectors":'
            '[{"kv_connector":"NixlConnector"},{"kv_connector":"OffloadingConnector"}]}}',
            True,
        ),
    ],
)
def test_a_kv_connector_turns_the_hybrid_manager_off_unless_it_supports_it(tag, connector, kept):
    """gpt-oss-20b (sliding-window layers) behind a KV connector: off in 0.9.1-0.21, then by the connector class."""
    arg = "'" + connector.replace("'", "''") + "'"
    long = ["--max-model-len", '"131072"']
    s, p, _ = _pod("openai/gpt-oss-20b", tag, [*long, "--kv-transfer-config", arg])
    assert s.hybrid_kv_cache_manager is kept
    base, bp, _ = _pod("openai/gpt-oss-20b", tag, long)
    assert base.hybrid_kv_cache_manager and (p.request_bytes > bp.request_bytes) is not kept


def test_v0_before_0_2_0_batched_a_fixed_2560_tokens():
    assert vv.default_batching(lookup("A100-80GB"), (0, 1, 7), "V0", 4096)[:2] == (256, 2560)
    assert vv.default_batching(lookup("A100-80GB"), (0, 2, 0), "V0", 4096)[:2] == (256, 4096)
