"""vLLM's pool, blocks and defaults against the notes' worked example and the engine's rules."""

from conftest import vllm_settings

from kvlint.catalog.gpus import lookup
from kvlint.catalog.models import resolve
from kvlint.engines.vllm import plan as vllm

GIB = 1 << 30


def settings(**kw):
    return vllm_settings(**kw)


def test_worked_example_20_gib_gives_10240_blocks_and_163840_tokens():
    a = resolve("meta-llama/Llama-3.1-8B-Instruct").arch
    p = vllm.plan(a, lookup("H100"), settings(kv_cache_memory_bytes=20 * GIB))
    assert p.num_blocks == 10_240
    assert p.kv_tokens == 163_840


def test_pool_is_budget_minus_terms():
    a = resolve("meta-llama/Llama-3.1-8B-Instruct").arch
    p = vllm.plan(a, lookup("H100"), settings())
    assert p.budget == int(lookup("H100").engine_bytes * 0.9)
    assert p.kv_pool == p.budget - sum(t.bytes for t in p.terms)
    assert p.num_blocks == p.kv_pool // (16 * 4096 * 32)


def test_fp8_kv_doubles_tokens():
    a = resolve("meta-llama/Llama-3.1-8B-Instruct").arch
    gpu = lookup("H100")
    base, fp8 = vllm.plan(a, gpu, settings()), vllm.plan(a, gpu, settings(kv_cache_dtype="fp8"))
    assert fp8.kv_per_token * 2 == base.kv_per_token
    assert abs(fp8.kv_tokens - 2 * base.kv_tokens) <= 16


def test_batch_defaults_by_gpu_and_version():
    assert vllm.default_batching(lookup("H100"), None, "V1", 8192)[:2] == (1024, 8192)
    assert vllm.default_batching(lookup("A100-80GB"), None, "V1", 8192)[:2] == (
        256,
        2048,
    )  # A100s are excluded
    assert vllm.default_batching(lookup("L4"), None, "V1", 8192)[:2] == (256, 2048)
    assert (
        vllm.default_batching(lookup("L4"), (0, 8, 5), "V1", 8192)[0] == 256
    )  # each release: test_vllm_releases


def test_versions():
    assert vllm.parse_version("v0.10.1.post1") == (0, 10, 1)
    assert vllm.parse_version("latest") is None
    assert vllm.generation((0, 6, 4)) == "V0" and vllm.generation((0, 10, 0)) == "V1"
    assert vllm.generation((0, 9, 0), "0") == "V0" and vllm.generation((0, 12, 0), "0") == "V1"
    assert not vllm.subtracts_cuda_graphs((0, 19, 1)) and vllm.subtracts_cuda_graphs((0, 20, 0))


def test_sliding_window_hybrid_versus_full():
    a = resolve("google/gemma-3-27b-it").arch
    gpu = lookup("H100")
    hybrid = vllm.plan(a, gpu, settings(max_model_len=131072))
    full = vllm.plan(a, gpu, settings(max_model_len=131072, hybrid_kv_cache_manager=False))
    assert hybrid.request_bytes < full.request_bytes / 3  # 52 of 62 layers hold only the 1,024-token window
    assert hybrid.max_concurrency > 3 * full.max_concurrency


def test_largest_len_is_the_one_that_fits():
    a = resolve("meta-llama/Llama-3.1-8B-Instruct").arch
    p = vllm.plan(a, lookup("L4"), settings(max_model_len=131072, max_num_seqs=4, max_batched_tokens=2048))
    assert p.max_concurrency < 1
    fit = p.max_len_that_fits
    assert (
        vllm.plan(
            a, lookup("L4"), settings(max_model_len=fit, max_num_seqs=4, max_batched_tokens=2048)
        ).max_concurrency
        >= 1
    )
    assert (
        vllm.plan(
            a, lookup("L4"), settings(max_model_len=fit + 16, max_num_seqs=4, max_batched_tokens=2048)
        ).max_concurrency
        < 1
    )


