"""A local config.json whose class names or MoE counts have the wrong type (review of this session's readers:
score heads, Grok, ERNIE 4.5 MoE, GLM-4.5V, Kimi-K2.5): a located KV003 naming the key, never an internal
error (KV001 'internal error while linting this file')."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kvlint.catalog.keep_keys import compact

ROOT = Path(__file__).resolve().parents[1]

_REWARD = {
    "architectures": ["Qwen2ForRewardModel"],
    "model_type": "qwen2",
    "hidden_size": 1024,
    "intermediate_size": 2816,
    "num_attention_heads": 16,
    "num_key_value_heads": 16,
    "num_hidden_layers": 4,
    "vocab_size": 1000,
    "max_position_embeddings": 4096,
}
_ERNIE = {
    "architectures": ["Ernie4_5_MoeForCausalLM"],
    "model_type": "ernie4_5_moe",
    "hidden_size": 256,
    "intermediate_size": 512,
    "moe_intermediate_size": 128,
    "moe_k": 2,
    "moe_num_experts": 4,
    "moe_num_shared_experts": 1,
    "moe_layer_start_index": 1,
    "moe_layer_interval": 1,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "num_hidden_layers": 4,
    "vocab_size": 1000,
    "max_position_embeddings": 4096,
}


def _lint(tmp_path: Path, config: dict | None) -> dict:
    if config is not None:  # None: the test wrote the model directory itself
        (tmp_path / "model").mkdir()
        (tmp_path / "model" / "config.json").write_text(json.dumps(config))
    (tmp_path / "d.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: t}\nspec:\n  template:\n    spec:\n"
        "      nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}\n      containers:\n"
        "      - name: vllm\n        image: vllm/vllm-openai:v0.10.0\n"
        "        args: [--model, ./model, --max-model-len, '4096']\n"
        "        resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    cmd = [sys.executable, "-m", "kvlint", "--isolated", "--format", "json", "d.yaml"]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, check=False)
    return json.loads(out.stdout)


@pytest.mark.parametrize(
    ("base", "key", "value", "said"),
    [
        (_REWARD, "architectures", 5, "architectures is '5', not a list of class names"),
        (_REWARD, "architectures", {"a": 1}, "not a list of class names"),
        (_REWARD, "model_type", 5, "model_type is '5', not a name"),
        (_ERNIE, "moe_k", [2], "moe_k [2] is not a number"),
        (_ERNIE, "moe_layer_start_index", {"a": 1}, "moe_layer_start_index"),
        (_ERNIE, "moe_num_shared_experts", "one", "moe_num_shared_experts"),
    ],
)
def test_a_wrong_typed_class_name_or_moe_count_is_kv003_at_the_model_not_an_internal_error(
    tmp_path, base, key, value, said
):
    report = _lint(tmp_path, {**base, key: value})
    rules = [f["rule"] for f in report["findings"]]
    assert "KV001" not in rules, report["findings"]
    (unknown,) = [f for f in report["findings"] if f["rule"] == "KV003"]
    assert said in unknown["message"] and unknown["line"] == 11


def test_compact_keeps_going_on_a_wrong_typed_architectures():
    # `kvlint models pull` compacts what the Hub serves: a config with architectures {"a": 1} is stored, not a crash
    config = {"architectures": {"a": 1}, "id2label": {"0": "x"}, "hidden_size": 8}
    assert compact(config) == {"architectures": {"a": 1}, "hidden_size": 8}  # no score head: no labels kept


@pytest.mark.parametrize(
    ("key", "value", "said"),
    [
        ("num_shared_experts", "1", "n_shared_experts 1 is not a number"),
        ("route_every_n", [1], "moe_layer_freq [1]"),
    ],
)
def test_a_mistral_params_json_moe_count_of_the_wrong_type_is_kv003(tmp_path, key, value, said):
    # Mistral Large 3's params.json (shared experts -> the DeepSeek-V3 shape, b7f807d): a string or list
    # count crashed the `> 0` test or int() (an internal error); now refused by name like a config.json's
    params = {
        "dim": 1024,
        "n_layers": 4,
        "head_dim": 128,
        "hidden_dim": 2048,
        "n_heads": 8,
        "n_kv_heads": 8,
        "vocab_size": 1000,
        "q_lora_rank": 256,
        "kv_lora_rank": 512,
        "qk_nope_head_dim": 128,
        "qk_rope_head_dim": 64,
        "v_head_dim": 128,
        "moe": {
            "num_experts": 8,
            "num_experts_per_tok": 2,
            "expert_hidden_dim": 512,
            "num_shared_experts": 1,
        },
    }
    params["moe"][key] = value
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "params.json").write_text(json.dumps(params))
    report = _lint(tmp_path, None)
    assert "KV001" not in [f["rule"] for f in report["findings"]], report["findings"]
    (unknown,) = [f for f in report["findings"] if f["rule"] == "KV003"]
    assert said in unknown["message"]
