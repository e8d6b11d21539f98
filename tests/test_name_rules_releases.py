"""Must-not-match: suffixed and dated releases whose makers changed the architecture or the context, and names
from other namespaces, stay unknown rather than borrow a sibling's config (a wrong match is worse than an
unknown: kvlint/catalog/name_rules.py rule 3 strips only -Instruct / -Chat / -Base, -it / -pt / -hf and a
trailing date stamp).

- Qwen/Qwen3-235B-A22B-Thinking-2507: a separate release with its own config (262,144 native context, per its
  card) where the catalogued Qwen/Qwen3-235B-A22B states 40,960: -Thinking is not a variant word.
- deepseek-ai/DeepSeek-V3.1-Terminus, deepseek-ai/DeepSeek-V3.2-Exp: suffixed releases; -Terminus / -Exp are
  not variant words, so they are never read as the catalogued V3.1 / V3.2.
- zai-org/GLM-4.6-Air, MiniMaxAI/MiniMax-M2.1: a smaller sibling and a point release, not the catalogued
  GLM-4.6 / MiniMax-M2.
- llama3.1:8b, qwen3:30b: Ollama library tags, a namespace of GGUF builds with no published mapping to a
  Hugging Face config (benchmarks/model_coverage.py sets them aside).
- mlx-community/...-4bit: an MLX conversion; its 4-bit format is not one of the name rules' quantization
  suffixes, so it is not priced as the 16-bit base.
"""

from __future__ import annotations

import pytest

from kvlint.catalog import models


@pytest.mark.parametrize(
    ("name", "sibling"),
    [
        ("Qwen/Qwen3-235B-A22B-Thinking-2507", "Qwen/Qwen3-235B-A22B"),
        ("deepseek-ai/DeepSeek-V3.1-Terminus", "deepseek-ai/DeepSeek-V3.1"),
        ("deepseek-ai/DeepSeek-V3.2-Exp", "deepseek-ai/DeepSeek-V3.2"),
        ("zai-org/GLM-4.6-Air", "zai-org/GLM-4.6"),
        ("MiniMaxAI/MiniMax-M2.1", "MiniMaxAI/MiniMax-M2"),
        ("llama3.1:8b", "meta-llama/Llama-3.1-8B"),
        ("qwen3:30b", "Qwen/Qwen3-30B-A3B"),
        ("mlx-community/Qwen3-30B-A3B-4bit", "Qwen/Qwen3-30B-A3B"),
    ],
)
def test_a_release_the_maker_changed_stays_unknown(name, sibling):
    assert models.lookup(sibling) is not None  # the sibling it could be mistaken for is catalogued
    assert models.resolve(name).arch is None


def test_a_quantized_copy_of_a_catalogued_release_still_matches():
    """The rules that do apply keep applying: a -FP8 suffix names its catalogued base."""
    got = models.resolve("zai-org/GLM-4.6-FP8")
    assert got.arch is not None and got.arch.quant is not None and got.arch.quant.method == "fp8"
    assert got.arch.layers == models.resolve("zai-org/GLM-4.6").arch.layers
