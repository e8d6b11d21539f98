"""RoleBasedGroup roles whose pods are a template with patches over it (kvlint/extract/pod/rbg_roles.py), the
shape of a public RBG guide: v1alpha1 `leaderWorkerSet` with the image and GPUs in the role's `template` and the
leader's command in `patchLeaderTemplate`. The base template was read as a pod of its own ("7 GPUs sit idle")
and the patch as another ("model is not stated", no GPU type); the leader is the merge of the two.
And NVIDIA Dynamo's runtime images name Dynamo's release in their tag, not the engine's."""

from __future__ import annotations

import pytest
from conftest import lint

V1ALPHA1 = """\
apiVersion: workloads.x-k8s.io/v1alpha1
kind: RoleBasedGroup
metadata: {name: qwen}
spec:
  roles:
    - name: engine
      replicas: 2
      template:
        spec:
          nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
          containers:
            - name: main
              image: vllm/vllm-openai:v0.10.1
              resources: {limits: {nvidia.com/gpu: "4"}}
              volumeMounts: [{name: dshm, mountPath: /dev/shm}]
          volumes: [{name: dshm, emptyDir: {medium: Memory}}]
      leaderWorkerSet:
        size: 2
        patchLeaderTemplate:
          spec:
            containers:
              - name: main
                command: [sh, -c, "ray start --head --port=6379 && vllm serve Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size 4 --pipeline-parallel-size 2 --distributed-executor-backend ray"]
        patchWorkerTemplate:
          spec:
            containers:
              - name: main
                command: [sh, -c, "ray start --address=$(LWS_LEADER_ADDRESS):6379 --block"]
"""


def test_the_leader_is_the_template_with_its_patch_over_it():
    result = lint(V1ALPHA1)
    (r,) = result.deployments
    d = r.deployment
    assert (d.model.value, d.engine_version.value) == ("Qwen/Qwen2.5-7B-Instruct", "0.10.1")
    assert d.gpus_per_pod.value == 4 and d.pods.value == 2 and d.gpus.value == 8
    assert "leaderWorkerSet.size" in d.pods.note
    assert r.plan is not None and r.settings.tp == 4 and r.settings.pp == 2
    rules = [f.rule for f in result.findings]
    assert "KV201" not in rules and "KV003" not in rules and "KV002" not in rules, result.findings


def test_a_role_template_reference_takes_its_patch():
    """v1alpha2: `standalonePattern.templateRef` names a `roleTemplates` entry and carries the role's `patch`."""
    text = """\
apiVersion: workloads.x-k8s.io/v1alpha2
kind: RoleBasedGroup
metadata: {name: qwen}
spec:
  roleTemplates:
    - name: base
      template:
        spec:
          nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}
          containers:
            - {name: vllm, image: vllm/vllm-openai:v0.10.1, resources: {limits: {nvidia.com/gpu: "1"}}}
  roles:
    - name: decode
      standalonePattern:
        templateRef:
          name: base
          patch:
            spec:
              containers:
                - name: vllm
                  command: [vllm, serve, Qwen/Qwen2.5-7B-Instruct, --max-model-len, "8192"]
"""
    (r,) = lint(text).deployments
    d = r.deployment
    assert (d.model.value, d.engine_version.value, d.gpu.value) == (
        "Qwen/Qwen2.5-7B-Instruct",
        "0.10.1",
        "l4",
    )
    assert r.plan is not None and r.plan.max_model_len == 8192


@pytest.mark.parametrize(
    ("image", "command"),
    [
        (
            "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.4.0",
            ["python3", "-m", "dynamo.vllm", "--model", "Qwen/Qwen3-8B"],
        ),
        (
            "nvcr.io/nvidia/ai-dynamo/sglang-runtime:1.0.1",
            ["python3", "-m", "dynamo.sglang", "--model-path", "Qwen/Qwen3-8B"],
        ),
    ],
)
def test_a_dynamo_runtime_tag_is_not_the_engine_s_release(image, command):
    """vllm-runtime:0.4.0 was read as vLLM 0.4.0 (a V0 release, its defaults) and sglang-runtime:1.0.1 as an
    SGLang that does not exist: the tag is Dynamo's release."""
    import json

    text = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: m}\nspec:\n  template:\n    spec:\n"
        "      nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}\n      containers:\n"
        f"      - name: w\n        image: {image}\n        command: {json.dumps(command)}\n"
        "        resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    (r,) = lint(text).deployments
    assert r.deployment.engine_version is None


def test_a_role_in_a_shape_not_read_keeps_its_pod_templates():
    """A role whose pods sit under a key rbg_roles.py does not know is read as any object's pod templates are,
    not dropped (here beside a role it does read)."""
    text = """\
apiVersion: workloads.x-k8s.io/v1alpha2
kind: RoleBasedGroup
metadata: {name: qwen}
spec:
  roles:
    - name: router
      standalonePattern:
        template:
          spec:
            containers: [{name: router, image: lmsysorg/sglang-router:v0.2.4, command: [python3, -m, sglang_router.launch_router]}]
    - name: engine
      someFuturePattern:
        template:
          spec:
            nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}
            containers:
              - name: vllm
                image: vllm/vllm-openai:v0.10.1
                command: [vllm, serve, Qwen/Qwen2.5-7B-Instruct, --max-model-len, "8192"]
                resources: {limits: {nvidia.com/gpu: "1"}}
"""
    (r,) = lint(text).deployments
    assert r.deployment.model.value == "Qwen/Qwen2.5-7B-Instruct" and r.plan is not None
