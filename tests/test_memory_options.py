"""Engine options that change memory: every option a reader writes onto the deployment is either applied by a
named function that really reads it, or listed as not modelled / of no effect; a stated not-modelled option is
a KV004 info at the option; --num-gpu-blocks-override sets vLLM's block count."""

from __future__ import annotations

import importlib
import inspect
import re

import pytest
from catalog_arch import arch_of
from conftest import lint, vllm_settings

from kvlint.catalog.gpus import lookup as lookup_gpu
from kvlint.deployment import Deployment
from kvlint.engines.lmdeploy import memory_options as lmdeploy_memory
from kvlint.engines.lmdeploy import options as lmdeploy
from kvlint.engines.memory_entry import MODELLED, NO_EFFECT, NOT_MODELLED
from kvlint.engines.sglang import memory_options as sglang_memory
from kvlint.engines.sglang import options as sglang
from kvlint.engines.tgi import llamacpp as tgi_llamacpp
from kvlint.engines.tgi import llamacpp_memory_options as llamacpp_memory
from kvlint.engines.tgi import memory_options as tgi_memory
from kvlint.engines.tgi import options as tgi
from kvlint.engines.vllm import memory_options as vllm_memory
from kvlint.engines.vllm import options as vllm_args
from kvlint.engines.vllm import plan as vllm
from kvlint.engines.vllm.settings import _EXTRA_KEYS
from kvlint.extract.pod.engine_args import memory_options
from kvlint.extract.pod.engine_args.options import load_table
from kvlint.findings import Severity
from kvlint.record import fields, replace

READERS = {
    "vllm": vllm_args,
    "sglang": sglang,
    "tgi": tgi,
    "tgi-llamacpp": tgi_llamacpp,
    "lmdeploy": lmdeploy,
}
TABLES = {
    "vllm": vllm_memory.table(),
    "sglang": sglang_memory.table(),
    "tgi": tgi_memory.table(),
    "tgi-llamacpp": llamacpp_memory.table(),
    "lmdeploy": lmdeploy_memory.table(),
}


def table(engine: str):
    return TABLES[engine]


FIELDS = set(fields(Deployment))


def _function(dotted: str):
    module, _, rest = dotted.rpartition(".")
    try:
        obj = importlib.import_module(module)
        return obj if not rest else getattr(obj, rest)
    except ImportError:  # a method: module.Class.method
        module, _, cls = module.rpartition(".")
        return getattr(getattr(importlib.import_module(module), cls), rest)


def _written_extra_keys(engine: str) -> set[str]:
    """The `d.extra` keys an engine's reader writes beside its MAPPING (read from its source)."""
    text = inspect.getsource(READERS[engine])
    keys = set(re.findall(r'd\.extra\["(\w+)"\]', text))
    if engine == "vllm":
        keys |= set(vllm_args.ENV.values())  # written as d.extra[name]
    if "override_model(" in text or "model_overrides" in text:
        keys.add("model_overrides")
    if "adapters.record(" in text:
        keys.add("lora_adapters")
    return keys


@pytest.mark.parametrize("engine", sorted(READERS))
def test_every_option_a_reader_writes_is_in_the_table(engine):
    entries = table(engine)
    targets = {e.target for e in entries.values()}
    missing = [o for o in READERS[engine].MAPPING if o not in entries]
    assert not missing, (
        f"{engine}: options read onto the deployment but not in its data/memory_options.json: {missing}"
    )
    for option, (target, _) in READERS[engine].MAPPING.items():
        assert entries[option].target == target, option
    unlisted = _written_extra_keys(engine) - targets
    assert not unlisted, f"{engine}: deployment keys written but in no table entry: {sorted(unlisted)}"


