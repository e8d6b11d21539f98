"""TensorRT-LLM (kvlint.engines.trtllm): recognised by what runs (trtllm-serve, Dynamo's worker, Triton), its
options read from the command line, and the pool its PyTorch backend sizes (the memory fraction of what is
free after the estimation run, whole blocks, max_seq_len shrunk to what the pool holds)."""

from __future__ import annotations

from conftest import gpu_pod, lint

from kvlint import engines
from kvlint.engines.base import Startup
from kvlint.engines.trtllm.launch import image_version
from kvlint.findings import Severity

IMAGE = "nvcr.io/nvidia/tensorrt-llm/release:1.0.0"
MODEL = "meta-llama/Llama-3.1-8B-Instruct"


def _one(text: str):
    r = lint(text)
    assert len(r.deployments) == 1, [f.message for f in r.findings]
    return r, r.deployments[0]


def test_trtllm_serve_serve_model_reads_the_model_not_the_subcommand():
    _, res = _one(gpu_pod(IMAGE, ["trtllm-serve", "serve", MODEL, "--max_seq_len", "8192"]))
    assert res.deployment.engine.value == "trtllm"
    assert res.deployment.model.value == MODEL
    assert res.settings.max_model_len == 8192


def test_a_stated_free_memory_fraction_reaches_the_plan_and_shrinks_the_pool():
    args = ["trtllm-serve", MODEL, "--max_seq_len", "8192"]
    _, low = _one(gpu_pod(IMAGE, [*args, "--kv_cache_free_gpu_memory_fraction", "0.5"]))
    _, default = _one(gpu_pod(IMAGE, args))
    assert low.settings.utilization == 0.5 and low.settings.utilization_default == ""
    assert default.settings.utilization == 0.9 and "default" in default.settings.utilization_default
    # the fraction applies to what is free after the weights and the estimation run, not to the GPU
    free = default.plan.gpu_total - sum(t.bytes for t in default.plan.terms)
    assert abs(low.plan.kv_pool - free * 0.5) <= low.plan.page_bytes
    assert abs(default.plan.kv_pool - free * 0.9) <= default.plan.page_bytes


def test_the_pool_is_whole_blocks_of_tokens_per_block():
    _, res = _one(gpu_pod(IMAGE, ["trtllm-serve", MODEL, "--max_seq_len", "8192"]))
    p = res.plan
    assert p.block_size == 32 and p.kv_tokens == p.num_blocks * 32
    assert p.kv_pool == p.kv_tokens * p.kv_per_token


def test_a_longer_max_num_tokens_leaves_a_smaller_pool():
    args = ["trtllm-serve", MODEL, "--max_seq_len", "8192"]
    _, small = _one(gpu_pod(IMAGE, [*args, "--max_num_tokens", "2048"]))
    _, large = _one(gpu_pod(IMAGE, [*args, "--max_num_tokens", "32768"]))
    assert large.plan.term("activations") > small.plan.term("activations")
    assert large.plan.kv_pool < small.plan.kv_pool


def test_a_max_seq_len_the_pool_cannot_hold_is_shrunk_and_kv102_says_to_what():
    r, res = _one(
        gpu_pod(IMAGE, ["trtllm-serve", "meta-llama/Llama-3.1-70B-Instruct", "--tp_size", "2"], gpus=2)
    )
    p = res.plan
    assert p.max_model_len == 131072  # inferred from the model, as TensorRT-LLM does when not stated
    assert 0 < p.max_len_that_fits < p.max_model_len and p.max_len_that_fits % 32 == 0
    kv102 = [f for f in r.findings if f.rule == "KV102"]
    assert kv102 and f"starts with a maximum length of {p.max_len_that_fits:,}" in kv102[0].message
    assert engines.get("trtllm").long_sequence(None, None).startup is Startup.SHRINKS


