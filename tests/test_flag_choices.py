"""A value outside the pinned release's choices, and a prefix several of its options share, stop the engine's
parser at start-up: errors where the release is pinned and read, a warning that names the assumption where it
is not; a value that release takes, a choices list the source computes at run time, and a prefix one option of
that release has are never findings. The releases' choices are read from the engines' own sources
(benchmarks/engine_choices.py over each vLLM and SGLang wheel, benchmarks/clap_enums.py over TGI's
launcher/src/main.rs at each tag)."""

from __future__ import annotations

import sys

import pytest
from conftest import ROOT, SHARED, gpu_pod, lint

from kvlint.engines import flag_choices
from kvlint.findings import Severity

sys.path.insert(0, str(ROOT / "benchmarks"))
import argparse_calls  # noqa: E402
import clap_enums  # noqa: E402
import engine_choices  # noqa: E402

VLLM = "docker.io/vllm/vllm-openai:{}"
SGLANG = "lmsysorg/sglang:{}"
TGI = "ghcr.io/huggingface/text-generation-inference:{}"


def _kv005(result, *severities: Severity):
    return [f for f in result.findings if f.rule == "KV005" and f.severity in severities]


def _refusals(image: str, args: list[str], env: dict[str, str] | None = None):
    found = lint(gpu_pod(image, ["--model", "meta-llama/Llama-3.1-8B-Instruct", *args], env))
    return [f for f in _kv005(found, Severity.ERROR, Severity.WARNING) if "has no option" not in f.message]


def test_a_kv_cache_dtype_newer_than_the_pinned_release_is_an_error_naming_who_takes_it():
    """fp8_inc joins CacheDType in vLLM 0.10.0 (vllm==0.10.0:vllm/config.py CacheDType); 0.9.2's argparse
    has choices auto, fp8, fp8_e4m3, fp8_e5m2 (get_kwargs over CacheConfig.cache_dtype)."""
    (found,) = _refusals(VLLM.format("v0.9.2"), ["--kv-cache-dtype", "fp8_inc"])
    assert found.severity is Severity.ERROR
    assert "vLLM 0.9.2 refuses --kv-cache-dtype 'fp8_inc' (vLLM 0.10.0 to" in found.message
    assert "argument --kv-cache-dtype: invalid choice: 'fp8_inc'" in found.message
    assert "it takes auto, fp8, fp8_e4m3, fp8_e5m2" in found.message
    assert _refusals(VLLM.format("v0.10.0"), ["--kv-cache-dtype", "fp8_inc"]) == []


def test_a_typo_d_dtype_is_an_error_with_a_did_you_mean():
    (found,) = _refusals(VLLM.format("v0.10.0"), ["--dtype=bfloat"])
    assert found.severity is Severity.ERROR and found.fix == "did you mean --dtype bfloat16?"


def test_a_quantization_method_the_release_dropped_is_an_error():
    """aqlm is in QuantizationMethods to 0.10.0 and gone in 0.10.1
    (vllm==0.10.1:vllm/model_executor/layers/quantization/__init__.py)."""
    (found,) = _refusals(VLLM.format("v0.10.1"), ["--quantization", "aqlm"])
    # 0.9.2's ModelConfig.quantization is typed Any at run time (vllm==0.9.2:vllm/config.py:78): no choices
    assert "vLLM 0.6.0 to 0.9.1, 0.10.0 accept it" in found.message
    assert _refusals(VLLM.format("v0.10.0"), ["-q", "aqlm"]) == []


def test_an_int_choice_is_compared_as_argparse_converts_it():
    """--block-size: type=int, choices 1 to 128 in 0.10.0, 256 added in 0.11.1 (BlockSize Literal)."""
    assert _refusals(VLLM.format("v0.10.0"), ["--block-size", "016"]) == []  # int("016") is 16
    (found,) = _refusals(VLLM.format("v0.10.0"), ["--block-size", "256"])
    assert "0.11.1 to" in found.message
    assert _refusals(VLLM.format("v0.11.1"), ["--block-size", "256"]) == []