@pytest.mark.parametrize("engine", sorted(READERS))
def test_modelled_options_name_a_function_that_reads_them(engine):
    for option, entry in table(engine).items():
        assert entry.status in (MODELLED, NOT_MODELLED, NO_EFFECT), option
        if entry.status != MODELLED:
            assert entry.changes and entry.source, (
                f"{option}: say what it changes and where the engine says so"
            )
            if entry.said_by:
                assert entry.target in inspect.getsource(_function(entry.said_by)), option
            if (
                not entry.applied_by
            ):  # else a part of it is applied (--kv-transfer-config: the hybrid manager)
                continue
        assert _reads(_function(entry.applied_by), entry.target), (
            f"{option}: {entry.applied_by} does not read {entry.target}"
        )


def _reads(fn, target: str) -> bool:
    """The function's source names the key, or a module constant that holds it (vllm_sampler.ENV)."""
    source = inspect.getsource(fn)
    module = inspect.getmodule(fn)
    constants = [name for name, value in vars(module).items() if value == target and name.isupper()]
    return target in source or any(re.search(rf"\b{name}\b", source) for name in constants)


def test_vllm_plan_options_reach_the_plan():
    """An option the vLLM plan reads from EngineSettings.extra must be passed there (the class of bug
    --num-gpu-blocks-override had: read, then dropped by settings)."""
    for option, entry in table("vllm").items():
        if entry.status == MODELLED and entry.applied_by.startswith("kvlint.engines.vllm.plan."):
            if entry.target not in FIELDS:
                assert entry.target in _EXTRA_KEYS, option


@pytest.mark.parametrize("engine", sorted(READERS))
def test_table_options_are_the_engines_own(engine):
    known = load_table(READERS[engine].OPTIONS, engine)
    for option in table(engine):
        if option.startswith("--") and " " not in option:
            assert known.lookup(option) == (option, False), f"{engine} has no option {option}"


def _vllm(args: str, env: str = "", tag: str = "v0.10.1") -> str:
    return f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: m}}
spec:
  template:
    spec:
      nodeSelector: {{nvidia.com/gpu.product: NVIDIA-L4}}
      containers:
        - name: vllm
          image: vllm/vllm-openai:{tag}
          args: [{args}]
{env}          resources: {{limits: {{nvidia.com/gpu: "1"}}}}
"""


def test_a_stated_unmodelled_option_is_said_at_the_option():
    text = _vllm(
        '"--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192",\n'
        '                 "--speculative-config", \'{"method": "eagle", "model": "yuhuili/EAGLE-LLaMA3.1-Instruct-8B"}\''
    )
    result = lint(text)
    kv004 = [f for f in result.findings if f.rule == "KV004"]
    assert len(kv004) == 1, [f.message for f in result.findings]
    assert kv004[0].where.line == 12 and "--speculative-config" in kv004[0].message
    assert "gpu_model_runner.py" in kv004[0].message and kv004[0].severity == Severity.INFO


def test_options_the_plan_names_or_models_are_not_repeated():
    text = _vllm(
        '"--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192", "--enable-lora",'
        ' "--enforce-eager", "--swap-space", "4"'
    )
    assert not [f for f in lint(text).findings if f.rule == "KV004"]


def test_tgi_environment_form_is_said_too():
    text = """apiVersion: apps/v1
kind: Deployment
metadata: {name: t}
spec:
  template:
    spec:
      nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}
      containers:
        - name: tgi
          image: ghcr.io/huggingface/text-generation-inference:3.0.1
          args: ["--model-id", "meta-llama/Llama-3.1-8B-Instruct", "--max-total-tokens", "4096"]
          env:
            - {name: SPECULATE, value: "2"}
          resources: {limits: {nvidia.com/gpu: "1"}}