def test_dynamo_worker_options_and_their_variables_are_read():
    text = gpu_pod(
        "nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.6.0",
        ["python3", "-m", "dynamo.trtllm", "--model-path", MODEL, "--tensor-parallel-size", "2"],
        env={"DYN_TRTLLM_FREE_GPU_MEMORY_FRACTION": "0.8", "DYN_TRTLLM_MAX_SEQ_LEN": "16384"},
        gpus=2,
    )
    _, res = _one(text)
    s = res.settings
    assert (s.engine, s.tp, s.utilization, s.max_model_len) == ("trtllm", 2, 0.8, 16384)
    assert res.deployment.engine_version is None  # the tag is Dynamo's release, not TensorRT-LLM's


def test_triton_and_an_unread_options_file_are_said_not_planned():
    triton = gpu_pod(
        "nvcr.io/nvidia/tritonserver:24.12-trtllm-python-py3", ["tritonserver", "--model-repository=/m"]
    )
    r, res = _one(triton)
    assert res.plan is None and any(f.rule == "KV004" and "config.pbtxt" in f.message for f in r.findings)
    named = gpu_pod(IMAGE, ["trtllm-serve", MODEL, "--extra_llm_api_options", "/etc/x.yaml"])
    r, res = _one(named)
    assert res.plan is None and any(f.rule == "KV004" and "/etc/x.yaml" in f.message for f in r.findings)


def test_a_launch_stating_tp_precision_and_max_seq_len_only_plans_with_the_release_defaults():
    """What a profile (NVIDIA NIM's) states of a TensorRT-LLM launch: the rest are trtllm-serve's defaults."""
    _, res = _one(gpu_pod(IMAGE, ["trtllm-serve", MODEL, "--tp_size", "2", "--max_seq_len", "4096"], gpus=2))
    s = res.settings
    assert (s.tp, s.max_model_len, s.max_num_seqs, s.max_batched_tokens, s.block_size) == (
        2,
        4096,
        2048,
        8192,
        32,
    )
    assert res.in_force.max_sequences.origin == "default"


def test_image_tags_name_the_release():
    assert image_version("nvcr.io/nvidia/tensorrt-llm/release:1.0.0") == "1.0.0"
    assert image_version("nvcr.io/nvidia/tensorrt-llm/release:1.2.0rc6") == "1.2.0rc6"
    assert image_version("nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.6.0") is None
    assert image_version("nvcr.io/nvidia/tritonserver:24.12-trtllm-python-py3") is None


OPTIONS_FILE = """apiVersion: v1
kind: ConfigMap
metadata: {name: llm-api}
data:
  config.yaml: |
    tensor_parallel_size: 2
    max_seq_len: 16384
    kv_cache_config:
      free_gpu_memory_fraction: 0.7
      max_tokens: 40000
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: m}
spec:
  template:
    spec:
      nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
      containers:
      - name: server
        image: nvcr.io/nvidia/tensorrt-llm/release:1.0.0
        command: ["trtllm-serve", "meta-llama/Llama-3.1-8B-Instruct", "--extra_llm_api_options", "/etc/llm/config.yaml"]
        volumeMounts: [{name: opts, mountPath: /etc/llm}]
        resources: {limits: {nvidia.com/gpu: 2}}
      volumes: [{name: opts, configMap: {name: llm-api}}]
"""


def test_the_options_file_a_mounted_configmap_holds_is_read_and_wins_over_the_defaults():
    r, res = _one(OPTIONS_FILE)
    s = res.settings
    assert (s.tp, s.max_model_len, s.utilization) == (2, 16384, 0.7)
    assert res.plan.kv_tokens <= 40000 + 32  # kv_cache_config.max_tokens caps the pool (whole blocks)
    assert res.in_force.gpu_memory_utilization.where.line == 5  # located at the ConfigMap's key
    assert not [f for f in r.findings if f.rule == "KV004"]


