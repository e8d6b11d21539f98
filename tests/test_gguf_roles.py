"""GGUF weights by tensor role, as llama.cpp's quantizer assigns each role a ggml type per file type
(kvlint.catalog.gguf_roles, after ggml-org/llama.cpp@007dbbf3 src/llama-quant.cpp
llama_tensor_get_type_impl).

Published sizes: localmodels/Llama-2-13B-ggml README "Provided files" (https://huggingface.co/localmodels/
Llama-2-13B-ggml/blob/main/README.md): q3_K_S 5.66 GB, q3_K_M 6.31 GB, q3_K_L 6.93 GB, q4_K_M 7.87 GB, q4_0
7.32 GB, q5_0 8.95 GB — k-quant files of meta-llama/Llama-2-13b-hf made with the same role rules (its "Use
case" column: q4_K_M "Uses GGML_TYPE_Q6_K for half of the attention.wv and feed_forward.w2 tensors, else
GGML_TYPE_Q4_K"). q2_K is left out: that table's q2_K predates today's rule (Q4_K for attn_v and ffn_down).
"""

from __future__ import annotations

import pytest

from kvlint.capacity.weights import weights
from kvlint.catalog import models
from kvlint.catalog.gguf import bits_of
from kvlint.catalog.gguf_roles import fallback, more_bits, roles


def _gguf_bytes(name: str) -> int:
    arch = models.resolve(name).arch
    assert arch is not None and arch.quant is not None and arch.quant.method == "gguf"
    return weights(arch, 1, 1).total


@pytest.mark.parametrize(
    ("ftype", "published_gb"),
    [("Q3_K_S", 5.66), ("Q3_K_M", 6.31), ("Q3_K_L", 6.93), ("Q4_K_M", 7.87), ("Q4_0", 7.32), ("Q5_0", 8.95)],
)
def test_llama2_13b_files_match_their_published_sizes(ftype, published_gb):
    got = _gguf_bytes(f"/models/llama-2-13b.{ftype}.gguf")
    assert got / 1e9 == pytest.approx(published_gb, rel=0.01)


def test_one_type_for_all_is_further_from_the_published_size():
    """Before: every linear at the file type's main type, embeddings and output at 16 bits."""
    arch = models.resolve("/models/llama-2-13b.Q4_K_M.gguf").arch
    assert arch is not None
    linear = sum(p.attn + p.mlp for p in arch.layer_params)
    uniform = linear * bits_of("q4_k") / 8 + (arch.embed_params + arch.lm_head_params) * 2
    published = 7.87e9
    assert abs(_gguf_bytes("/models/llama-2-13b.Q4_K_M.gguf") - published) < abs(uniform - published) / 5


