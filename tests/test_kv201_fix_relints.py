"""KV201's fix offers another tensor-parallel size only where that size works: following it re-lints with
neither KV201 nor KV202. The fix used to offer "raise --tensor-parallel-size to use all 8" for a model whose
28 attention heads do not split 8 ways (fixtures/KV201/bad-idle-gpus.yaml, Qwen2.5-7B), "set it to fit 8"
under PP 2 (where TP 8 x PP 2 needs 16), and under a NIM_TAGS_SELECTOR that pins tp, a TP no profile left
has."""

from __future__ import annotations

import re

import pytest
from conftest import lint

POD = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: m}}
spec:
  template:
    spec:
      nodeSelector: {{cloud.google.com/gke-accelerator: nvidia-l4}}
      containers:
        - name: vllm
          image: {image}
          command: ["{command}", "{model}"]
          args: [{tp_flag}={tp}, {pp}--max-model-len=2048, --max-num-seqs=4]
          resources: {{limits: {{nvidia.com/gpu: "{gpus}"}}}}
          volumeMounts: [{{name: dshm, mountPath: /dev/shm}}]
      volumes: [{{name: dshm, emptyDir: {{medium: Memory}}}}]
"""
ENGINES = {
    "vllm": {
        "image": "vllm/vllm-openai:v0.10.1",
        "command": 'vllm", "serve',
        "tp_flag": "--tensor-parallel-size",
    },
    "sglang": {
        "image": "lmsysorg/sglang:v0.4.9",
        "command": 'python3", "-m", "sglang.launch_server", "--model-path',
        "tp_flag": "--tp-size",
    },
}
# query heads / KV heads: 28 / 4 (Qwen2.5-7B), 32 / 8 (Llama 3.1 8B), 40 / 8 (Qwen2.5-14B)
MODELS = ("Qwen/Qwen2.5-7B-Instruct", "meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen2.5-14B-Instruct")
OFFERED = re.compile(r"(?:raise|set) \S+ to (\d+)")


def _pod(engine: str, model: str, tp: int, gpus: int, pp: int = 1) -> str:
    pp_flag = f"--pipeline-parallel-size={pp}, " if pp > 1 and engine == "vllm" else ""
    return POD.format(model=model, tp=tp, gpus=gpus, pp=pp_flag, **ENGINES[engine])


def _kv201(text: str):
    return [f for f in lint(text).findings if f.rule == "KV201"]


@pytest.mark.parametrize("engine", sorted(ENGINES))
@pytest.mark.parametrize("model", MODELS)
def test_every_tp_kv201_offers_relints_without_kv201_or_kv202(engine, model):
    offered, withheld = 0, 0
    for pp in (1, 2) if engine == "vllm" else (1,):
        for tp in (1, 2, 4, 8):
            for gpus in range(1, 9):
                found = _kv201(_pod(engine, model, tp, gpus, pp))
                if not found:
                    continue
                fix = found[0].fix or ""
                assert fix.startswith("request "), fix
                other = OFFERED.search(fix)
                if other is None:
                    withheld += 1
                    continue
                offered += 1
                again = lint(_pod(engine, model, int(other.group(1)), gpus, pp)).findings
                left = [f for f in again if f.rule in ("KV201", "KV202")]
                if "idle)" in fix:  # the fix said it leaves GPUs idle: it starts, and KV201 says just that
                    assert [(f.rule, f.severity.name) for f in left] == [("KV201", "WARNING")], (fix, left)
                    assert "idle" in left[0].message
                else:
                    assert not left, (tp, pp, gpus, fix, left)
    assert offered > 0
    if model.startswith("Qwen/Qwen2.5-7B"):
        assert withheld > 0  # 28 heads: TP 8 (and 3, 5, 6) never offered


def test_the_idle_fixture_no_longer_offers_a_tp_the_heads_refuse():
    from conftest import FIXTURES

    (found,) = _kv201((FIXTURES / "KV201" / "bad-idle-gpus.yaml").read_text())
    assert found.fix == "request 4 GPUs"
    # the TP it would have offered is one KV202 refuses
    again = lint(_pod("vllm", "Qwen/Qwen2.5-7B-Instruct", 8, 8)).findings
    assert [f.rule for f in again if f.rule == "KV202"] == ["KV202"]


def test_too_few_gpus_under_pp_offers_the_tp_that_fits_with_that_pp():
    (found,) = _kv201(_pod("vllm", "meta-llama/Llama-3.1-8B-Instruct", 8, 8, pp=2))
    assert "TP 8 x PP 2 = 16" in found.message
    assert found.fix == "request 16 GPUs per replica, or set --tensor-parallel-size to 4"


NIM = """\
apiVersion: apps.nvidia.com/v1alpha1
kind: NIMService
metadata: {{name: llama3-8b}}
spec:
  image: {{repository: nvcr.io/nim/meta/llama3-8b-instruct, tag: 1.0.3}}
  authSecret: ngc-api-secret
  env: [{env}]
  nodeSelector: {{nvidia.com/gpu.product: NVIDIA-L40S}}
  resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}
"""


@pytest.mark.parametrize("gpus", [2, 3, 4, 8])
def test_nim_under_a_selector_pinning_tp_offers_no_other_tp(gpus):
    """Llama 3 8B's NIM 1.0.3 publishes L40S profiles of TP 1 and 2; a selector of tp=1 keeps TP 1: raising
    NIM_TENSOR_PARALLEL_SIZE would leave the selector nothing to pick (KV201's own refusal), even to 2, a TP
    the release does publish (without the selector, NIM picks it on two GPUs: no KV201)."""
    if gpus == 2:
        assert not _kv201(NIM.format(env="", gpus=2))
    (found,) = _kv201(NIM.format(env="{name: NIM_TAGS_SELECTOR, value: tp=1}", gpus=gpus))
    assert "sit idle" in found.message or "sits idle" in found.message, found.message
    assert found.fix == "request 1 GPU", found.fix
    raised = NIM.format(
        env=f"{{name: NIM_TAGS_SELECTOR, value: tp=1}}, {{name: NIM_TENSOR_PARALLEL_SIZE, value: '{gpus}'}}",
        gpus=gpus,
    )
    assert "no profile" in _kv201(raised)[0].message
