"""Triton's model configuration (config.pbtxt) as the TensorRT-LLM backend reads it: protobuf text format read
without protobuf and within bounds (kvlint.engines.trtllm.pbtxt), the tensorrt_llm model's parameters onto the
deployment and fill_template's substitutions (kvlint.engines.trtllm.triton).

The template below is written for the test in the shape of tensorrtllm_backend's
all_models/inflight_batcher_llm/tensorrt_llm/config.pbtxt (v0.18.2): a placeholder for the backend and for
Triton's max_batch_size (unquoted), lists of messages without a colon, comments, and each parameter a map
entry whose string_value the backend converts."""

from __future__ import annotations

import pytest

from kvlint.deployment import Deployment
from kvlint.engines.trtllm import pbtxt, triton
from kvlint.findings import Location, Severity

TEMPLATE = """\
# the tensorrt_llm model (written for this test)
name: "tensorrt_llm"
backend: "${triton_backend}"
max_batch_size: ${triton_max_batch_size}

model_transaction_policy {
  decoupled: ${decoupled_mode}
}
input [
  {
    name: "input_ids"
    data_type: TYPE_INT32
    dims: [ -1 ]
    allow_ragged_batch: true
  },
  {
    name: "input_lengths"
    dims: [ 1 ]
    reshape: { shape: [ ] }
  }
]
instance_group [
  {
    count: 1
    kind : KIND_CPU
  }
]
parameters: {
  key: "max_beam_width"
  value: {
    string_value: "${max_beam_width}"
  }
}
parameters: {
  key: "gpt_model_type"
  value: {
    string_value: "${batching_strategy}"
  }
}
parameters: {
  key: "gpt_model_path"
  value: {
    string_value: "${engine_dir}"
  }
}
parameters: {
  key: "max_tokens_in_paged_kv_cache"
  value: {
    string_value: "${max_tokens_in_paged_kv_cache}"
  }
}
parameters: {
  key: "kv_cache_free_gpu_mem_fraction"
  value: {
    string_value: "${kv_cache_free_gpu_mem_fraction}"
  }
}
parameters: {
  key: "enable_kv_cache_reuse"
  value: {
    string_value: "${enable_kv_cache_reuse}"
  }
}
"""
# the substitutions of tensorrtllm_backend's docs/llama.md (v0.18.2), shortened
FILL = (
    "triton_backend:tensorrtllm,triton_max_batch_size:64,decoupled_mode:False,max_beam_width:1,"
    "engine_dir:/engines/llama-3-8b,max_tokens_in_paged_kv_cache:2560,kv_cache_free_gpu_mem_fraction:0.5,"
    "enable_kv_cache_reuse:False"
)


def _deployment() -> Deployment:
    return Deployment(file="x.yaml", where=Location("x.yaml", 1, 1), kind="Deployment", name="triton")


def test_the_template_parses_with_its_placeholders_kept_unfilled():
    root = pbtxt.parse(TEMPLATE)
    backend, batch = root.scalar("backend"), root.scalar("max_batch_size")
    assert backend is not None and backend.unfilled and backend.quoted
    assert batch is not None and batch.unfilled and not batch.quoted and (batch.line, batch.column) == (4, 17)
    inputs = root.all("input")
    assert [m.scalar("name").text for m in inputs if isinstance(m, pbtxt.Message)] == [
        "input_ids",
        "input_lengths",
    ]
    group = root.message("instance_group")
    assert group is not None and group.scalar("kind").text == "KIND_CPU"
    config, issue = triton.read_config(TEMPLATE, "repo/tensorrt_llm/config.pbtxt")
    assert issue is None and config is not None
    assert (
        config.runs_trtllm()
    )  # the backend unfilled, but the executor's gpt_model_type: the tensorrt_llm model
    d = _deployment()
    triton.apply(d, config)
    assert d.gpu_memory_utilization is None and not d.issues  # every parameter unfilled: none stated
    assert "engine_dir" not in d.extra and "kv_max_tokens" not in d.extra


def test_fill_template_values_are_the_parameters_stated_at_their_lines():
    subs = triton.substitutions(FILL)
    assert subs is not None and subs["max_queue_size"] == "0"  # fill_template's own default
    config, _ = triton.read_config(triton.filled(TEMPLATE, subs), "repo/tensorrt_llm/config.pbtxt")
    assert config is not None and config.backend is not None and config.backend.text == "tensorrtllm"
    d = _deployment()
    triton.apply(d, config)
    assert d.gpu_memory_utilization is not None and d.gpu_memory_utilization.value == 0.5
    where = d.gpu_memory_utilization.where
    line = TEMPLATE.splitlines().index('    string_value: "${kv_cache_free_gpu_mem_fraction}"') + 1
    assert where is not None and (where.file, where.line, where.column) == (
        "repo/tensorrt_llm/config.pbtxt",
        line,
        19,
    )
    assert d.extra["kv_max_tokens"].value == 2560
    assert d.extra["engine_dir"].value == "/engines/llama-3-8b"
    assert d.extra["max_beam_width"].value == 1
    assert d.extra["enable_block_reuse"].value is False