def test_a_stated_precision_is_the_weights_quantization():
    """A NIM TensorRT-LLM profile's precision (tp2-fp8): FP8 weights, a byte each; NVFP4 half a byte and a scale."""
    from kvlint.catalog import models
    from kvlint.engines.trtllm.quant import quant_of

    engine = engines.get("trtllm")
    arch = models.resolve(MODEL).arch
    assert (
        quant_of("FP8").bits == 8.0 and quant_of("NVFP4").bits == 4.5 and quant_of("w4a16_awq").bits == 4.125
    )
    assert (
        engine.online_quant("fp8").min_capability == 89 and engine.online_quant("nvfp4").min_capability == 100
    )
    _, bf16 = _one(gpu_pod(IMAGE, ["trtllm-serve", MODEL, "--max_seq_len", "4096"]))
    spec = f"kind: ServingSpec\nengine: trtllm\nmodel: {MODEL}\ngpu: H100\ntensor_parallel: 2\nquantization: fp8\nmax_context: 4096\n"
    _, fp8 = _one(spec)
    assert fp8.settings.quantization == "fp8" and fp8.settings.tp == 2
    assert fp8.plan.weights_total < 0.6 * bf16.plan.weights_total
    assert arch is not None


def test_kv_bytes_per_token_and_whole_blocks_are_what_the_logs_print():
    """benchmarks/calibration/trtllm_startup_logs.yaml t-001 ("kv size is 73728", max_tokens 86,711 -> "Allocated
    ... (86720)") and t-002 (9.06 GiB for 422,048 tokens in 13,189 blocks of 32)."""
    from kvlint.catalog import models
    from kvlint.engines.trtllm.fit import kv_per_token, pool_of

    _, gpt_oss = _one(gpu_pod(IMAGE, ["trtllm-serve", "openai/gpt-oss-120b", "--max_seq_len", "8192"]))
    # every layer at full length, sliding-window ones too (max_attention_window not set)
    assert kv_per_token(models.resolve("openai/gpt-oss-120b").arch, gpt_oss.settings) == 73728
    assert pool_of(86711 * 73728 + 1, 73728, 32) == (2710, 86720)
    _, smol = _one(
        gpu_pod(IMAGE, ["trtllm-serve", "HuggingFaceTB/SmolLM2-135M-Instruct", "--max_seq_len", "2049"])
    )
    per_token = kv_per_token(models.resolve("HuggingFaceTB/SmolLM2-135M-Instruct").arch, smol.settings)
    assert per_token == 23040 and pool_of(422040 * per_token, per_token, 32) == (13189, 422048)
    assert pool_of(10**12, 1000, 32, max_tokens=40000) == (1250, 40000)  # kv_cache_config.max_tokens caps it


def test_an_fp8_kv_cache_halves_the_bytes_per_token_the_logs_print():
    """t-004 and t-005 (Llama-3.1-8B with an FP8 KV cache: 52.51 GiB for 860,320 tokens, the estimate's 860,308
    rounded up to blocks of 32; 16.05 GiB for 8,219 blocks of 32) and t-006 (a Qwen3-0.6B-shaped model in bf16:
    68.69 GiB for 643,136 tokens)."""
    from kvlint.catalog import models
    from kvlint.engines.trtllm.fit import kv_per_token, pool_of

    llama = models.resolve(MODEL).arch
    _, fp8 = _one(gpu_pod(IMAGE, ["trtllm-serve", MODEL, "--kv_cache_dtype", "fp8"]))
    _, auto = _one(gpu_pod(IMAGE, ["trtllm-serve", MODEL]))
    per_token = kv_per_token(llama, fp8.settings)
    assert per_token == 65536 == kv_per_token(llama, auto.settings) // 2
    assert pool_of(860308 * per_token + 1, per_token, 32) == (26885, 860320)
    assert round(860320 * per_token / 2**30, 2) == 52.51 and round(8219 * 32 * per_token / 2**30, 2) == 16.05
    _, qwen = _one(gpu_pod(IMAGE, ["trtllm-serve", "Qwen/Qwen3-0.6B"]))
    qwen_per_token = kv_per_token(models.resolve("Qwen/Qwen3-0.6B").arch, qwen.settings)
    assert round(643136 * qwen_per_token / 2**30, 2) == 68.69 and 643136 % 32 == 0


