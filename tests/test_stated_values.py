"""A value the deployment states reaches every engine's plan as stated: across engines x fields.

For every engine kvlint models (the registry, `kvlint.engines.names()`) and
(a) every field of the native ServingSpec that sets an engine setting (read from the spec model, so a
    new field fails here until it has a legal value below), and
(b) every option an engine's memory-options table calls "modelled", stated on its command line (read
    from the tables, so a new row is covered),
a non-default legal value is linted in-process on a known model and GPU, and
- the engine's settings carry the value, located at the key and with origin "stated";
- no printed line names the setting with a "default" label;
- (a) the plan's arithmetic moves the way the value should (against the same document without it, or
  with another value); a higher memory fraction gives a larger pool on every engine;
- where the engine has no such setting, kvlint says so at the key (KV004/KV005), never drops it silently.
"""

from __future__ import annotations

import re

import pytest
from conftest import gpu_pod, lint

from kvlint import engines
from kvlint.deployment import FILLED, Value
from kvlint.engines import native
from kvlint.engines.memory_entry import MODELLED
from kvlint.extract.kinds.spec import ServingSpec

ENGINES = sorted(engines.names())
MODEL, GPU, CONTEXT = "meta-llama/Llama-3.1-8B-Instruct", "H100", 8192

# Spec fields that are not engine settings, and why.
NOT_SETTINGS = {
    "apiVersion": "the document's header",
    "kind": "the document's header",
    "name": "a label for messages",
    "engine": "picks the engine: the other axis of this test",
    "engine_version": "picks the release whose defaults apply, not a setting of it",
    "model": "what is served (the model every case uses)",
    "gpu": "the hardware (the GPU every case uses)",
    "gpus": "the GPUs a replica is given; KV201 checks them against the parallelism, no engine reads it",
    "architecture": "model facts for a model kvlint does not know",
    "budget": "the author's own planning figures, which kvlint checks against the plan",
}


def _bigger_pool(p, ref):
    return p.kv_pool > ref.kv_pool


def _changed(p, ref):
    return (p.pool_units, p.request_units, p.max_concurrency) != (
        ref.pool_units,
        ref.request_units,
        ref.max_concurrency,
    )


# field -> (EngineSettings attribute, a legal value (None: the opposite of the engine's default), how the
#           plan must move against the reference, the reference value (None: the document without the
#           field), the model when not MODEL)
FIELDS = {
    # fewer requests of the longer context fit a pool sized from memory; llama.cpp sizes its cache from the context
    "max_context": (
        "max_model_len",
        32768,
        lambda p, r: p.max_concurrency < r.max_concurrency or p.kv_tokens > r.kv_tokens,
        None,
        None,
    ),
    "max_sequences": ("max_num_seqs", 24, lambda p, r: p.max_num_seqs == 24, None, None),
    # a larger prefill budget never leaves a larger pool (activations, warm-up)
    "max_batched_tokens": ("max_batched_tokens", 16384, lambda p, r: p.kv_pool <= r.kv_pool, 2048, None),
    "gpu_memory_utilization": ("utilization", 0.7, lambda p, r: p.kv_pool < r.kv_pool, 0.8, None),
    "kv_cache_dtype": (
        "kv_cache_dtype",
        "fp8_e5m2",
        lambda p, r: p.kv_per_token < r.kv_per_token,
        None,
        None,
    ),
    "dtype": ("dtype", "float16", lambda p, r: p.weights_total == r.weights_total, None, None),
    "quantization": ("quantization", "fp8", lambda p, r: p.weights_total < r.weights_total, None, None),
    "block_size": ("block_size", 32, lambda p, r: p.block_size == 32, None, None),
    "tensor_parallel": ("tp", 2, _bigger_pool, None, None),
    "pipeline_parallel": ("pp", 2, _bigger_pool, None, None),
    "data_parallel": ("dp", 2, lambda p, r: p.kv_pool == r.kv_pool, None, None),
    "enforce_eager": ("enforce_eager", None, lambda p, r: p.kv_pool >= r.kv_pool, None, None),
    # a model with sliding-window layers, where the hybrid manager changes what the pool holds
    "hybrid_kv_cache_manager": ("hybrid_kv_cache_manager", None, _changed, None, "openai/gpt-oss-20b"),
}
# higher memory fraction, larger pool (monotonic in the fraction, whatever the engine's default is)
FRACTIONS = (0.6, 0.75, 0.9)


