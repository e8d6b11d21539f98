"""KV202 heads-not-divisible-by-tp: attention (and KV) heads must divide by tensor parallelism."""

from __future__ import annotations

import pytest
from rulecase import findings, run

LLAMA70 = "meta-llama/Llama-3.1-70B-Instruct"  # 64 query heads, 8 KV heads


@pytest.mark.parametrize(
    ("tp", "bad"), [(1, False), (2, False), (3, True), (4, False), (6, True), (8, False), (16, False)]
)
def test_query_heads_divisibility(tp, bad):
    r = run(model=LLAMA70, gpu="H100", gpus=tp, tensor_parallel=tp, max_context=8192)
    assert bool(findings(r, "KV202")) is bad


@pytest.mark.parametrize("engine", ["sglang", "tgi"])
def test_other_engines_shard_the_same_way(engine):
    (f,) = findings(
        run(engine=engine, model=LLAMA70, gpu="H100", gpus=3, tensor_parallel=3, max_context=8192), "KV202"
    )
    assert "(64) must be divisible by tensor parallel size (3)" in f.message
