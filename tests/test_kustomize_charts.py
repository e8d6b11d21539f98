"""Kustomize `helmCharts:` read as kustomize inflates them (kubernetes-sigs/kustomize api/types/helmchartargs.go
@0153090): valuesFile, valuesInline by valuesMerge, additionalValuesFiles, releaseName; the values read with
the chart's known layout, as an Argo CD Application's are."""

from __future__ import annotations

import os

from kvlint.run.lint import read_and_lint
from kvlint.run.settings import Settings

_KUSTOMIZATION = (
    "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nhelmCharts:\n"
    "  - name: vllm-stack\n    repo: https://vllm-project.github.io/production-stack\n"
    "    releaseName: vllm\n{more}"
)
_VALUES = (
    "servingEngineSpec:\n  modelSpec:\n  - name: qwen\n    repository: vllm/vllm-openai\n    tag: v0.10.0\n"
    "    modelURL: Qwen/Qwen2.5-7B-Instruct\n    replicaCount: 1\n    requestGPU: 1\n"
)


def _lint(folder, more: str, text: str = _KUSTOMIZATION):
    (folder / "kustomization.yaml").write_text(text.format(more=more))
    result = read_and_lint(str(folder / "kustomization.yaml"), Settings(), "kustomization.yaml")
    assert not isinstance(result, str)
    return result


def test_values_file_is_read_with_the_chart_s_layout(tmp_path):
    """The vLLM production-stack chart's keys (vllm-project/production-stack helm/values.yaml:
    servingEngineSpec.modelSpec[]) in the kustomization's valuesFile: the workloads linting the values file
    gives, named after the release, located in the values file."""
    (tmp_path / "values.yaml").write_text(_VALUES)
    alone = read_and_lint(str(tmp_path / "values.yaml"), Settings(), "values.yaml")
    result = _lint(tmp_path, "    valuesFile: values.yaml\n")
    assert not isinstance(alone, str)
    (r,) = result.deployments
    (a,) = alone.deployments
    assert r.deployment.model.value == a.deployment.model.value == "Qwen/Qwen2.5-7B-Instruct"
    assert r.deployment.label().startswith("Kustomization/vllm/") and r.deployment.where.file == "values.yaml"
    assert [f.rule for f in result.findings] == [f.rule for f in alone.findings]


def test_values_inline_over_the_file_by_values_merge(tmp_path):
    (tmp_path / "values.yaml").write_text(_VALUES)
    inline = (
        "    valuesFile: values.yaml\n    valuesInline:\n      servingEngineSpec:\n        modelSpec:\n"
        "        - name: qwen\n          repository: vllm/vllm-openai\n          tag: v0.10.0\n"
        "          modelURL: Qwen/Qwen2.5-1.5B-Instruct\n          requestGPU: 1\n"
    )
    (r,) = _lint(tmp_path, inline).deployments  # override, the default: inline wins
    assert r.deployment.model.value == "Qwen/Qwen2.5-1.5B-Instruct"
    (r,) = _lint(tmp_path, inline + "    valuesMerge: merge\n").deployments  # the file wins
    assert r.deployment.model.value == "Qwen/Qwen2.5-7B-Instruct"
    (tmp_path / "extra.yaml").write_text(_VALUES.replace("Qwen2.5-7B", "Qwen2.5-3B"))
    (r,) = _lint(tmp_path, inline + "    additionalValuesFiles: [extra.yaml]\n").deployments  # a later -f
    assert r.deployment.model.value == "Qwen/Qwen2.5-3B-Instruct"


def test_a_values_file_not_read_is_said_and_a_chart_naming_an_engine_is_never_silent(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "values.yaml").write_text(_VALUES)
    deploy = tmp_path / "deploy"
    deploy.mkdir()
    os.symlink("../outside/values.yaml", deploy / "values.yaml")
    result = _lint(deploy, "    valuesFile: values.yaml\n")
    (f,) = result.findings
    assert f.rule == "KV004" and "values.yaml (a link that leaves the file's directory)" in f.message
    result = _lint(deploy, "    valuesFile: ../outside/values.yaml\n")
    assert [f.rule for f in result.findings] == ["KV004"]


def test_a_chart_that_is_no_serving_engine_gives_nothing(tmp_path):
    text = (
        "helmCharts:\n  - name: ingress-nginx\n    repo: https://kubernetes.github.io/ingress-nginx\n{more}"
    )
    result = _lint(tmp_path, "    valuesInline: {controller: {replicaCount: 2}}\n", text)
    assert not result.deployments and not result.findings
