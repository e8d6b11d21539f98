"""Property tests for the classes of the security review (issue 10), so its defects stay fixed.

Strategies, one per class:
- hostile numbers in every numeric field of every input kind: each numeric engine option of
  vLLM, SGLang and TGI (from their option tables), each numeric key of the native spec (from its
  schema), `$(VAR)` values from a container's env, and every number in every real manifest of
  ../shared/corpus (Kubernetes, LWS, Helm values, Ray, KServe, Dynamo, SkyPilot, compose …);
- hostile strings in every string field reaching every report format: names, model ids, GPU
  labels, option names and values, env values and file names, with controls, ANSI and OSC
  escapes, workflow commands, Markdown/HTML/mermaid syntax, bidi overrides, lone surrogates and
  YAML's own line breaks;
- hostile file names and file types through the command line: names with new lines, `::`, `%`,
  `#`, leading `-`, non-UTF-8 bytes; FIFOs, devices, directories named *.yaml, broken symlinks.

Invariants on every case: no exception (and no "internal error" finding); each case under 2 s;
every stated number the plan used is inside kvlint/bounds.py; every report well-formed for its
format (text/concise/stderr: no control character and no line a GitHub runner reads as a command;
github: every line one escaped annotation; markdown: fences and tables intact, no raw HTML or
link; json/sarif/rdjson parse, no lone surrogate, SARIF valid against the 2.1.0 schema); exit 2
only when an input could not be read.

Quick by default; `KVLINT_FUZZ=campaign KVLINT_FUZZ_EXAMPLES=N` runs the long campaign.
"""

from __future__ import annotations

import json
import os
import re

import pytest
from conftest import SHARED, cpu_seconds
from hypothesis import HealthCheck, example, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from kvlint import bounds
from kvlint.report import FORMATS, render
from kvlint.run.lint import RunResult, lint_text
from kvlint.run.settings import Settings

CORPUS = [p for d in ("manifests", "manifests2") for p in sorted((SHARED / "corpus" / d).glob("*.y*ml"))]
SCHEMA = SHARED / "reference" / "sarif" / "sarif-schema-2.1.0.json"
SLOW = 2.0  # seconds one input may take (issue 10: no input of <= 1 MB over 2 s)

# ---- hostile numbers ----------------------------------------------------------------------------

NUMBER_TEXTS = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.builds(
        lambda n, s: f"{n}{s}",
        st.integers(min_value=-(10**7), max_value=10**12),
        st.sampled_from(["", "k", "K", "m", "M", "G", "Gi", "GB", "GiB", "Ki", "e400", ".5", "_0"]),
    ),
    st.sampled_from(
        [
            "0",
            "-1",
            "nan",
            "NaN",
            "inf",
            "-inf",
            ".inf",
            "-.inf",
            ".nan",
            "1e400",
            "-1e308",
            "1e-300",
            "5e-324",
            "0x" + "f" * 300,
            "0x" + "f" * 5000,
            "9" * 4299 + "K",
            "9" * 4300,
            "9" * 10000 + "k",
            "9" * 30,
            ":".join(["59"] * 500),
            "0b" + "1" * 300,
            "0o" + "7" * 300,
            "1_000_000",
            "１２８",
            "٣٢",
            "1e999999999GB",
            "1e99999Gi",
            "-16",
            "100000",
            "10000000",
            "1000000000000000000",
        ]
    ),
)


def _numeric_options(engine: str) -> list[str]:
    if engine == "vllm":
        from kvlint.engines.vllm.options import MAPPING
    elif engine == "sglang":
        from kvlint.engines.sglang.options import MAPPING
    else:
        from kvlint.engines.tgi.options import MAPPING
    return sorted(o for o, (_, kind) in MAPPING.items() if kind in ("int", "float", "tokens", "bytes"))


