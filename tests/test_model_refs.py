"""Which model a workload names, read from launch commands as real serving files write them."""

from __future__ import annotations

from kvlint.run.lint import read_and_lint
from kvlint.run.settings import Settings

TRTLLM = """apiVersion: apps/v1
kind: Deployment
metadata: {name: decode}
spec:
  replicas: 2
  template:
    spec:
      containers:
        - name: modelserver
          command: ["trtllm-serve", "serve"]
          args: ["Qwen/Qwen3-32B", "--tp_size=2", "--backend=pytorch", "--kv_cache_free_gpu_memory_fraction=0.9"]
          resources: {limits: {nvidia.com/gpu: 2}}
"""


def test_trtllm_serve_subcommand_is_not_the_model(tmp_path):
    """`trtllm-serve serve MODEL`: `serve` is the subcommand (as llm-d's TensorRT-LLM guide runs it, whose
    file tests/data/corpus_findings.yaml pins), the model follows."""
    (tmp_path / "trtllm.yaml").write_text(TRTLLM)
    result = read_and_lint(str(tmp_path / "trtllm.yaml"), Settings(), "trtllm.yaml")
    assert not isinstance(result, str), result
    found = [d.deployment.model.value for d in result.deployments if d.deployment.model]
    assert found == ["Qwen/Qwen3-32B"]


BERT_LARGE = {  # the keys kvlint reads from a BERT-large embedding model's config.json
    "architectures": ["BertModel"],
    "model_type": "bert",
    "hidden_size": 1024,
    "intermediate_size": 4096,
    "max_position_embeddings": 512,
    "num_attention_heads": 16,
    "num_hidden_layers": 24,
    "vocab_size": 30522,
}


def test_a_local_encoder_only_model_keeps_no_kv_cache(tmp_path):
    """An embedding model's own config.json resolves as a model with no KV cache, not as a decoder."""
    import json

    from kvlint.catalog import models

    (tmp_path / "bge").mkdir()
    (tmp_path / "bge" / "config.json").write_text(json.dumps(BERT_LARGE))
    res = models.resolve("./bge", str(tmp_path))
    assert res.arch is None and res.no_kv_cache and "encoder-only model (bert)" in res.how
    decoder = dict(BERT_LARGE, architectures=["LlamaForCausalLM"], model_type="llama")
    (tmp_path / "bge" / "config.json").write_text(json.dumps(decoder))
    assert models.resolve("./bge", str(tmp_path)).arch is not None  # a decoder is priced as before


def test_catalogued_encoder_without_a_kv_cache_note_and_its_name_matches():
    from kvlint.catalog import models

    models.register_models([{"id": "acme/embed-large", "source": "test", "config": BERT_LARGE}])
    try:
        exact = models.resolve("acme/embed-large")
        assert exact.arch is None and exact.no_kv_cache
        by_name = models.resolve("/models/embed-large")
        assert by_name.arch is None and by_name.no_kv_cache and "acme/embed-large" in by_name.how
    finally:
        models._EXTRA.clear()
        models.register_models([])
