"""KV203 kv-heads-replicated: tensor parallelism past the KV-head count (or over MLA) stops shrinking KV per GPU."""

from __future__ import annotations

import pytest
from rulecase import findings, run

from kvlint.findings import Severity

LLAMA70 = "meta-llama/Llama-3.1-70B-Instruct"  # 8 KV heads


@pytest.mark.parametrize(("tp", "flagged"), [(8, False), (16, True)])
def test_boundary_pair_at_the_kv_head_count(tp, flagged):
    got = findings(run(model=LLAMA70, gpu="H100", gpus=tp, tensor_parallel=tp, max_context=8192), "KV203")
    assert bool(got) is flagged
    if flagged:
        assert got[0].severity == Severity.INFO and "each KV head is replicated on 2 GPUs" in got[0].message


def test_mla_latent_is_replicated_at_any_tp():
    (f,) = findings(
        run(model="deepseek-ai/DeepSeek-V3", gpu="H200", gpus=8, tensor_parallel=8, max_context=8192), "KV203"
    )
    assert "uses MLA" in f.message
    assert not findings(run(model="deepseek-ai/DeepSeek-V3", gpu="H200", max_context=8192), "KV203")


def test_other_engines():
    assert findings(
        run(engine="sglang", model=LLAMA70, gpu="H100", gpus=16, tensor_parallel=16, max_context=8192),
        "KV203",
    )


def test_tgi_refuses_instead_of_replicating():
    """TGI splits the KV heads across shards and never replicates them: 16 shards of 8 KV heads are a
    KV202 refusal, not a KV203 note."""
    r = run(engine="tgi", model=LLAMA70, gpu="H100", gpus=16, tensor_parallel=16, max_context=8192)
    assert not findings(r, "KV203")
    (f,) = findings(r, "KV202")
    assert "num_key_value_heads" in f.message