def test_moe_experts_are_shared_by_tp_times_dp_ranks_and_the_rest_only_by_tp():
    """vLLM shards each MoE layer over TP x DP GPUs (FusedMoEParallelConfig.make flattens TP across
    DP; with expert parallelism each rank holds ceil(experts / EP) whole experts); attention and
    embeddings are split by TP only. DeepSeek-V3 (256 experts) at TP 1 x DP 16 with EP, as the
    llm-d wide-EP guide runs it, holds about 1/16 of the experts per GPU, not all 671B parameters."""
    a = resolve("deepseek-ai/DeepSeek-V3").arch
    one = vllm.plan(a, lookup("mi300x"), settings()).weights_per_gpu
    wide = vllm.plan(a, lookup("mi300x"), settings(dp=16, expert_parallel=True)).weights_per_gpu
    flat = vllm.plan(a, lookup("mi300x"), settings(dp=16)).weights_per_gpu
    tp16 = vllm.plan(a, lookup("mi300x"), settings(tp=16)).weights_per_gpu
    assert one > 600 * GIB
    assert 45 * GIB < wide < 65 * GIB  # 656B expert params / 16 in fp8 + ~17B others
    assert abs(wide - flat) < 0.01 * wide  # 256 experts divide evenly: EP or TP-sliced, same bytes
    assert tp16 < wide  # TP 16 also splits attention and embeddings
    odd = vllm.plan(a, lookup("mi300x"), settings(dp=24, expert_parallel=True)).weights_per_gpu
    sliced = vllm.plan(a, lookup("mi300x"), settings(dp=24)).weights_per_gpu
    assert odd > sliced  # 256 experts over 24 ranks: some hold ceil(256 / 24) = 11, not 10.67
    dense = resolve("meta-llama/Llama-3.1-8B-Instruct").arch
    assert (
        vllm.plan(dense, lookup("H100"), settings(dp=4)).weights_per_gpu
        == vllm.plan(dense, lookup("H100"), settings()).weights_per_gpu
    )  # no experts: DP replicates the whole model


def _non_torch(gpu: str, tp: int, **kw):
    a = resolve("meta-llama/Llama-3.1-70B-Instruct").arch
    p = vllm.plan(a, lookup(gpu), settings(tp=tp, **kw))
    return next(t for t in p.terms if t.label == "non-torch")


def test_custom_all_reduce_off_on_more_than_two_pcie_gpus_is_said_and_charges_nothing_of_its_own():
    """vLLM turns custom all-reduce off on more than two GPUs not all NVLink-connected
    (vllm==0.19.0:custom_all_reduce.py:152-158); its 24 MiB of buffers are allocated before the memory
    snapshot the non-torch term is measured from (gpu_worker.py:263/:282), so the term holds none of them."""
    pcie, sxm = _non_torch("H100 PCIe", 4), _non_torch("H100", 4)
    assert "custom all-reduce is off" in pcie.note and "PCIe" in pcie.note
    assert "custom all-reduce" not in sxm.note
    assert pcie.bytes == sxm.bytes  # NCCL's share, measured on SXM: no custom all-reduce share to take out
    assert "custom all-reduce" not in _non_torch("H100 PCIe", 2).note  # two PCIe GPUs keep it


def test_disable_custom_all_reduce_flag_and_unsupported_world_size_say_so():
    off = _non_torch("H100", 4, extra={"disable_custom_all_reduce": True})
    assert "--disable-custom-all-reduce" in off.note
    assert "TP 2, 4, 6, 8 only" in _non_torch("H100", 3).note


def test_disable_custom_all_reduce_is_read_from_the_command_line():
    from conftest import gpu_pod, lint

    args = ["--model", "meta-llama/Llama-3.1-70B-Instruct", "--tensor-parallel-size", "4"]
    for flag, said in (([], False), (["--disable-custom-all-reduce"], True)):
        r = lint(gpu_pod("vllm/vllm-openai:v0.19.0", args + flag, gpus=4)).deployments[0]
        note = next(t.note for t in r.plan.terms if t.label == "non-torch")
        assert ("--disable-custom-all-reduce" in note) is said