@pytest.mark.parametrize(
    ("tag", "args"),
    [
        (
            "v0.10.0",
            ["--reasoning-parser", "made_up_parser"],
        ),  # list(ReasoningParserManager.reasoning_parsers)
        ("v0.20.1", ["--load-format", "made_up_loader"]),  # a model-loader registry: type=str, no choices
        ("v0.20.1", ["--quantization", "made_up_method"]),  # QuantizationMethods | str: a metavar, no choices
        ("v0.33.0", ["--kv-cache-dtype", "made_up_dtype"]),  # CacheDType | str: platforms register more
        ("v0.10.0", ["--quantization", "None"]),  # optional_type maps it to None
    ],
)
def test_choices_computed_at_run_time_are_left_unjudged(tag, args):
    assert _refusals(VLLM.format(tag), args) == []


def test_the_table_says_which_choices_it_leaves_unjudged():
    runs = dict(flag_choices._runs("vllm"))["--reasoning-parser"]
    assert [run["unjudged"] for _r, run in runs if "unjudged" in run] == [
        "list(ReasoningParserManager.reasoning_parsers)"
    ]


def test_an_unpinned_release_warns_only_of_a_value_no_release_read_takes():
    (found,) = _refusals(VLLM.format("latest"), ["--dtype", "bfloat"])
    assert found.severity is Severity.WARNING and "no release is pinned" in found.message
    assert _refusals(VLLM.format("latest"), ["--kv-cache-dtype", "fp8_inc"]) == []


def test_sglang_values_are_judged_at_a_pinned_release_only():
    """SGLang's choices were read to 0.5.13.post1 while 0.5.14 on exist: an unpinned image may be newer.
    fp4_e2m1 joins --kv-cache-dtype's choices after 0.4.6.post5 (sglang==0.4.6.post5:sglang/srt/server_args.py)."""
    (found,) = _refusals(SGLANG.format("v0.4.6.post5-cu124"), ["--kv-cache-dtype", "fp4_e2m1"])
    assert found.severity is Severity.ERROR and "SGLang 0.4.6.post5 refuses" in found.message
    assert _refusals(SGLANG.format("latest"), ["--kv-cache-dtype", "made_up"]) == []


def test_tgi_0_9_2_refuses_bfloat16_its_clap_called_b_float16():
    """TGI renamed the value in v0.9.3 (huggingface/text-generation-inference bc287324, "Rename `b-float16`
    to `bfloat16` in the launcher arg" #621): the Dtype variant BFloat16 was kebab-cased by clap."""
    (found,) = _refusals(TGI.format("0.9.2"), ["--dtype", "bfloat16"])
    assert found.severity is Severity.ERROR
    assert "error: invalid value 'bfloat16' for '--dtype <DTYPE>'" in found.message
    assert "TGI 0.9.3 to 3.3.7 accept it" in found.message
    assert _refusals(TGI.format("0.9.2"), ["--dtype", "b-float16"]) == []
    assert _refusals(TGI.format("0.9.3"), ["--dtype", "bfloat16"]) == []


def test_tgi_reads_the_value_from_the_option_s_variable_too():
    """QUANTIZE=bitsandbytes-nf4: the BitsandbytesNF4 variant arrives in v1.0.1 (launcher/src/main.rs)."""
    (found,) = _refusals(TGI.format("1.0.0"), [], {"QUANTIZE": "bitsandbytes-nf4"})
    assert "(from QUANTIZE)" in found.message and found.severity is Severity.ERROR
    assert _refusals(TGI.format("1.0.1"), [], {"QUANTIZE": "bitsandbytes-nf4"}) == []
    (rope,) = _refusals(TGI.format("2.4.1"), [], {"ROPE_SCALING": "yarn"})
    assert "--rope-scaling 'yarn' (from ROPE_SCALING)" in rope.message


