"""TGI's request-size defaults by release (kvlint/engines/tgi/defaults.py), each boundary
from huggingface/text-generation-inference at the tags: launcher/src/main.rs (v2.4.0 `max_default`,
v2.4.1 leaves max_input/max_total to the warm-up), server flash_causal_lm.py `warmup` (the
`max_total_tokens is None` branch by release), models/globals.py PREFILL_CHUNKING ("0" in v2.4.1,
"1" from v3.0.0), models/model.py (chunking only with flashinfer / flashdecoding)."""

from __future__ import annotations

from conftest import lint

from kvlint.catalog.models import resolve as model
from kvlint.engines.tgi.launcher import vlm_prefill_default
from kvlint.resolve import Defaults

LLAMA = "meta-llama/Llama-3.1-8B-Instruct"  # max_position_embeddings 131072, head_dim 128


def _resolved(tag: str, args: tuple[str, ...] = (), env: str = "", model_id: str = LLAMA, gpu: str = "h100"):
    quoted = ", ".join(f"'{a}'" for a in ("--model-id", model_id, *args))
    text = f"""apiVersion: v1
kind: Pod
metadata: {{name: tgi}}
spec:
  containers:
  - name: tgi
    image: ghcr.io/huggingface/text-generation-inference:{tag}
    args: [{quoted}]
{env}    resources:
      limits: {{nvidia.com/gpu: 1}}
"""
    result = lint(text, defaults=Defaults(gpu=gpu))
    (r,) = result.deployments
    assert r.plan is not None, [f.message for f in result.findings]
    return r


def test_v2_4_0_launcher_fixes_the_limits_and_v2_4_1_leaves_them_to_the_warm_up():
    old = _resolved("2.4.0")
    d = old.in_force
    assert (d.max_context.value, d.options["max_input_tokens"].value) == (4096, 4095)
    assert d.options["max_batch_prefill_tokens"].value == 4095 + 50
    assert "v2.0-v2.4.0" in d.max_context.note
    new = _resolved("2.4.1")
    d = new.in_force
    # prefill 4096.min(max_position_embeddings); PREFILL_CHUNKING defaults to "0" in v2.4.1, so the
    # server sets max_total_tokens to the warm-up prompt's 4,096 tokens and max_input_tokens to 4,095
    assert d.options["max_batch_prefill_tokens"].value == 4096
    assert new.plan.max_model_len == 4096 and d.options["max_input_tokens"].value == 4095
    assert "sum(batch.cache_lengths)" in d.max_context.note and "PREFILL_CHUNKING=0" in d.max_context.note


def test_chunked_v2_4_1_and_v3_0_0_take_the_whole_cache_and_v3_0_2_caps_it_at_the_positions():
    env = "    env: [{name: PREFILL_CHUNKING, value: '1'}]\n"
    chunked = _resolved("2.4.1", env=env)
    assert chunked.plan.kv_tokens > 131072  # an 8B model's cache on an H100 holds more than its positions
    assert chunked.plan.max_model_len == chunked.plan.kv_tokens
    v300 = _resolved("3.0.0")
    assert v300.plan.max_model_len == v300.plan.kv_tokens > 131072
    v302 = _resolved("3.0.2")
    assert v302.plan.max_model_len == 131072 < v302.plan.kv_tokens


def test_the_context_the_plan_settles_is_in_force_and_not_written_back():
    """With PREFILL_CHUNKING=1, v2.4.1 takes the whole KV cache as max_total_tokens: the plan settles it
    (more than the model's positions on an H100), and the configuration's GPU; resolve writes neither
    back onto the deployment."""
    r = _resolved("2.4.1", env="    env: [{name: PREFILL_CHUNKING, value: '1'}]\n")
    ctx = r.in_force.max_context
    assert ctx.origin == "default" and ctx.value == r.plan.max_model_len == r.plan.kv_tokens > 131072
    assert r.deployment.max_context is None or r.deployment.max_context.value != ctx.value
    assert r.deployment.gpu is None and (r.in_force.gpu.value, r.in_force.gpu.origin) == ("h100", "inferred")


