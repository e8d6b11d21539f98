"""Must-not-match: suffixed and dated releases whose makers changed the architecture or the context, and names
from other namespaces, stay unknown rather than borrow a sibling's config (a wrong match is worse than an
unknown: kvlint/catalog/name_rules.py rule 3 strips only -Instruct / -Chat / -Base, -it / -pt / -hf; a
trailing date stamp is part of the name).

- Qwen/Qwen3-235B-A22B-Thinking-2507: a separate release with its own config (262,144 native context, per its
  card) where the catalogued Qwen/Qwen3-235B-A22B states 40,960: -Thinking is not a variant word.
- Qwen/Qwen3-30B-A3B-Thinking-2507: -Thinking and a date stamp are not variant words, so it is never read as the
  catalogued Qwen3-30B-A3B. (deepseek-ai/DeepSeek-V3.1-Terminus and DeepSeek-V3.2-Exp resolve only because each
  now has a row of its own whose source quotes DeepSeek stating the architecture unchanged.)
- zai-org/GLM-4.6-Air: a smaller sibling, not the catalogued GLM-4.6.
- MiniMaxAI/MiniMax-Text-01, MiniMaxAI/MiniMax-M1: the model M1 was trained from, and the family name without
  the thinking budget that each of the two M1 repositories names; neither is read as MiniMax-M1-80k. (A point
  release resolves only to a row of its own: MiniMax-M2.1 now has one, with its source.)
- llama3.1:8b, qwen3:30b: Ollama library tags, a namespace of GGUF builds with no published mapping to a
  Hugging Face config (benchmarks/model_coverage.py sets them aside).
(MLX conversions, mlx-community/...-4bit, resolve to the base's architecture with unpriced weights:
tests/test_mlx_names.py.)
"""

from __future__ import annotations

import pytest

from kvlint.catalog import models


@pytest.mark.parametrize(
    ("name", "sibling"),
    [
        ("Qwen/Qwen3-235B-A22B-Thinking-2507", "Qwen/Qwen3-235B-A22B"),
        ("Qwen/Qwen3-30B-A3B-Thinking-2507", "Qwen/Qwen3-30B-A3B"),
        ("zai-org/GLM-4.6-Air", "zai-org/GLM-4.6"),
        ("MiniMaxAI/MiniMax-Text-01", "MiniMaxAI/MiniMax-M1-80k"),
        ("MiniMaxAI/MiniMax-M1", "MiniMaxAI/MiniMax-M1-80k"),
        ("llama3.1:8b", "meta-llama/Llama-3.1-8B"),
        ("qwen3:30b", "Qwen/Qwen3-30B-A3B"),
    ],
)
def test_a_release_the_maker_changed_stays_unknown(name, sibling):
    assert models.lookup(sibling) is not None  # the sibling it could be mistaken for is catalogued
    assert models.resolve(name).arch is None


@pytest.mark.parametrize(
    ("name", "family", "said"),
    [
        ("deepseek-ai/DeepSeek-V3.1-Terminus", "deepseek-ai/DeepSeek-V3.1", "is the same as DeepSeek-V3"),
        ("deepseek-ai/DeepSeek-V3.2-Exp", "deepseek-ai/DeepSeek-V3.2", "exactly the same architecture"),
    ],
)
def test_a_suffixed_release_resolves_only_through_its_own_row(name, family, said):
    """-Terminus / -Exp are still no variant words: the row of its own, with the maker's statement, is what matches."""
    row = models.lookup(name)
    assert row is not None and row["twin_of"] == family and said in row["source"]
    assert models.resolve(name).arch.layers == models.resolve(family).arch.layers


def test_a_quantized_copy_of_a_catalogued_release_still_matches():
    """The rules that do apply keep applying: a -FP8 suffix names its catalogued base."""
    got = models.resolve("zai-org/GLM-4.6-FP8")
    assert got.arch is not None and got.arch.quant is not None and got.arch.quant.method == "fp8"
    assert got.arch.layers == models.resolve("zai-org/GLM-4.6").arch.layers


# Dated releases seen in real deployments and code (the search tool's find_string hits, file ids; the
# corpus), each beside the undated family config the date-stamp rule used to give them. A dated release
# matches only its own catalogued row; otherwise it is unknown and the message names the nearest config.
DATED = [
    # 262,144 positions where Qwen3-235B-A22B holds 40,960 (issue 24); vLLM's ROCm test (file 204446510)
    # and a DeepInfra deployment note (file 56297048390) serve it
    ("Qwen/Qwen3-235B-A22B-Instruct-2507", "Qwen/Qwen3-235B-A22B"),
    ("Qwen/Qwen3-235B-A22B-Instruct-2507-FP8", "Qwen/Qwen3-235B-A22B"),  # file 204446510
    ("Qwen/Qwen3-30B-A3B-Instruct-2507", "Qwen/Qwen3-30B-A3B"),
    ("QuantTrio/Qwen3-30B-A3B-Instruct-2507-GPTQ-Int8", "Qwen/Qwen3-30B-A3B"),  # file 56828220565
    # 262,144 tokens (Together's model table, file 52624020082) where Kimi-K2-Instruct holds 131,072
    ("moonshotai/Kimi-K2-Instruct-0905", "moonshotai/Kimi-K2-Instruct"),
    # nine corpus manifests serve it; no public copy of its config was found to show R1's geometry
    ("deepseek-ai/DeepSeek-R1-0528", "deepseek-ai/DeepSeek-R1"),
    ("nvidia/DeepSeek-R1-0528-FP4", "deepseek-ai/DeepSeek-R1"),  # file 55439914271
]


@pytest.mark.parametrize(("name", "family_config"), DATED)
def test_a_dated_release_is_not_read_as_its_family(name, family_config):
    assert models.lookup(family_config) is not None
    got = models.resolve(name)
    assert got.arch is None
    assert f"the nearest known config is {family_config} (" in got.how  # said, with its context length
    assert "not used" in got.how


def test_a_dated_release_the_catalog_holds_evidence_for_resolves_to_its_row():
    """DeepSeek-V3-0324: a twin row of V3 whose source is NVIDIA's copy of the release's config."""
    row = models.lookup("deepseek-ai/DeepSeek-V3-0324")
    assert row is not None and row["twin_of"] == "deepseek-ai/DeepSeek-V3"
    assert "nvidia--DeepSeek-V3-0324-NVFP4_config.json" in row["source"]
    got = models.resolve("deepseek-ai/DeepSeek-V3-0324")
    assert got.arch is not None and not got.derived  # the row itself, not a rule
    assert got.arch.max_positions == models.resolve("deepseek-ai/DeepSeek-V3").arch.max_positions


@pytest.mark.parametrize(
    ("name", "release"),
    [
        ("Qwen/Qwen3-4B-Instruct-2507-FP8", "Qwen/Qwen3-4B-Instruct-2507"),  # file 66755851037
        ("RedHatAI/Mistral-Small-24B-Instruct-2501-FP8-dynamic", "mistralai/Mistral-Small-24B-Instruct-2501"),
    ],
)
def test_a_copy_of_a_catalogued_dated_release_matches_that_release(name, release):
    got = models.resolve(name)
    assert got.arch is not None and got.how.startswith(f"matched by name: {release}")
