"""Campaign generators for the input kinds and text parsers the other property tests reach thinly
(issue 10, "keep them fixed"): hostile values of every type in every field of every input kind,
engine flags inside shell scripts, suppression comments, and determinism and exit codes through
the command line.

- every input kind: a real file of the corpus, drawn by kind (Deployment, LWS, KServe, KubeAI,
  Ray, Helm values, SkyPilot, compose, Dynamo, llm-d, NIM, KAITO, AIBrix … as INDEX.yaml lists
  them, each kind equally likely), with up to five of its scalars replaced by a hostile value of
  any type: numbers past every bound, text with controls and escapes, `$(VAR)`/`${VAR}`/Helm
  expressions, null, booleans, lists and mappings where a scalar was;
- engine flags of vLLM, SGLang and TGI in a `sh -c` script: any option of the engine's table
  with a hostile value, quoting, `$VAR`, `${VAR:-default}`, `&&`, `;`, `exec`, continuation lines;
- suppression comments: `# kvlint:` bodies from the directive grammar's pieces and noise, on
  content lines, on their own lines and inside strings;
- through the command line: a batch of such files linted with two hash seeds and with
  `--jobs 1` / `--jobs 2` gives byte-identical reports, and the exit code is 2 exactly when a
  file could not be read, else 1 exactly when an error-level finding is reported.

Invariants per case (tests/test_properties.py's lint_case): no exception and no internal-error
finding, under 2 s of CPU, every report well-formed for its format, every stated number the
plan used inside kvlint/bounds.py.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from conftest import ROOT, SHARED
from hypothesis import HealthCheck, example, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from test_properties import ENGINES, HOSTILE_TEXTS, NUMBER_TEXTS, QUICK, _yaml_str, lint_case

from kvlint.load import load_bytes
from kvlint.load.tree import Mapping, Scalar, Sequence


def _corpus_by_kind() -> dict[str, list]:
    from ruamel.yaml import YAML

    out: dict[str, list] = {}
    for folder in ("manifests", "manifests2"):
        index = SHARED / "corpus" / folder / "INDEX.yaml"
        if not index.exists():
            continue
        for entry in YAML(typ="safe", pure=True).load(index.read_text()) or []:
            path = SHARED / "corpus" / folder / str(entry.get("file"))
            kinds = entry.get("kinds") or ["(none)"]
            if path.is_file():
                out.setdefault(str(kinds[0]), []).append(path)
    return {k: sorted(v) for k, v in sorted(out.items())}


BY_KIND = _corpus_by_kind()
_CAMPAIGN = hsettings(
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    **({"max_examples": 8} if QUICK else {}),
)

# ---- hostile values of any type in any field -----------------------------------------------------

HOSTILE_VALUES = st.one_of(
    NUMBER_TEXTS,
    HOSTILE_TEXTS.map(_yaml_str),
    st.sampled_from(
        [
            "null",
            "~",
            "true",
            "no",
            "[]",
            "{}",
            "[1, 2]",
            "{a: 1}",
            '["--max-model-len", "$(X)"]',
            "{limits: {nvidia.com/gpu: 1e309}}",
            '"$(POD_NAME)$(POD_NAME)"',
            '"${MODEL:-x}"',
            '"{{ .Values.model }}"',
            '"--tensor-parallel-size=0"',
            '"nvidia.com/gpu"',
            '"H100:8"',
            '"a100-80gb:3g.40gb"',
            "0x7fffffffffffffff",
            "1e309",
            "-.inf",
            ".nan",
            '"1Ei"',
            '"99999999999999999999Gi"',
            "&x 1",
            "!!binary AAAA",
            "!custom x",
        ]
    ),
)


def _scalars(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of every one-line scalar value (keys left alone) in the text."""
    loaded = load_bytes(text.encode("utf-8"), "x.yaml")
    starts = [0]
    for m in re.finditer("\r\n|[\n\r\x85\u2028\u2029]", text):
        starts.append(m.end())
    spans: list[tuple[int, int]] = []
    seen: set[int] = set()
    stack = [d.root for d in loaded.documents if d.root is not None]
    while stack and len(spans) < 5000:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, Mapping):
            stack.extend(node.values.values())
        elif isinstance(node, Sequence):
            stack.extend(node.items)
        elif isinstance(node, Scalar) and node.line == node.end_line and node.line < len(starts):
            start, end = starts[node.line] + node.col, starts[node.line] + node.end_col
            if 0 <= start < end <= len(text):
                spans.append((start, end))
    return sorted(set(spans))