def test_unchunked_attention_gives_the_warm_up_prompt_as_the_context():
    """ROCm's image runs ATTENTION=paged, which does not chunk prefills (models/model.py): TGI's
    max_total_tokens is then the warm-up's prompt tokens, not the KV cache."""
    env = "    env: [{name: ATTENTION, value: paged}]\n"
    r = _resolved("3.3.5", env=env)
    assert r.plan.max_model_len == r.in_force.options["max_batch_prefill_tokens"].value < r.plan.kv_tokens
    assert "ATTENTION=paged does not chunk prefills" in r.in_force.max_context.note


def test_vlms_stop_chunking_by_release():
    """vlm_causal_lm.py passes support_chunking=False for every VLM up to v3.2; from v3.3
    models/__init__.py does so only for Gemma 3, Mllama, Qwen2-VL and Qwen2.5-VL."""
    gemma = _resolved("3.3.5", model_id="google/gemma-3-27b-it")
    assert gemma.plan.max_model_len == gemma.in_force.options["max_batch_prefill_tokens"].value == 8000
    qwen_vl = model("Qwen/Qwen2.5-VL-7B-Instruct").arch
    assert vlm_prefill_default(qwen_vl, (3, 1, 0)) == 4096
    assert vlm_prefill_default(qwen_vl, (3, 1, 1)) == 10_000
    gemma_arch = model("google/gemma-3-27b-it").arch
    assert (
        vlm_prefill_default(gemma_arch, (3, 1, 1)) == 4096
        and vlm_prefill_default(gemma_arch, (3, 2, 0)) == 8000
    )


def test_max_batch_size_sets_the_v2_prefill_default():
    """v2.0-v2.4.0: `max_batch_size * max_input_tokens` when --max-batch-size is given."""
    r = _resolved(
        "2.2.0", args=("--max-batch-size", "4", "--max-input-tokens", "1000", "--max-total-tokens", "2000")
    )
    assert r.in_force.options["max_batch_prefill_tokens"].value == 4000
    r = _resolved(
        "3.3.5", args=("--max-batch-size", "4", "--max-input-tokens", "1000", "--max-total-tokens", "2000")
    )
    assert r.in_force.options["max_batch_prefill_tokens"].value != 4000


def test_a_prequantized_method_on_an_unquantized_checkpoint_is_a_located_kv005():
    """TGI's launcher documents awq, exl2, gptq and marlin as needing a checkpoint quantized that way,
    and their loaders stop without one ("Cannot load `gptq` weight, make sure the model is already
    quantized"): no plan priced at 16 bits, a KV005 at the --quantize value. Load-time methods (eetq,
    bitsandbytes, fp8) still plan."""
    text = """apiVersion: v1
kind: Pod
metadata: {name: tgi}
spec:
  containers:
  - name: tgi
    image: ghcr.io/huggingface/text-generation-inference:3.3.5
    args: ['--model-id', 'meta-llama/Llama-3.1-8B-Instruct', '--quantize', 'METHOD']
    resources:
      limits: {nvidia.com/gpu: 1}
"""
    result = lint(text.replace("METHOD", "gptq"), defaults=Defaults(gpu="l4"))
    (kv005,) = [f for f in result.findings if f.rule == "KV005"]
    assert "make sure the model is already quantized" in kv005.message and kv005.where.line == 8
    assert result.deployments[0].plan is None
    ok = lint(text.replace("METHOD", "eetq"), defaults=Defaults(gpu="l4"))
    assert ok.deployments[0].plan is not None and not [f for f in ok.findings if f.rule == "KV005"]


