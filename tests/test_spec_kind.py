"""A values file is kvlint's ServingSpec only when it says `kind: ServingSpec`, or holds nothing but spec
keys: a chart's values.yaml with top-level `model:` and `gpu:` among its own keys is the chart's."""

from __future__ import annotations

from conftest import lint

from kvlint.extract import SPEC_KEYS
from kvlint.extract.kinds.spec import FIELDS

CHART_VALUES = """\
# values.yaml of an in-house inference chart: the chart's templates read `model` and `gpu`
replicaCount: 2
model: meta-llama/Llama-3.1-8B-Instruct
gpu: nvidia-l4
image:
  repository: registry.example.com/inference/server
  tag: "1.4.2"
service:
  type: ClusterIP
  port: 8080
resources:
  limits:
    nvidia.com/gpu: 1
"""


def test_the_keys_that_tell_a_spec_are_the_spec_s_fields():
    assert SPEC_KEYS == FIELDS


def test_a_chart_values_file_with_model_and_gpu_is_not_read_as_a_spec():
    result = lint(CHART_VALUES, "values.yaml")
    assert not [f for f in result.findings if f.rule == "KV001"], [f.message for f in result.findings]
    assert all(r.deployment.kind != "ServingSpec" for r in result.deployments)


def test_the_same_file_saying_kind_serving_spec_is_one_and_its_keys_are_checked():
    result = lint("kind: ServingSpec\n" + CHART_VALUES, "values.yaml")
    unknown = sorted(f.message for f in result.findings if f.rule == "KV001")
    assert [m.split("'")[1] for m in unknown] == ["image", "replicaCount", "resources", "service"]


def test_a_kindless_file_of_spec_keys_only_is_still_a_spec():
    text = "model: meta-llama/Llama-3.1-8B-Instruct\ngpu: L4\nmax_context: 8192\nmax_sequences: 4\n"
    (r,) = lint(text, "plan.yaml").deployments
    assert r.deployment.kind == "ServingSpec" and r.deployment.max_sequences.value == 4
