"""Local checkpoints: exact weights from safetensors headers, Mistral params.json, configs as they come."""

from __future__ import annotations

import json
import struct

import pytest

from kvlint.catalog import models, safetensors
from kvlint.catalog.hf_keys import ConfigError

CONFIG = {
    "model_type": "llama",
    "hidden_size": 256,
    "intermediate_size": 512,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "vocab_size": 100,
    "max_position_embeddings": 2048,
}


def write_st(path, tensors):
    sizes = {"BF16": 2, "F32": 4, "I32": 4, "U8": 1, "F8_E4M3": 1}
    header, offset = {}, 0
    for name, (dtype, shape) in tensors.items():
        n = 1
        for d in shape:
            n *= d
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + n * sizes[dtype]]}
        offset += n * sizes[dtype]
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + bytes(offset))
    return offset


def test_local_directory_weights_come_from_the_headers(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(CONFIG))
    stored = write_st(
        tmp_path / "model.safetensors",
        {
            "w.qweight": ("U8", [256, 128]),  # two fp4/int4 values per byte: priced as stored
            "w.scales": ("F8_E4M3", [256, 16]),
            "w.global_scale": ("F32", [1]),
            "embed": ("BF16", [100, 256]),
        },
    )
    res = models.resolve(str(tmp_path))
    assert (
        res.arch is not None
        and res.arch.checkpoint_bytes == stored == 256 * 128 + 256 * 16 + 4 + 100 * 256 * 2
    )
    assert "safetensors headers of model.safetensors" in res.arch.checkpoint_bytes_source
    assert res.arch.kv_heads == 4  # no num_key_value_heads: multi-head attention


def test_index_total_size_is_the_fallback_when_shards_are_absent(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(CONFIG))
    index = {"metadata": {"total_size": 12345}, "weight_map": {"a": "model-00001-of-00002.safetensors"}}
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps(index))
    arch = models.resolve(str(tmp_path)).arch
    assert (
        arch is not None and arch.checkpoint_bytes == 12345 and "total_size" in arch.checkpoint_bytes_source
    )


@pytest.mark.parametrize(
    "raw, problem",
    [
        (b"\x01", "shorter than"),
        (struct.pack("<Q", 1 << 40) + b"{}", "not a safetensors file"),
        (struct.pack("<Q", 10) + b"{}", "cut short"),
        (struct.pack("<Q", 2) + b"[]", "not a JSON object"),
        (struct.pack("<Q", 5) + b"{bad}", "not JSON"),
    ],
)
def test_damaged_headers_are_reported_not_summed(raw, problem):
    with pytest.raises(ConfigError, match=problem):
        safetensors.parse_header(raw, "x.safetensors")


def test_header_that_disagrees_with_itself_is_refused(tmp_path):
    bad = {"t": {"dtype": "BF16", "shape": [10], "data_offsets": [0, 4]}}
    with pytest.raises(ConfigError, match="BF16"):
        safetensors.tensor_bytes(bad, "x")
    past = {"t": {"dtype": "U8", "shape": [10], "data_offsets": [0, 10]}}
    with pytest.raises(ConfigError, match="past the end"):
        safetensors.tensor_bytes(past, "x", data_size=4)
    (tmp_path / "config.json").write_text(json.dumps(CONFIG))
    (tmp_path / "model.safetensors").write_bytes(struct.pack("<Q", 999) + b"{}")
    res = models.resolve(str(tmp_path))
    assert res.arch is None and "does not fit the file" in res.how


def test_mistral_params_json_directory(tmp_path):
    params = {
        "dim": 4096,
        "n_layers": 32,
        "head_dim": 128,
        "hidden_dim": 14336,
        "n_heads": 32,
        "n_kv_heads": 8,
    }
    params.update(vocab_size=32768, moe={"num_experts": 8, "num_experts_per_tok": 2})
    (tmp_path / "params.json").write_text(json.dumps(params))
    res = models.resolve(str(tmp_path))
    arch = res.arch
    assert arch is not None and arch.num_experts == 8 and arch.kv_heads == 8 and arch.layers == 32
    assert res.how.startswith("local directory") and arch.source.endswith("params.json")


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "0", "true"])
def test_non_standard_json_numbers_are_refused_with_the_key(tmp_path, value):
    (tmp_path / "config.json").write_text(
        json.dumps(CONFIG).replace('"num_hidden_layers": 2', f'"num_hidden_layers": {value}')
    )
    res = models.resolve(str(tmp_path))
    assert res.arch is None and "num_hidden_layers" in res.how


def test_llm_config_nesting_reads_the_text_model(tmp_path):
    vlm = {
        "model_type": "internvl_chat",
        "torch_dtype": "bfloat16",
        "llm_config": dict(CONFIG, num_key_value_heads=2),
        "vision_config": {
            "hidden_size": 64,
            "num_hidden_layers": 2,
            "intermediate_size": 128,
            "patch_size": 14,
        },
    }
    (tmp_path / "config.json").write_text(json.dumps(vlm))
    arch = models.resolve(str(tmp_path)).arch
    assert arch is not None and (arch.layers, arch.kv_heads, arch.family) == (2, 2, "llama")
    assert arch.vision_params > 0  # the vision tower's weights are counted, the KV comes from the text model