def test_the_engine_build_path_takes_the_fraction_of_what_the_engine_leaves_free():
    """--backend trt runs a TensorRT engine in the C++ executor: no estimation run; the fraction applies to the
    free memory after the engine, its execution context and buffers (kvCacheManager.cpp calculateFreeMemBytes;
    t-005: 17.83 GiB x 0.9 = 16.05 GiB). The same arithmetic as the PyTorch backend, its terms named for the path."""
    args = [MODEL, "--max_num_tokens", "1024", "--max_seq_len", "2048"]
    _, engine = _one(gpu_pod(IMAGE, ["trtllm-serve", *args, "--backend", "trt"]))
    _, torch = _one(gpu_pod(IMAGE, ["trtllm-serve", *args]))
    assert engine.plan.generation == "trt" and torch.plan.generation == "pytorch"
    # the same terms but the executor's runtime and decoder buffers and the decoder layers' workspaces, which only
    # the engine path allocates first
    held = ("runtime and decoder buffers", "decoder sampling workspace")
    buffers = sum(engine.plan.term(label) for label in held)
    assert all(engine.plan.term(label) > 0 and torch.plan.term(label) == 0 for label in held)
    lost = torch.plan.kv_pool - engine.plan.kv_pool
    assert abs(lost - buffers * engine.settings.utilization) <= engine.plan.page_bytes
    free_line = next(line for line in engine.plan.lines if "free_gpu_memory_fraction" in line)
    assert "after the engine, its execution context and buffers" in free_line
    assert not any("estimation run" in line for line in engine.plan.lines)
    assert any("estimation run" in line for line in torch.plan.lines)


def test_an_options_file_number_the_llm_api_rejects_is_an_error_not_an_internal_one():
    """The LLM-API arguments are pydantic fields: `0k` is no integer, `8.5` no batch size, and the launch
    fails validating them. Each is a KV005 error at the ConfigMap, its setting unknown, never a crash in a
    rule that reads the parallel sizes (KV201 took `0k` as the TP and raised)."""
    text = OPTIONS_FILE.replace(
        "tensor_parallel_size: 2", "tensor_parallel_size: 0k\n    max_batch_size: 8.5"
    )
    r = lint(text)
    errors = [f for f in r.findings if f.rule == "KV005" and f.severity is Severity.ERROR]
    assert sorted(f.message.split(" rejects ")[1].split(" in ")[0] for f in errors) == [
        "max_batch_size '8.5'",
        "tensor_parallel_size '0k'",
    ]
    assert not [f for f in r.findings if "internal error" in f.message]
    assert not [f for f in r.findings if f.rule == "KV201"]  # the TP is unknown, not a guess


def test_an_options_file_number_written_as_a_string_is_read_as_pydantic_reads_it():
    r, res = _one(OPTIONS_FILE.replace("tensor_parallel_size: 2", 'tensor_parallel_size: "2"'))
    assert res.settings.tp == 2
    assert not [f for f in r.findings if f.rule == "KV005"]


def test_the_engine_paths_buffers_grow_with_the_batch_and_the_length_it_is_built_for():
    """The C++ executor sizes its logits buffer and the decoder's embedding bias by max_batch_size x the padded
    vocabulary and the decoder's per-slot ids and log probs by max_batch_size x max_seq_len, before it reads free
    memory (runtimeBuffers.cpp setMaxBufferSizes, decoderState.cpp reshapeBuffers): twice the batch, twice the
    buffers; a longer max_seq_len, more of them and a smaller pool."""
    base = ["trtllm-serve", MODEL, "--backend", "trt", "--max_num_tokens", "1024"]

    def buffers(*extra: str):
        _, res = _one(gpu_pod(IMAGE, [*base, *extra]))
        return res.plan.term("runtime and decoder buffers"), res.plan.kv_pool

    small, _ = buffers("--max_batch_size", "256", "--max_seq_len", "2048")
    double, _ = buffers("--max_batch_size", "512", "--max_seq_len", "2048")
    longer, longer_pool = buffers("--max_batch_size", "512", "--max_seq_len", "32768")
    _, short_pool = buffers("--max_batch_size", "512", "--max_seq_len", "2048")
    assert double == 2 * small
    assert longer > double and longer_pool < short_pool


