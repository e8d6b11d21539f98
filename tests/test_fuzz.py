"""Property and fuzz tests: whatever the input, kvlint neither crashes nor lies about where.

Invariants checked on every generated input:
- no exception escapes (load, extract, resolve, plan, rules, every report format);
- every finding is located inside the file: 1 <= line <= lines in the file, 1 <= column <=
  length of that line + 1, and an end position, when given, is no earlier and also inside;
- the same input gives byte-identical reports (text, JSON, SARIF) on a second run;
- through the command line, the exit code is 0, 1 or 2 and the JSON report parses.

Inputs: arbitrary YAML documents built from values kvlint reads (Kubernetes workloads, vLLM
arguments, kvlint's own spec) with wrong types, huge and negative numbers and unicode; arbitrary
text and bytes; and mutations of the real manifests in ../shared/corpus/manifests/ (deleted,
duplicated and swapped lines, swapped and replaced scalars, truncation, tabs, stray document
markers and anchors).

The default run is quick (the `quick` profile). A long campaign:
    KVLINT_FUZZ=campaign python -m pytest tests/test_fuzz.py --hypothesis-show-statistics
(or `--hypothesis-profile=campaign`); the profiles are defined in conftest.py.
"""

from __future__ import annotations

import io
import json
import re

import pytest
from conftest import FIXTURES, ROOT, SHARED
from hypothesis import HealthCheck, assume, example, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from kvlint.report import render
from kvlint.run.lint import RunResult, lint_text
from kvlint.run.settings import Settings

# The line breaks findings are counted in: the ones editors and GitHub count (kvlint maps YAML's
# NEL/LS/PS breaks onto these, kvlint/load/physical.py); str.splitlines would split on more.
_BREAK = re.compile("\r\n|[\n\r]")

CORPUS = SHARED / "corpus" / "manifests"
CORPUS_FILES = sorted(p for p in CORPUS.glob("*.y*ml")) if CORPUS.is_dir() else []
# The layouts the stack readers take (KServe multi-node, OME, llmaz, kthena, KAITO InferenceSet, ...): the
# second corpus folder and the readers' own fixtures are mutated too, not only the first folder's files.
CORPUS2 = SHARED / "corpus" / "manifests2"
MUTATED_FILES = [
    *CORPUS_FILES,
    *(sorted(p for p in CORPUS2.glob("*.y*ml") if p.name != "INDEX.yaml") if CORPUS2.is_dir() else []),
    *sorted((FIXTURES / "stacks").rglob("*.y*ml")),
]


def yaml_lines(data: bytes) -> list[str]:
    text = data.decode("utf-8", "replace").lstrip("\ufeff")
    return _BREAK.split(text)


def check_invariants(data: bytes, name: str = "fuzz.yaml", **settings) -> RunResult:
    s = Settings(**settings)
    first = lint_text(data, name, s, ".")
    lines = yaml_lines(data)
    for f in first.findings:
        w = f.where
        assert w.file == name, f
        assert 1 <= w.line <= len(lines), (f, len(lines))
        assert 1 <= w.column <= len(lines[w.line - 1]) + 1, (f, lines[w.line - 1])
        if w.end_line is not None:
            assert w.line <= w.end_line <= len(lines), f
            if w.end_column is not None:
                assert 1 <= w.end_column <= len(lines[w.end_line - 1]) + 1, (f, lines[w.end_line - 1])
                assert (w.end_line, w.end_column) >= (w.line, w.column), f
        assert f.message and f.rule.startswith("KV"), f
    run1 = RunResult(files=[first])
    run2 = RunResult(files=[lint_text(data, name, Settings(**settings), ".")])
    for fmt in ("text", "json", "sarif", "github", "markdown", "concise"):
        out1, out2 = render(fmt, run1, s), render(fmt, run2, s)
        assert out1 == out2, fmt
    json.loads(render("json", run1, s))
    return run1


def dump_yaml(docs: list) -> bytes:
    from ruamel.yaml import YAML

    y = YAML(typ="safe", pure=True)
    y.allow_unicode = True
    out = io.StringIO()
    y.dump_all(docs, out)
    return out.getvalue().encode("utf-8")


# ---- values kvlint reads, with every wrong type -------------------------------------------------