def test_a_variable_of_an_option_the_release_lacks_is_not_a_flag_finding():
    """clap reads KV_CACHE_DTYPE only where the launcher has --kv-cache-dtype (v2.4.0 on)."""
    found = lint(gpu_pod(TGI.format("2.3.1"), ["--model-id", "m/x"], {"KV_CACHE_DTYPE": "fp8_e5m2"}))
    assert [f.message for f in _kv005(found, Severity.ERROR)] == []


def test_a_prefix_of_several_options_of_the_pinned_release_is_an_error():
    """argparse: "ambiguous option: --max-num could match --max-num-batched-tokens, ..." (CPython
    Lib/argparse.py _parse_optional / consume_optional); vLLM 0.10.0 has three --max-num-* options."""
    (found,) = _refusals(VLLM.format("v0.10.0"), ["--max-num", "8"])
    assert found.severity is Severity.ERROR
    assert (
        "'ambiguous option: --max-num could match --max-num-batched-tokens, --max-num-partial-prefills,"
        in (found.message)
    )


def test_a_prefix_one_option_of_the_pinned_release_has_is_not_a_finding():
    """--kv-cache starts five options across the releases read, one of vLLM 0.10.0's (--kv-cache-dtype)."""
    assert _refusals(VLLM.format("v0.10.0"), ["--kv-cache", "fp8"]) == []
    (found,) = _refusals(VLLM.format("latest"), ["--kv-cache", "fp8"])
    assert found.severity is Severity.WARNING and "ambiguous option --kv-cache" in found.message


def test_an_option_s_exact_name_is_never_ambiguous():
    """argparse returns an exact option string before it looks at prefixes: --model is not --model-impl."""
    assert _refusals(VLLM.format("v0.10.0"), ["--max-num-seqs", "8", "--speculative-config", "{}"]) == []


# the reader, on sources written for these tests in the shapes the engines use
ARG_UTILS = """\
from enum import Enum
from typing import Literal, Optional, get_args
from pkg.config import CacheConfig, QUANTIZATION_METHODS

class LoadFormat(str, Enum):
    AUTO = "auto"
    PT = "pt"

def add_cli_args(parser):
    parser.add_argument("--tokenizer-mode", choices=["auto", "slow"])
    parser.add_argument("--load-format", choices=[f.value for f in LoadFormat])
    parser.add_argument("--quantization", "-q", type=nullable_str, choices=[*QUANTIZATION_METHODS, None])
    parser.add_argument("--reasoning-parser", choices=list(Manager.parsers))
    BACKENDS = ["triton", "fa3"]
    parser.add_argument("--attention-backend", choices=BACKENDS)
    cache_kwargs = get_kwargs(CacheConfig)
    parser.add_argument("--kv-cache-dtype", **cache_kwargs["cache_dtype"])
    parser.add_argument("--prefix-caching", **cache_kwargs["enable_prefix_caching"])
"""
CONFIG = """\
from typing import Literal, Optional, get_args
CacheDType = Literal["auto", "fp8"]
QuantizationMethods = Literal["awq", "gptq"]
QUANTIZATION_METHODS = list(get_args(QuantizationMethods))

class CacheConfig:
    cache_dtype: Optional[CacheDType] = "auto"
    enable_prefix_caching: Optional[bool] = None
"""


def _read(tmp_path) -> dict[str, dict]:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "arg_utils.py").write_text(ARG_UTILS)
    (tmp_path / "pkg" / "config.py").write_text(CONFIG)
    import ast

    source = engine_choices.Source(str(tmp_path))
    fn = source.tree("pkg.arg_utils").body[-1]
    kwargs = argparse_calls.Kwargs(fn, "pkg.arg_utils")
    reader = engine_choices.Reader(source, "pkg.arg_utils", kwargs.locals)
    out = {}
    for call in (
        c for c in ast.walk(fn) if isinstance(c, ast.Call) and getattr(c.func, "attr", "") == "add_argument"
    ):
        out[call.args[0].value] = argparse_calls.call_choices(reader, call, kwargs)
    return out


