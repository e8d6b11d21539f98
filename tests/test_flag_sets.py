"""A flag the release in force does not have is an error where the release is pinned and its flag set read,
a warning that names the assumption where it is not; a flag the release's argparse takes (a prefix, a
`--no-x`) is never an error. Held on real files: the corpus pins vLLM releases on hundreds of flags."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import FIXTURES, SHARED, lint, shared_params

from kvlint.engines import facts, flag_sets
from kvlint.findings import Severity

SCOUT = "scout.yaml"

# A Deployment written for these tests in the shape of GKE's Llama 4 Scout sample
# (GoogleCloudPlatform/kubernetes-engine-samples ai-ml/llm-serving-llama/vllm, the corpus file
# test_no_flag_of_a_real_file_on_its_pinned_release_is_an_error also reads): the same image, launcher and
# flags, so the tests run on a clone with nothing beside it.
SCOUT_TEXT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm-llama4-scout
spec:
  replicas: 1
  selector:
    matchLabels: {app: llama-server}
  template:
    metadata:
      labels: {app: llama-server}
    spec:
      nodeSelector:
        cloud.google.com/gke-accelerator: nvidia-h100-80gb
      containers:
      - name: inference-server
        image: docker.io/vllm/vllm-openai:v0.10.0
        resources:
          limits:
            nvidia.com/gpu: 8
        command: ["python3", "-m", "vllm.entrypoints.openai.api_server"]
        args:
        - --host=0.0.0.0
        - --port=7080
        - --swap-space=16
        - --max-model-len=262144
        - --limit_mm_per_prompt
        - '{"image": 5}'
        - --disable-log-stats
        - --model=meta-llama/Llama-4-Scout-17B-16E
        - --tensor-parallel-size=8
"""


def _line(text: str, needle: str) -> int:
    """The 1-based line of the first line holding `needle`."""
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


def _scout(tag: str = "v0.10.0", edit: tuple[str, str] | None = None) -> str:
    """The Scout-shaped Deployment on docker.io/vllm/vllm-openai:v0.10.0 with `--swap-space=16`; the tag and
    one flag re-written."""
    text = SCOUT_TEXT.replace("vllm/vllm-openai:v0.10.0", f"vllm/vllm-openai:{tag}")
    return text.replace(*edit) if edit else text


def _flag_findings(result):
    return [f for f in result.findings if f.rule == "KV005" and "has no option" in f.message]


def test_the_table_reads_every_release_in_order_up_to_the_release_table_s_newest():
    t = flag_sets.table("vllm")
    assert t is not None
    keys = [facts.release(r) for r in t.releases]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    assert t.releases[-1] == facts.load("vllm", "releases")["newest_read"]
    assert all(r in t.read and f"vllm=={r}:vllm/engine/arg_utils.py" in t.read[r] for r in t.releases)
    # a flag every release has, and one each end of the range lacks
    assert all("--max-num-seqs" in t.sets[r] for r in t.releases)
    assert "--swap-space" in t.sets[t.releases[0]] and "--swap-space" not in t.sets[t.releases[-1]]


def test_a_release_s_flags_are_gathered_only_when_that_release_is_asked_about():
    """A run asks for the release in force; the table makes no other release's set (it made all 66 of
    vLLM's, 13,741 insertions, in every run that met a vLLM flag)."""
    t = flag_sets.table.__wrapped__("vllm")  # a table no other test has asked
    assert t is not None and t.sets.made == ()
    flags = t.sets["0.10.0"]
    assert t.sets.made == ("0.10.0",)
    assert "--max-num-seqs" in flags and "--swap-space" in flags  # CacheConfig.swap_space until 0.17
    assert flags == {
        f for f, runs in t.spans.items() if any(_within("0.10.0", run, t.releases) for run in runs)
    }
    assert t.sets.union(t.releases) == set(t.spans)  # every release together: every flag read
    assert t.sets.made == ("0.10.0",)


def _within(release: str, run: str, order: tuple[str, ...]) -> bool:
    first, _, last = run.partition("..")
    return order.index(first) <= order.index(release) <= order.index(last or first)


def test_the_published_file_on_its_own_release_has_no_flag_finding():
    assert _flag_findings(lint(_scout(), SCOUT)) == []