NUMBERS = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, -1, 1, 2**31, 2**63, 10**30, 131072, 4096, 8]),
    st.floats(allow_nan=True, allow_infinity=True),
)
TEXTS = st.one_of(
    st.text(max_size=30),
    st.sampled_from(
        [
            "",
            "H100",
            "nvidia-l4",
            "NVIDIA-A100-SXM4-80GB",
            "meta-llama/Llama-3.1-8B-Instruct",
            "Qwen/Qwen2.5-7B-Instruct",
            "deepseek-ai/DeepSeek-V3",
            "openai/gpt-oss-120b",
            "80GB",
            "80GiB",
            "-1Gi",
            "1e309",
            "0x10",
            "fp8",
            "auto",
            "${MODEL}",
            "$(MAX_LEN)",
            "{{ .Values.model }}",
            "🚀",
            "٣٢",
            "\u202e",
            "vllm serve x --max-model-len",
            "--max-model-len=-5",
            "--tensor-parallel-size=0",
        ]
    ),
)
SCALARS = st.one_of(NUMBERS, TEXTS, st.booleans(), st.none())
KEYS = st.sampled_from(
    [
        "kind",
        "apiVersion",
        "metadata",
        "spec",
        "template",
        "containers",
        "image",
        "command",
        "args",
        "env",
        "name",
        "value",
        "resources",
        "limits",
        "nvidia.com/gpu",
        "nodeSelector",
        "cloud.google.com/gke-accelerator",
        "model",
        "gpu",
        "gpus",
        "engine",
        "max_context",
        "max_sequences",
        "tensor_parallel",
        "pipeline_parallel",
        "kv_cache_dtype",
        "gpu_memory_utilization",
        "quantization",
        "budget",
        "architecture",
        "replicas",
        "leaderWorkerTemplate",
        "servingEngineSpec",
        "modelSpec",
        "url",
        "resourceProfile",
    ]
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(KEYS, st.text(max_size=10)), inner, max_size=5),
    ),
    max_leaves=25,
)


@st.composite
def workloads(draw) -> dict:
    """A Kubernetes Deployment or kvlint spec with some fields replaced by arbitrary values."""
    args = draw(
        st.lists(
            st.one_of(
                st.sampled_from(
                    [
                        "--max-model-len",
                        "--max-num-seqs",
                        "--tensor-parallel-size",
                        "--gpu-memory-utilization",
                        "--kv-cache-dtype",
                        "--quantization",
                        "--dtype",
                        "--pipeline-parallel-size",
                        "--enable-prefix-caching",
                        "--block-size",
                        "--max-num-batched-tokens",
                    ]
                ),
                st.builds(lambda n: str(n), NUMBERS),
                TEXTS,
            ),
            max_size=10,
        )
    )
    if draw(st.booleans()):
        doc: dict = {
            "kind": "ServingSpec",
            "model": draw(st.one_of(TEXTS, VALUES)),
            "gpu": draw(st.one_of(TEXTS, VALUES)),
            "max_context": draw(st.one_of(NUMBERS, VALUES)),
            "max_sequences": draw(st.one_of(NUMBERS, VALUES)),
        }
        for key in draw(st.lists(KEYS, max_size=4)):
            doc[key] = draw(VALUES)
        return doc
    container = {
        "name": "vllm",
        "image": draw(st.sampled_from(["vllm/vllm-openai:v0.10.1", "lmsysorg/sglang:latest", "x"])),
        "command": draw(st.one_of(st.just(["vllm", "serve"]), VALUES)),
        "args": [draw(st.sampled_from(["meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen3-8B"])), *args],
        "resources": {"limits": {"nvidia.com/gpu": draw(st.one_of(NUMBERS, TEXTS, VALUES))}},
    }
    pod = {
        "nodeSelector": {"cloud.google.com/gke-accelerator": draw(st.one_of(TEXTS, VALUES))},
        "containers": [container],
    }
    return {
        "apiVersion": "apps/v1",
        "kind": draw(st.sampled_from(["Deployment", "StatefulSet", "LeaderWorkerSet", "Pod", "Job"])),
        "metadata": {"name": draw(TEXTS)},
        "spec": {"template": {"spec": pod}} if draw(st.booleans()) else draw(VALUES),
    }


@given(st.lists(st.one_of(workloads(), VALUES), min_size=0, max_size=3))
def test_arbitrary_yaml_documents(docs):
    check_invariants(dump_yaml(docs))


@given(st.lists(workloads(), min_size=1, max_size=2))
@hsettings(suppress_health_check=[HealthCheck.too_slow])
def test_workloads_with_wrong_types_everywhere(docs):
    run = check_invariants(dump_yaml(docs))
    check_invariants(dump_yaml(docs), strict=True)
    assert run.files[0].findings is not None


