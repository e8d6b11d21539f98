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
from kvlint.catalog.gguf_roles import more_bits, roles


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
