"""A KServe runtime named by `runtime:` in a folder beside the InferenceService's (a repository that keeps
runtimes/ and models/ apart, as NVIDIA/nim-deploy kserve/ does): read inside a repository, by name only,
never from the folders around a file linted outside one."""

from __future__ import annotations

from conftest import FIXTURES

from kvlint.run.lint import read_and_lint
from kvlint.run.settings import Settings

ISVC = FIXTURES / "stacks" / "kserve-isvc" / "runtime-beside"
NAMED = "      runtime: vllm\n"


def _tree(top, named: bool = True, repository: bool = True):
    (top / "runtimes").mkdir(parents=True)
    (top / "models").mkdir()
    if repository:
        (top / ".git").mkdir()
    (top / "runtimes" / "vllm.yaml").write_text((ISVC / "runtime.yaml").read_text())
    isvc = (ISVC / "isvc.yaml").read_text()
    if named:
        isvc = isvc.replace("      modelFormat:\n", NAMED + "      modelFormat:\n")
    (top / "models" / "llama.yaml").write_text(isvc)
    return top / "models" / "llama.yaml"


def _lint(path):
    result = read_and_lint(str(path), Settings(), "models/llama.yaml")
    assert not isinstance(result, str)
    return result


def test_a_runtime_named_from_a_folder_beside_is_merged_at_its_own_file(tmp_path):
    result = _lint(_tree(tmp_path))
    assert "KV004" not in [f.rule for f in result.findings]
    (r,) = result.deployments
    d = r.deployment
    assert d.max_context is not None and d.max_context.value == 8192
    assert d.max_context.where is not None and d.max_context.where.file == "runtimes/vllm.yaml"
    assert d.extra["runtime"].value == "ServingRuntime vllm (runtimes/vllm.yaml)"


def test_outside_a_repository_the_folders_beside_are_not_read(tmp_path):
    result = _lint(_tree(tmp_path, repository=False))
    (kv004,) = [f for f in result.findings if f.rule == "KV004"]
    assert "runtime vllm is not in this file or a YAML file beside it" in kv004.message


def test_a_runtime_chosen_by_model_format_is_not_looked_for_in_other_folders(tmp_path):
    result = _lint(_tree(tmp_path, named=False))
    (r,) = result.deployments
    assert "runtime" not in r.deployment.extra and "KV004" in [f.rule for f in result.findings]


def test_the_folders_beside_are_listed_once_however_many_files_look(tmp_path, monkeypatch):
    import os

    top = _tree(tmp_path)
    for i in range(5):
        (top.parent / f"llama-{i}.yaml").write_text(top.read_text())
    listed: list[str] = []
    real = os.scandir

    def counting(path="."):
        listed.append(os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", counting)
    for i in range(5):
        assert "KV004" not in [f.rule for f in _lint(top.parent / f"llama-{i}.yaml").findings]
    assert listed.count(str(tmp_path)) == 1


NIM_ISVC = """apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: llama3-8b}
spec:
  predictor:
    model:
      modelFormat: {name: nvidia-nim-llama3-8b-instruct}
      runtime: nvidia-nim-llama3-8b-instruct-1.0.0
      resources: {limits: {nvidia.com/gpu: "1"}}
"""


def test_a_nim_runtime_not_found_is_named_in_the_kv004(tmp_path):
    (tmp_path / "isvc.yaml").write_text(NIM_ISVC)
    (kv004,) = [f for f in _lint(tmp_path / "isvc.yaml").findings if f.rule == "KV004"]
    assert "the NIM image (which fixes the model it serves) is not in this file (runtime " in kv004.message
    assert "nvidia-nim-llama3-8b-instruct-1.0.0 is not in this file, a YAML file beside it" in kv004.message
    assert kv004.message.endswith(": not checked")