_SPANS: dict[str, list[tuple[int, int]]] = {}


@st.composite
def any_kind_with_hostile_values(draw) -> tuple[str, str]:
    kind = draw(st.sampled_from(sorted(BY_KIND)))
    path = draw(st.sampled_from(BY_KIND[kind]))
    text = path.read_text(encoding="utf-8", errors="replace")
    if str(path) not in _SPANS:
        _SPANS[str(path)] = _scalars(text)
    spans = _SPANS[str(path)]
    if not spans:
        return path.name, text
    chosen = draw(st.lists(st.sampled_from(spans), min_size=1, max_size=5, unique=True))
    for start, end in sorted(chosen, reverse=True):
        text = text[:start] + draw(HOSTILE_VALUES) + text[end:]
    return path.name, text


@pytest.mark.skipif(
    not BY_KIND, reason=f"{SHARED / 'corpus'} is absent (../shared is not beside this checkout)"
)
@given(any_kind_with_hostile_values())
@_CAMPAIGN
def test_hostile_values_in_every_field_of_every_input_kind(case):
    name, text = case
    lint_case(text, name)


def test_every_input_kind_the_brief_names_is_in_the_corpus_draw():
    if not BY_KIND:
        pytest.skip(f"{SHARED / 'corpus'} is absent")
    kinds = set(BY_KIND)
    for wanted in ("Deployment", "LeaderWorkerSet", "InferenceService", "Model", "RayService", "values"):
        assert any(wanted in k for k in kinds), (wanted, sorted(kinds))
    assert len(kinds) >= 15, sorted(kinds)


# ---- engine flags in shell scripts ----------------------------------------------------------------


def _options(engine: str) -> list[str]:
    from kvlint import engines

    return sorted(engines.get(engine).options().options)


SHELL_NOISE = st.sampled_from(["", " && echo ok", "; sleep 1", " \\\n  ", " 2>&1", " | tee log", " &", "\n"])


@st.composite
def engine_flags_in_a_script(draw) -> str:
    engine = draw(st.sampled_from(sorted(ENGINES)))
    image, command = ENGINES[engine]
    words = list(command)
    env = []
    for i in range(draw(st.integers(min_value=1, max_value=6))):
        option = draw(st.sampled_from(_options(engine)))
        value = draw(st.one_of(NUMBER_TEXTS, HOSTILE_TEXTS, st.just(f"$V{i}"), st.just(f"${{V{i}:-8}}")))
        env.append({"name": f"V{i}", "value": draw(st.one_of(NUMBER_TEXTS, HOSTILE_TEXTS))})
        quote = draw(st.sampled_from(["", "'", '"']))
        value = value.replace(quote, "") if quote else value
        sep = draw(st.sampled_from(["=", " "]))
        words.append(f"{option}{sep}{quote}{value}{quote}" + draw(SHELL_NOISE))
    script = draw(st.sampled_from(["", "exec ", "set -e; "])) + " ".join(words)
    return (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: s}\nspec:\n  template:\n    spec:\n"
        "      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}\n      containers:\n"
        f"        - name: engine\n          image: {image}\n          command: [sh, -c]\n"
        f"          args: [{_yaml_str(script)}]\n          env: {json.dumps(env)}\n"
        '          resources: {limits: {nvidia.com/gpu: "1"}}\n'
    )


