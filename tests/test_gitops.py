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


# --- Flux ---------------------------------------------------------------------------------------------

FLUX = GITOPS / "flux"


def test_flux_values_from_a_configmap_beside_are_read_in_that_files_lines():
    """valuesFrom ConfigMap in the file beside (its values.yaml key), then a targetPath key from this file's
    ConfigMap, then spec.values over both: the model, GPUs and context come through; the context past the
    model's is found on the ConfigMap file's own line."""
    path = FLUX / "helmrelease.yaml"
    result = run(path)
    (r,) = result.deployments
    d = r.deployment
    assert d.kind == "HelmRelease" and d.model.value == "Qwen/Qwen2.5-7B-Instruct"
    assert d.gpus.value == 1 and d.max_sequences.value == 8
    beside = FLUX / "values-configmap.yaml"
    assert d.max_context.value == 65536 and d.max_context.where.file.endswith("values-configmap.yaml")
    kv204 = next(f for f in result.findings if f.rule == "KV204")
    assert kv204.where.file.endswith("values-configmap.yaml") and kv204.where.line == _line(beside, "65536")
    assert r.plan is not None
    assert not [f for f in result.findings if f.rule == "KV004"]


def test_flux_values_from_a_configmap_not_found_is_one_kv004_naming_it():
    result = run(GITOPS / "flux-values-not-found.yaml")
    (f,) = result.findings
    assert f.rule == "KV004" and "ConfigMap/vllm-values-generated" in f.message


def test_flux_values_from_partly_found_are_read_and_the_rest_named(tmp_path):
    text = (
        (FLUX / "helmrelease.yaml")
        .read_text()
        .replace(
            "    - kind: ConfigMap\n      name: vllm-values\n",
            "    - kind: ConfigMap\n      name: vllm-values\n    - kind: Secret\n      name: vllm-secret-values\n",
        )
    )
    (tmp_path / "helmrelease.yaml").write_text(text)
    (tmp_path / "values-configmap.yaml").write_text((FLUX / "values-configmap.yaml").read_text())
    result = run(tmp_path / "helmrelease.yaml")
    assert len(result.deployments) == 1
    (note,) = [f for f in result.findings if f.rule == "KV004"]
    assert "Secret/vllm-secret-values" in note.message and "vllm-values `" not in note.message


def test_flux_does_not_follow_a_link_out_of_the_directory(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "values-configmap.yaml").write_text((FLUX / "values-configmap.yaml").read_text())
    here = tmp_path / "here"
    here.mkdir()
    (here / "helmrelease.yaml").write_text((FLUX / "helmrelease.yaml").read_text())
    (here / "values-configmap.yaml").symlink_to(outside / "values-configmap.yaml")
    result = run(here / "helmrelease.yaml")
    notes = [f for f in result.findings if f.rule == "KV004"]
    assert notes and "ConfigMap/vllm-values" in notes[0].message
    assert not [f for f in result.findings if f.where.file.endswith("values-configmap.yaml")]


def test_flux_release_of_a_chart_that_serves_no_model_gives_nothing():
    result = run(NOT_LLM / "flux-not-llm.yaml")
    assert not result.deployments and not result.findings


# --- OpenShift Templates ------------------------------------------------------------------------------


def test_openshift_template_objects_are_read_with_their_parameters_filled():
    """${MODEL_ID} and ${MAX_MODEL_LEN} filled from their values, ${{GPU_COUNT}} as a number; the runtime the
    InferenceService names is found among the template's objects; API_KEY (no value) is named, left out."""
    path = GITOPS / "openshift-template-isvc-parameters.yaml"
    result = run(path)
    (r,) = result.deployments
    d = r.deployment
    assert d.kind == "InferenceService" and d.engine.value == "vllm"
    assert d.model.value.endswith("Qwen/Qwen2.5-7B-Instruct") and d.gpus.value == 1
    assert d.max_context.value == 65536 and d.max_context.where.line == _line(path, "MAX_MODEL_LEN}")
    rules = [f.rule for f in result.findings]
    assert "KV204" in rules and r.plan is not None
    (note,) = [f for f in result.findings if f.rule == "KV004"]
    assert "${API_KEY}" in note.message and note.where.line == _line(path, "--api-key=")
    assert not [f for f in result.findings if "unrendered" in f.message or "{{" in f.message]