def test_the_new_logs_kv_bytes_per_token_and_blocks_are_what_kvlint_computes():
    """t-008 (GLM-4-9B, fp16 cache: 11.00 GiB for 288,384 tokens in 4,506 blocks of 64), t-009 and t-010
    (Qwen2.5-1.5B and -0.5B: 7.31 GiB for 4,278 blocks of 64, 2.18 GiB for 2,979 blocks of 64)."""
    from kvlint.catalog import models
    from kvlint.engines.trtllm.fit import kv_per_token, pool_of

    cases = (
        ("THUDM/glm-4-9b-chat", 12.22, 0.9, 288384, 11.00),
        ("Qwen/Qwen2.5-1.5B-Instruct", 16.25, 0.45, 273792, 7.31),
        ("Qwen/Qwen2.5-0.5B-Instruct", 8.73, 0.25, 190656, 2.18),
    )
    for model, free_gib, fraction, tokens, pool_gib in cases:
        _, res = _one(
            gpu_pod(IMAGE, ["trtllm-serve", model, "--backend", "trt", "--kv_cache_dtype", "float16"])
        )
        per_token = kv_per_token(models.resolve(model).arch, res.settings)
        assert round(tokens * per_token / 2**30, 2) == pool_gib, model
        # the fraction of the free memory the log prints, in whole blocks of 64, gives the logged tokens to a block
        _, got = pool_of(int(free_gib * 2**30 * fraction), per_token, 64)
        assert abs(got - tokens) <= 64 + 0.005 * 2**30 * fraction / per_token, model


def test_a_stated_int4_weight_only_precision_prices_int4_weights():
    """W4A16 (trtllm-build of a --use_weight_only --weight_only_precision int4 checkpoint, calibration t-007):
    the linear weights at 4 bits and a scale per channel, embeddings and lm_head left at 16 bits."""
    spec = "kind: ServingSpec\nengine: trtllm\nmodel: Qwen/QwQ-32B\ngpu: A100 40GB\nmax_context: 8192\n"
    _, int4 = _one(spec + "quantization: w4a16\n")
    _, fp16 = _one(spec)
    assert int4.settings.quantization == "w4a16"
    assert 0.25 * fp16.plan.weights_total < int4.plan.weights_total < 0.35 * fp16.plan.weights_total


def test_the_engine_path_shrinks_to_the_length_the_cpp_executor_computes():
    """The C++ executor reduces max_seq_len with kvCacheManager.cpp calculateMaxAttentionWindow: with chunked
    context the prompt is max_seq_len - 1 and the output one token, so 82 blocks of 64 start at 1 + 81 x 64 = 5,185
    (a public log: "they are reduced to 5185" ... "Allocated 1.28 GiB for max tokens in paged KV cache (5248)");
    without it the prompt is at most max_num_tokens, and an output longer than the pool gets whole blocks. KV102
    quotes the executor's own words, not the PyTorch backend's."""
    from kvlint.engines.trtllm.compute import engine_window
    from kvlint.record import replace

    _, res = _one(gpu_pod(IMAGE, ["trtllm-serve", MODEL, "--backend", "trt", "--max_seq_len", "8192"]))
    chunked = replace(res.settings, chunked_prefill=True, max_model_len=8192)
    assert engine_window(82, 64, 1, chunked) == 5185
    packed = replace(res.settings, chunked_prefill=False, max_model_len=131072, max_batched_tokens=8192)
    assert engine_window(3038, 32, 1, packed) == 3038 * 32
    big = ["trtllm-serve", "meta-llama/Llama-3.1-70B-Instruct", "--tp_size", "2", "--backend", "trt"]
    r, long = _one(gpu_pod(IMAGE, big, gpus=2))
    assert long.plan.startup is not None and long.plan.startup.shrinks_to == long.plan.max_len_that_fits
    kv102 = [f for f in r.findings if f.rule == "KV102"]
    assert kv102 and "maxSequenceLen is reduced to maxAttentionWindow" in kv102[0].message