"""
    kv004 = [f for f in lint(text).findings if f.rule == "KV004"]
    assert [(f.where.line, "--speculate" in f.message) for f in kv004] == [(13, True)]


def test_num_gpu_blocks_override_sets_the_block_count():
    """vLLM replaces the block count the memory gives with the stated one (vllm==0.10.0:
    vllm/v1/core/kv_cache_utils.py:774-780): the pool, tokens and concurrency follow it."""
    arch, gpu = arch_of("meta-llama/Llama-3.1-8B-Instruct"), lookup_gpu("L4")
    base = vllm_settings(max_model_len=8192, extra={})
    free = vllm.plan(arch, gpu, base)
    fixed = vllm.plan(arch, gpu, replace(base, extra={"num_gpu_blocks_override": 100}))
    assert free.num_blocks > 1000
    assert fixed.num_blocks == 100 and fixed.kv_tokens == 1600
    assert fixed.kv_pool == 100 * fixed.page_bytes * fixed.layers_per_block
    assert fixed.max_concurrency == pytest.approx(99 / 512)  # 8,192 tokens = 512 blocks; one null block
    assert any(f"instead of the {free.num_blocks:,}" in n for n in fixed.notes)
    more = vllm.plan(arch, gpu, replace(base, extra={"num_gpu_blocks_override": free.num_blocks + 1}))
    assert any("CUDA out of memory" in n for n in more.notes)


def test_num_gpu_blocks_override_from_the_command_line_reaches_the_finding():
    text = _vllm(
        '"--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192",'
        ' "--num-gpu-blocks-override", "100"'
    )
    kv102 = [f for f in lint(text).findings if f.rule == "KV102"]
    assert len(kv102) == 1 and "(1,600 tokens)" in kv102[0].message


def test_report_is_a_noop_for_a_deployment_without_such_options():
    from kvlint.extract.pod.engine_args.options import Parsed
    from kvlint.findings import Location

    d = Deployment(file="x", where=Location("x", 1, 1), kind="Deployment")
    memory_options.report(d, Parsed(), TABLES["vllm"], "vLLM")
    assert d.issues == []


def _kv004(args: str) -> list[str]:
    return [f.message for f in lint(_vllm(args)).findings if f.rule == "KV004"]


BASE = '"--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192", '


def test_kv_connectors_that_register_the_pool_in_place_are_not_said():
    """NixlConnector registers the KV-cache tensors themselves (vllm==0.33.0 nixl/base_worker.py:806-810);
    a connector kvlint does not know to do so is said, named."""
    assert (
        _kv004(BASE + '"--kv-transfer-config", \'{"kv_connector":"NixlConnector","kv_role":"kv_both"}\'')
        == []
    )
    said = _kv004(
        BASE + '"--kv-transfer-config", \'{"kv_connector":"LMCacheConnectorV1","kv_role":"kv_both"}\''
    )
    assert len(said) == 1 and "kv_connector LMCacheConnectorV1" in said[0]


def test_compilation_config_capture_sizes_reach_the_cuda_graph_estimate():
    result = lint(
        _vllm(BASE + '"--compilation-config", \'{"cudagraph_capture_sizes": [1, 2, 4, 8]}\'', tag="v0.22.0")
    )
    (plan,) = [r.plan for r in result.deployments]
    graphs = next(t for t in plan.terms if t.label == "CUDA graphs")
    assert "captures up to 8 sequences" in graphs.note
    assert not [f for f in result.findings if f.rule == "KV004"]
    eager = lint(_vllm(BASE + '"--compilation-config", \'{"cudagraph_mode": "NONE"}\'', tag="v0.22.0"))
    assert not [t for t in eager.deployments[0].plan.terms if t.label == "CUDA graphs"]
    assert _kv004(BASE + '"--compilation-config", "3"') == []  # a bare level: compiler passes only
    said = _kv004(BASE + '"--compilation-config", \'{"cudagraph_mode": "PIECEWISE"}\'')
    assert len(said) == 1 and "cudagraph_mode PIECEWISE" in said[0]


def test_an_option_on_an_accelerator_kvlint_does_not_plan_is_not_said():
    text = (
        _vllm(
            BASE
            + '"--speculative-config", \'{"method": "eagle", "model": "yuhuili/EAGLE-LLaMA3.1-Instruct-8B"}\''
        )
        # TPU v4: a chip whose HBM kvlint does not know (catalog/tpus.py), so the workload is not planned
        .replace("nvidia.com/gpu.product: NVIDIA-L4", "cloud.google.com/gke-tpu-accelerator: tpu-v4-podslice")
        .replace('nvidia.com/gpu: "1"', 'google.com/tpu: "4"')
    )
    kv004 = [f.message for f in lint(text).findings if f.rule == "KV004"]
    assert len(kv004) == 1 and "TPU" in kv004[0]


def _sglang(extra_args: str) -> str:
    return (
        _vllm("", tag="")
        .replace("vllm/vllm-openai:", "lmsysorg/sglang:v0.5.5")
        .replace(
            "args: []",
            'command: ["python3", "-m", "sglang.launch_server", "--model-path", "meta-llama/Llama-3.1-8B-Instruct",'
            f' "--context-length", "8192"{extra_args}]',
        )
    )


def test_sglang_cpu_offload_takes_weights_off_the_gpu():
    """SGLang offloads up to cpu_offload_gb x 1024**3 bytes of weights to the CPU
    (sglang==0.5.23:sglang/srt/utils/offloader.py:69-71), so the memory left after loading is larger."""
    (base,) = [r.plan for r in lint(_sglang("")).deployments]
    (off,) = [r.plan for r in lint(_sglang(', "--cpu-offload-gb", "4"')).deployments]
    assert base.weights_per_gpu - off.weights_per_gpu == 4 << 30
    assert "offloaded to CPU (--cpu-offload-gb)" in off.weights_source
    assert off.kv_tokens - base.kv_tokens == pytest.approx(
        (4 << 30) / base.kv_per_token, abs=base.block_size + 1
    )


def test_redundant_experts_add_expert_weights_per_gpu():
    """EPLB's redundant experts are extra physical copies the EP ranks hold: with expert parallelism over 2
    ranks each holds ceil((128 + 32) / 2) = 80 of Qwen3-30B-A3B's 128 experts per layer instead of 64
    (vllm==0.33.0:vllm/config/parallel.py:77); sharded by TP (SGLang) each holds (128 + 32) / 128 / 2."""
    from kvlint.capacity.weights import weights

    arch = arch_of("Qwen/Qwen3-30B-A3B")
    experts = sum(lp.experts for lp in arch.layer_params) * 2  # bf16
    plain = weights(arch, 2, 1, moe_ranks=2, expert_parallel=True)
    spare = weights(arch, 2, 1, moe_ranks=2, expert_parallel=True, redundant_experts=32)
    assert spare.per_stage[0] - plain.per_stage[0] == pytest.approx(experts * (80 - 64) / 128, rel=1e-6)
    assert "32 redundant experts" in spare.source and spare.total == plain.total
    tp = weights(arch, 2, 1, engine="sglang", redundant_experts=32)
    tp0 = weights(arch, 2, 1, engine="sglang")
    assert tp.per_stage[0] - tp0.per_stage[0] == pytest.approx(experts * 32 / 128 / 2, rel=1e-6)


def test_eplb_config_reaches_the_vllm_plan():
    args = (
        '"--model", "Qwen/Qwen3-30B-A3B", "--max-model-len", "8192", "--tensor-parallel-size", "2", '
        '"--enable-expert-parallel", "--enable-eplb"'
    )
    h100 = lambda text: text.replace("NVIDIA-L4", "NVIDIA-H100-80GB-HBM3").replace('gpu: "1"', 'gpu: "2"')  # noqa: E731
    (plain,) = [r.plan for r in lint(h100(_vllm(args, tag="v0.22.0"))).deployments]
    spare = lint(h100(_vllm(args + ', "--eplb-config", \'{"num_redundant_experts": 32}\'', tag="v0.22.0")))
    (plan,) = [r.plan for r in spare.deployments]
    assert plan.weights_per_gpu > plain.weights_per_gpu and plan.kv_tokens < plain.kv_tokens
    assert not [f for f in spare.findings if f.rule == "KV004"]


def test_json_options_read_their_dotted_keys_and_say_when_unreadable():
    """vLLM takes `--eplb-config.num_redundant_experts 32` as `--eplb-config '{"num_redundant_experts": 32}'`;
    a value that is not JSON is a KV005 at it (vLLM's argparse refuses it), not a silent default."""
    args = (
        '"--model", "Qwen/Qwen3-30B-A3B", "--max-model-len", "8192", "--tensor-parallel-size", "2", '
        '"--enable-expert-parallel", "--enable-eplb", '
    )
    dotted = lint(_vllm(args + '"--eplb-config.num_redundant_experts", "32"'))
    (d,) = [r.deployment for r in dotted.deployments]
    assert d.extra["num_redundant_experts"].value == 32 and d.extra["num_redundant_experts"].where.line == 11
    broken = lint(_vllm(args + '"--compilation-config", "{cudagraph_mode: NONE"'))
    said = [(f.rule, f.where.line) for f in broken.findings if f.rule in ("KV004", "KV005")]
    assert said == [("KV005", 11)], said


def test_a_dotted_key_of_an_unmodelled_json_option_is_said_too():
    said = _kv004(BASE + '"--compilation-config.cudagraph_mode", "PIECEWISE"')
    assert len(said) == 1 and "cudagraph_mode PIECEWISE" in said[0]
    assert _kv004(BASE + '"--compilation-config.mode", "3"') == []  # compiler level only


@pytest.mark.parametrize(
    ("flag", "words", "largest", "tag"),
    [
        ("--cudagraph-capture-sizes", '"1", "2", "4", "16"', 16, "v0.22.0"),
        # one value N: sizes up to N (vllm==0.10.2 config/__init__.py:3653); 0.12.0 is the last release
        # with the flag (kvlint/engines/vllm/data/flag_sets.json), one before the CUDA-graph estimate: an
        # unpinned image, where the flag may be the release's
        ("--cuda-graph-sizes", '"64"', 64, "latest"),
        ("--cuda-graph-sizes", '"[8, 32]"', 32, "latest"),
    ],
)
def test_capture_size_lists_set_the_largest_graph(flag, words, largest, tag):
    result = lint(_vllm(BASE + f'"{flag}", {words}', tag=tag))
    (plan,) = [r.plan for r in result.deployments]
    graphs = next(t for t in plan.terms if t.label == "CUDA graphs")
    assert f"captures up to {largest} sequences" in graphs.note
    assert not [f for f in result.findings if f.rule in ("KV004", "KV005")]


def test_multimodal_limits_of_zero_say_the_encoder_is_not_loaded():
    """vLLM 0.33 skips a tower whose modalities all have limit 0 (model_executor/models/interfaces.py:389-390);
    other limits size the profile run's dummy batch, which the plan prices (engines/vllm/encoder.py)."""
    zero = _kv004(BASE + '"--limit-mm-per-prompt", \'{"image": 0, "video": 0}\'')
    some = _kv004(BASE + '"--limit-mm-per-prompt", \'{"image": 5}\'')
    assert len(zero) == 1 and "do not load it" in zero[0]
    assert some == []


def test_ngram_speculation_has_no_draft_model_to_say():
    assert _kv004(BASE + '"--speculative-config", \'{"method": "ngram", "num_speculative_tokens": 4}\'') == []


def test_sglang_ngram_speculation_has_no_draft_model_note():
    """SGLang's NGRAM drafts from a host-side lookup and writes no draft KV (sglang==0.5.23
    sglang/srt/speculative/spec_info.py:169-178); EAGLE loads a draft model."""
    (ngram,) = [r.plan for r in lint(_sglang(', "--speculative-algorithm", "NGRAM"')).deployments]
    (eagle,) = [r.plan for r in lint(_sglang(', "--speculative-algorithm", "EAGLE"')).deployments]
    assert not any("draft model's weights" in n for n in ngram.notes)
    assert any("draft model's weights" in n for n in eagle.notes)