def test_openshift_template_runtime_alone_is_a_runtime_template_not_an_unrendered_one():
    """The real OpenShift AI runtime template: KServe's {{.Name}} is not the author's mistake, and the runtime
    (no model, no GPU) is one KV004 info saying each InferenceService gives them."""
    result = run(GITOPS / "openshift-template-vllm-runtime.yaml")
    (f,) = result.findings
    assert f.rule == "KV004" and "runtime template" in f.message and f.severity.name == "INFO"


def test_openshift_template_of_the_v1_api_is_read_too(tmp_path):
    text = (GITOPS / "openshift-template-isvc-parameters.yaml").read_text()
    path = tmp_path / "template.yaml"
    path.write_text(text.replace("apiVersion: template.openshift.io/v1\n", "apiVersion: v1\n"))
    assert len(run(path).deployments) == 1


def test_openshift_template_of_a_web_server_gives_nothing():
    result = run(NOT_LLM / "openshift-template-not-llm.yaml")
    assert not result.deployments and not result.findings


# --- docker compose `gpus:` ---------------------------------------------------------------------------

COMPOSE = FIXTURES / "stacks" / "compose"


def test_compose_gpus_list_is_the_gpu_count():
    path = COMPOSE / "good-vllm-gpus-list.yaml"
    (r,) = run(path).deployments
    assert r.deployment.gpus_per_pod.value == 2 and r.deployment.gpus_per_pod.where.line == _line(
        path, "count: 2"
    )


def test_compose_gpus_all_says_the_count_is_not_in_the_file():
    path = COMPOSE / "bad-vllm-gpus-all.yaml"
    result = run(path)
    (r,) = result.deployments
    assert r.deployment.gpus_per_pod is None
    (f,) = [f for f in result.findings if f.rule == "KV005"]
    assert f.message.startswith("gpus: all") and f.where.line == _line(path, "    gpus: all")


def test_compose_gpus_on_a_service_that_runs_no_engine_gives_nothing():
    """A video recorder with `gpus: all` (the frigate service of a home-lab compose file): no workload."""
    from conftest import lint

    text = "services:\n  frigate:\n    image: ghcr.io/blakeblackshear/frigate:stable\n    gpus: all\n"
    result = lint(text, "compose.yaml")
    assert result.deployments == [] and result.findings == []


# --- in-house charts' values ----------------------------------------------------------------------------

CHARTS = FIXTURES / "stacks" / "helm-charts"


def test_custom_chart_model_key_and_engine_args_are_read_by_class():
    """modelName (a Hub id) is the model and extraArgs are the engine's arguments: the plan is made on the L40S
    the affinity selects, with the --gpu-memory-utilization the list sets."""
    path = CHARTS / "good-custom-chart-model-name.yaml"
    (r,) = run(path).deployments
    d = r.deployment
    assert d.model.value == "Qwen/Qwen3-0.6B" and d.model.origin == "inferred"
    assert "modelName" in d.model.note and d.model.where.line == _line(path, "modelName:")
    assert d.gpu_memory_utilization.value == 0.9 and d.gpu_memory_utilization.where.line == _line(
        path, '"0.9"'
    )
    assert r.plan is not None and d.gpus.value == 1


def test_custom_chart_args_that_hold_no_engine_option_and_bare_names_are_not_taken():
    from conftest import lint

    text = (
        "modelName: mistral-7b\nimage:\n  repository: vllm/vllm-openai\n  tag: v0.10.1\n"
        "extraArgs: [--v=2, --log-json]\nresources:\n  limits:\n    nvidia.com/gpu: 1\n"
    )
    result = lint(text, "values.yaml")
    (r,) = result.deployments
    assert r.deployment.model is None  # `mistral-7b` is neither a Hub id nor an id the catalog knows
    assert not [f for f in result.findings if f.rule in ("KV005", "KV001")]


def test_custom_chart_gpu_count_key_when_resources_say_nothing():
    from conftest import lint

    text = "modelName: Qwen/Qwen3-8B\nimage:\n  repository: vllm/vllm-openai\n  tag: v0.10.1\ngpuCount: 2\n"
    (r,) = lint(text, "values.yaml").deployments
    assert r.deployment.gpus_per_pod.value == 2 and "gpuCount" in r.deployment.gpus_per_pod.note


def test_the_vllm_projects_chart_keeps_its_own_reading_of_args(tmp_path):
    """The vLLM project's chart runs image.command alone: an `extraArgs` list there is a key it does not read
    (KV005), never added to the command line by class."""
    text = (
        CHARTS / "bad-vllm-chart-misplaced-keys.yaml"
    ).read_text() + 'extraArgs: ["--max-model-len", "65536"]\n'
    path = tmp_path / "values.yaml"
    path.write_text(text)
    result = run(path)
    (r,) = result.deployments
    assert r.deployment.max_context.value == 8192
    assert [f for f in result.findings if f.rule == "KV005" and "extraArgs" in f.message]


