"""KV201 parallelism-gpu-mismatch: TP x PP x DP against the GPUs one replica gets."""

from __future__ import annotations

import pytest
from rulecase import findings, run

from kvlint.findings import Severity

LLAMA70 = "meta-llama/Llama-3.1-70B-Instruct"


@pytest.mark.parametrize("engine", ["vllm", "sglang", "tgi"])
def test_boundary_pair_world_size_equal_to_gpus(engine):
    assert not findings(run(engine=engine, model=LLAMA70, gpu="H100", gpus=4, tensor_parallel=4), "KV201")
    (more,) = findings(run(engine=engine, model=LLAMA70, gpu="H100", gpus=4, tensor_parallel=8), "KV201")
    assert more.severity == Severity.ERROR and "= 8 GPUs, but one replica gets 4 GPUs" in more.message
    (idle,) = findings(run(engine=engine, model=LLAMA70, gpu="H100", gpus=8, tensor_parallel=4), "KV201")
    assert idle.severity == Severity.WARNING and "4 GPUs sit idle" in idle.message


def test_pipeline_parallel_counts():
    assert not findings(
        run(model=LLAMA70, gpu="H100", gpus=8, tensor_parallel=4, pipeline_parallel=2), "KV201"
    )
    assert findings(run(model=LLAMA70, gpu="H100", gpus=4, tensor_parallel=4, pipeline_parallel=2), "KV201")


def test_no_gpu_count_no_finding():
    assert not findings(run(model=LLAMA70, gpu="H100", tensor_parallel=8), "KV201")
