"""KV209 parallel-across-mig-slices: TP/PP, or several slices, over MIG slices."""

from __future__ import annotations

import pytest
from conftest import lint
from issue_cases import vllm_pod
from rulecase import findings

H100 = "nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3"


@pytest.mark.parametrize(("tp", "slices", "flagged"), [(1, 1, False), (2, 2, True), (1, 2, True)])
def test_one_slice_with_tp_1_is_the_only_fine_case(tp, slices, flagged):
    text = vllm_pod(
        f'["--model=Qwen/Qwen2.5-7B-Instruct", "--tensor-parallel-size={tp}", "--max-model-len=8192"]',
        limits=f"nvidia.com/mig-3g.40gb: {slices}",
        selector=H100,
    )
    got = findings(lint(text), "KV209")
    assert bool(got) is flagged
    if flagged:
        assert "MIG 3g.40gb slices" in got[0].message


def test_whole_gpus_are_not_mig():
    text = vllm_pod(
        '["--model=Qwen/Qwen2.5-7B-Instruct", "--tensor-parallel-size=2"]',
        limits='nvidia.com/gpu: "2"',
        selector=H100,
    )
    assert not findings(lint(text), "KV209")
