"""Model and GPU catalogs: facts agree with their sources; lookups by every name people use."""

import json

import pytest
import yaml_free_loader  # noqa: F401  (see tests/yaml_free_loader.py)
from conftest import shared

from kvlint.catalog import gpus, models
from kvlint.catalog.hf_config import compact, parse_config

GIB = 1 << 30


def test_every_shared_model_config_is_in_the_catalog_verbatim_subset():
    folder = shared("reference", "models")
    index = yaml_free_loader.load(folder / "INDEX.yaml")["models"]
    checked = 0
    for entry in index:
        if entry["file"].endswith("hf_quant_config.json"):
            continue
        config = json.loads((folder / entry["file"]).read_text())
        found = models.lookup(entry["model_id"])
        assert found is not None and found["id"] == entry["model_id"], entry["model_id"]
        assert found["config"] == compact(config), entry["model_id"]
        assert found["source"], entry["model_id"]
        checked += 1
    assert checked >= 48


def test_every_gpu_with_a_sourced_memory_figure_is_in_the_catalog():
    ref = yaml_free_loader.load(shared("reference", "gpus.yaml"))["gpus"]
    for g in ref:
        if g.get("smi_total_mib") or g.get("torch_total_memory_mib") or g.get("torch_total_memory_bytes"):
            spec = gpus.by_id(g["id"])
            assert spec is not None and spec.engine_bytes, g["id"]
            assert spec.engine_bytes <= (g.get("smi_total_mib") or 10**9) * 2**20, g["id"]


@pytest.mark.parametrize(
    ("name", "gpu_id"),
    [
        ("H100", "h100-sxm"),
        ("h100-80gb", "h100-sxm"),
        ("NVIDIA H100 80GB HBM3", "h100-sxm"),
        ("NVIDIA-H100-80GB-HBM3", "h100-sxm"),
        ("nvidia-h100-80gb", "h100-sxm"),
        ("nvidia-l4", "l4"),
        ("L4", "l4"),
        ("Tesla-T4", "t4"),
        ("nvidia-tesla-a100", "a100-40gb-sxm"),
        ("nvidia-a100-80gb", "a100-80gb-sxm"),
        ("NVIDIA-A100-SXM4-80GB-MIG-1g.10gb", "a100-80gb-sxm:1g.10gb"),  # the slice, not the card
        ("a100-80gb:3g.40gb", "a100-80gb-sxm:3g.40gb"),
        ("A10G", "a10g"),
        ("H200", "h200"),
        ("MI300X", "mi300x"),
    ],
)
def test_gpu_aliases(name, gpu_id):
    spec = gpus.lookup(name)
    assert spec is not None and spec.id == gpu_id


def test_ambiguous_names_resolve_to_nothing():
    assert gpus.lookup("A100") is None
    assert "a100-80gb-sxm" in gpus.ambiguous("A100")
    assert gpus.lookup("V100") is None


def test_h100_memory_is_what_the_engine_sees_not_the_marketed_size():
    h100 = gpus.lookup("H100")
    assert 79.1 * GIB < h100.engine_bytes < 79.2 * GIB  # vLLM logs 79.19 GiB; 80 GB marketed = 74.5 GiB
    assert h100.cc_int == 90 and h100.fp8 and h100.bf16
    assert not gpus.lookup("T4").bf16 and gpus.lookup("T4").cc_int == 75


def test_instance_types():
    spec, count, _ = gpus.instance("p5.48xlarge")
    assert (spec.id, count) == ("h100-sxm", 8)
    spec, count, _ = gpus.instance("g2-standard-24")
    assert (spec.id, count) == ("l4", 2)


