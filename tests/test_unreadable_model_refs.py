"""Model references that name no model id (a variable, a placeholder, a path, a storage URI) are an info
that says what was not checked; a Hub id kvlint does not find stays a warning; a Hugging Face cache
path names its model (kvlint/catalog/model_refs.py)."""

from __future__ import annotations

import pytest
from conftest import lint

from kvlint.catalog import model_refs
from kvlint.findings import IssueKind, Severity


@pytest.mark.parametrize(
    "ref, kind",
    [
        ("$MODEL_ID", model_refs.VARIABLE),
        ("${MODEL_ID}", model_refs.VARIABLE),
        ("$(MODEL_NAME)", model_refs.VARIABLE),  # a Kubernetes dependent environment variable
        ("{{ .Values.model }}", model_refs.VARIABLE),
        ("/models/$MODEL_DIR", model_refs.VARIABLE),
        ("/var/mdl/YOUR-MODEL-PATH", model_refs.PLACEHOLDER),
        ("YOUR_ORG/YOUR_MODEL", model_refs.PLACEHOLDER),  # written as a Hub id, still a placeholder
        ("<model-id>", model_refs.PLACEHOLDER),
        ("CHANGEME", model_refs.PLACEHOLDER),
        ("org/replace-me", model_refs.PLACEHOLDER),
        ("pvc://llama-3-8b-pvc/hf/8b_instruction_tuned", model_refs.VOLUME),
        ("s3://bucket/models/ft", model_refs.VOLUME),
        ("gs://bucket/llm", model_refs.VOLUME),
        ("oci://registry.example/models/llm:1", model_refs.VOLUME),
        ("/data/", model_refs.PATH),
        ("./checkpoints/run-7", model_refs.PATH),
        ("~/models/llm", model_refs.PATH),
    ],
)
def test_each_class_is_recognised(ref, kind):
    found = model_refs.classify(ref)
    assert found is not None and found.kind == kind


@pytest.mark.parametrize(
    "ref", ["acme-corp/secret-llm-13b", "meta-llama/Llama-3.1-8B-Instruct", "mymodel", "org/yourmodel"]
)
def test_a_model_id_is_not_a_class(ref):
    """Hub ids and bare names are model ids: not found, they stay a warning."""
    assert model_refs.classify(ref) is None


@pytest.mark.parametrize(
    "ref, expected",
    [
        ("/model-store/hub/models--openai--gpt-oss-120b/snapshots/b5c939de", "openai/gpt-oss-120b"),
        (
            "/root/.cache/huggingface/hub/models--meta-llama--Llama-3.1-8B-Instruct",
            "meta-llama/Llama-3.1-8B-Instruct",
        ),
        ("models--Qwen--Qwen2.5-7B-Instruct/snapshots/abc/", "Qwen/Qwen2.5-7B-Instruct"),
        ("/cache/datasets--org--name/snapshots/abc", None),  # a dataset, not a model
        ("/cache/models--gpt2/snapshots/abc", None),  # no organisation: not read
        ("/models/openai--gpt-oss-120b", None),  # not the cache layout
        ("/cache/my-models--org--name/snapshots/abc", None),  # the folder must be named models--…
    ],
)
def test_a_hugging_face_cache_path_names_its_model(ref, expected):
    assert model_refs.cache_id(ref) == expected


def _kv003(text: str):
    result = lint(text)
    return [f for f in result.findings if f.rule == "KV003"], result


SPEC = "kind: ServingSpec\nname: m\nmodel: {model}\ngpu: L40S\nmax_context: 8192\nmax_sequences: 4\n"


@pytest.mark.parametrize("model", ["'$MODEL_ID'", "/var/mdl/YOUR-MODEL-PATH", "/data/", "pvc://vol/hf/ft"])
def test_an_unreadable_reference_is_an_info_naming_what_was_not_checked(model):
    (f,), result = _kv003(SPEC.format(model=model))
    assert f.severity is Severity.INFO and f.kind is IssueKind.MODEL_NOT_READABLE
    assert "not a model id" in f.message and "which model it is was not checked" in f.message
    assert any(d.startswith("skipped: KV101") for d in f.details)  # the checks that did not run
    assert "aliases" in (f.fix or "")
    assert result.deployments[0].model is None


def test_a_hub_id_not_found_stays_a_warning():
    (f,), _ = _kv003(SPEC.format(model="acme-corp/secret-llm-13b"))
    assert f.severity is Severity.WARNING and f.kind is None
    assert "kvlint models pull acme-corp/secret-llm-13b" in f.message


def test_a_cache_path_of_an_unknown_hub_id_is_a_warning_about_that_id():
    (f,), _ = _kv003(SPEC.format(model="/hub/models--acme-corp--secret-llm-13b/snapshots/0123abcd"))
    assert f.severity is Severity.WARNING
    assert "kvlint models pull acme-corp/secret-llm-13b" in f.message
    assert "read from its Hugging Face cache path" in f.message


def test_a_cache_path_plans_the_model_and_says_where_the_id_came_from():
    findings, result = _kv003(SPEC.format(model="/hub/models--Qwen--Qwen2.5-7B-Instruct/snapshots/a09a3545"))
    assert findings == []
    (r,) = result.deployments
    assert r.model is not None and r.model.layers == 28  # Qwen2.5-7B-Instruct config.json num_hidden_layers
    assert (
        r.model_how == "kvlint catalog (id read from its Hugging Face cache path: Qwen/Qwen2.5-7B-Instruct)"
    )
    assert r.plan is not None


def test_a_path_that_looks_like_a_model_is_not_matched_only_hinted():
    """`/models/llava-1.5-7b-hf/` (vLLM serving a local copy, as AIBrix's multimodality sample does) is not
    assumed to be the catalogued LLaVA it resembles: a wrong match is worse than an unknown."""
    (f,), result = _kv003(SPEC.format(model="/models/llava-1.5-7b-hf/"))
    assert f.severity is Severity.INFO and result.deployments[0].model is None
    assert "resembles liuhaotian/llava-v1.5-7b, not assumed" in f.message


def test_an_alias_in_the_configuration_tells_kvlint_which_model_a_path_is(tmp_path):
    """The fix the info gives works as written: the reference as an alias (a trailing '/' or not)."""
    from kvlint.catalog import models

    config = models.lookup("meta-llama/Llama-3.1-8B-Instruct")["config"]  # a fine-tune of its shape
    models.register_models([{"id": "acme/ft", "aliases": ["/data/"], "source": "test", "config": config}])
    findings, result = _kv003(SPEC.format(model="/data/"))
    assert findings == [] and result.deployments[0].model is not None


def test_a_path_kvlint_found_but_could_not_read_stays_a_warning(tmp_path):
    """A config.json that is there and cannot be read is something to fix, not an unknown."""
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text("{not json")
    from kvlint.run.lint import read_and_lint
    from kvlint.run.settings import Settings

    (tmp_path / "deploy.yaml").write_text(SPEC.format(model="./m"))
    result = read_and_lint(str(tmp_path / "deploy.yaml"), Settings(), "deploy.yaml")
    assert not isinstance(result, str), result
    (f,) = [f for f in result.findings if f.rule == "KV003"]
    assert f.severity is Severity.WARNING and "could not read" in f.message