def _spec(engine: str, model: str = MODEL, **fields) -> str:
    body = {"kind": "ServingSpec", "engine": engine, "model": model, "gpu": GPU, "max_context": CONTEXT}
    body.update(fields)
    return "".join(f"{k}: {str(v).lower() if isinstance(v, bool) else v}\n" for k, v in body.items())


def _run(text: str):
    r = lint(text)
    assert len(r.deployments) == 1, [f.message for f in r.findings]
    res = r.deployments[0]
    assert res.settings is not None and res.plan is not None, [f.message for f in r.findings]
    return r, res


def _printed(r, res) -> list[str]:
    lines = [*res.plan.lines, *res.plan.notes]
    for f in r.findings:
        lines += [f.message, *f.details, f.fix or ""]
    return lines


def _names(engine: str, field: str) -> set[str]:
    """How the setting may be spelled in a printed line: the field, the engine's key for it, the engine's
    options (and environment forms) that write it, from its memory-options table."""
    e = native.entry(engine, field)
    keys = {field} | ({e.key} if isinstance(e, native.Extra) else set())
    names = set(keys)
    for option, row in engines.get(engine).memory_options().items():
        if row.target in keys:
            bare = option.lstrip("-")
            names |= {bare, bare.replace("-", "_"), bare.replace("-", "_").upper()}
    return names


def _no_default_label(lines: list[str], names: set[str]) -> None:
    for name in names:
        pattern = re.compile(rf"\b{re.escape(name)}[ =:]+\S+ \([^)]*default")
        bad = [line for line in lines if pattern.search(line)]
        assert not bad, (name, bad)


def _engine_value(res, engine: str, field: str) -> Value | None:
    e = native.entry(engine, field)
    f = res.in_force  # the settings in force: stated, carried onto the engine's own option, or its default
    if isinstance(e, native.Extra):
        return f.options.get(e.key)
    return getattr(f, field) if field in FILLED else getattr(res.deployment, field)


def test_every_setting_field_has_a_case():
    settings = set(ServingSpec.model_fields) - set(NOT_SETTINGS)
    assert settings == set(FIELDS), "give the new ServingSpec field a legal value and an invariant here"


@pytest.mark.parametrize("field", sorted(FIELDS))
@pytest.mark.parametrize("engine", ENGINES)
def test_a_stated_spec_field_reaches_the_engine(engine, field):
    attr, value, moves, ref, model = FIELDS[field]
    _, base = _run(_spec(engine, model or MODEL, **({field: ref} if ref is not None else {})))
    if value is None:
        value = not getattr(base.settings, attr)
    text = _spec(engine, model or MODEL, **{field: value})
    line = next(i for i, row in enumerate(text.splitlines(), 1) if row.startswith(f"{field}:"))
    r, res = _run(text)
    if getattr(res.settings, attr) != value:
        said = [f for f in r.findings if f.rule in ("KV004", "KV005") and f.where.line == line]
        assert said and field in said[0].message, (engine, field, getattr(res.settings, attr), value)
        return
    v = _engine_value(res, engine, field)
    assert v is not None and v.origin == "stated" and v.where is not None and v.where.line == line, v
    if field == "gpu_memory_utilization":
        assert res.settings.utilization_default == ""
    _no_default_label(_printed(r, res), _names(engine, field))
    assert moves(res.plan, base.plan), (engine, field, value)


