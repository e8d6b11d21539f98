"""LMDeploy (kvlint.engines.lmdeploy): recognised by `lmdeploy serve api_server`, its options reach the settings
and the plan, the KV cache is the release's share of the free memory in blocks, and a session_len longer than
the blocks hold is cut to what they hold (TurboMind up to v0.14, the PyTorch engine) or fails its requests
(TurboMind from v0.15)."""

from __future__ import annotations

import pytest
from conftest import lint

from kvlint.catalog import models
from kvlint.catalog.gpus import lookup as lookup_gpu
from kvlint.engines.lmdeploy.launch import image_version
from kvlint.engines.lmdeploy.plan import kv_per_token
from kvlint.engines.lmdeploy.releases import parse_version

MODEL = "meta-llama/Llama-3.1-8B-Instruct"


def pod(args: list[str], image: str = "openmmlab/lmdeploy:v0.7.3-cu12", gpu: str = "NVIDIA-L4") -> str:
    import json

    return (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: m}\nspec:\n  template:\n    spec:\n"
        f"      nodeSelector: {{nvidia.com/gpu.product: {gpu}}}\n      containers:\n"
        f"      - name: server\n        image: {image}\n        command: {json.dumps(args)}\n"
        "        resources: {limits: {nvidia.com/gpu: 1}}\n"
    )


def serve(*options: str, model: str = MODEL) -> list[str]:
    return ["lmdeploy", "serve", "api_server", model, *options]


def one(text: str):
    r = lint(text)
    assert len(r.deployments) == 1, [f.message for f in r.findings]
    return r, r.deployments[0]


def test_tags_name_the_release():
    assert image_version("openmmlab/lmdeploy:v0.10.2-cu12") == "0.10.2"
    assert image_version("openmmlab/lmdeploy:v0.5.2.post1") == "0.5.2.post1"
    assert image_version("openmmlab/lmdeploy:latest-cu11") is None
    assert parse_version("0.5.2.post1") == (0, 5, 2, 1)
    assert parse_version("latest") is None


@pytest.mark.parametrize(
    "command",
    [
        serve("--server-port", "23333"),
        ["python3", "-m", "lmdeploy", "serve", "api_server", MODEL],
        ["/opt/py3/bin/lmdeploy", "serve", "api_server", MODEL, "--tp", "1"],
    ],
)
def test_the_api_server_is_lmdeploy_serving_its_first_positional(command):
    _, res = one(pod(command))
    assert res.deployment.engine.value == "lmdeploy"
    assert res.deployment.model.value == MODEL
    assert res.settings.version == "0.7.3" and res.plan is not None


def test_other_lmdeploy_commands_serve_nothing():
    r = lint(pod(["lmdeploy", "convert", "llama3", MODEL]))
    assert all(d.deployment.engine is None or d.deployment.engine.value != "lmdeploy" for d in r.deployments)


def test_a_stated_cache_max_entry_count_is_the_share_of_the_free_memory():
    _, low = one(pod(serve("--cache-max-entry-count", "0.5")))
    _, high = one(pod(serve("--cache-max-entry-count", "0.9")))
    free = low.plan.gpu_total - sum(t.bytes for t in low.plan.terms)
    assert low.settings.utilization == 0.5 and high.settings.utilization == 0.9
    block = low.plan.page_bytes
    assert low.plan.num_blocks == int(free * 0.5) // block
    assert high.plan.num_blocks == int(free * 0.9) // block
    assert high.plan.kv_tokens == high.plan.num_blocks * 64
    line = next(x for x in high.plan.lines if "--cache-max-entry-count" in x)
    assert "0.9 of" in line and "default" not in line


def test_the_release_decides_the_default_share_and_what_it_is_of():
    _, new = one(pod(serve(), image="openmmlab/lmdeploy:v0.7.3"))
    _, old = one(pod(serve(), image="openmmlab/lmdeploy:v0.2.0"))
    assert (new.settings.utilization, old.settings.utilization) == (0.8, 0.5)
    assert "(LMDeploy default)" in next(x for x in new.plan.lines if "--cache-max-entry-count" in x)
    # v0.2.0: half of the whole GPU, in blocks of 128 tokens
    assert old.plan.block_size == 128
    assert old.plan.num_blocks == int(old.plan.gpu_total * 0.5) // old.plan.page_bytes


