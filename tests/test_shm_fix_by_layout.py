"""KV207's fix says where the layout sets /dev/shm: a pod mounts a memory-backed emptyDir, a compose service
sets `shm_size` or `ipc: host` (the compose specification), a dstack run sets `resources.shm_size`
(dstackai/dstack@0.21.2 runner/internal/shim/docker.go: 64 MiB without it). An emptyDir is no key of
either, so the pod's advice there is advice the author cannot follow."""

from __future__ import annotations

from conftest import FIXTURES, gpu_pod, lint


def _kv207(text: str, path: str):
    return [f for f in lint(text, path).findings if f.rule == "KV207"]


def test_a_compose_service_is_told_its_own_keys():
    path = FIXTURES / "stacks" / "compose" / "bad-vllm-count-all.yaml"
    found = _kv207(path.read_text(encoding="utf-8"), str(path))
    assert [f.fix for f in found] == ["set shm_size on the service (e.g. 16gb) or ipc: host"]


def test_a_dstack_run_is_told_resources_shm_size():
    path = FIXTURES / "stacks" / "dstack" / "vllm-h200x2.dstack.yml"
    found = _kv207(path.read_text(encoding="utf-8"), str(path))
    assert [f.fix for f in found] == ["set resources.shm_size (e.g. 16GB)"]


def test_a_pod_keeps_the_emptydir_advice():
    text = gpu_pod(
        "vllm/vllm-openai:v0.10.0", ["--model", "meta-llama/Llama-3.1-8B-Instruct", "-tp", "2"], gpus=2
    )
    assert [f.fix for f in _kv207(text, "deploy.yaml")] == [
        "mount an emptyDir with medium: Memory at /dev/shm"
    ]