# engines that size their pool from a memory share (llama.cpp allocates fixed buffers and has none)
SHARED = [e for e in ENGINES if not isinstance(native.entry(e, "gpu_memory_utilization"), native.Absent)]


@pytest.mark.parametrize("engine", SHARED)
def test_a_higher_memory_fraction_gives_a_larger_pool(engine):
    pools = [_run(_spec(engine, gpu_memory_utilization=u))[1].plan.kv_pool for u in FRACTIONS]
    assert pools == sorted(pools) and len(set(pools)) == len(pools), pools


# --- (b) every option an engine's memory-options table calls "modelled", on the engine's command line ---

COMMAND = {
    # v0.14.0: the first release that takes --max-model-len auto
    "vllm": ("vllm/vllm-openai:v0.14.0", ["--model", MODEL, "--max-model-len", "8192"]),
    "sglang": (
        "lmsysorg/sglang:v0.5.14",
        ["python3", "-m", "sglang.launch_server", "--model-path", MODEL, "--context-length", "8192"],
    ),
    "tgi": (
        "ghcr.io/huggingface/text-generation-inference:3.2.0",
        ["--model-id", MODEL, "--max-total-tokens", "8192"],
    ),
    "llamacpp": ("ghcr.io/ggml-org/llama.cpp:server-cuda-b6500", ["-m", MODEL, "-c", "8192"]),
    "lmdeploy": (
        "openmmlab/lmdeploy:v0.10.2-cu12",
        ["lmdeploy", "serve", "api_server", MODEL, "--session-len", "8192"],
    ),
    # NIM's image serves MODEL (kvlint/engines/nim/data/images.json); its settings are variables
    "nim": ("nvcr.io/nim/meta/llama-3.1-8b-instruct:1.3.3", []),
    "trtllm": (
        "nvcr.io/nvidia/tensorrt-llm/release:1.0.0",
        ["trtllm-serve", "serve", MODEL, "--max_seq_len", "8192"],
    ),
}
BASE_ENV = {"nim": {"NIM_MODEL_PROFILE": "vllm-bf16-tp1", "NIM_MAX_MODEL_LEN": "8192"}}
_JSON = '{"max_position_embeddings": 65536}'
# A legal value for options whose kind (the reader's MAPPING) does not give one, and for the ones it
# gives wrongly (a count that must be small, a text from a list of choices); the option's own written
# form for environment variables and options that take no value of their own kind.
VALUES = {
    "tensor_parallel": "2",
    "pipeline_parallel": "2",
    "data_parallel": "2",
    "block_size": "32",
    "max_context": "4096",
    "max_input_tokens": "2048",
    "max_batch_total_tokens": "100000",
    "speculative_num_draft_tokens": "4",
    "num_redundant_experts": "2",
    "gpu_memory_utilization": "0.8",
    "mem_fraction_static": "0.8",
    "cuda_memory_fraction": "0.8",
    "mamba_full_memory_ratio": "0.5",
    "cpu_offload_gb": "2",
    "kv_cache_memory_bytes": "21474836480",
    "dtype": "float16",
    "quantization": "fp8",
    "kv_cache_dtype": "fp8_e5m2",
    "distributed_executor_backend": "mp",
    "mamba_cache_mode": "all",
    "mamba_ssm_dtype": "bfloat16",
    "performance_mode": "throughput",
    "speculative_algorithm": "NGRAM",
    "cuda_graph_backend_prefill": "full",
    "cuda_graph_backend_decode": "full",
    "attention_backend": "flashinfer",
    "nnodes": "1",
    "cache_type_v": "f32",
    "flash_attn": "on",
    "n_gpu_layers": "20",
    "cache_max_entry_count": "0.5",
    "backend": "pytorch",
}
SPECIAL = {  # option -> the words written (environment variables: NAME=value)
    "--max-model-len auto": ["--max-model-len", "auto"],
    "--hf-overrides": ["--hf-overrides", _JSON],
    "--json-model-override-args": ["--json-model-override-args", _JSON],
    "--rope-scaling": ["--rope-scaling", '{"rope_type": "dynamic", "factor": 2.0}'],
    "--rope-theta": ["--rope-theta", "1000000"],
    "--eplb-config": ["--eplb-config", '{"num_redundant_experts": 2}'],
    "--cudagraph-capture-sizes": ["--cudagraph-capture-sizes", "1", "2", "4"],
    "--cuda-graph-sizes": ["--cuda-graph-sizes", "64"],
    "--rope-factor": ["--rope-scaling", "dynamic", "--rope-factor", "2.0"],
    "--sharded": ["--sharded", "true"],  # a clap bool of TGI's launcher takes a value
    "--quant-policy": ["--quant-policy", "8"],  # LMDeploy's KV int8 (fp8 needs v0.14)
    "VLLM_USE_V1": ["VLLM_USE_V1=0"],
    "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS": ["VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1"],
    "VLLM_USE_FLASHINFER_SAMPLER": ["VLLM_USE_FLASHINFER_SAMPLER=0"],
    "VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE": [
        "VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=1"
    ],
    "VLLM_ALLOW_LONG_MAX_MODEL_LEN": ["VLLM_ALLOW_LONG_MAX_MODEL_LEN=1"],
    "PREFIX_CACHING": ["PREFIX_CACHING=0"],
    "PREFILL_CHUNKING": ["PREFILL_CHUNKING=0"],
    "ATTENTION": ["ATTENTION=paged"],
    "CUDA_VISIBLE_DEVICES": ["CUDA_VISIBLE_DEVICES=0,1"],
    "NIM_TAGS_SELECTOR": ["NIM_TAGS_SELECTOR=llm_engine=vllm,tp=1"],
}
_BY_KIND = {"int": "4096", "tokens": "4096", "float": "2"}