def test_hostile_parameters_are_bounded(tmp_path):
    """A --set path of 5,000 keys is refused (no recursion through it), and 5,000 parameters cost at most
    MAX_PARAMETERS copies of the path: one KV005 info for the long path, no traceback."""
    from kvlint.extract.kinds import argocd

    deep = ".".join(["a"] * 5000)
    many = "".join(f"      - name: k{i}\n        value: '1'\n" for i in range(5000))
    text = (
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: vllm\nspec:\n  source:\n"
        "    chart: vllm\n    repoURL: https://example.invalid\n    helm:\n      parameters:\n"
        f"      - name: {deep}\n        value: x\n" + many
    )
    path = tmp_path / "app.yaml"
    path.write_text(text)
    result = run(path)
    assert not result.crashed
    assert len([f for f in result.findings if f.rule == "KV005"]) == 1
    assert argocd.MAX_PARAMETERS < 5000


def test_argocd_source_of_plain_manifests_is_left_to_the_manifests_themselves(tmp_path):
    """`path: deploy/vllm` with no chart and no helm block: the manifests are in the repository and are linted
    there, so the Application itself says nothing (no KV004 about chart defaults)."""
    text = (
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: vllm\nspec:\n  source:\n"
        "    repoURL: https://github.com/example/infra.git\n    path: deploy/vllm\n    targetRevision: main\n"
    )
    path = tmp_path / "app.yaml"
    path.write_text(text)
    result = run(path)
    assert not result.deployments and not result.findings


def test_flux_chart_values_files_are_named_not_read(tmp_path):
    text = (
        (FLUX / "helmrelease.yaml")
        .read_text()
        .replace(
            '      version: "0.1.7"\n', '      version: "0.1.7"\n      valuesFiles: [values-prod.yaml]\n'
        )
    )
    (tmp_path / "helmrelease.yaml").write_text(text)
    (tmp_path / "values-configmap.yaml").write_text((FLUX / "values-configmap.yaml").read_text())
    result = run(tmp_path / "helmrelease.yaml")
    (note,) = [f for f in result.findings if f.rule == "KV004"]
    assert "values-prod.yaml" in note.message and note.severity.name == "INFO"


def test_applicationset_release_name_placeholder_does_not_name_the_workload(tmp_path):
    text = (GITOPS / "argocd-applicationset-placeholders.yaml").read_text()
    text = text.replace("        helm:\n", "        helm:\n          releaseName: '{{name}}'\n")
    path = tmp_path / "appset.yaml"
    path.write_text(text)
    (r,) = run(path).deployments
    assert r.deployment.name.startswith("llm-models/") and "{{" not in r.deployment.name


def test_applicationset_beside_an_app_project_is_read_not_called_unrendered(tmp_path):
    text = (
        (GITOPS / "argocd-applicationset-placeholders.yaml").read_text().replace("{{model}}", "{{ .model }}")
    )
    project = "apiVersion: argoproj.io/v1alpha1\nkind: AppProject\nmetadata:\n  name: llm\nspec: {}\n---\n"
    path = tmp_path / "appset.yaml"
    path.write_text(project + text)
    result = run(path)
    assert len(result.deployments) == 1
    assert not [f for f in result.findings if "unrendered" in f.message]


def test_compose_nvidia_runtime_takes_the_gpus_from_nvidia_visible_devices():
    from conftest import lint

    base = (
        "services:\n  vllm:\n    image: vllm/vllm-openai:v0.10.1\n"
        "    command: --model Qwen/Qwen3-8B --tensor-parallel-size 2 --max-model-len 8192\n"
        "    ipc: host\n    runtime: nvidia\n"
    )
    (r,) = lint(base + "    environment:\n      - NVIDIA_VISIBLE_DEVICES=0,1\n", "compose.yaml").deployments
    assert r.deployment.gpus_per_pod.value == 2 and r.deployment.gpus_per_pod.where.line == 8
    result = lint(base + "    environment:\n      NVIDIA_VISIBLE_DEVICES: all\n", "compose.yaml")
    (f,) = [f for f in result.findings if f.rule == "KV005"]
    assert "NVIDIA_VISIBLE_DEVICES all" in f.message and f.severity.name == "WARNING"
    result = lint(base, "compose.yaml")
    (f,) = [f for f in result.findings if f.rule == "KV005"]
    assert "left to the image" in f.message and f.severity.name == "INFO"