@given(engine_flags_in_a_script())
@_CAMPAIGN
@example(
    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: s}\nspec: {template: {spec: {containers: [{name: e, "
    "image: vllm/vllm-openai:v0.10.1, command: [sh, -c], args: ['vllm serve x --gpu-memory-utilization=1e309 "
    "--max-model-len=${L:-8k} && --block-size 0']}]}}}\n"
)
@example(  # found by the campaign: a RoPE factor of 0 scaled the derived context length to 0
    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: s}\nspec: {template: {spec: {containers: [{name: e, "
    "image: 'ghcr.io/huggingface/text-generation-inference:3.0', command: [sh, -c], args: ['text-generation-launcher "
    "--model-id meta-llama/Llama-3.1-8B-Instruct --rope-factor=0'], resources: {limits: {nvidia.com/gpu: 1}}}]}}}\n"
)
def test_engine_flags_in_shell_scripts(text):
    lint_case(text)


# ---- suppression comments ---------------------------------------------------------------------------

DIRECTIVE_BODIES = st.lists(
    st.sampled_from(
        [
            "disable",
            "disable-file",
            "=",
            "=",
            ",",
            " ",
            "\t",
            "--",
            " -- reason",
            "KV102",
            "KV103",
            "KV006",
            "KV001",
            "all",
            "kv-cache-below-max-context",
            "kv102",
            "x",
            "#",
            "'",
            '"',
            "!",
            "\u2028",
            "kvlint:",
        ]
    ),  # fmt: skip
    max_size=12,
).map("".join)


@st.composite
def suppressions(draw) -> str:
    spec = [
        "kind: ServingSpec",
        "name: s",
        "model: meta-llama/Llama-3.1-8B-Instruct",
        "gpu: L4",
        "max_context: 131072",
        "max_sequences: 4",
        "",
    ]
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        body = draw(DIRECTIVE_BODIES)
        where = draw(st.sampled_from(["after", "own", "string"]))
        line = draw(st.integers(min_value=1, max_value=len(spec) - 1))
        if where == "after":
            spec[line] += f"  # kvlint: {body}"
        elif where == "own":
            spec.insert(line, f"# kvlint: {body}")
        else:
            spec.insert(line, f"notes_{line}: {_yaml_str('# kvlint: ' + body)}")
    return "\n".join(spec)


@given(suppressions())
@_CAMPAIGN
@example("kind: ServingSpec\nmodel: x\ngpu: L4\nmax_context: 131072  # kvlint: disable=KV102,,\t-- r\n")
def test_suppression_comments_anywhere(text):
    run = lint_case(text)
    for f in run.files[0].suppressed:
        assert f.suppressed_by and f.rule != "KV001", f


# ---- determinism and exit codes through the command line -------------------------------------------


def _kvlint(folder, *args: str, seed: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    return subprocess.run(
        [sys.executable, "-m", "kvlint", "--isolated", "--no-color", *args, "."],
        cwd=folder,
        env=env,
        capture_output=True,
        timeout=120,
    )


@pytest.mark.skipif(
    not BY_KIND, reason=f"{SHARED / 'corpus'} is absent (../shared is not beside this checkout)"
)
@given(
    st.lists(
        st.one_of(
            any_kind_with_hostile_values(),
            engine_flags_in_a_script().map(lambda t: ("script.yaml", t)),
            suppressions().map(lambda t: ("spec.yaml", t)),
        ),
        min_size=2,
        max_size=6,
    )
)
@hsettings(
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
    deadline=None,
    **({"max_examples": 1} if QUICK else {}),
)
def test_reports_are_deterministic_and_exit_codes_honest(tmp_path_factory, cases):
    folder = tmp_path_factory.mktemp("batch")
    for i, (name, text) in enumerate(cases):
        (folder / f"{i}-{re.sub('[^A-Za-z0-9._-]', '_', name)[:60]}").with_suffix(".yaml").write_bytes(
            text.encode("utf-8", "surrogatepass")
        )
    first = _kvlint(folder, "--format", "json", seed="1")
    assert b"Traceback" not in first.stderr, first.stderr.decode(errors="replace")
    doc = json.loads(first.stdout)
    errors = [f for f in doc["findings"] if f["severity"] == "error"]
    unreadable = bool(first.stderr.strip())
    assert first.returncode == (2 if unreadable else 1 if errors else 0), (first.returncode, first.stderr)
    assert not any("internal error" in f["message"] for f in doc["findings"])
    # the JSON report holds every finding, position and fix; SARIF adds the rule table and URIs
    for fmt in ("json", "sarif"):
        a = first if fmt == "json" else _kvlint(folder, "--format", fmt, seed="1")
        b = _kvlint(folder, "--format", fmt, "--jobs", "2", seed="2")
        assert a.stdout == b.stdout and a.returncode == b.returncode, fmt


def test_campaign_runs_this_module():
    text = (ROOT / "benchmarks" / "campaign.py").read_text()
    assert "tests/test_campaign_kinds.py" in text