def test_use_more_bits_picks_the_ends_and_every_third_layer():
    n = 40
    picked = [i for i in range(n) if more_bits(i, n)]
    assert picked[:5] == [0, 1, 2, 3, 4] and picked[-5:] == [35, 36, 37, 38, 39]
    assert all((i - n // 8) % 3 == 2 for i in picked if n // 8 <= i < 7 * n // 8)


def test_roles_of_a_q4_k_m_file():
    r = roles("q4_k_m", "q4_k", layers=40, family="llama", hidden=5120, gqa=1, experts=0)
    assert (r.embed, r.output, r.attn_o, r.attn_qk) == ("q4_k", "q6_k", "q4_k", "q4_k")
    assert {r.attn_v[i] for i in range(40) if more_bits(i, 40)} == {"q6_k"}
    assert {r.attn_v[i] for i in range(40) if not more_bits(i, 40)} == {"q4_k"}
    assert r.ffn_down == r.attn_v


def test_q8_0_keeps_its_output_and_mxfp4_moe_is_q8_0_outside_the_experts():
    r = roles("q8_0", "q8_0", layers=24, family="llama", hidden=4096, gqa=4, experts=0)
    assert r.output == r.embed == "q8_0"
    m = roles("mxfp4", "mxfp4", layers=24, family="gpt_oss", hidden=2880, gqa=8, experts=32)
    assert (m.experts, m.output, m.embed, m.default) == ("mxfp4", "q8_0", "q8_0", "q8_0")


def test_an_output_width_the_block_does_not_divide_falls_back_to_q8_0():
    r = roles("q4_k_m", "q4_k", layers=28, family="qwen2", hidden=3584 + 32, gqa=7, experts=0)
    assert (3584 + 32) % 256 and r.output == "q8_0"


def test_must_not_match_a_safetensors_checkpoint_is_priced_as_before():
    """Roles apply to GGUF file types only: an AWQ checkpoint named by suffix keeps one format for its linears."""
    arch = models.resolve("Qwen/Qwen2.5-7B-Instruct-AWQ").arch
    assert arch is not None and arch.quant is not None and not arch.quant.ggml_file_type
    assert bits_of("q6_k") == 210 * 8 / 256  # block_q6_K: 210 bytes per 256 weights


# Files bartowski published, with the llama.cpp build each README names; sizes from each README's "File Size"
# column (GB, 10^9 bytes): https://huggingface.co/bartowski/Meta-Llama-3.1-70B-Instruct-GGUF (b3472),
# https://huggingface.co/bartowski/Codestral-22B-v0.1-GGUF (b3024). They exercise the rules one type at a
# time: the 70B attn_v bump (Q3_K_M, Q4_K_M), the IQ types' own raises (IQ3_XS, IQ3_M, IQ2_M, IQ2_S, IQ1_M).
@pytest.mark.parametrize(
    ("base", "ftype", "published_gb"),
    [
        ("meta-llama/Meta-Llama-3.1-70B-Instruct", "Q4_K_M", 42.52),
        ("meta-llama/Meta-Llama-3.1-70B-Instruct", "Q3_K_M", 34.27),
        ("meta-llama/Meta-Llama-3.1-70B-Instruct", "IQ3_XS", 29.31),
        ("meta-llama/Meta-Llama-3.1-70B-Instruct", "IQ2_M", 24.12),
        ("meta-llama/Meta-Llama-3.1-70B-Instruct", "IQ1_M", 16.75),
        ("mistralai/Codestral-22B-v0.1", "IQ3_M", 10.06),
        ("mistralai/Codestral-22B-v0.1", "IQ2_S", 7.03),
        ("mistralai/Codestral-22B-v0.1", "Q3_K_S", 9.64),
    ],
)
def test_published_files_of_each_mix_match_within_half_a_percent(base, ftype, published_gb):
    assert _gguf_bytes(f"{base}-{ftype}-GGUF") / 1e9 == pytest.approx(published_gb, rel=0.005)


def test_iq2_s_files_are_mostly_iq2_xs_as_llama_cpp_defaults_them():
    """llama_ftype_get_default_type: IQ2_S -> GGML_TYPE_IQ2_XS, IQ2_M -> IQ2_S, IQ3_XS/IQ3_M -> IQ3_S."""
    from kvlint.catalog.gguf import FTYPES

    assert (FTYPES["iq2_s"], FTYPES["iq2_m"], FTYPES["iq3_xs"], FTYPES["iq3_m"]) == (
        "iq2_xs",
        "iq2_s",
        "iq3_s",
        "iq3_s",
    )


def test_a_row_length_the_block_does_not_divide_takes_the_fallback_type():
    """tensor_type_fallback: GLM-4.5-Air's experts are 1408 wide (1408 % 256 = 128), so their ffn_down
    rows cannot be Q4_K blocks: Q5_0; a width not even 32 divides is F16."""
    assert fallback("q4_k", 1408) == "q5_0" and fallback("q4_k", 1536) == "q4_k"
    assert fallback("q6_k", 2880) == "q8_0" and fallback("iq2_xs", 1408) == "iq4_nl"
    assert fallback("q3_k", 1000) == "f16"


def test_a_moe_file_with_narrow_experts_is_priced_with_its_fallback():
    """zai-org/GLM-4.5-Air Q4_K_M: bartowski's file of a GLM-4.5-Air fine-tune (zerofata/GLM-4.5-Iceblink-
    106B-A12B, https://huggingface.co/bartowski/zerofata_GLM-4.5-Iceblink-106B-A12B-GGUF, b6258) is 73.50 GB,
    and holds the multi-token-prediction layer too, which llama.cpp does not load. Without the fallback the
    experts' ffn_down is priced at Q4_K/Q6_K and the weights come out 12 % under the file."""
    arch = models.resolve("zai-org/GLM-4.5-Air-Q4_K_M-GGUF").arch
    assert arch is not None and arch.moe_intermediate_size % 256
    loaded = weights(arch, 1, 1).total
    file_estimate = loaded + arch.mtp_params * loaded / arch.params
    assert file_estimate / 1e9 == pytest.approx(73.50, rel=0.03)
    assert loaded / 1e9 > 0.93 * 73.50


@pytest.mark.parametrize("recipe", ["Q4_K_L", "Q3_K_XL", "Q6_K_L", "Q2_K_L"])
def test_must_not_price_a_quantizers_own_recipe_as_a_llama_cpp_type(recipe):
    """bartowski's _L/_XL files keep embeddings and output at Q8_0 ("Uses Q8_0 for embed and output
    weights"): no llama.cpp file type (tools/quantize/quantize.cpp QUANT_OPTIONS), so the name states no
    layout; kvlint keeps the base's KV facts and leaves the weights unpriced, saying why."""
    res = models.resolve(f"meta-llama/Meta-Llama-3.1-70B-Instruct-{recipe}-GGUF")
    assert res.arch is not None and "not one of llama.cpp's file types" in res.unpriced


@pytest.mark.parametrize(("ftype", "published_gb"), [("Q4_K_M", 11.67), ("Q6_K", 12.04), ("Q4_0", 11.52)])
def test_a_gguf_of_an_mxfp4_checkpoint_keeps_its_experts_mxfp4(ftype, published_gb):
    """gpt-oss stores its routed experts MXFP4; the converter keeps them and llama-quantize will not
    requantize them, so every file type quantizes only the rest. bartowski's files
    (https://huggingface.co/bartowski/openai_gpt-oss-20b-GGUF, b6096: "All quants keep the feed forward
    networks at mxfp4") are 11.5-12.0 GB whatever the type; priced as Q4_K/Q6_K experts they were 13-22 GB."""
    res = models.resolve(f"openai/gpt-oss-20b-{ftype}-GGUF")
    assert res.arch is not None and res.arch.quant is not None and res.arch.quant.kept_experts == "mxfp4"
    assert weights(res.arch, 1, 1).total / 1e9 == pytest.approx(published_gb, rel=0.01)


def test_must_not_keep_experts_of_a_checkpoint_stored_in_16_bit():
    res = models.resolve("zai-org/GLM-4.5-Air-Q4_K_M-GGUF")
    assert res.arch is not None and res.arch.quant is not None and res.arch.quant.kept_experts == ""
    sixteen = models.resolve("openai/gpt-oss-20b-F16-GGUF").arch
    assert sixteen is not None and sixteen.quant is not None and sixteen.quant.method == "mxfp4"