def test_kv_int8_and_int4_keep_a_scale_and_zero_per_token_and_head():
    arch = models.resolve(MODEL).arch
    _, int8 = one(pod(serve("--quant-policy", "8")))
    _, int4 = one(pod(serve("--quant-policy", "4")))
    _, plain = one(pod(serve()))
    heads, dim, layers = arch.kv_heads, arch.head_dim, arch.attention_layers
    assert plain.plan.kv_per_token == layers * 2 * heads * dim * 2
    assert int8.plan.kv_per_token == layers * 2 * heads * (dim + 4)
    assert int4.plan.kv_per_token == layers * 2 * heads * (dim // 2 + 4)
    assert kv_per_token(arch, int8.settings) == int8.plan.kv_per_token


def test_a_quant_policy_the_release_lacks_is_refused_at_the_option():
    text = pod(serve("--quant-policy", "fp8"))
    r = lint(text)
    said = [f for f in r.findings if f.rule == "KV005" and "--quant-policy" in f.message]
    assert (
        said
        and said[0].where.line
        == text.splitlines().index(next(x for x in text.splitlines() if "fp8" in x)) + 1
    )
    _, res = one(pod(serve("--quant-policy", "fp8"), image="openmmlab/lmdeploy:v0.14.0"))
    assert res.settings.kv_cache_dtype == "fp8"


def test_the_default_batch_is_the_release_s_for_the_gpu():
    _, h100 = one(pod(serve(), image="openmmlab/lmdeploy:v0.10.2", gpu="NVIDIA-H100-80GB-HBM3"))
    _, h100_old = one(pod(serve(), image="openmmlab/lmdeploy:v0.6.0", gpu="NVIDIA-H100-80GB-HBM3"))
    _, l4 = one(pod(serve(), image="openmmlab/lmdeploy:v0.10.2"))
    _, older = one(pod(serve(), image="openmmlab/lmdeploy:v0.5.3", gpu="NVIDIA-H100-80GB-HBM3"))
    assert (h100.settings.max_num_seqs, h100_old.settings.max_num_seqs) == (1024, 512)
    assert (l4.settings.max_num_seqs, older.settings.max_num_seqs) == (128, 128)


def test_a_session_longer_than_the_blocks_is_cut_to_them_and_kv102_says_so():
    r, res = one(pod(serve("--session-len", "131072")))
    p = res.plan
    assert p.kv_tokens < 131072
    found = [f for f in r.findings if f.rule == "KV102"]
    assert found, [f.message for f in r.findings]
    assert f"starts with a maximum length of {p.kv_tokens:,}" in found[0].message
    assert f"`session_len` truncated to {p.kv_tokens}" in found[0].message
    assert f"--session-len {p.kv_tokens}" in (found[0].fix or "")


def test_turbomind_from_v0_15_keeps_session_len_and_fails_the_request():
    r, res = one(pod(serve("--session-len", "131072"), image="openmmlab/lmdeploy:v0.15.0"))
    found = [f for f in r.findings if f.rule == "KV102"]
    assert found and "can never schedule" in found[0].message
    assert res.plan.max_len_that_fits == res.plan.kv_tokens


def test_the_pytorch_engine_reserves_the_logits_and_serves_a_block_less():
    arch = models.resolve(MODEL).arch
    r, res = one(
        pod(serve("--backend", "pytorch", "--session-len", "131072"), image="openmmlab/lmdeploy:v0.10.2")
    )
    p = res.plan
    reserve = p.term("runtime reserve")
    assert reserve == (8192 + 2 * res.settings.max_num_seqs) * arch.vocab_size * 2
    free = p.gpu_total - p.term("weights") - p.term("CUDA context") - reserve
    assert p.num_blocks == int(free * 0.8) // p.page_bytes
    assert p.max_len_that_fits == p.kv_tokens - 64
    found = [f for f in r.findings if f.rule == "KV102"]
    assert found and f"starts with a maximum length of {p.kv_tokens - 64:,}" in found[0].message
    # before v0.10 the reserve was 7 bytes a vocabulary entry per prefill token; on an L4 8192 of them leave
    # no room for 16 blocks, so the engine halves max_prefill_token_num until they fit
    _, old = one(pod(serve("--backend", "pytorch"), image="openmmlab/lmdeploy:v0.7.3"))
    assert old.plan.term("runtime reserve") == 4096 * arch.vocab_size * 7
    assert any("max_prefill_token_num to 4,096" in n for n in old.plan.notes)
    _, h100 = one(
        pod(serve("--backend", "pytorch"), image="openmmlab/lmdeploy:v0.7.3", gpu="NVIDIA-H100-80GB-HBM3")
    )
    assert h100.plan.term("runtime reserve") == 8192 * arch.vocab_size * 7


def test_options_it_does_not_have_and_values_it_refuses_are_located():
    text = pod(serve("--max-model-len", "4096", "--backend", "vllm"))
    r = lint(text)
    messages = [f.message for f in r.findings if f.rule == "KV005"]
    assert any("--max-model-len" in m and "unrecognized arguments" in m for m in messages), messages
    assert any("--backend 'vllm'" in m for m in messages), messages


def test_tensor_parallel_splits_the_kv_heads():
    _, one_gpu = one(pod(serve()))
    _, two = one(pod(serve("--tp", "2")))
    assert two.plan.kv_per_token * 2 == one_gpu.plan.kv_per_token
    assert two.plan.weights_per_gpu < one_gpu.plan.weights_per_gpu
    assert lookup_gpu("L4") is not None


def test_before_v0_4_1_a_count_of_one_or_more_is_the_block_count():
    _, res = one(pod(serve("--cache-max-entry-count", "100"), image="openmmlab/lmdeploy:v0.3.0"))
    assert (res.plan.num_blocks, res.plan.kv_tokens) == (100, 6400)
    r = lint(pod(serve("--cache-max-entry-count", "100"), image="openmmlab/lmdeploy:v0.7.3"))
    assert any(f.rule == "KV005" and "between 0 and 1" in f.message for f in r.findings)


@pytest.mark.parametrize(("image", "written"), [("v0.7.3", "8"), ("v0.14.0", "fp8")])
def test_kv102_offers_the_kv_quantization_the_release_takes(image, written):
    r, res = one(pod(serve("--session-len", "65536"), image=f"openmmlab/lmdeploy:{image}"))
    (found,) = [f for f in r.findings if f.rule == "KV102"]
    assert f"--quant-policy {written} (halves KV per token)" in (found.fix or "")
    assert "fp8" not in (found.fix or "") or written == "fp8"


def test_the_default_session_len_is_the_config_s_length_unscaled():
    # internlm2_5-7b-chat: max_position_embeddings 32768 with dynamic RoPE x2.0, which vLLM scales and
    # LMDeploy's _get_and_verify_max_len does not
    arch = models.resolve("internlm/internlm2_5-7b-chat").arch
    assert arch.max_positions == 2 * arch.config_positions
    _, res = one(pod(serve(model="internlm/internlm2_5-7b-chat")))
    assert res.settings.max_model_len == arch.config_positions
    assert "RoPE scaling not applied" in res.in_force.max_context.note


@pytest.mark.parametrize(
    ("image", "refused"), [("openmmlab/lmdeploy:v0.6.4", True), ("openmmlab/lmdeploy:v0.7.3-cu12", False)]
)
def test_tp_above_the_kv_heads_is_refused_before_v0_7_and_replicates_from_it(image, refused):
    """Llama 3.1 8B has 8 KV heads. TurboMind's converter asserted kv_head_num % tp == 0 up to v0.6.4 and
    repeats each head when TP is a multiple of the count from v0.7.0 (PR #2874): TP 16 is a KV202 error
    naming LMDeploy and --tp on the first, and a KV203 replication info on the second. (The error used to
    fire on every release and call the engine TGI and its option --num-shard.)"""
    text = pod(serve("--tp", "16"), image=image).replace("nvidia.com/gpu: 1", "nvidia.com/gpu: 16")
    r = lint(text)
    kv202 = [f for f in r.findings if f.rule == "KV202"]
    if refused:
        (f,) = kv202
        assert f.message.startswith("8 KV heads do not divide by --tp 16: LMDeploy shards the KV heads")
        assert "TGI" not in f.message and "--num-shard" not in f.message
    else:
        assert not kv202 and [f.rule for f in r.findings if f.rule == "KV203"] == ["KV203"]


def test_kv201_offers_no_tp_the_release_would_refuse():
    """Idle GPUs under LMDeploy v0.6.4: KV201's "raise --tp" is offered only at a TP that release's TurboMind
    takes (the KV heads must divide by it there), the same release-aware check KV202 makes."""
    for image, offered in (("openmmlab/lmdeploy:v0.6.4", False), ("openmmlab/lmdeploy:v0.7.3-cu12", True)):
        text = pod(serve("--tp", "8"), image=image).replace("nvidia.com/gpu: 1", "nvidia.com/gpu: 16")
        (f,) = [f for f in lint(text).findings if f.rule == "KV201"]
        assert ("raise --tp to 16" in (f.fix or "")) is offered, (image, f.fix)