ENGINES = {
    "vllm": ("vllm/vllm-openai:v0.10.1", ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"]),
    "sglang": (
        "lmsysorg/sglang:v0.4.6",
        ["python3", "-m", "sglang.launch_server", "--model-path", "meta-llama/Llama-3.1-8B-Instruct"],
    ),
    "tgi": (
        "ghcr.io/huggingface/text-generation-inference:3.0",
        ["text-generation-launcher", "--model-id", "meta-llama/Llama-3.1-8B-Instruct"],
    ),
}


def workload(
    engine: str, args: list[str], env: list[dict] | None = None, name: str = "m", gpus: str = "1"
) -> str:
    image, command = ENGINES[engine]
    return (
        "apiVersion: apps/v1\nkind: Deployment\n"
        f"metadata: {{name: {json.dumps(name)}}}\n"
        "spec:\n  template:\n    spec:\n"
        "      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}\n"
        "      containers:\n"
        f"        - name: engine\n          image: {image}\n          command: {json.dumps(command)}\n"
        f"          args: {json.dumps(args)}\n          env: {json.dumps(env or [])}\n"
        f"          resources: {{limits: {{nvidia.com/gpu: {json.dumps(gpus)}}}}}\n"
    )


@st.composite
def hostile_engine_args(draw) -> str:
    engine = draw(st.sampled_from(sorted(ENGINES)))
    options = _numeric_options(engine)
    picked = draw(st.lists(st.sampled_from(options), min_size=1, max_size=4, unique=True))
    args: list[str] = []
    env: list[dict] = []
    for i, option in enumerate(picked):
        value = draw(NUMBER_TEXTS)
        how = draw(st.sampled_from(["=", " ", "env"]))
        if how == "=":
            args.append(f"{option}={value}")
        elif how == " ":
            args += [option, value]
        else:  # through $(VAR), as Kubernetes expands it
            env.append({"name": f"V{i}", "value": value})
            args.append(f"{option}=$(V{i})")
    gpus = draw(st.one_of(st.just("1"), NUMBER_TEXTS))
    return workload(engine, args, env, gpus=gpus)


SPEC_NUMBERS = sorted(set(bounds.FIELDS) & {
    "gpus", "tensor_parallel", "pipeline_parallel", "data_parallel", "max_context", "max_sequences",
    "max_batched_tokens", "gpu_memory_utilization", "block_size",
})  # fmt: skip
ARCH_NUMBERS = ["params", "layers", "query_heads", "kv_heads", "head_dim", "hidden_size",
                "intermediate_size", "vocab_size", "max_positions", "sliding_window"]  # fmt: skip
BUDGET_NUMBERS = ["gpu_memory", "weights", "kv_per_token", "kv_per_sequence", "kv_cache", "reserved",
                  "activations", "max_concurrency", "fragmentation"]  # fmt: skip


@st.composite
def hostile_spec(draw) -> str:
    lines = ["kind: ServingSpec", "model: acme/unknown-model", "gpu: L4"]
    for key in draw(st.lists(st.sampled_from(SPEC_NUMBERS), max_size=4, unique=True)):
        lines.append(f"{key}: {draw(NUMBER_TEXTS)}")
    arch = draw(st.lists(st.sampled_from(ARCH_NUMBERS), max_size=5, unique=True))
    base = {"layers": "32", "kv_heads": "8", "params": "8B", "head_dim": "128"}
    values = {**base, **{k: draw(NUMBER_TEXTS) for k in arch}}
    lines.append("architecture: {" + ", ".join(f"{k}: {v}" for k, v in values.items()) + "}")
    budget = draw(st.lists(st.sampled_from(BUDGET_NUMBERS), max_size=3, unique=True))
    if budget:
        lines.append("budget: {" + ", ".join(f"{k}: {draw(NUMBER_TEXTS)}" for k in budget) + "}")
    return "\n".join(lines) + "\n"


_NUMBER_IN_YAML = re.compile(r"(?<=[:=\s\"'\[,])(-?\d+(?:\.\d+)?)(?=[\s\"',\]}]|$)", re.M)


@st.composite
def corpus_with_hostile_numbers(draw) -> tuple[str, str]:
    """A real manifest (any input kind) with some of its numbers replaced by hostile ones."""
    path = draw(st.sampled_from(CORPUS))
    text = path.read_text(encoding="utf-8", errors="replace")
    spots = [m.span(1) for m in _NUMBER_IN_YAML.finditer(text)]
    if not spots:
        return path.name, text
    chosen = sorted(set(draw(st.lists(st.sampled_from(spots), min_size=1, max_size=4))), reverse=True)
    for start, end in chosen:
        text = text[:start] + draw(NUMBER_TEXTS) + text[end:]
    return path.name, text


# ---- hostile strings ----------------------------------------------------------------------------

HOSTILE_TEXTS = st.one_of(
    st.text(max_size=40),
    st.text(
        alphabet=st.sampled_from(
            list("\x00\x07\x1b\x9b\r\n\t\x85\u2028\u2029\u202e\u200f\ufeff:%,|`<>&[]()*_~#!\\\"'{} ")
        ),
        max_size=30,
    ),
    st.sampled_from(
        [
            "x\x1b]0;PWNED-TITLE\x07\x1b[2J\x1b[1;32mALL CHECKS PASSED\x1b[0m",
            "x\x1b]52;c;ZXZpbA==\x07",
            "x\x1b]8;;https://evil.example\x07link\x1b]8;;\x07",
            "\n::error file=README.md,line=1::INJECTED\n",
            "::stop-commands::tok",
            "x\r::add-mask::secret",
            "%0A::warning::x",
            "x`<img src=https://evil.example/p.png>`\r```\r<script>alert(1)</script>\r[click](https://evil.example)",
            "a|b</td><img src=x onerror=alert(1)>",
            "```mermaid\npie\n```",
            "<details><summary>hidden</summary>",
            "x\ud800",
            "\udce9",
            "\u202egnp.exe",
            "a\u2028b\u2029c\x85d",
            "x" * 5000,
            "$(A)$(A)$(A)",
            "{{ .Values.x }}",
        ]
    ),
)


def _yaml_str(text: str) -> str:
    """A YAML double-quoted scalar for any text, lone surrogates included (as \\u escapes)."""
    out = []
    for ch in text:
        code = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif (
            code < 0x20
            or 0x7F <= code <= 0x9F
            or 0xD800 <= code <= 0xDFFF
            or code in (0x2028, 0x2029, 0xFEFF)
        ):
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


@st.composite
def hostile_strings_workload(draw) -> str:
    name, model, label, option, value, env = (draw(HOSTILE_TEXTS) for _ in range(6))
    engine = draw(st.sampled_from(sorted(ENGINES)))
    image, command = ENGINES[engine]
    if draw(st.booleans()):
        command = [*command[:-1], model]
    args = [f"--{option}", value, "--max-model-len=$(E)", f"--x={draw(HOSTILE_TEXTS)}"]
    return (
        "apiVersion: apps/v1\nkind: Deployment\n"
        f"metadata: {{name: {_yaml_str(name)}, annotations: {{kvlint.io/ignore: {_yaml_str(draw(HOSTILE_TEXTS))}}}}}\n"
        "spec:\n  template:\n    spec:\n"
        f"      nodeSelector: {{cloud.google.com/gke-accelerator: {_yaml_str(label)}}}\n"
        "      containers:\n"
        f"        - name: engine\n          image: {image}\n"
        f"          command: [{', '.join(_yaml_str(c) for c in command)}]\n"
        f"          args: [{', '.join(_yaml_str(a) for a in args)}]\n"
        f"          env: [{{name: E, value: {_yaml_str(env)}}}]\n"
        f"          resources: {{limits: {{nvidia.com/gpu: {_yaml_str(draw(HOSTILE_TEXTS))}}}}}\n"
    )


@st.composite
def hostile_strings_spec(draw) -> str:
    fields = {k: _yaml_str(draw(HOSTILE_TEXTS)) for k in ("name", "model", "gpu", "engine_version", "dtype")}
    fields["max_context"] = _yaml_str(draw(HOSTILE_TEXTS))
    return "kind: ServingSpec\n" + "".join(f"{k}: {v}\n" for k, v in fields.items())


# ---- invariants -----------------------------------------------------------------------------------

_OWN_GITHUB = re.compile(r"^::(error|warning|notice) [^\r\n]*::[^\r\n]*$")
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_sarif_validator = None


def _sarif_valid(doc: dict) -> None:
    global _sarif_validator
    if not SCHEMA.exists():
        return
    if _sarif_validator is None:
        import jsonschema

        _sarif_validator = jsonschema.Draft7Validator(json.loads(SCHEMA.read_text()))
    doc = {**doc, "runs": [{**doc["runs"][0], "tool": {"driver": {"name": "kvlint"}}}]}  # rules: fixed text
    errors = list(_sarif_validator.iter_errors(doc))
    assert not errors, errors[0].message


def check_plain(out: str) -> None:
    assert not _CONTROL.search(out.replace("\n", "").replace("\t", "")), repr(
        _CONTROL.search(out.replace("\n", ""))
    )
    assert not any(line.startswith("::") for line in out.split("\n")), out


def check_markdown(out: str) -> None:
    assert not _CONTROL.search(out.replace("\n", ""))
    assert "<" not in out.replace("&lt;", "")
    assert not re.search(r"(?<!\\)\]\(", out)
    fences = [line for line in out.split("\n") if line.startswith("```")]
    assert all(f in ("```mermaid", "```") for f in fences) and len(fences) % 2 == 0, fences
    for line in out.split("\n"):
        if line.startswith("|"):
            assert len(re.split(r"(?<!\\)\|", line)) in (6, 10), line


def check_reports(run: RunResult, settings: Settings) -> None:
    for fmt in FORMATS:
        out = render(fmt, run, settings)
        if fmt in ("text", "concise"):
            check_plain(out)
        elif fmt == "github":
            assert all(_OWN_GITHUB.match(line) for line in out.split("\n") if line), out
            assert not _CONTROL.search(out)
        elif fmt == "markdown":
            check_markdown(out)
        else:
            assert not re.search("[\ud800-\udfff]", out)
            doc = json.loads(out)
            if fmt == "sarif":
                _sarif_valid(doc)


def check_bounded_plan(run: RunResult) -> None:
    """A plan is only ever computed from numbers inside the bounds table."""
    for r in run.deployments:
        if r.plan is None or r.settings is None:
            continue
        s = r.settings
        for key, value in (("tensor_parallel", s.tp), ("pipeline_parallel", s.pp), ("data_parallel", s.dp),
                           ("max_context", s.max_model_len), ("block_size", s.block_size)):  # fmt: skip
            assert bounds.FIELDS[key].problem(value) is None, (key, value)
        assert r.model is None or r.model.layers <= bounds.LAYERS_MAX


def lint_case(text: str, name: str = "case.yaml") -> RunResult:
    settings = Settings()
    start = cpu_seconds()
    result = lint_text(text.encode("utf-8", "surrogatepass"), name, settings, ".")
    elapsed = cpu_seconds() - start
    assert elapsed < SLOW, f"{elapsed:.2f} s"
    assert not result.crashed, [f.message for f in result.findings if "internal error" in f.message]
    run = RunResult(files=[result])
    check_reports(run, settings)
    check_bounded_plan(run)
    return run


# ---- the properties -----------------------------------------------------------------------------

QUICK = os.environ.get("KVLINT_FUZZ", "quick") == "quick" and not os.environ.get("KVLINT_FUZZ_EXAMPLES")
# The default suite stays fast: a handful of cases each (the campaign profile sets the real count).
_CHEAP = hsettings(
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    **({"max_examples": 12} if QUICK else {}),
)


@given(hostile_engine_args())
@_CHEAP
@example(workload("vllm", ["--gpu-memory-utilization=nan"]))
@example(workload("vllm", ["--block-size=0", "--pipeline-parallel-size=" + "9" * 30]))
@example(
    workload("sglang", ["--page-size=0", "--mem-fraction-static=7.804740879917955e+297"])
)  # found by the campaign
def test_hostile_numbers_in_engine_arguments(text):
    lint_case(text)


@given(hostile_spec())
@_CHEAP
@example(
    "kind: ServingSpec\nmodel: acme/x\ngpu: L4\narchitecture: {layers: 1000000, kv_heads: 8, params: 8B, head_dim: 128}\n"
)
def test_hostile_numbers_in_the_native_spec(text):
    lint_case(text)


@pytest.mark.skipif(
    not CORPUS, reason=f"{SHARED / 'corpus'} is absent (../shared is not beside this checkout)"
)
@given(corpus_with_hostile_numbers())
@_CHEAP
def test_hostile_numbers_in_every_real_input_kind(case):
    name, text = case
    lint_case(text, name)


@given(hostile_strings_workload())
@_CHEAP
def test_hostile_strings_in_workloads_reach_every_format_inert(text):
    lint_case(text)


@given(hostile_strings_spec(), HOSTILE_TEXTS)
@_CHEAP
@example(
    "kind: ServingSpec\nmodel: x\ngpu: L4\n", "x\ud800"
)  # found by the campaign: SARIF URI of a lone surrogate
@example("kind: ServingSpec\nmodel: x\ngpu: L4\nmax_context: 0\n", ":")  # campaign: ":" + ":7:14" starts "::"
def test_hostile_strings_in_spec_and_file_name_reach_every_format_inert(text, file_name):
    lint_case(text, file_name or "x")


FILE_KINDS = ["regular", "fifo", "dir", "broken-link", "devzero-link", "empty"]


@given(
    st.lists(
        st.tuples(
            st.one_of(
                HOSTILE_TEXTS,
                st.sampled_from(["-x.yaml", "--output=v.yaml", "a#b?c%20d.yaml", "::error::x.yaml"]),
            ),
            st.sampled_from(FILE_KINDS),
        ),
        min_size=1,
        max_size=3,
    )
)
@hsettings(
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    **({"max_examples": 4} if QUICK else {}),
)
def test_hostile_file_names_and_types_through_the_command_line(tmp_path_factory, entries):
    from click.testing import CliRunner

    from kvlint.cli import main

    folder = tmp_path_factory.mktemp("names")
    unreadable = False
    made = 0
    for i, (raw, kind) in enumerate(entries):
        name = (re.sub("[/\x00]", "_", raw) or "x")[:100] + f".{i}.yaml"
        target = folder / "files" / name
        target.parent.mkdir(exist_ok=True)
        try:
            if kind == "regular":
                target.write_bytes(workload("vllm", ["--max-model-len=131072"]).encode())
            elif kind == "empty":
                target.write_bytes(b"")
            elif kind == "fifo":
                os.mkfifo(target)
                unreadable = True
            elif kind == "dir":
                target.mkdir()
            elif kind == "broken-link":
                os.symlink(folder / "nowhere", target)
                unreadable = True
            else:
                os.symlink("/dev/zero", target)
                unreadable = True
        except (OSError, UnicodeEncodeError, ValueError):
            continue
        made += 1
    if not made:
        return
    for fmt in ("github", "text", "sarif"):
        start = cpu_seconds()
        r = CliRunner().invoke(
            main,
            ["--isolated", "--no-color", "--format", fmt, str(folder / "files")],
            env={"GITHUB_ACTIONS": "true"},
        )
        assert cpu_seconds() - start < 10
        assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
        assert r.exit_code == (2 if unreadable else r.exit_code) and r.exit_code in (0, 1, 2), (
            r.exit_code,
            entries,
        )
        if r.exit_code == 2:
            assert unreadable, (r.stderr, entries)
        assert not any(line.startswith("::") for line in r.stderr.split("\n")), r.stderr
        if fmt == "text":
            check_plain(r.stdout)
        elif fmt == "sarif":
            _sarif_valid(json.loads(r.stdout))
        else:
            assert all(_OWN_GITHUB.match(line) for line in r.stdout.split("\n") if line), r.stdout