@given(st.text(max_size=400))
@example("a: &a [*a]\n")
@example("- !!python/object/apply:os.system ['echo pwned']\n")
@example("\t- tab\n")
@example("<<<<<<< HEAD\na: 1\n=======\na: 2\n>>>>>>> x\n")
@example("key: {{ .Values.x }}\n")
@example("a: 1\na: 2\n")
@example("---\n---\n...\n")
@example("a:\r\n  b: [1,\r\n")
@example("x: \u2028y: 1\n")
@example("\x85\x00")  # a NUL after a YAML-only line break: located on the physical line
@example("\u2029\x85\x0b")
@example("a: \x85\xe9\x0c")
def test_arbitrary_text(text):
    check_invariants(text.encode("utf-8"))


@given(st.binary(max_size=300))
@example(b"\xff\xfe\x00a\x00:\x00 \x001")
@example(b"\x00\x01\x02")
@example(b"a: \xe9t\xe9\n")
def test_arbitrary_bytes(data):
    check_invariants(data)


# ---- mutations of the real manifests ------------------------------------------------------------

REPLACEMENTS = [
    "",
    "-1",
    "0",
    "-131072",
    "99999999999999999999999999",
    "1e309",
    "nan",
    "null",
    "[]",
    "{}",
    "[1, 2]",
    "{a: 1}",
    '"🚀 ünïcödé"',
    "yes",
    "0x1F",
    "017",
    "*nowhere",
    "&anchor",
    "!!binary AAAA",
    "!!python/object:os.system",
    "{{ .Values.x }}",
    "${MAX_LEN}",
    "'unterminated",
    "|",
    "- item",
    "a: b: c",
]
_VALUE = re.compile(r"^(\s*(?:- )?[^\s#:][^:#]*:\s+)(\S.*)$")
_FLAG = re.compile(r"(--[a-z0-9-]+[= ])([^\s\"',\]]+)")