def test_a_flag_the_pinned_release_dropped_is_an_error_at_the_flag():
    """--swap-space is in vLLM 0.6 to 0.17 (CacheConfig.swap_space); the same file on v0.20.1 does not start."""
    found = _flag_findings(lint(_scout("v0.20.1"), SCOUT))
    assert [(f.severity, f.where.line) for f in found] == [
        (Severity.ERROR, _line(SCOUT_TEXT, "--swap-space"))
    ]
    assert "vLLM 0.20.1 has no option --swap-space" in found[0].message
    assert "unrecognized arguments: --swap-space" in found[0].message
    assert "0.17.1 have it" in found[0].message
    assert "vllm==0.20.1:vllm/engine/arg_utils.py" in found[0].details[0]


def test_a_typo_is_an_error_with_a_did_you_mean():
    found = _flag_findings(lint(_scout(edit=("--disable-log-stats", "--disable-log-stat-logging")), SCOUT))
    assert [(f.severity, f.where.line) for f in found] == [
        (Severity.ERROR, _line(SCOUT_TEXT, "--disable-log-stats"))
    ]
    assert found[0].fix == "did you mean --disable-log-stats?"


def test_a_prefix_argparse_takes_and_a_generated_inverse_are_not_errors():
    """argparse allow_abbrev: `--disable-log-stat` is `--disable-log-stats`; `--no-enable-prefix-caching` is
    BooleanOptionalAction's inverse (vllm==0.10.0:vllm/engine/arg_utils.py)."""
    text = _scout(edit=("--disable-log-stats", "--disable-log-stat"))
    text = text.replace(
        "- --tensor-parallel-size=8", "- --tensor-parallel-size=8\n        - --no-enable-prefix-caching"
    )
    assert _flag_findings(lint(text, SCOUT)) == []


@pytest.mark.parametrize(
    ("tag", "why"),
    [
        ("latest", "no release is pinned"),
        ("v0.10.1rc1", "names no release exactly"),
        ("v0.5.4", "kvlint has not read the flags of vLLM 0.5.4"),
    ],
)
def test_an_unpinned_release_is_a_warning_that_names_the_assumption(tag, why):
    found = _flag_findings(lint(_scout(tag, ("--disable-log-stats", "--disable-log-stat-logging")), SCOUT))
    assert [f.severity for f in found] == [Severity.WARNING]
    assert why in found[0].message and found[0].fix == "did you mean --disable-log-stats?"


def test_a_flag_only_an_other_release_has_is_not_flagged_when_no_release_is_pinned():
    assert _flag_findings(lint(_scout("latest"), SCOUT)) == []


def test_an_image_built_by_someone_else_is_a_warning():
    text = _scout(edit=("--disable-log-stats", "--disable-log-stat-logging")).replace(
        "docker.io/vllm/vllm-openai:v0.10.0", "registry.example.com/team/vllm-openai-custom:v0.10.0"
    )
    found = _flag_findings(lint(text, SCOUT))
    assert [f.severity for f in found] == [Severity.WARNING]
    assert "is not the engine's own" in found[0].message


def test_the_configured_engine_version_pins_the_release():
    found = _flag_findings(lint(_scout("latest"), SCOUT, **_engine_version("0.20.1")))
    assert [(f.severity, f.where.line) for f in found] == [
        (Severity.ERROR, _line(SCOUT_TEXT, "--swap-space"))
    ]


def _engine_version(version: str) -> dict:
    from kvlint.run.settings import Settings

    s = Settings()
    s.defaults.engine_version = version
    return {"defaults": s.defaults}


CORPUS = [
    p
    for folder in ("manifests", "manifests2")
    if SHARED.joinpath("corpus", folder).exists()
    for p in sorted(SHARED.joinpath("corpus", folder).iterdir())
    if p.suffix in (".yaml", ".yml")
]


# every fixture but those written to show a KV005 (fixtures/KV005/bad-*)
OWN = [
    p
    for p in sorted(FIXTURES.rglob("*.yaml"))
    if not (p.parent.name == "KV005" and p.name.startswith("bad-"))
]


@pytest.mark.parametrize("path", shared_params("corpus", [*CORPUS, *OWN], ids=lambda p: p.name))
def test_no_flag_of_a_real_file_on_its_pinned_release_is_an_error(path: Path):
    """Every corpus and fixture file: the flags written for the release its image pins are that release's."""
    result = lint(path.read_text(encoding="utf-8", errors="replace"), str(path))
    assert [f.message for f in _flag_findings(result) if f.severity == Severity.ERROR] == []