def test_v2_1_to_v2_4_0_warm_up_blocks_are_not_added_back_when_every_request_stops_at_once():
    """v2.1.0-v2.4.0 warmup: `batch_num_blocks = batch.num_blocks if batch is not None else 0` after
    generate_token; with max_input = max_total - 1 and a prefill of whole prompts, every warm-up request
    has max_new_tokens 1 and stops, so the blocks it holds are not added back. v2.0.4 adds
    cache_manager.num_blocks; with the same settings its pool is larger by the warm-up's tokens."""
    args = ("--max-input-tokens", "4095", "--max-total-tokens", "4096", "--max-batch-prefill-tokens", "8190")
    old, new = _resolved("2.0.4", args=args, gpu="a100-80gb"), _resolved("2.1.0", args=args, gpu="a100-80gb")
    warm = 2 * 4096  # two prompts of 4,095 tokens, 256 blocks of 16 each
    assert old.plan.kv_tokens - new.plan.kv_tokens == warm
    assert any("not added back" in line for line in new.plan.lines)
    # one request that goes on (a remainder prompt of 1 token, max_new_tokens 4,095): added back
    more = _resolved("2.1.0", args=(*args[:4], "--max-batch-prefill-tokens", "8191"), gpu="a100-80gb")
    assert not any("not added back" in line for line in more.plan.lines)


def test_speculation_turns_prefill_chunking_off():
    """models/model.py (v2.4-v3.3): `if speculate != 0 and support_chunking:` "Prefill chunking does not
    support speculation yet", so max_total_tokens left unset becomes the warm-up prompt's tokens."""
    r = _resolved("3.3.5", args=("--speculate", "2"))
    assert r.plan.max_model_len == r.in_force.options["max_batch_prefill_tokens"].value
    assert "--speculate 2" in r.in_force.max_context.note
    plain = _resolved("3.3.5")
    assert plain.plan.max_model_len == 131072


def test_a_stated_cuda_visible_devices_sets_the_shard_count():
    """launcher/src/main.rs find_num_shards -> num_cuda_devices (v1.0-v3.3.7): with --num-shard unset, the
    entries of CUDA_VISIBLE_DEVICES (read before NVIDIA_VISIBLE_DEVICES) are the shards; --sharded false
    keeps one."""
    text = """apiVersion: v1
kind: Pod
metadata: {name: tgi}
spec:
  nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}
  containers:
  - name: tgi
    image: ghcr.io/huggingface/text-generation-inference:3.3.5
    args: ['--model-id', 'meta-llama/Llama-3.1-8B-Instruct'ARGS]
    env: [{name: CUDA_VISIBLE_DEVICES, value: '0,1'}]
    resources:
      limits: {nvidia.com/gpu: 4}
"""
    (r,) = lint(text.replace("ARGS", "")).deployments
    assert r.in_force.tensor_parallel.value == 2 and r.in_force.tensor_parallel.where.line == 10
    (one,) = lint(text.replace("ARGS", ", '--sharded', 'false'")).deployments
    assert one.in_force.tensor_parallel.value == 1


def test_a_shard_count_from_the_gpus_seen_is_bounded_like_a_stated_tp():
    """--num-shard unset shards over every GPU the container sees; 4,097 of them is a tensor-parallel
    size outside the bounds table, so it is a KV005 at the GPU count and no plan (hypothesis found it:
    the plan was computed with TP 4097)."""
    for limits, env in (("{nvidia.com/gpu: 4097}", ""), ("{nvidia.com/gpu: 1}", "CUDA_VISIBLE_DEVICES")):
        listed = ",".join(str(i) for i in range(4097))
        env_block = f"    env: [{{name: {env}, value: '{listed}'}}]\n" if env else ""
        text = f"""apiVersion: v1
kind: Pod
metadata: {{name: tgi}}
spec:
  containers:
  - name: tgi
    image: ghcr.io/huggingface/text-generation-inference:3.0
    args: ['--model-id', '{LLAMA}']
{env_block}    resources:
      limits: {limits}
"""
        result = lint(text, defaults=Defaults(gpu="h100"))
        (r,) = result.deployments
        assert r.plan is None
        kv005 = [f for f in result.findings if f.rule == "KV005"]
        assert len(kv005) == 1 and "4,097" in kv005[0].message
        assert kv005[0].where.line == (9 if env else 10)