@st.composite
def mutated_manifest(draw) -> tuple[str, bytes]:
    path = draw(st.sampled_from(MUTATED_FILES))
    lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        if not lines:
            break
        i = draw(st.integers(min_value=0, max_value=len(lines) - 1))
        op = draw(
            st.sampled_from(
                ["delete", "duplicate", "swap", "value", "flag", "swap-values", "truncate", "tab", "marker"]
            )
        )
        if op == "delete":
            del lines[i]
        elif op == "duplicate":
            lines.insert(i, lines[i])
        elif op == "swap":
            j = draw(st.integers(min_value=0, max_value=len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "value":
            new = draw(st.one_of(st.sampled_from(REPLACEMENTS), st.text(max_size=12)))
            lines[i] = _VALUE.sub(lambda m, new=new: m.group(1) + new, lines[i])
        elif op == "flag":
            new = draw(st.sampled_from(REPLACEMENTS[:16]))
            lines[i] = _FLAG.sub(lambda m, new=new: m.group(1) + new, lines[i])
        elif op == "swap-values":
            j = draw(st.integers(min_value=0, max_value=len(lines) - 1))
            a, b = _VALUE.match(lines[i]), _VALUE.match(lines[j])
            if a and b:
                lines[i], lines[j] = a.group(1) + b.group(2), b.group(1) + a.group(2)
        elif op == "truncate":
            lines = lines[:i]
        elif op == "tab":
            lines[i] = "\t" + lines[i]
        else:
            lines.insert(i, draw(st.sampled_from(["---", "...", "<<: *x", "&a", "? complex", "%YAML 1.2"])))
    return path.name, "\n".join(lines).encode("utf-8")


@given(mutated_manifest())
@hsettings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
def test_mutated_real_manifests(case):
    name, data = case
    check_invariants(data, name)


@pytest.mark.skipif(not CORPUS_FILES, reason=f"{CORPUS} is absent (../shared is not beside this checkout)")
def test_every_real_manifest_unmutated():
    for path in CORPUS_FILES:
        check_invariants(path.read_bytes(), path.name)


# ---- the command line ------------------------------------------------------------------------


@given(
    st.one_of(
        mutated_manifest(),
        st.builds(lambda d: ("w.yaml", dump_yaml(d)), st.lists(workloads(), max_size=2)),
    )
)
@hsettings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
def test_command_line_exit_codes(tmp_path_factory, case):
    from click.testing import CliRunner

    from kvlint.cli import main

    name, data = case
    folder = tmp_path_factory.mktemp("cli")
    target = folder / name
    target.write_bytes(data)
    for extra in ([], ["--strict"], ["--fail-on", "info"]):
        r = CliRunner().invoke(main, ["--isolated", "--format", "json", *extra, str(target)])
        assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
        assert r.exit_code in (0, 1, 2), r.output
        doc = json.loads(r.stdout)
        rank = {"info": 0, "warning": 1, "error": 2}
        threshold = rank["info" if "info" in extra else "error"]
        expected = 1 if any(rank[f["severity"]] >= threshold for f in doc["findings"]) else 0
        assert r.exit_code == expected, (extra, doc["findings"])


# ---- the YAML 1.1 resolver matches ruamel.yaml's --------------------------------------------------


@given(
    st.one_of(
        st.text(alphabet="0123456789+-._:eExXoObB~nNyYtTfFaAlLsSuUrR<=", max_size=12),
        st.text(max_size=12),
        st.sampled_from(
            ["yes", "No", "ON", "off", "y", "~", "null", "<<", "=", "0b1_0", "0x_1F", "190:20:30"]
        ),
    )
)
def test_resolver_agrees_with_ruamel_yaml_11(text):
    from ruamel.yaml.nodes import ScalarNode
    from ruamel.yaml.resolver import VersionedResolver

    from kvlint.load.compose import _scalar_resolver

    assume("\n" not in text)
    stock = VersionedResolver(version=(1, 1))
    ours = _scalar_resolver()
    for implicit in ((True, False), (False, True)):
        assert ours(text, implicit) == str(stock.resolve(ScalarNode, text, implicit))


@pytest.mark.parametrize(
    "corpus",
    # the fixtures in the default run; with the real corpus too (~2x the time) under `slow`
    [pytest.param(False, id="fixtures"), pytest.param(True, marks=pytest.mark.slow, id="with-corpus")],
)
def test_output_does_not_depend_on_hash_seed_or_process(corpus):
    """Set and dict iteration must not leak into reports: two processes with different hash seeds
    give byte-identical JSON and text on the fixtures and the real corpus."""
    import os
    import subprocess
    import sys

    from conftest import FIXTURES

    if corpus and not CORPUS_FILES:
        pytest.skip(f"{CORPUS} is absent (../shared is not beside this checkout)")
    targets = [str(FIXTURES)] + ([str(CORPUS)] if corpus else [])
    outs = []
    for seed in ("1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        for fmt in ("json", "text"):
            cmd = [sys.executable, "-m", "kvlint", "--isolated", "--no-color", "--format", fmt, *targets]
            outs.append((fmt, subprocess.run(cmd, env=env, capture_output=True).stdout))
    assert outs[0] == outs[2] and outs[1] == outs[3]
    assert len(outs[0][1]) > 1000


def test_nested_serve_config_ending_the_file_stays_inside_it():
    """Found by the long campaign: a RayService whose serveConfigV2 block is the last thing in a file
    without a final newline reported its end one line past the end of the file."""
    text = (
        "apiVersion: ray.io/v1\nkind: RayService\nmetadata:\n  name: rayllm\nspec:\n"
        "  serveConfigV2: |\n    applications:\n    - name: llama-2\n      import_path: app:chat\n"
        '      runtime_env:\n        env_vars:\n          MODEL_ID: "meta-llama/Llama-2-70b-chat-hf"'
    )
    run = check_invariants(text.encode(), "ray.yaml")
    assert [f.rule for f in run.findings] == ["KV004"]


@pytest.mark.slow
def test_fuzz_campaign():
    """The property tests of this module under the `campaign` profile (conftest.py), as .ci/run's
    `pytest -m slow` runs them: KVLINT_FUZZ_EXAMPLES examples each (200 unless set; the long campaign
    by hand is `KVLINT_FUZZ=campaign python -m pytest tests/test_fuzz.py`, 3,000 each)."""
    import os
    import subprocess
    import sys

    props = [n for n, fn in globals().items() if n.startswith("test_") and hasattr(fn, "hypothesis")]
    assert len(props) >= 7
    examples = os.environ.get("KVLINT_FUZZ_EXAMPLES", "200")
    env = {**os.environ, "KVLINT_FUZZ": "campaign", "KVLINT_FUZZ_EXAMPLES": examples}
    cmd = [sys.executable, "-m", "pytest", "-o", "addopts=", "-q", "-p", "no:cacheprovider"]
    cmd += [f"{__file__}::{name}" for name in props]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert f"{len(props)} passed" in done.stdout, done.stdout[-2000:]
