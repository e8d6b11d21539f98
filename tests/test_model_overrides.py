"""Engine options that change the model (issue 12, item 3) and KV103's noise policy (item 5)."""

from __future__ import annotations

from conftest import lint

YARN = '{"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}}'


def _pod(args: str, image: str = "vllm/vllm-openai:v0.10.1") -> str:
    return f"""
apiVersion: apps/v1
kind: Deployment
metadata: {{name: m}}
spec:
  template:
    spec:
      nodeSelector: {{nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}}
      containers:
        - name: engine
          image: {image}
          args:
{args}
          resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


def test_vllm_hf_overrides_yarn_extends_qwen3_to_131072():
    result = lint(
        _pod(
            f"            - --model=Qwen/Qwen3-8B\n            - --max-model-len=131072\n            - '--hf-overrides={YARN}'"
        )
    )
    (r,) = result.deployments
    assert r.model.max_positions == 131072 and "--hf-overrides" in r.model.max_positions_note
    assert "--hf-overrides" in r.model_how
    assert "KV204" not in {f.rule for f in result.findings}


def test_vllm_rope_scaling_option_is_an_override_of_one_key():
    rope = '{"rope_type": "yarn", "factor": 2.0, "original_max_position_embeddings": 32768}'
    result = lint(
        _pod(
            f"            - --model=Qwen/Qwen3-8B\n            - --max-model-len=131072\n            - '--rope-scaling={rope}'"
        )
    )
    (f,) = [f for f in result.findings if f.rule == "KV204"]
    assert "65,536" in f.message and "--rope-scaling" in f.message


def test_bad_json_override_is_kv005_and_no_capacity_check_runs_on_a_guess():
    result = lint(
        _pod(
            "            - --model=Qwen/Qwen3-8B\n            - --max-model-len=131072\n            - '--hf-overrides={rope_scaling: 4}'"
        )
    )
    rules = [f.rule for f in result.findings]
    assert "KV005" in rules and "KV204" not in rules
    kv005 = next(f for f in result.findings if f.rule == "KV005")
    assert "JSON object" in kv005.message and kv005.where.line == 15


def test_sglang_json_model_override_args():
    args = (
        "            - --model-path=Qwen/Qwen3-8B\n            - --context-length=131072\n"
        f"            - '--json-model-override-args={YARN}'"
    )
    result = lint(
        _pod(args, "lmsysorg/sglang:v0.5.0").replace(
            "args:", "command: [python3, -m, sglang.launch_server]\n          args:"
        )
    )
    (r,) = result.deployments
    assert r.deployment.engine.value == "sglang" and r.model.max_positions == 131072
    assert "KV204" not in {f.rule for f in result.findings}


def test_tgi_rope_factor_changes_the_model_positions():
    args = "            - --model-id=Qwen/Qwen3-8B\n            - --rope-scaling=dynamic\n            - --rope-factor=2"
    result = lint(_pod(args, "ghcr.io/huggingface/text-generation-inference:3.3.4"))
    (r,) = result.deployments
    assert r.deployment.engine.value == "tgi" and r.model.max_positions == 40960 * 2


def test_a_rope_factor_that_scales_the_context_to_nothing_is_a_located_kv005():
    """A factor so small that max_position_embeddings x factor is under one token (found by
    test_campaign_kinds' property search) is reported at the flag, and the plan keeps the model's own
    context, instead of planning a 0-token context."""
    args = "            - --model-id=Qwen/Qwen3-8B\n            - --rope-factor=2e-231"
    result = lint(_pod(args, "ghcr.io/huggingface/text-generation-inference:3.3.4"))
    (r,) = result.deployments
    (f,) = [f for f in result.findings if f.rule == "KV005"]
    assert (
        "maximum context comes out at 0 tokens" in f.message and f.where.line == 14
    )  # the --rope-factor line
    assert r.model.max_positions == 40960 and r.plan is not None and r.plan.max_model_len > 0


def test_ray_engine_kwargs_hf_overrides_dict():
    text = f"""
model_loading_config: {{model_id: Qwen/Qwen3-8B}}
accelerator_type: H100
engine_kwargs:
  max_model_len: 131072
  hf_overrides: {YARN}
"""
    result = lint(text, "llm_config.yaml")
    (r,) = result.deployments
    assert r.model.max_positions == 131072 and "KV204" not in {f.rule for f in result.findings}


def test_kv103_is_a_warning_when_a_limit_is_written_and_an_info_when_both_are_defaults():
    base = "kind: ServingSpec\nname: s\nmodel: Qwen/Qwen3-0.6B\ngpu: L4\n"
    (info,) = [f for f in lint(base).findings if f.rule == "KV103"]
    assert (
        info.severity.label == "info" and "engine defaults" in info.message and "vLLM default" in info.message
    )
    (warn,) = [f for f in lint(base + "max_sequences: 256\n").findings if f.rule == "KV103"]
    assert (
        warn.severity.label == "warning" and "derived from the model config" in warn.message
    )  # assumed, named
