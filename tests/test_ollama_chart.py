"""The ollama Helm chart's values (otwld/ollama-helm): each pulled model a workload of one Ollama server,
the GPU the chart requests, the env it passes, and what it sets that kvlint does not read, said once."""

from conftest import FIXTURES, lint

from kvlint.resolve import Defaults

STACK = FIXTURES / "stacks" / "ollama-chart"


def run(text: str, gpu: str | None = None):
    return lint(text, "values.yaml", defaults=Defaults(gpu=gpu)) if gpu else lint(text, "values.yaml")


def deployments(result):
    return [r.deployment for r in result.deployments]


def test_good_values_plan_each_pulled_model_on_the_selected_gpu():
    result = lint((STACK / "good-ollama-chart-l4.yaml").read_text(), "values.yaml")
    assert result.findings == []
    ds = deployments(result)
    assert [d.name for d in ds] == ["llama3.1:8b", "qwen2.5:7b"]
    for r in result.deployments:
        d = r.deployment
        assert d.engine_name == "llamacpp"
        assert str(d.gpu.value) == "l4" and d.gpus_per_pod.value == 1
        assert (d.max_context.value, d.max_context.origin) == (16384, "stated")  # extraEnv
        assert d.max_sequences.value == 2
        assert d.engine_version is not None and d.engine_version.value == "0.15.5"  # image.tag
        assert r.plan is not None and r.plan.kv_pool > 0
        # Ollama's runner asks for num_ctx x num_parallel cells (llm/server.go:174)
        assert r.plan.kv_tokens == 2 * 16384


def test_old_layout_list_and_default_model_are_pulled_once_each():
    text = "ollama:\n  gpu:\n    enabled: true\n  models:\n    - llama2\n    - llama2:latest\n  defaultModel: llama2\n"
    ds = deployments(run(text, gpu="l4"))
    assert [d.name for d in ds] == ["llama2:latest"]  # a name without a tag is `:latest`, uniq'd


def test_a_gpu_limit_written_in_resources_wins_over_the_chart_number():
    # deployment.yaml `merge $limits $gpuLimit`: the values' own limits are the first dict, which wins
    text = (
        "ollama:\n  gpu:\n    enabled: true\n    number: 1\n  models:\n    pull: [llama3.1:8b]\n"
        "resources:\n  limits:\n    nvidia.com/gpu: 2\n"
    )
    (d,) = deployments(run(text, gpu="l4"))
    assert d.gpus_per_pod.value == 2 and d.gpus_per_pod.where.line == 9


def test_gpu_number_left_out_is_the_chart_default_and_named_so():
    text = "ollama:\n  gpu:\n    enabled: true\n  models:\n    pull: [llama3.1:8b]\n"
    (d,) = deployments(run(text, gpu="l4"))
    assert (d.gpus_per_pod.value, d.gpus_per_pod.origin) == (
        1,
        "default",
    ) and d.gpu_resource == "nvidia.com/gpu"
    assert "default 1" in d.gpus_per_pod.note


def test_amd_requests_amd_gpus():
    text = "ollama:\n  gpu:\n    enabled: true\n    type: amd\n    number: 2\n  models:\n    pull: [llama3.1:8b]\n"
    (d,) = deployments(run(text))
    assert d.gpus_per_pod.value == 2 and d.gpus_per_pod.note == "amd.com/gpu"
    assert d.gpu_resource == "amd.com/gpu"  # the field fleet and landing read (Deployment.gpu_resource)
    # with no GPU type stated, the fits-on answer is among AMD's cards (run/fleet.py _usual_cards)
    (f,) = [f for f in run(text).findings if f.rule == "KV002"]
    assert "AMD" in f.message and "NVIDIA" not in f.message


def test_gpu_disabled_runs_on_the_cpu_and_says_it_is_not_checked():
    result = lint((STACK / "good-ollama-chart-old-list-cpu.yaml").read_text(), "values.yaml")
    (d,) = deployments(result)
    assert d.gpus_per_pod is None
    assert [f.rule for f in result.findings] == ["KV004"] and "CPU" in result.findings[0].message


def test_mig_slices_and_model_create_are_said_once_not_per_model():
    text = (
        "ollama:\n  gpu:\n    enabled: true\n    mig:\n      enabled: true\n      devices:\n        1g.10gb: 1\n"
        "  models:\n    pull: [llama3.1:8b, qwen2.5:7b]\n"
        "    create:\n      - name: llama3.1-ctx32k\n        configMapRef: models\n        configMapKeyRef: k\n"
    )
    result = run(text)
    ds = deployments(result)
    assert len(ds) == 2 and all(d.gpus_per_pod is None and "gpus_per_pod" in d.unreadable for d in ds)
    said = [f for f in result.findings if "MIG slices" in f.message or "Modelfile" in f.message]
    assert len(said) == 2 and {f.where.line for f in said} == {5, 11}


def test_a_modelfile_in_the_values_is_its_from_model_at_its_num_ctx():
    # ollama/ollama@v0.15.5 server/routes.go:110-125: the Modelfile's options over the default context
    text = (
        "image:\n  tag: '0.15.5'\nollama:\n  gpu:\n    enabled: true\n  models:\n    create:\n"
        "      - name: llama3.1-ctx128k\n        template: |\n          FROM llama3.1:8b\n"
        "          # a comment\n          PARAMETER num_ctx 131072\n"
        "extraEnv:\n  - name: OLLAMA_CONTEXT_LENGTH\n    value: '8192'\n"
    )
    result = run(text, gpu="l4")
    (r,) = result.deployments
    d = r.deployment
    assert d.name == "llama3.1-ctx128k" and str(d.model.value) == "meta-llama/Llama-3.1-8B-Instruct"
    assert d.model.where.line == 10 and d.model.where.column == 16  # the FROM value, in the block
    assert (d.max_context.value, d.max_context.where.line, d.max_context.where.column) == (131072, 12, 29)
    assert r.plan is not None and r.plan.kv_tokens == 131072
    # and the same Modelfile at a context the L4 cannot hold with its layers: Ollama offloads (a warning)
    big = run(text.replace("131072", "1048576").replace("FROM llama3.1:8b", "FROM llama3.3:70b"), gpu="l4")
    assert any(f.rule == "KV004" and "on the CPU" in f.message for f in big.findings)


def test_a_tag_the_library_table_lacks_is_unknown_never_guessed():
    text = "ollama:\n  gpu:\n    enabled: true\n  models:\n    pull: [acme/llama-ish:70b]\n"
    result = run(text, gpu="l4")
    (r,) = result.deployments
    assert r.plan is None and r.model is None


def test_values_without_models_keep_the_pulled_at_run_time_answer():
    text = (
        "image:\n  repository: ollama/ollama\nollama:\n  gpu:\n    enabled: true\n  models:\n    pull: []\n"
    )
    result = run(text)
    assert any("pulls the model it serves at run time" in f.message for f in result.findings)


def test_image_tag_left_out_is_the_chart_appversion_and_unknown():
    text = "ollama:\n  gpu:\n    enabled: true\n  models:\n    pull: [llama3.1:8b]\n"
    (d,) = deployments(run(text, gpu="l4"))
    assert d.image.origin == "default" and "appVersion" in d.image.note
    assert d.engine_version is None
