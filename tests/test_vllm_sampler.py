"""vLLM V1's profile-run sampler by the top-k/top-p path each release takes (vllm_sampler.py), checked
against two public logs no kvlint constant was read off."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kvlint.engines.vllm import plan as vllm
from kvlint.engines.vllm.sampler import (
    FUSED,
    SORT,
    moe_caches_persist,
    sampler_path,
    sort_bytes_per_logit,
)
from kvlint.resolve import Defaults, resolve
from kvlint.units import GIB

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from calibration_cases import DATA, build_vllm, load_yaml, vllm_version, with_facts  # noqa: E402
from conftest import lint, vllm_logs  # noqa: E402


@pytest.mark.parametrize(
    ("version", "env", "path"),
    [
        ("0.10.1", None, FUSED),  # FlashInfer when installed, and the image installs it
        ("0.10.1", "0", SORT),
        ("0.11.0", "false", FUSED),  # int() refuses it: extract reports a KV005 and drops it (test below)
        ("0.11.1", None, SORT),  # opt-in from v0.11.1 (vllm PR #26859)
        ("0.16.0", None, SORT),
        ("0.13.0", "1", FUSED),
        ("0.17.0", None, FUSED),  # the Triton kernel (vllm PR #33538)
        ("0.19.0", "0", FUSED),
        (None, None, FUSED),  # no version: the newest behaviour
    ],
)
def test_sampler_path_by_release_and_flag(version, env, path):
    extra = {} if env is None else {"VLLM_USE_FLASHINFER_SAMPLER": env}
    assert sampler_path(version, extra, 1024)[0] == path


def test_sort_bytes_and_moe_buffers():
    assert sort_bytes_per_logit(1024) == 38 and sort_bytes_per_logit(128) == 38
    assert sort_bytes_per_logit(127) == 50  # SortStable.cu sorts fewer than 128 rows by one full sort
    assert sampler_path("0.17.0", {}, 4)[0] == SORT  # the Triton kernel takes 8 rows or more
    assert sampler_path("0.20.0", {"VLLM_USE_FLASHINFER_SAMPLER": "1"}, 4)[0] == FUSED  # one pass, FlashInfer


@pytest.mark.parametrize("version", ["0.21.0", "0.22.0", None])
def test_the_second_warm_up_pass_sorts_under_8_rows(version):
    """From v0.21.0 `_dummy_sampler_run` samples again with a generator ("Also warm forward_native"),
    which forward_cuda hands to forward_native; its apply_top_k_top_p sorts in PyTorch under 8 rows
    (vllm==0.21.0:vllm/v1/sample/ops/topk_topp_sampler.py apply_top_k_top_p: Triton `if
    logits.shape[0] >= 8`). FlashInfer on the first pass does not avoid it; from 8 rows both are fused."""
    for flag in ({}, {"VLLM_USE_FLASHINFER_SAMPLER": "1"}):
        path, why = sampler_path(version, flag, 4)
        assert path == SORT and "second pass" in why
    assert sampler_path(version, {}, 8)[0] == FUSED
    assert not moe_caches_persist("0.10.2") and moe_caches_persist("0.11.0") and moe_caches_persist(None)


def _case(**kw) -> dict:
    return {"id": "t", "settings": {}, **kw}


def test_qwen3_235b_torch_peak_of_vllm_pr_21429():
    """vllm PR #21429 (2025-07-23), its test run on main of 2025-07-22: `vllm serve
    Qwen/Qwen3-235B-A22B-FP8 --tensor-parallel-size 4 --gpu-memory-utilization 0.5`, 139.12 GiB free (an
    H200): 'torch peak memory increase: 5.62GiB; non-torch forward increase memory: 2.04GiB; weights
    memory: 55.13GiB', 'Available KV cache memory: 7.07 GiB'. That torch peak is the PyTorch-sort sampler on 1,024 rows x 151,936 vocab
    (38 B a logit = 5.51 GiB) and the last hidden states; the MoE caches were freed per layer then."""
    case = _case(
        model="Qwen/Qwen3-235B-A22B-FP8",
        gpu="H200",
        tensor_parallel_size=4,
        settings={"gpu_memory_utilization": 0.5},
        env={"VLLM_USE_FLASHINFER_SAMPLER": "0"},
    )
    d, why = build_vllm(case, "0.10.0")
    assert d is not None, why
    p = resolve(d, Defaults()).plan
    assert p.term("activation peak") / GIB == pytest.approx(5.62, abs=0.1)
    assert p.weights_per_gpu / GIB == pytest.approx(55.13, rel=0.01)
    assert p.kv_pool / GIB == pytest.approx(7.07, abs=0.1)  # 'Available KV cache memory: 7.07 GiB'
    fused = build_vllm({**case, "env": {}}, "0.10.0")[0]
    assert (
        resolve(fused, Defaults()).plan.term("activation peak") / GIB < 3
    )  # FlashInfer's: far below the log


def test_gpt_oss_120b_on_h100_pcie_has_no_memory_for_the_kv_cache():
    """vllm issue #23278 (v-010 of the shared set, scored split): pip-installed vLLM 0.10.1.1, gpt-oss-120b
    on one H100 PCIe, defaults: 'Available KV cache memory: -2.14 GiB'. kvlint now gets the refusal's
    reason (no memory for the KV cache, not a context refusal) and the figure within 10 %."""
    facts = load_yaml(DATA / "vllm_case_facts.yaml")
    case = with_facts(next(c for c in vllm_logs() if c["id"] == "v-010"), facts)
    d, why = build_vllm(case, vllm_version(case))
    assert d is not None, why
    p = resolve(d, Defaults()).plan
    logged = case["measured"]["kv_cache_gib"]
    assert p.kv_pool < 0
    assert p.kv_pool / GIB == pytest.approx(logged, rel=0.1)
    assert "PyTorch sort" in next(t.note for t in p.terms if t.label == "activation peak")


MANIFEST = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: gpt-oss}
spec:
  template:
    spec:
      nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.13.0
        args: [--model, openai/gpt-oss-20b, --max-model-len, "8192"]
        env:
        - {name: VLLM_USE_FLASHINFER_SAMPLER, value: "%s"}
        resources: {limits: {nvidia.com/gpu: 1}}
"""


def test_the_flag_is_read_from_the_manifest():
    """VLLM_USE_FLASHINFER_SAMPLER=1 on v0.13 opts into FlashInfer's sampler: 1,024 x 201,088 logits at
    14.6 B instead of the sort's 38 B, 4.5 GiB less activation peak."""
    peaks = {}
    for flag in ("0", "1"):
        (r,) = lint(MANIFEST % flag).deployments
        peaks[flag] = r.plan.term("activation peak")
    gap = 1024 * 201_088 * (38 - vllm.SAMPLER_BYTES_PER_LOGIT)
    assert peaks["0"] - peaks["1"] == pytest.approx(gap, rel=0.01)


@pytest.mark.parametrize("value", ["true", "1.0", "yes", ""])
def test_a_flag_vllm_cannot_read_is_kv005_at_the_env_value(value):
    """vllm/envs.py reads VLLM_USE_FLASHINFER_SAMPLER with bool(int(...)): 'true' raises ValueError when
    the sampler starts. A located KV005, not a plan on the unset default's sampler path."""
    result = lint(MANIFEST % value)
    kv005 = [f for f in result.findings if f.rule == "KV005"]
    assert len(kv005) == 1 and "int()" in kv005[0].message and kv005[0].where.line == 14  # the env entry
    assert "VLLM_USE_FLASHINFER_SAMPLER" not in result.deployments[0].deployment.extra
    assert not [f for f in lint(MANIFEST % " 1").findings if f.rule == "KV005"]  # int(" 1") == 1