def test_a_checkpoint_priced_from_its_name_says_its_kv_quantization_is_unread():
    """t-004: nvidia/Llama-3.1-8B-Instruct-FP8 under trtllm-bench 0.20 (kv_cache_dtype "auto") logged 65,536 B per
    token, an FP8 cache its hf_quant_config chose; kvlint prices the name's FP8 weights but cannot read that
    config, so the plan says so (and stops saying it once the launch states the dtype)."""
    named = "nvidia/Llama-3.1-8B-Instruct-FP8"
    _, auto = _one(gpu_pod(IMAGE, ["trtllm-serve", named]))
    _, stated = _one(gpu_pod(IMAGE, ["trtllm-serve", named, "--kv_cache_dtype", "fp8"]))
    _, base = _one(gpu_pod(IMAGE, ["trtllm-serve", MODEL]))
    said = [n for n in auto.plan.notes if "kv_cache_quant_algo" in n]
    assert len(said) == 1 and "2 B per value" in said[0] and "twice the tokens" in said[0]
    assert not any("kv_cache_quant_algo" in n for n in stated.plan.notes + base.plan.notes)
    assert stated.plan.kv_per_token * 2 == auto.plan.kv_per_token


def test_the_decoder_sampling_workspace_grows_with_the_batch_and_the_vocabulary():
    """The C++ executor's decoder holds, for max_batch_size slots of the padded vocabulary, the workspace's logits
    copy, top-k's scratch buffer and the penalty layer's int32 occurrence counts (sampling.py: gptDecoder.cpp,
    decodingLayerWorkspace.cpp, samplingTopKKernels.h, penaltyLayer.cpp), before the KV cache is sized. Twice the
    batch, twice the buffers (but for the 256-byte alignment); a larger vocabulary at the same batch, more; the
    PyTorch backend has no such term; the pool shrinks by what the term takes times the fraction."""
    base = ["trtllm-serve", "--backend", "trt", "--max_num_tokens", "1024", "--max_seq_len", "2048"]

    def plan(model: str, batch: int, *extra: str):
        _, res = _one(gpu_pod(IMAGE, [base[0], model, *base[1:], "--max_batch_size", str(batch), *extra]))
        return res.plan

    small, double = plan(MODEL, 256), plan(MODEL, 512)
    term = small.term("decoder sampling workspace")
    assert term > 0 and abs(double.term("decoder sampling workspace") - 2 * term) < 1024
    qwen = plan("Qwen/Qwen2.5-7B-Instruct", 256)  # a 152,064-token vocabulary against Llama 3.1's 128,256
    assert qwen.term("decoder sampling workspace") > term
    _, torch = _one(gpu_pod(IMAGE, ["trtllm-serve", MODEL, "--max_batch_size", "256"]))
    assert torch.plan.term("decoder sampling workspace") == 0
    held = double.term("decoder sampling workspace") - term + double.term("runtime and decoder buffers")
    held -= small.term("runtime and decoder buffers")
    lost = small.kv_pool - double.kv_pool
    assert abs(lost - held * 0.9) <= small.page_bytes


def test_the_sampling_workspace_is_safe_for_any_beam_width_and_counts_beam_search_penalties_twice():
    """A beam width of 0 or unset is one beam; beam search (max_beam_width > 1) keeps two penalty workspaces (the
    step before, penaltyLayer.cpp allocateWorkspace) and no sampling layer, whose top-k buffer is not built."""
    from kvlint.catalog import models
    from kvlint.engines.trtllm.sampling import sampling_workspace_bytes, topk_workspace
    from kvlint.record import replace

    _, res = _one(gpu_pod(IMAGE, ["trtllm-serve", MODEL, "--backend", "trt", "--max_batch_size", "64"]))
    arch = models.resolve(MODEL).arch
    one, _ = sampling_workspace_bytes(arch, res.settings)
    for beam in (0, None, 1):
        assert (
            sampling_workspace_bytes(arch, replace(res.settings, extra={**res.settings.extra, "beam": beam}))[
                0
            ]
            == one
        )
    four, note = sampling_workspace_bytes(
        arch, replace(res.settings, extra={**res.settings.extra, "beam": 4})
    )
    vocab = arch.vocab_size  # 128,256: a multiple of any TP this launch has
    assert one == 64 * vocab * 4 + topk_workspace(64, vocab) + 64 * vocab * 4
    assert four == 64 * 4 * vocab * 4 + 2 * 64 * 4 * vocab * 4 and "beam search" in note