@pytest.mark.parametrize(
    ("model_id", "layers", "kv_heads", "head_dim", "params_b"),
    [
        ("meta-llama/Llama-3.1-8B-Instruct", 32, 8, 128, 8.03),
        ("Qwen/Qwen2.5-7B-Instruct", 28, 4, 128, 7.62),
        ("Qwen/Qwen3-32B", 64, 8, 128, 32.76),  # head_dim 128, not hidden/heads = 80
        ("google/gemma-2-9b", 42, 8, 256, 9.24),
        ("deepseek-ai/DeepSeek-V3", 61, 1, 576, 671.03),  # MLA: one latent of 512 + 64
        ("mistralai/Mixtral-8x7B-v0.1", 32, 8, 128, 46.70),
        ("openai/gpt-oss-120b", 36, 8, 64, 116.83),
    ],
)
def test_architecture_facts(model_id, layers, kv_heads, head_dim, params_b):
    arch = models.resolve(model_id).arch
    assert (arch.layers, arch.kv_heads, arch.head_dim) == (layers, kv_heads, head_dim)
    assert arch.params / 1e9 == pytest.approx(params_b, abs=0.01)


def test_renamed_and_prefixed_ids_resolve():
    for ref in (
        "meta-llama/Meta-Llama-3.1-8B-Instruct",
        "hf://meta-llama/Llama-3.1-8B-Instruct",
        "https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct",
        "META-LLAMA/llama-3.1-8b-instruct",
    ):
        assert models.resolve(ref).arch.id == "meta-llama/Llama-3.1-8B-Instruct", ref


def test_local_path_matched_by_name():
    res = models.resolve("/models/Qwen3-8B")
    assert res.arch is not None and res.arch.id == "Qwen/Qwen3-8B" and "matched by name" in res.how


def test_local_config_and_index_total_size(tmp_path):
    (tmp_path / "config.json").write_text(
        json.dumps(
            {
                "architectures": ["LlamaForCausalLM"],
                "model_type": "llama",
                "hidden_size": 2048,
                "intermediate_size": 8192,
                "num_attention_heads": 32,
                "num_key_value_heads": 8,
                "num_hidden_layers": 16,
                "vocab_size": 128256,
                "max_position_embeddings": 131072,
                "tie_word_embeddings": True,
                "torch_dtype": "bfloat16",
            }
        )
    )
    (tmp_path / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {"total_size": 2_471_645_184}})
    )
    res = models.resolve(str(tmp_path))
    assert res.arch.checkpoint_bytes == 2_471_645_184
    from kvlint.capacity.weights import weights

    w = weights(res.arch, 1, 1)
    assert w.total == 2_471_645_184 and "total_size" in w.source


def test_hf_cache(tmp_path, monkeypatch):
    snap = tmp_path / "models--acme--tiny" / "snapshots" / "abc123"
    snap.mkdir(parents=True)
    (snap / "config.json").write_text(
        json.dumps(
            {
                "model_type": "llama",
                "hidden_size": 512,
                "num_attention_heads": 8,
                "num_hidden_layers": 4,
                "vocab_size": 32000,
                "max_position_embeddings": 2048,
            }
        )
    )
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    res = models.resolve("acme/tiny")
    assert res.arch is not None and res.how == "local Hugging Face cache" and res.arch.kv_heads == 8


def test_config_without_layers_names_the_key():
    with pytest.raises(ValueError, match="num_hidden_layers"):
        parse_config({"hidden_size": 10, "num_attention_heads": 2}, "x", "y")


def test_max_model_len_derivation_follows_vllm():
    assert (
        models.resolve("meta-llama/Llama-3.1-8B-Instruct").arch.max_positions == 131072
    )  # llama3 rope: stated
    assert models.resolve("deepseek-ai/DeepSeek-V3").arch.max_positions == 163840  # yarn 4096 x 40
    assert (
        models.resolve("google/gemma-3-27b-it").arch.max_positions == 131072
    )  # gemma3: factor not re-applied
    assert models.resolve("microsoft/Phi-3.5-mini-instruct").arch.max_positions == 131072  # longrope


def test_catalog_has_the_shared_models_and_more():
    assert len(models.catalog_ids()) >= 49