def test_the_reader_follows_lists_enums_literals_imports_and_get_kwargs(tmp_path):
    got = _read(tmp_path)
    assert got["--tokenizer-mode"] == {"type": "str", "values": ["auto", "slow"]}
    assert got["--load-format"] == {"type": "str", "values": ["auto", "pt"]}
    assert got["--quantization"] == {"type": "other:nullable_str", "values": ["None", "awq", "gptq"]}
    assert got["--attention-backend"] == {"type": "str", "values": ["fa3", "triton"]}
    assert got["--kv-cache-dtype"] == {"type": "optional:str", "values": ["None", "auto", "fp8"]}
    assert got["--prefix-caching"] is None  # a bool: BooleanOptionalAction, no choices
    assert got["--reasoning-parser"] == {"unjudged": "list(Manager.parsers)"}  # a registry: not data


@pytest.mark.parametrize(
    ("variant", "value"),
    [
        ("BitsandbytesNF4", "bitsandbytes-nf4"),
        ("BFloat16", "b-float16"),
        ("Fp8e4m3fn", "fp8e4m3fn"),
        ("NoStack", "no-stack"),
    ],
)
def test_clap_names_a_variant_as_heck_kebab_cases_it(variant, value):
    assert clap_enums.kebab(variant) == value


def test_a_clap_name_attribute_and_a_skipped_variant():
    text = """
#[derive(Clone, Copy, Debug, ValueEnum)]
enum KVCacheDtype {
    #[clap(name = "fp8_e4m3fn")]
    Fp8e4m3fn,
    #[value(skip)]
    Hidden,
    Fp8e5m2,
}
struct Args {
    #[clap(long, env, value_enum)]
    kv_cache_dtype: Option<KVCacheDtype>,
}
"""
    assert clap_enums.enum_options(text) == {
        "--kv-cache-dtype": {"type": "clap", "values": ["fp8_e4m3fn", "fp8e5m2"], "env": "KV_CACHE_DTYPE"}
    }


CORPUS = [
    p
    for folder in ("manifests", "manifests2")
    if SHARED.joinpath("corpus", folder).exists()
    for p in sorted(SHARED.joinpath("corpus", folder).iterdir())
    if p.suffix in (".yaml", ".yml")
]


def test_no_value_of_a_real_file_is_refused(monkeypatch):
    """Every fixture and corpus file (the corpus where ../shared is there: no skip on a bare clone): each
    value judged against its pinned release's choices is taken, and there are values to judge (--dtype,
    --kv-cache-dtype, --quantization, SGLang's --disaggregation-mode...)."""
    judged = []  # per value at a pinned release with choices: whether that release takes it
    real = flag_choices.value_issue

    def counting(d, engine, option, text, where, pin, parser, env):
        runs = [flag_choices.entry(engine, option, r) for r in pin.releases] if pin.certain else []
        judged.extend(flag_choices.accepts(r, text) for r in runs if r is not None and "values" in r)
        return real(d, engine, option, text, where, pin, parser, env)

    monkeypatch.setattr(flag_choices, "value_issue", counting)
    refused = []
    own = [
        p
        for p in sorted((ROOT / "fixtures").rglob("*.yaml"))
        if not p.name.startswith("bad-vllm-dtype-choice")
    ]
    for path in [*CORPUS, *own]:
        result = lint(path.read_text(encoding="utf-8", errors="replace"), str(path))
        refused += [
            f.message
            for f in result.findings
            if f.rule == "KV005"
            and any(w in f.message for w in ("invalid choice", "invalid value '", "could match"))
        ]
    assert refused == []
    print(f"values judged at a pinned release: {len(judged)}, taken: {judged.count(True)}")
    assert judged.count(True) >= (20 if CORPUS else 1) and False not in judged