OME_GPT_OSS = "gpt-oss-120b-rt.yaml"

# An SGLang Deployment written for these tests with the launch flags of OME's gpt-oss-120b runtime
# (sgl-project/ome config/runtimes/srt/gpt-oss-120b-rt.yaml, read in the corpus test above): published on
# lmsysorg/sglang:v0.5.5.post3-cu129-amd64 with `--tp 2` (a prefix of --tp-size) and `--grpc-mode`.
OME_TEXT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: gpt-oss-120b
spec:
  template:
    spec:
      nodeSelector:
        cloud.google.com/gke-accelerator: nvidia-h100-80gb
      containers:
      - name: ome-container
        image: lmsysorg/sglang:v0.5.5.post3-cu129-amd64
        command: ["python3", "-m", "sglang.launch_server"]
        args:
        - --host=0.0.0.0
        - --port=8080
        - --model-path=openai/gpt-oss-120b
        - --tp
        - "2"
        - --context-length
        - "32768"
        - --grpc-mode
        resources:
          limits:
            nvidia.com/gpu: 2
"""


def _ome(tag: str = "v0.5.5.post3-cu129-amd64", edit: tuple[str, str] | None = None) -> str:
    """The OME-flagged SGLang Deployment; the tag and one flag re-written."""
    text = OME_TEXT.replace("lmsysorg/sglang:v0.5.5.post3-cu129-amd64", f"lmsysorg/sglang:{tag}")
    return text.replace(*edit) if edit else text


def test_sglang_on_its_pinned_release_takes_a_prefix():
    assert _flag_findings(lint(_ome(), OME_GPT_OSS)) == []


def test_sglang_flag_newer_than_the_pinned_release_is_an_error():
    """--grpc-mode is in SGLang 0.5.3.post2 on (sglang==0.5.3.post2:sglang/srt/server_args.py)."""
    found = _flag_findings(lint(_ome("v0.4.6.post1-cu124"), OME_GPT_OSS))
    assert [(f.severity, f.where.line) for f in found] == [(Severity.ERROR, _line(OME_TEXT, "--grpc-mode"))]
    assert "SGLang 0.4.6.post1 has no option --grpc-mode" in found[0].message
    assert "vllm" not in found[0].fix


def test_sglang_does_not_read_underscores_as_dashes():
    """A plain argparse.ArgumentParser (prepare_server_args): `--context_length` is no option of SGLang."""
    found = _flag_findings(lint(_ome(edit=("- --context-length", "- --context_length")), OME_GPT_OSS))
    assert [(f.severity, f.fix) for f in found] == [(Severity.ERROR, "did you mean --context-length?")]


def test_a_sglang_release_kvlint_has_not_read_is_a_warning():
    """0.5.14 on builds its flags from dataclass fields (sglang/srt/arg_groups/): not read."""
    found = _flag_findings(lint(_ome("v0.5.20", ("- --grpc-mode", "- --grpc-mdoe")), OME_GPT_OSS))
    assert [f.severity for f in found] == [Severity.WARNING]
    assert "kvlint has not read the flags of SGLang 0.5.20" in found[0].message


def test_a_word_for_an_int_flag_is_an_error_on_any_release():
    """vLLM's argparse reads --tensor-parallel-size with int() in every release read."""
    found = [
        f
        for f in lint(
            _scout("latest", ("--tensor-parallel-size=8", "--tensor-parallel-size=8.0")), SCOUT
        ).findings
        if f.rule == "KV005"
    ]
    assert [(f.severity, f.where.line) for f in found] == [
        (Severity.ERROR, _line(SCOUT_TEXT, "--tensor-parallel-size"))
    ]
    assert "invalid ... value: '8.0'" in found[0].message


def test_none_for_an_optional_int_flag_is_not_an_error():
    """optional_type(int) takes "None" (vllm==0.10.1:vllm/engine/arg_utils.py): kvlint's own warning stays."""
    text = _scout(
        edit=("- --tensor-parallel-size=8", "- --tensor-parallel-size=8\n        - --max-num-seqs=None")
    )
    found = [f for f in lint(text, SCOUT).findings if f.rule == "KV005"]
    assert found and all(f.severity == Severity.WARNING for f in found)


