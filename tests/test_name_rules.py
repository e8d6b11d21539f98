"""Derived ids (kvlint/catalog/name_rules.py): real ids from public repositories, each with its true base.

tests/data/derived_ids.txt: every id whose true base kvlint knows must resolve by name to that base's
architecture with the weight format its name states; an id whose base is not catalogued must stay unknown
(never a wrong base). tests/data/not_derived_ids.txt: ids that must not match anything.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.catalog import models, name_audit
from kvlint.catalog.name_rules import family, split_quant, stem

DATA = Path(__file__).parent / "data"


def _rows(name: str) -> list[list[str]]:
    lines = (DATA / name).read_text().splitlines()
    return [
        [c.strip() for c in line.split("|")] for line in lines if line.strip() and not line.startswith("#")
    ]


DERIVED = _rows("derived_ids.txt")
NOT_DERIVED = _rows("not_derived_ids.txt")


def test_tables_are_large_and_distinct():
    ids = [r[0] for r in DERIVED]
    assert len(ids) >= 150 and len(set(ids)) == len(ids)
    assert len(NOT_DERIVED) >= 50 and all(len(r) == 2 and r[1] for r in NOT_DERIVED)
    assert all(len(r) == 4 and r[3] for r in DERIVED), "every row names where it was seen"


def test_derived_ids_resolve_to_their_true_base_and_format():
    judged = name_audit.judge_derived(DERIVED)
    assert judged.wrong == []
    # a base the catalog holds is resolved; rows whose base it lacks stay unknown (judged above)
    assert judged.missed == []
    # Rows whose base the catalog holds (raise the floor as the catalog grows; see the modelres note).
    assert len(judged.right) >= 150, (len(judged.right), judged.unknown_base)


@pytest.mark.parametrize("row", NOT_DERIVED, ids=[r[0] for r in NOT_DERIVED])
def test_not_derived_ids_stay_unknown(row):
    """Catalogued since the row was written: only the same model (its own entry, or a catalogued base of the
    same stem for a quantized copy) may match, never the other model the row names."""
    assert name_audit.judge_not_derived([row]) == []


def test_quantization_suffixes_and_stems():
    assert split_quant("Meta-Llama-3.1-8B-Instruct-quantized.w4a16")[0] == "Meta-Llama-3.1-8B-Instruct"
    assert split_quant("Llama-3.1-8B-Instruct-FP8-KV")[1].kv_dtype == "fp8"
    # GGUF (kvlint/catalog/gguf.py): the base's name; the weights priced only when the ggml type is stated
    name, said = split_quant("Qwen2.5-7B-Instruct-GGUF")
    assert name == "Qwen2.5-7B-Instruct" and said is not None and said.quant is None and said.unpriced
    name, said = split_quant("llama-2-7b.Q8_0.gguf")  # llmaz's playground file (corpus)
    assert name == "llama-2-7b" and said is not None and not said.unpriced
    assert said.quant is not None and said.quant.bits == 34 * 8 / 32  # block_q8_0: fp16 scale + 32 int8
    name, said = split_quant("qwen2.5-7b-instruct-q4_k_m-00001-of-00002.gguf")  # a shard of a split file
    assert name == "qwen2.5-7b-instruct" and said is not None and said.quant is not None
    assert said.quant.bits == 144 * 8 / 256 and said.quant.ggml_file_type == "q4_k_m:q4_k"  # a Q4_K mix
    _, said = split_quant("Llama-3.2-1B-Instruct-F16.gguf")
    assert said is not None and said.quant is None and not said.unpriced  # 16-bit: the base's own size
    _, said = split_quant("model-Q4_0_4_4.gguf")  # an ARM repack type kvlint's table does not hold
    assert said is not None and said.quant is None and "not in kvlint's table" in said.unpriced
    assert split_quant("fp8") == ("fp8", None)  # a marker alone is not a name
    assert stem("Meta-Llama-3.1-70B-Instruct") == stem("Llama-3.1-70B") == "llama-3.1-70b"
    assert stem("Mistral-7B-Instruct-v0.2") != stem("Mistral-7B-v0.3")
    assert stem("gemma-2-9b-it") == "gemma-2-9b" and stem("Llama-2-7b-chat-hf") == "llama-2-7b"
    assert stem("Qwen3-30B-A3B-Instruct-2507") == "qwen3-30b-a3b-2507"  # a dated release is its own
    assert family("Qwen3-30B-A3B-Thinking-2507") == family("Qwen3-30B-A3B") == "qwen3-30b-a3b"


def test_fine_tune_under_an_unknown_org_is_not_matched_but_a_quantized_copy_is():
    assert models._by_name("someone/Llama-3.1-8B-Instruct", has_org=True).arch is None
    hit = models._by_name("someone/Llama-3.1-8B-Instruct-AWQ", has_org=True)
    assert hit.arch is not None and hit.arch.quant is not None and hit.arch.quant.method == "awq"
    assert "quantization suffix -AWQ" in hit.derived


def test_ambiguous_name_stays_unknown_naming_both(monkeypatch):
    models.register_models(
        [
            {"id": "acme/Widget-7B", "source": "test", "config": _cfg(32)},
            {"id": "other/Widget-7B-Instruct", "source": "test", "config": _cfg(40)},
        ]
    )
    try:
        got = models.resolve("/models/Widget-7B-Chat")
        assert got.arch is None and "acme/Widget-7B" in got.how and "other/Widget-7B-Instruct" in got.how
    finally:
        models.register_models([])


def _cfg(layers: int) -> dict:
    return {
        "model_type": "llama",
        "num_hidden_layers": layers,
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "intermediate_size": 14336,
        "vocab_size": 32000,
        "max_position_embeddings": 8192,
    }


@pytest.mark.parametrize(
    ("ident", "base", "rule"),
    [
        ("ZhipuAI/glm-4-9b", "THUDM/glm-4-9b", "organisation ZhipuAI"),  # ModelScope's name for THUDM
        ("zai-org/glm-4-9b", "THUDM/glm-4-9b", "organisation zai-org"),  # THUDM's renamed Hub organisation
        (
            "meta/llama-3.1-8b-instruct",
            "meta-llama/Llama-3.1-8B-Instruct",
            "organisation meta",
        ),  # NIM spelling
        (
            "nvidia/Llama-3.3-Nemotron-Super-49B-v1",
            "nvidia/Llama-3_3-Nemotron-Super-49B-v1",
            "3_3 read as 3.3",
        ),
    ],
)
def test_organisation_aliases_and_version_spelling(ident, base, rule):
    got = models._by_name(ident, has_org=True)
    assert got.arch is not None and got.how == f"matched by name: {base}"
    assert rule in got.derived


@pytest.mark.parametrize(
    "ident", ["someone/glm-4-9b", "metaai/llama-3.1-8b-instruct", "nvidia/Llama-3.3-Nemotron-Super-49B"]
)
def test_other_organisations_and_names_do_not_match(ident):
    assert models._by_name(ident, has_org=True).arch is None


def test_a_bf16_release_is_the_base_of_its_quantized_siblings():
    # NVIDIA publishes NVIDIA-Nemotron-3-Nano-30B-A3B-BF16 beside -FP8 (named in OME's serving values,
    # ../shared/corpus/manifests2/sgl-project__ome__charts__ome-serving__values.yaml); only -BF16 is catalogued.
    got = models.resolve("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-FP8")
    base = models.resolve("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16").arch
    assert got.arch is not None and base is not None
    assert got.arch.quant is not None and got.arch.quant.method == "fp8"
    assert "base released as -BF16/-FP16" in (got.derived or "")
    assert (got.arch.layer_kinds, got.arch.kv_heads, got.arch.state_bytes_per_seq) == (
        base.layer_kinds,
        base.kv_heads,
        base.state_bytes_per_seq,
    )
    # the precision word is a precision, so a BF16 copy of a model published in FP8 is priced unquantized
    v3 = models.resolve("deepseek-ai/DeepSeek-V3").arch
    copy = models.resolve("unsloth/DeepSeek-V3-bf16").arch
    assert v3 is not None and v3.quant is not None and copy is not None and copy.quant is None
    assert stem("NVIDIA-Nemotron-3-Nano-30B-A3B-BF16") == "nvidia-nemotron-3-nano-30b-a3b"
    assert stem("bf16") == "bf16"  # a precision word alone is still a name
