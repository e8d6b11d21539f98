"""Bounded numbers (security review F5, F6, F8, F24) and one bad file never costing the others.

Every count, size and fraction read from input is checked against kvlint/bounds.py before any
arithmetic; an out-of-range value is a located KV001 (native spec) or KV005 (engine arguments,
Helm, Ray, ...) naming the accepted range, and no input crashes the run.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from conftest import FIXTURES, cpu_seconds, lint, rules_of

from kvlint.bounds import ARCHITECTURE, FIELDS, show
from kvlint.cli import main

K8S = """apiVersion: apps/v1
kind: Deployment
metadata: {{name: m}}
spec:
  template:
    spec:
      nodeSelector: {{cloud.google.com/gke-accelerator: nvidia-l4}}
      containers:
        - name: vllm
          image: {image}
          command: {command}
          args: {args}
          env: {env}
          resources: {{limits: {{nvidia.com/gpu: "1"}}}}
"""


def k8s(args: list[str], image="vllm/vllm-openai:v0.10.1", command=None, env=None) -> str:
    cmd = command or ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"]
    return K8S.format(image=image, command=json.dumps(cmd), args=json.dumps(args), env=json.dumps(env or []))


def spec(**fields) -> str:
    body = {"kind": "ServingSpec", "model": "meta-llama/Llama-3.1-8B-Instruct", "gpu": "L4", **fields}
    return "\n".join(f"{k}: {json.dumps(v) if not isinstance(v, str) else v}" for k, v in body.items()) + "\n"


def run(*args):
    return CliRunner().invoke(main, ["--isolated", "--no-color", *args], catch_exceptions=False)


def test_f5_reproducer_nan_no_longer_costs_the_other_files_report(tmp_path):
    """F5: one `--gpu-memory-utilization=nan` used to crash the run (exit 1, no SARIF at all)."""
    hostile = tmp_path / "x.yaml"
    hostile.write_text(k8s(["--gpu-memory-utilization=nan"]))
    out = tmp_path / "out.sarif"
    bad = str(FIXTURES / "KV102" / "bad-llama-8b-l4-128k.yaml")
    r = run("--exit-zero", "--format", "sarif", "-o", str(out), bad, str(hostile))
    assert r.exit_code == 0, r.output
    results = json.loads(out.read_text())["runs"][0]["results"]
    rules = {
        (x["ruleId"], x["locations"][0]["physicalLocation"]["artifactLocation"]["uri"][-6:]) for x in results
    }
    assert ("KV102", "k.yaml") in rules  # the other file's real finding is reported
    mine = [
        x
        for x in results
        if x["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("x.yaml")
    ]
    assert [x["ruleId"] for x in mine] == ["KV005"]
    assert "not a finite number" in mine[0]["message"]["text"] and "(0, 1]" in mine[0]["message"]["text"]
    assert mine[0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 12


HUGE = "9" * 4200
ENGINE_ARGS = [
    # (engine args, the accepted range the message must name)
    (["--gpu-memory-utilization=nan"], "(0, 1]"),
    (["--gpu-memory-utilization=inf"], "(0, 1]"),
    (["--gpu-memory-utilization=-inf"], "(0, 1]"),
    (["--gpu-memory-utilization=1e400"], "(0, 1]"),
    (["--cpu-offload-gb=nan"], "[0, "),
    (["--cpu-offload-gb=-1e308"], "[0, "),
    (["--kv-cache-memory-bytes=1e400"], "cannot read"),  # a size past 10^40 is refused while parsing
    (["--block-size=0"], "from 1 to 65,536"),
    (["--block-size=-16"], "from 1 to 65,536"),
    (["--pipeline-parallel-size=" + "9" * 30], "from 1 to 4,096"),
    (["--tensor-parallel-size=" + "9" * 4000], "from 1 to 4,096"),
    (["--max-num-batched-tokens=" + HUGE], "from 1 to 1,099,511,627,776"),
    (["--max-model-len=" + "9" * 4299 + "K"], "from 1 to 1,099,511,627,776"),
    (["--max-num-seqs=0"], "from 1 to"),
    (["--max-num-seqs=-1"], "from 1 to"),
    (["--tensor-parallel-size=0"], "from 1 to 4,096"),
    (["--tensor-parallel-size=-2"], "from 1 to 4,096"),
    (["--data-parallel-size=0"], "from 1 to 4,096"),
    (["--num-gpu-blocks-override=-5"], "from 1 to"),
    (["--pipeline-parallel-size=100000"], "from 1 to 4,096"),
]


@pytest.mark.parametrize("args,accepted", ENGINE_ARGS, ids=[a[0][0][:40] for a in ENGINE_ARGS])
def test_f5_f24_engine_arguments_out_of_range_are_located_kv005(args, accepted):
    start = cpu_seconds()
    r = lint(k8s(args))
    assert cpu_seconds() - start < 2
    kv005 = _value_findings(r)
    assert kv005, rules_of(r)
    assert any(accepted in f.message for f in kv005), [f.message for f in kv005]
    assert "kvlint accepts" in kv005[0].message or "cannot read" in kv005[0].message
    assert kv005[0].where.line == 12
    assert len(kv005[0].message) < 300  # a 4,200-digit value is not echoed whole
    # nothing is computed from a value kvlint refused: no capacity verdict from it
    assert not {"KV101", "KV102", "KV103", "KV201"} & set(rules_of(r)), rules_of(r)


def _value_findings(r) -> list:
    """The KV005s about a value; a flag the pinned release lacks (--kv-cache-memory-bytes is 0.10.2's, the
    pods here run v0.10.1) is tests/test_flag_sets.py's."""
    return [f for f in r.findings if f.rule == "KV005" and "has no option" not in f.message]