def test_ray_engine_kwargs_are_not_read_as_argparse_words():
    """Ray Serve passes engine_kwargs to AsyncEngineArgs: 2.0 for max_num_seqs is no argparse word."""
    text = (FIXTURES / "stacks" / "ray-serve" / "good-llm-config.yaml").read_text(encoding="utf-8")
    assert "max_num_seqs:" in text
    text = re.sub(r"max_num_seqs: *\d+", "max_num_seqs: 2.0", text)
    assert not [f for f in lint(text).findings if f.severity == Severity.ERROR]


TGI_FILE = "tgi.yaml"

# A TGI Deployment written for these tests in the shape of GKE's Gemma 2 TGI sample (corpus:
# GoogleCloudPlatform/kubernetes-engine-samples ai-ml/llm-serving-gemma/tgi/tgi-2-27b-it.yaml), its settings as
# launcher flags on TGI's own image, pinned to 2.4.1.
TGI_TEXT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: tgi-gemma-deployment
spec:
  template:
    spec:
      nodeSelector:
        cloud.google.com/gke-accelerator: nvidia-l4
      containers:
      - name: inference-server
        image: ghcr.io/huggingface/text-generation-inference:2.4.1
        args:
        - --model-id=google/gemma-2-27b-it
        - --num-shard=4
        - --max-input-tokens=1562
        - --max-total-tokens=2048
        - --max-batch-prefill-tokens=2048
        - -p
        - "8000"
        resources:
          limits:
            nvidia.com/gpu: 4
"""


def _tgi(tag: str = "2.4.1", edit: tuple[str, str] | None = None) -> str:
    text = TGI_TEXT.replace("text-generation-inference:2.4.1", f"text-generation-inference:{tag}")
    return text.replace(*edit) if edit else text


def test_tgi_flags_on_their_pinned_release_are_not_findings():
    assert _flag_findings(lint(_tgi(), TGI_FILE)) == []


def test_tgi_takes_no_underscored_flag():
    """clap derive names --num-shard after the field num_shard; `--num_shard` (the spelling the launcher's own
    doc comment of num_shard uses, launcher/src/main.rs @v3.3.4) stops it."""
    found = _flag_findings(lint(_tgi(edit=("--num-shard=4", "--num_shard=4")), TGI_FILE))
    assert [(f.severity, f.fix) for f in found] == [(Severity.ERROR, "did you mean --num-shard?")]
    assert "unexpected argument '--num_shard' found" in found[0].message


def test_tgi_takes_no_prefix_of_a_flag():
    """argparse would take --max-total-tok; clap (infer_long_args off) does not."""
    found = _flag_findings(lint(_tgi(edit=("--max-total-tokens=", "--max-total-tok=")), TGI_FILE))
    assert [f.severity for f in found] == [Severity.ERROR]


def test_a_tgi_flag_newer_than_the_pinned_release_is_an_error_naming_the_releases_that_have_it():
    """--max-input-tokens is in the launcher from v2.0.0 (--max-input-length before)."""
    found = _flag_findings(lint(_tgi("1.4.5"), TGI_FILE))
    assert [(f.severity, f.where.line) for f in found] == [
        (Severity.ERROR, _line(TGI_TEXT, "--max-input-tokens"))
    ]
    assert "TGI 1.4.5 has no option --max-input-tokens (TGI 2.0.0 to 3.3.7 have it)" in found[0].message


def test_an_unpinned_tgi_image_makes_a_typo_a_warning():
    found = _flag_findings(lint(_tgi("latest", ("--num-shard=4", "--num-shrad=4")), TGI_FILE))
    assert [(f.severity, f.fix) for f in found] == [(Severity.WARNING, "did you mean --num-shard?")]


def test_the_tgi_table_reads_each_release_tag_and_its_clap_rules():
    t = flag_sets.table("tgi")
    assert t is not None and t.parser == "clap" and not t.abbreviations and not t.inverses
    assert t.releases[0] == "0.2.0" and t.releases[-1] == "3.3.7" and len(t.releases) >= 60
    assert "--kv-cache-dtype" in t.sets["2.4.0"] and "--kv-cache-dtype" not in t.sets["2.3.1"]
    assert {"-p", "-h", "--help", "-V"} <= t.sets["3.3.4"]
