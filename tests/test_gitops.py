"""Issue 25, layouts teams write: Argo CD Applications / ApplicationSets, Flux HelmReleases and OpenShift
Templates read as the chart or the objects they install; what names an engine and is not read is a KV004.
Fixtures in fixtures/stacks/gitops/ name their sources."""

from __future__ import annotations

from pathlib import Path

from conftest import FIXTURES

from kvlint.extract.charts import release_values as rv
from kvlint.load.compose import compose
from kvlint.load.tree import Mapping, Scalar
from kvlint.run.lint import read_and_lint
from kvlint.run.settings import Settings

GITOPS = FIXTURES / "stacks" / "gitops"
NOT_LLM = Path(__file__).parent / "data" / "gitops"  # must-not-match inputs: no workload, no finding


def run(path: Path):
    result = read_and_lint(str(path), Settings(), str(path))
    assert not isinstance(result, str), result
    return result


def _line(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


# --- Argo CD ----------------------------------------------------------------------------------------


def test_argocd_values_string_is_read_as_the_chart_it_installs_with_parameters_over_it():
    """helm.values (a string) read as production-stack values, located in the Application's own lines; the
    --set parameter wins over the string's maxModelLen, and the plan is made on the GPU the values select."""
    path = GITOPS / "argocd-production-stack.yaml"
    result = run(path)
    (r,) = result.deployments
    d = r.deployment
    assert d.kind == "Application" and d.name.startswith("vllm/")  # helm.releaseName names it
    assert d.engine.value == "vllm" and d.model.value == "meta-llama/Llama-3.1-8B-Instruct"
    assert d.model.where.line == _line(path, "modelURL:")
    assert d.max_context.value == 32768 and d.max_context.where.line == _line(path, 'value: "32768"')
    assert r.gpu is not None and r.gpu.name.startswith("NVIDIA L4") and d.gpus.value == 1
    assert r.plan is not None
    assert not [f for f in result.findings if f.rule in ("KV001", "KV004", "KV005")]


def test_applicationset_placeholder_is_named_not_taken_for_a_model_id():
    path = GITOPS / "argocd-applicationset-placeholders.yaml"
    result = run(path)
    (r,) = result.deployments
    assert r.deployment.model is None
    (note,) = [f for f in result.findings if f.rule == "KV004"]
    assert "placeholder" in note.message and note.where.line == _line(path, "modelURL:")
    assert not [f for f in result.findings if f.rule == "KV003" and "{{" in f.message]


def test_applicationset_go_template_placeholders_are_not_an_unrendered_helm_template(tmp_path):
    """goTemplate placeholders (`{{ .model }}`) inside strings: not "render the template first"."""
    text = (
        (GITOPS / "argocd-applicationset-placeholders.yaml").read_text().replace("{{model}}", "{{ .model }}")
    )
    path = tmp_path / "appset.yaml"
    path.write_text(text)
    result = run(path)
    assert len(result.deployments) == 1
    assert not [f for f in result.findings if "unrendered" in f.message]


def test_argocd_chart_with_only_its_defaults_is_one_kv004_not_no_problems():
    path = GITOPS / "argocd-vllm-chart-default-values.yaml"
    result = run(path)
    (f,) = result.findings
    assert f.rule == "KV004" and "default values" in f.message and f.where.line == _line(path, "chart: vllm")


def test_argocd_custom_chart_parameters_in_an_unread_layout_are_one_kv004():
    result = run(GITOPS / "argocd-custom-chart-parameters.yaml")
    (f,) = result.findings
    assert f.rule == "KV004" and "layout kvlint does not read" in f.message


def test_argocd_application_of_a_chart_that_serves_no_model_gives_nothing():
    result = run(NOT_LLM / "argocd-not-llm.yaml")
    assert not result.deployments and not result.findings


def test_argocd_values_file_names_are_said_once_not_read(tmp_path):
    text = (GITOPS / "argocd-production-stack.yaml").read_text()
    text = text.replace(
        "      releaseName: vllm\n", "      releaseName: vllm\n      valueFiles: [values-prod.yaml]\n"
    )
    path = tmp_path / "app.yaml"
    path.write_text(text)
    result = run(path)
    notes = [f for f in result.findings if f.rule == "KV004"]
    assert len(notes) == 1 and "values-prod.yaml" in notes[0].message


def test_argocd_values_string_with_a_yaml_error_is_located_in_the_application(tmp_path):
    text = (GITOPS / "argocd-production-stack.yaml").read_text()
    text = text.replace("            requestGPU: 1\n", "            requestGPU: [1\n")
    path = tmp_path / "app.yaml"
    path.write_text(text)
    result = run(path)
    kv001 = [f for f in result.findings if f.rule == "KV001"]
    assert kv001 and kv001[0].message.startswith("helm.values: YAML syntax error")
    assert kv001[0].where.line >= _line(path, "requestGPU: [1")


def test_set_paths_and_values_as_helm_parses_them():
    assert rv.path_steps(r"a.b\.c[0].d") == ["a", "b.c", 0, "d"]
    assert rv.path_steps("a[99999]") is None and rv.path_steps("a..b") is None
    assert rv.set_value("32768") == 32768 and rv.set_value("0.9") == "0.9" and rv.set_value("true") is True
    assert rv.set_value("007") == "007" and rv.set_value("8", force_string=True) == "8"


def test_put_and_merge_leave_the_document_as_written():
    (doc,), _ = compose("a:\n  b: 1\n  c: [1, 2]\n", "x.yaml")
    root = doc.root
    assert isinstance(root, Mapping)
    leaf = Scalar(5, "5", "tag:yaml.org,2002:int", False, (0, 0, 0, 1))
    out = rv.put(root, ["a", "c", 1], leaf, root)
    assert isinstance(out, Mapping) and out.at("a", "c", 1) is leaf and out.at("a", "b").value == 1
    assert root.at("a", "c", 1).value == 2  # the original is untouched
    (over,), _ = compose("a:\n  b: null\n  d: 3\n", "y.yaml")
    merged = rv.merge(root, over.root)
    assert isinstance(merged, Mapping) and "b" not in merged.map("a") and merged.at("a", "d").value == 3
    assert merged.at("a", "c", 0).value == 1