def _engine_pod(engine: str, args: list[str]) -> str:
    image, command = {
        "vllm": ("vllm/vllm-openai:v0.10.1", ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"]),
        "sglang": ("lmsysorg/sglang:v0.4.6", ["python3", "-m", "sglang.launch_server", "--model-path", "meta-llama/Llama-3.1-8B-Instruct"]),
        "tgi": ("ghcr.io/huggingface/text-generation-inference:3.0", ["text-generation-launcher", "--model-id", "meta-llama/Llama-3.1-8B-Instruct"]),
    }[engine]  # fmt: skip
    return k8s(args, image=image, command=command)


def _numeric_options() -> list[tuple[str, str]]:
    from kvlint.engines.sglang import options as sglang
    from kvlint.engines.tgi import options as tgi
    from kvlint.engines.vllm import options as vllm

    tables = {"vllm": vllm.MAPPING, "sglang": sglang.MAPPING, "tgi": tgi.MAPPING}
    return [
        (engine, option)
        for engine, mapping in tables.items()
        for option, (_, kind) in mapping.items()
        if kind in ("float", "int", "tokens", "bytes")
    ]


@pytest.mark.parametrize("engine,option", _numeric_options(), ids=lambda x: x)
@pytest.mark.parametrize("value", ["-1e308", "1e309", "-1e309", "1e308", "nan", "-inf", "9" * 400])
def test_extreme_values_of_every_numeric_engine_option_are_located_with_the_range(engine, option, value):
    """--cuda-memory-fraction=-1e308 (TGI), --mem-fraction-static=-1e308 (SGLang),
    --gpu-memory-utilization=1e309 (vLLM) and the like for every numeric option of the three
    engines: a KV005 at the value naming what kvlint accepts, never an OverflowError."""
    from kvlint.bounds import FIELDS
    from kvlint.engines.sglang import options as sglang
    from kvlint.engines.tgi import options as tgi
    from kvlint.engines.vllm import options as vllm

    target = {"vllm": vllm.MAPPING, "sglang": sglang.MAPPING, "tgi": tgi.MAPPING}[engine][option][0]
    r = lint(_engine_pod(engine, [f"{option}={value}"]))
    assert not any("internal error" in f.message for f in r.findings)
    mine = [f for f in _value_findings(r) if f.where.line == 12]
    assert mine, [(f.rule, f.message) for f in r.findings]
    assert FIELDS[target].describe() in mine[0].message, mine[0].message
    assert len(mine[0].message) < 300


def test_f5_sglang_and_tgi_fractions():
    sg = k8s(
        ["--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--mem-fraction-static=nan"],
        image="lmsysorg/sglang:v0.4.6",
        command=["python3", "-m", "sglang.launch_server"],
    )
    assert "not a finite number" in next(f.message for f in lint(sg).findings if f.rule == "KV005")
    tgi = k8s(
        ["--model-id", "meta-llama/Llama-3.1-8B-Instruct", "--cuda-memory-fraction=inf"],
        image="ghcr.io/huggingface/text-generation-inference:3.0",
        command=["text-generation-launcher"],
    )
    assert "not a finite number" in next(f.message for f in lint(tgi).findings if f.rule == "KV005")


def test_utilization_out_of_range_stays_kv208_and_builds_no_plan():
    r = lint(k8s(["--gpu-memory-utilization=2"]))
    assert "KV208" in rules_of(r) and not {"KV101", "KV102", "KV103"} & set(rules_of(r))
    assert r.deployments[0].plan is None


SPEC_CASES = [
    ({"max_context": "0x" + "f" * 20000}, "max_context", "1,099,511,627,776"),
    ({"max_context": "9" * 4299 + "K"}, "max_context", "1,099,511,627,776"),
    ({"max_context": "9" * 10000 + "k"}, "max_context", ""),
    ({"max_context": ":".join(["59"] * 3000)}, "max_context", "1,099,511,627,776"),
    ({"max_sequences": "0x" + "f" * 5000}, "max_sequences", ""),
    ({"block_size": "0x" + "f" * 300}, "block_size", "65,536"),
    ({"pipeline_parallel": 10**18}, "pipeline_parallel", "4,096"),
    ({"pipeline_parallel": 100000}, "pipeline_parallel", "4,096"),
    ({"budget": "{gpu_memory: 1e999999999GB}"}, "budget.gpu_memory", "too large"),
    ({"budget": "{gpu_memory: 1e400GB}"}, "budget.gpu_memory", "too large"),
    ({"budget": "{gpu_memory: 2e18GB}"}, "budget.gpu_memory", "1,152,921,504,606,846,976"),
    ({"budget": "{max_concurrency: .inf}"}, "budget.max_concurrency", "finite"),
    ({"architecture": "{params: 1e999B}"}, "architecture.params", "finite"),
    ({"architecture": "{params: .inf}"}, "architecture.params", "finite"),
    ({"architecture": "{vocab_size: 0x" + "f" * 400 + "}"}, "architecture.vocab_size", "16,777,216"),
    ({"architecture": "{max_positions: 0x" + "f" * 400 + "}"}, "architecture.max_positions", ""),
]


@pytest.mark.parametrize(
    "fields,key,accepted", SPEC_CASES, ids=[c[1] + str(i) for i, c in enumerate(SPEC_CASES)]
)
def test_f5_spec_fields_out_of_range_are_located_kv001(fields, key, accepted):
    start = cpu_seconds()
    r = lint(spec(**fields))
    assert cpu_seconds() - start < 2
    kv001 = [f for f in r.findings if f.rule == "KV001"]
    assert kv001 and key in kv001[0].message and accepted in kv001[0].message, rules_of(r)
    assert kv001[0].where.line == 4  # the line of the value (after kind, model, gpu)
    assert len(kv001[0].message) < 400


def test_f8_a_million_layers_is_refused_before_any_per_layer_loop():
    body = "kind: ServingSpec\nmodel: acme/unknown\ngpu: L4\narchitecture: {layers: 1000000, kv_heads: 8, params: 8B, head_dim: 128}\n"
    start = cpu_seconds()
    r = lint(body)
    assert cpu_seconds() - start < 1
    assert any(
        f.rule == "KV001" and "architecture.layers" in f.message and "10,000" in f.message for f in r.findings
    )


@pytest.mark.parametrize("key,value", [("num_hidden_layers", 10**7), ("num_hidden_layers", 10**9)])
def test_f8_config_json_layers_bounded(tmp_path, key, value):
    cfg = {
        "model_type": "llama",
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "num_hidden_layers": 32,
        "vocab_size": 128256,
        "max_position_embeddings": 131072,
        "intermediate_size": 14336,
        "torch_dtype": "bfloat16",
        key: value,
    }
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text(json.dumps(cfg))
    (tmp_path / "d.yaml").write_text("kind: ServingSpec\nmodel: ./m\ngpu: L4\nmax_context: 4096\n")
    start = cpu_seconds()
    r = run("--format", "json", str(tmp_path / "d.yaml"))
    assert cpu_seconds() - start < 2
    doc = json.loads(r.stdout)
    kv003 = [f for f in doc["findings"] if f["rule"] == "KV003"]
    assert kv003 and "num_hidden_layers" in kv003[0]["message"] and "10,000" in kv003[0]["message"]


@pytest.mark.parametrize(
    "key,value",
    [
        ("num_key_value_heads", 0),
        ("num_key_value_heads", -8),
        ("head_dim", -128),
        ("kv_lora_rank", -512),
        ("num_hidden_layers", 31.5),
        ("vocab_size", 0.5),
        ("hidden_size", 1e300),
    ],
)
def test_f24_config_json_impossible_values_flagged(tmp_path, key, value):
    cfg = {
        "model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8,
        "num_hidden_layers": 32, "vocab_size": 128256, "max_position_embeddings": 131072,
        "intermediate_size": 14336, "torch_dtype": "bfloat16", key: value,
    }  # fmt: skip
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    (tmp_path / "d.yaml").write_text("kind: ServingSpec\nmodel: ./config.json\ngpu: L4\nmax_context: 4096\n")
    r = run("--format", "json", str(tmp_path / "d.yaml"))
    doc = json.loads(r.stdout)
    msgs = [f["message"] for f in doc["findings"] if f["rule"] == "KV003"]
    assert msgs and key in msgs[0] and "expected" in msgs[0], doc["findings"]
    assert doc["deployments"][0]["plan"] is None


def test_f6_expansion_bomb_is_capped_and_not_echoed(tmp_path):
    a = "x" * 10000
    text = k8s(["--max-model-len=" + "$(A)" * 20000], env=[{"name": "A", "value": a}])
    path = tmp_path / "bomb.yaml"
    path.write_text(text)
    assert path.stat().st_size < 100_000
    for fmt in ("text", "json", "github", "sarif", "markdown", "concise"):
        start = cpu_seconds()
        r = run("--format", fmt, str(path))
        assert cpu_seconds() - start < 2, fmt
        # the expansion would be 200 M characters; SARIF's rule table alone is ~60 KB (one entry per rule)
        assert len(r.stdout) < 100_000, (fmt, len(r.stdout))
        assert "65,536 characters" in r.stdout, fmt


def test_f6_small_expansions_still_work():
    r = lint(k8s(["--max-model-len=$(LEN)"], env=[{"name": "LEN", "value": "131072"}]))
    assert "KV102" in rules_of(r)


@pytest.mark.parametrize(
    "key", ["tensor_parallel", "pipeline_parallel", "max_context", "block_size", "layers"]
)
def test_the_spec_schema_takes_its_limits_from_the_bounds_table(key):
    r = ARCHITECTURE[key] if key == "layers" else FIELDS[key]
    top, low = int(r.hi), int(r.lo)
    field = (lambda v: {"architecture": f"{{{key}: {v}}}"}) if key == "layers" else (lambda v: {key: v})
    assert not [f for f in lint(spec(**field(top))).findings if f.rule == "KV001"]
    for bad in (top + 1, low - 1):
        assert [f for f in lint(spec(**field(bad))).findings if f.rule == "KV001"], (key, bad)


def test_show_never_converts_a_huge_integer_to_decimal():
    assert show(int("9" * 4000)) in ("a number of about 4,000 digits", "a number of about 4,001 digits")
    assert show(1 << 40000).startswith("a number of about 12,")
    assert show(float("nan")) == "nan" and show("x" * 100).endswith("…")


@pytest.mark.parametrize(
    "engine,args",
    [
        ("tgi", ["--rope-factor=0"]),
        ("tgi", ["--rope-scaling", "linear", "--rope-factor", "-0.0"]),
        ("vllm", ["--hf-overrides", '{"rope_scaling": {"rope_type": "linear", "factor": 0}}']),
    ],
)
def test_a_rope_factor_of_zero_is_refused_not_used_to_scale_the_context_to_nothing(engine, args):
    """Found by the campaign (TGI `--rope-factor=0` in a shell script): the factor was accepted in
    [0, 2^20] and scaled the derived context length to 0, outside the bounds the plan may use."""
    r = lint(_engine_pod(engine, args))
    kv005 = [f for f in r.findings if f.rule == "KV005" and "rope_scaling.factor" in f.message]
    assert kv005 and "(0, 1,048,576]" in kv005[0].message and kv005[0].where.line == 12, rules_of(r)
    for d in r.deployments:
        if d.plan is not None:
            assert d.plan.max_model_len >= 1