def test_fill_template_escapes_and_a_malformed_entry():
    assert triton.substitutions(r"tokenizer_dir:/m/a\,b,x:1") == {
        "max_queue_size": "0",
        "tokenizer_dir": "/m/a,b",
        "x": "1",
    }
    assert (
        triton.substitutions("engine_dir") is None
    )  # `key, value = split(sub, ":")` raises in fill_template
    assert triton.filled("a: ${x} b: ${y}", {"x": "1"}) == "a: 1 b: ${y}"


def test_a_value_the_backend_cannot_convert_is_a_warning_naming_its_default():
    text = 'parameters { key: "kv_cache_free_gpu_mem_fraction" value { string_value: "most" } }\n'
    text += 'parameters { key: "max_tokens_in_paged_kv_cache" value { string_value: "4096tokens" } }\n'
    config, _ = triton.read_config(text, "c.pbtxt")
    d = _deployment()
    triton.apply(d, config)
    assert d.gpu_memory_utilization is None
    assert d.extra["kv_max_tokens"].value == 4096  # std::stoi reads the leading number
    (issue,) = d.issues
    assert issue.code == "KV005" and "0.9" in issue.message and "model_instance_state.cc:97" in issue.message
    assert (issue.where.file, issue.where.line, issue.where.column) == ("c.pbtxt", 1, 74)


def test_which_model_runs_tensorrt_llm():
    python_pre = 'backend: "python"\nparameters { key: "tokenizer_dir" value { string_value: "/m" } }\n'
    python_pre += 'parameters { key: "gpt_model_path" value { string_value: "/e" } }\n'  # as v0.18.2's has
    python_llm = 'backend: "python"\nparameters { key: "gpt_model_type" value { string_value: "inflight_fused_batching" } }\n'
    for text, runs in ((python_pre, False), (python_llm, True), ('backend: "tensorrtllm"', True)):
        config, _ = triton.read_config(text, "c.pbtxt")
        assert config is not None and config.runs_trtllm() is runs


@pytest.mark.parametrize(
    ("text", "line", "column"),
    [
        ("a: {", 1, 5),
        ("a: }", 1, 4),
        ('x: "abc', 1, 4),
        ("a { b: [1, 2 }", 1, 14),
        ("a: 1\n b\n", 3, 1),
        ("name: @", 1, 7),
        ('"x": 1', 1, 1),
        ("a: [1,", 1, 7),
    ],
)
def test_bad_text_is_a_located_error(text, line, column):
    config, issue = triton.read_config(text, "m/config.pbtxt")
    assert config is None and issue is not None
    assert issue.code == "KV001" and issue.severity == Severity.ERROR
    assert (issue.where.file, issue.where.line, issue.where.column) == ("m/config.pbtxt", line, column)


def test_bounds_depth_fields_and_size():
    deep = "a {" * (pbtxt.MAX_DEPTH + 5) + "}" * (pbtxt.MAX_DEPTH + 5)
    with pytest.raises(pbtxt.PbtxtError, match="nested deeper"):
        pbtxt.parse(deep)
    with pytest.raises(pbtxt.PbtxtError, match="fields"):
        pbtxt.parse("a: 1\n" * (pbtxt.MAX_FIELDS + 1))
    with pytest.raises(pbtxt.PbtxtError, match="larger than"):
        pbtxt.parse("#" * (pbtxt.MAX_BYTES + 1))
    ok = "a {" * pbtxt.MAX_DEPTH + "}" * pbtxt.MAX_DEPTH
    assert len(pbtxt.parse(ok).fields) == 1


def test_strings_escapes_and_adjacent_parts_join():
    root = pbtxt.parse("s: 'a\\'b' \"\\x41\\101\\n\"; n: -1.5e3, e: KIND_GPU")
    assert root.scalar("s").text == "a'bAA\n"
    assert root.scalar("n").text == "-1.5e3" and root.scalar("e").text == "KIND_GPU"


def test_a_parameter_whose_memory_the_plan_leaves_out_is_an_info_at_it():
    text = 'parameters { key: "max_attention_window_size" value { string_value: "4096" } }\n'
    text += 'parameters { key: "gpu_weights_percent" value { string_value: "1.0" } }\n'
    config, _ = triton.read_config(text, "c.pbtxt")
    d = _deployment()
    triton.apply(d, config)
    (info,) = d.issues  # all the weights on the GPU (1.0) is what the plan counts
    assert info.code == "KV004" and info.severity == Severity.INFO and info.where.line == 1
    assert "sliding window" in info.message and "model_instance_state.cc:142" in info.message
    config, _ = triton.read_config(
        'parameters { key: "gpu_weights_percent" value { string_value: "0.5" } }', "c"
    )
    d = _deployment()
    triton.apply(d, config)
    assert [i.code for i in d.issues] == ["KV004"] and d.extra["gpu_weights_percent"].value == 0.5