def _words(engine: str, option: str, target: str) -> list[str]:
    if option in SPECIAL:
        return SPECIAL[option]
    kind = engines.get(engine).mapping()[option][1]
    if kind.startswith("bool"):
        return [option]
    value = VALUES.get(target, _BY_KIND.get(kind, ""))
    return [f"{option}={value}"] if option.isupper() else [option, value]  # a variable: NAME=value


MODELLED_OPTIONS = [
    (engine, option, row.target)
    for engine in ENGINES
    for option, row in engines.get(engine).memory_options().items()
    if row.status == MODELLED and row.target != "model"  # the model is what every case serves
]


def _manifest(engine: str, words: list[str]) -> tuple[str, str]:
    """The engine's pod with `words` added (NAME=value words as environment variables); the first word."""
    image, args = COMMAND[engine]
    env = dict(w.split("=", 1) for w in words if "=" in w and not w.startswith("-"))
    flags = [w for w in words if w.split("=", 1)[0] not in env]
    return gpu_pod(image, args + flags, {**BASE_ENV.get(engine, {}), **env}, gpus=2), (flags or list(env))[0]


@pytest.mark.parametrize(("engine", "option", "target"), MODELLED_OPTIONS)
def test_a_modelled_option_reaches_the_engine_as_stated(engine, option, target):
    text, first = _manifest(engine, _words(engine, option, target))
    line = next(i for i, row in enumerate(text.splitlines(), 1) if first in row)
    r = lint(text)
    assert len(r.deployments) == 1, [f.message for f in r.findings]
    res = r.deployments[0]
    d = res.deployment
    v = d.extra.get(target, getattr(d, target, None))
    said = [f for f in r.findings if f.rule in ("KV004", "KV005") and f.where.line == line]
    if not isinstance(v, Value):
        assert said, (engine, option, target, [f.message for f in r.findings])
        return
    assert v.origin == "stated", (engine, option, v)
    if res.plan is not None:
        bare = option.split()[0].lstrip("-")
        names = {target, bare, bare.replace("-", "_"), bare.replace("-", "_").upper()}
        _no_default_label(_printed(r, res), names)
