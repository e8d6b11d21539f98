"""trtllm-serve's options per release (kvlint/engines/trtllm/data/flag_sets.json, read from each release's
sphinx-click listing of `trtllm-serve serve`): an option the pinned release's click command lacks stops it at
start-up ("Error: No such option"), an error where the image tag pins a release read, a warning naming the
assumption where none is pinned; click takes no prefix and reads `--x_y` and `--x-y` as different names."""

from __future__ import annotations

import json
import re
import sys

import pytest
from conftest import ROOT, lint

from kvlint.engines import facts
from kvlint.findings import Severity

sys.path.insert(0, str(ROOT / "benchmarks"))
import click_flags  # noqa: E402

FILE = "trtllm.yaml"
OPTIONS = ROOT / "kvlint" / "engines" / "trtllm" / "data" / "options.json"

# A Deployment written for these tests: trtllm-serve on NVIDIA's release image, the settings as flags.
TEXT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: trtllm-8b
spec:
  template:
    spec:
      nodeSelector:
        nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
      containers:
      - name: trtllm-serve
        image: nvcr.io/nvidia/tensorrt-llm/release:1.0.0
        command:
        - trtllm-serve
        - meta-llama/Llama-3.1-8B-Instruct
        - --kv_cache_free_gpu_memory_fraction
        - "0.8"
        - --max_seq_len=8192
        - --max_batch_size=16
        resources:
          limits:
            nvidia.com/gpu: 1
"""


def _text(tag: str = "1.0.0", edit: tuple[str, str] | None = None, image: str = "") -> str:
    text = TEXT.replace("tensorrt-llm/release:1.0.0", f"tensorrt-llm/release:{tag}")
    if image:
        text = text.replace(f"nvcr.io/nvidia/tensorrt-llm/release:{tag}", image)
    return text.replace(*edit) if edit else text


def _flag_findings(result):
    return [f for f in result.findings if f.rule == "KV005"]


def test_every_option_of_kvlint_s_option_table_is_in_a_release_read_or_named_newer():
    """Each name kvlint's option table (data/options.json) reads is an option of `serve` in some release read,
    or one its note names as newer than the releases read; `--model`/`--model_path` are no option of
    trtllm-serve (MODEL is its click argument), so a release that is pinned refuses them."""
    doc = json.loads(OPTIONS.read_text())
    table = facts.load("trtllm", "flag_sets")
    names = set(doc["options"]) | set(doc["aliases"])
    missing = {n for n in names if n not in table["flags"]}
    named = {n for n in missing if re.search(re.escape(n) + r"(?![\w-])", doc["note"])}
    assert missing - named == {"--model", "--model_path"}


def test_the_model_option_is_refused_where_a_release_is_pinned():
    edit = (
        "        - meta-llama/Llama-3.1-8B-Instruct\n",
        "        - --model=meta-llama/Llama-3.1-8B-Instruct\n",
    )
    found = _flag_findings(lint(_text(edit=edit), FILE))
    assert [f.severity for f in found] == [Severity.ERROR]
    assert "has no option --model:" in found[0].message


def test_the_written_options_of_the_release_are_not_findings():
    assert _flag_findings(lint(_text(), FILE)) == []


def test_a_name_the_release_lacks_is_an_error_with_a_did_you_mean():
    found = _flag_findings(
        lint(_text(edit=("--kv_cache_free_gpu_memory_fraction", "--free_gpu_memory_fraction")), FILE)
    )
    assert [(f.severity, f.fix, f.where.line) for f in found] == [
        (Severity.ERROR, "did you mean --kv_cache_free_gpu_memory_fraction?", 16)
    ]
    assert "Error: No such option: --free_gpu_memory_fraction" in found[0].message


def test_an_option_added_in_1_0_0_is_an_error_at_0_21_0_and_clean_at_1_0_0():
    """--fail_fast_on_attention_window_too_large is in 1.0.0's listing of `serve` and not in 0.21.0's
    (gh-pages 0.21.0/commands/trtllm-serve.html, 1.0.0/commands/trtllm-serve/trtllm-serve.html)."""
    edit = (
        "- --max_batch_size=16",
        "- --max_batch_size=16\n        - --fail_fast_on_attention_window_too_large",
    )
    assert _flag_findings(lint(_text("1.0.0", edit), FILE)) == []
    found = _flag_findings(lint(_text("0.21.0", edit), FILE))
    assert [f.severity for f in found] == [Severity.ERROR]
    assert "TensorRT-LLM 0.21.0 has no option --fail_fast_on_attention_window_too_large" in found[0].message
    assert "(TensorRT-LLM 1.0.0 to 1.2.1 have it)" in found[0].message


def test_the_equals_form_is_judged_by_the_name_before_the_equals_sign():
    ok = _flag_findings(lint(_text(edit=("--max_seq_len=8192", "--max_seq_len=8192")), FILE))
    bad = _flag_findings(lint(_text(edit=("--max_seq_len=8192", "--max_seq_length=8192")), FILE))
    assert ok == []
    assert [(f.severity, f.fix) for f in bad] == [(Severity.ERROR, "did you mean --max_seq_len?")]


def test_click_reads_no_dashes_for_underscores_and_no_prefix():
    dashes = _flag_findings(lint(_text(edit=("--max_seq_len=", "--max-seq-len=")), FILE))
    prefix = _flag_findings(lint(_text(edit=("--max_seq_len=", "--max_seq=")), FILE))
    assert [f.severity for f in dashes + prefix] == [Severity.ERROR, Severity.ERROR]


@pytest.mark.parametrize(
    ("tag", "why"),
    [
        ("latest", "no release is pinned"),
        ("1.3.0rc8", "kvlint has not read the flags of TensorRT-LLM 1.3.0rc8"),
        ("1.3.0", "kvlint has not read the flags of TensorRT-LLM 1.3.0"),
    ],
)
def test_an_unpinned_or_unread_release_is_a_warning_naming_the_assumption(tag, why):
    found = _flag_findings(lint(_text(tag, ("--max_batch_size=16", "--max_batch_sise=16")), FILE))
    assert [f.severity for f in found] == [Severity.WARNING]
    assert why in found[0].message


def test_an_image_built_by_someone_else_is_a_warning():
    edit = ("--max_batch_size=16", "--max_batch_sise=16")
    found = _flag_findings(lint(_text(edit=edit, image="example.com/team/tensorrt-llm:1.0.0"), FILE))
    assert [f.severity for f in found] == [Severity.WARNING]
    assert "is not the engine's own" in found[0].message


def test_an_option_a_newer_release_has_is_not_flagged_when_none_is_pinned():
    """--served_model_name is in kvlint's option table (serve.py after 1.2.1) but in no release read."""
    edit = ("--max_batch_size=16", "--max_batch_size=16\n        - --served_model_name=m")
    assert _flag_findings(lint(_text("latest", edit), FILE)) == []
    assert [f.severity for f in _flag_findings(lint(_text("1.0.0", edit), FILE))] == [Severity.ERROR]


def test_a_value_outside_the_release_s_choice_is_an_error():
    edit = ("--max_batch_size=16", "--max_batch_size=16\n        - --log_level=verbose")
    assert _flag_findings(lint(_text(edit=edit), FILE)) == []
    loud = ("--max_batch_size=16", "--max_batch_size=16\n        - --log_level=loud")
    found = _flag_findings(lint(_text(edit=loud), FILE))
    assert [f.severity for f in found] == [Severity.ERROR]
    assert "Error: Invalid value for '--log_level': 'loud'" in found[0].message


def test_the_1_2_names_of_an_option_are_read_and_refused_before_1_2():
    """1.2.0 names the KV fraction --free_gpu_memory_fraction first (--kv_cache_free_gpu_memory_fraction
    second): it sets the fraction there, and 1.0.0's click refuses it, with 1.0.0's name for it."""
    edit = ("--kv_cache_free_gpu_memory_fraction", "--free_gpu_memory_fraction")
    new = lint(_text("1.2.0", edit), FILE)
    old = _flag_findings(lint(_text("1.0.0", edit), FILE))
    assert _flag_findings(new) == []
    assert new.deployments[0].in_force.gpu_memory_utilization.value == pytest.approx(0.8)
    assert [(f.severity, f.fix) for f in old] == [
        (Severity.ERROR, "did you mean --kv_cache_free_gpu_memory_fraction?")
    ]
    assert "(TensorRT-LLM 1.2.0 to 1.2.1 have it)" in old[0].message


def test_a_backend_value_is_judged_only_where_the_listing_is_a_plain_choice():
    """1.0.0's --backend is click.Choice(pytorch, trt); from 1.1.0 ChoiceWithAlias takes aliases the page
    does not list, so no value is judged there."""
    edit = ("--max_batch_size=16", "--max_batch_size=16\n        - --backend=tensorrt")
    assert [f.severity for f in _flag_findings(lint(_text("1.0.0", edit), FILE))] == [Severity.ERROR]
    assert _flag_findings(lint(_text("1.1.0", edit), FILE)) == []


@pytest.mark.parametrize("word", ["--", "-", "--=", "-="])
def test_a_bare_dash_word_is_no_traceback(word):
    edit = ("--max_batch_size=16", f'--max_batch_size=16\n        - "{word}"')
    result = lint(_text(edit=edit), FILE)
    assert not [f for f in result.findings if "Traceback" in f.message]
    assert all(f.severity != Severity.ERROR or f.rule == "KV005" for f in result.findings)


# --- benchmarks/click_flags.py, on text written for these tests in the shapes it reads

SERVE_PY = """\
import click
from common import shared_options

def extra_options(f):
    f = click.option("--extra_x", type=int)(f)
    return f

@click.command("serve")
@click.argument("model", type=str)
@click.option("--tensor_parallel_size", "--tp_size", type=int, default=1)
@click.option("--log_level", type=click.Choice(severity_map.keys()), default="info")
@click.option("--mode", type=click.Choice(["a", "b"]))
@click.option("--backend", type=ChoiceWithAlias(["pytorch", "tensorrt"], {"trt": "tensorrt"}))
@click.option("--trust_remote_code", is_flag=True)
@click.option("--overlap/--no-overlap", default=True)
@extra_options
@shared_options
def serve(model, **kw):
    pass

@click.command("other")
@click.option("--not_serve")
def other():
    pass
"""

SHARED_PY = """\
import click

def shared_options(f):
    for option in (click.option("--shared_y", type=str),):
        f = option(f)
    return f
"""


def test_the_reader_takes_every_name_of_serve_s_decorators(tmp_path):
    commands = tmp_path / "common.py"
    commands.write_text(SHARED_PY)
    options, choices = click_flags.read_source(SERVE_PY, str(tmp_path))
    assert options == [
        "--help",
        "--tensor_parallel_size",
        "--tp_size",
        "--log_level",
        "--mode",
        "--backend",
        "--trust_remote_code",
        "--overlap",
        "--no-overlap",
        "--extra_x",
        "--shared_y",
    ]
    assert choices == {"--log_level": None, "--mode": ["a", "b"], "--backend": None}


PAGE = """\
<section id="trtllm-serve-disaggregated"><p class="rubric">Options</p>
<dl class="std option">
<dt class="sig sig-object std" id="cmdoption-trtllm-serve-disaggregated-c">
<span class="sig-name descname"><span class="pre">--config_file</span></span></dt>
<dd><p>Not serve's.</p>
</dd></dl>

</section>
<section id="trtllm-serve-serve">
<p class="rubric">Options</p>
<dl class="std option">
<dt class="sig sig-object std" id="cmdoption-trtllm-serve-serve-free_gpu_memory_fraction">
<span id="cmdoption-trtllm-serve-serve-kv_cache_free_gpu_memory_fraction"></span><span class="sig-name descname"><span class="pre">--free_gpu_memory_fraction</span></span><span class="sig-prename descclassname"><span class="pre">,</span> </span><span class="sig-name descname"><span class="pre">--kv_cache_free_gpu_memory_fraction</span></span><span class="sig-prename descclassname"> <span class="pre">&lt;free_gpu_memory_fraction&gt;</span></span></dt>
<dd><p>Free GPU memory fraction.</p>
</dd></dl>

<dl class="std option">
<dt class="sig sig-object std" id="cmdoption-trtllm-serve-serve-log_level">
<span class="sig-name descname"><span class="pre">--log_level</span></span><span class="sig-prename descclassname"> <span class="pre">&lt;log_level&gt;</span></span></dt>
<dd><p>The logging level.</p>
<dl class="field-list simple">
<dt class="field-odd">Options<span class="colon">:</span></dt>
<dd class="field-odd"><p>error | info</p>
</dd>
</dl>
</dd></dl>

<p class="rubric">Arguments</p>
<dl class="std option">
<dt class="sig sig-object std" id="cmdoption-trtllm-serve-serve-arg-MODEL">
<span class="sig-name descname"><span class="pre">MODEL</span></span></dt>
<dd><p>Required argument</p>
</dd></dl>

</section>
"""


def test_the_reader_takes_serve_s_options_from_a_sphinx_click_page():
    options, choices = click_flags.read_page(PAGE)
    assert options == [
        "--help",
        "--free_gpu_memory_fraction",
        "--kv_cache_free_gpu_memory_fraction",
        "--log_level",
    ]
    assert choices == {"--log_level": ["error", "info"]}


def test_the_writer_makes_runs_of_releases(tmp_path):
    table = tmp_path / "flag_sets.json"
    table.write_text(json.dumps({"engine": "trtllm", "about": "kept"}))
    per_release = {
        "1.0.0": {"read": "a", "options": ["--x", "--y"], "choices": {"--backend": ["pytorch", "trt"]}},
        "0.21.0": {"read": "b", "options": ["--x"], "choices": {"--backend": ["pytorch"]}},
        "1.1.0": {"read": "c", "options": ["--x", "--y"], "choices": {"--backend": ["pytorch", "tensorrt"]}},
    }
    click_flags.write(per_release, str(table))
    doc = json.loads(table.read_text())
    assert doc["about"] == "kept"
    assert doc["releases"] == ["0.21.0", "1.0.0", "1.1.0"]
    assert doc["flags"] == {"--x": ["0.21.0..1.1.0"], "--y": ["1.0.0..1.1.0"]}
    assert [run["releases"] for run in doc["choices"]["--backend"]] == ["0.21.0", "1.0.0", "1.1.0"]
    assert "unjudged" in doc["choices"]["--backend"][2]  # a listing naming tensorrt: ChoiceWithAlias


def test_the_table_is_what_the_writer_makes_of_its_own_releases(tmp_path):
    """The committed table's flags and choices are the writer's runs of the per-release sets they encode."""
    doc = facts.load("trtllm", "flag_sets")
    order = doc["releases"]
    per_release = {}
    for r in order:
        options = [o for o, runs in doc["flags"].items() if any(_in(r, run, order) for run in runs)]
        choices = {}
        for option, runs in doc["choices"].items():
            for run in runs:
                if _in(r, run["releases"], order):
                    choices[option] = run.get("values") or (["tensorrt"] if option == "--backend" else None)
        per_release[r] = {"read": doc["read"][r], "options": options, "choices": choices}
    table = tmp_path / "flag_sets.json"
    table.write_text(json.dumps({k: v for k, v in doc.items() if k not in ("flags", "choices")}))
    click_flags.write(per_release, str(table))
    made = json.loads(table.read_text())
    assert (made["flags"], made["releases"]) == (doc["flags"], doc["releases"])
    assert [[r["releases"] for r in v] for v in made["choices"].values()] == [
        [r["releases"] for r in v] for v in doc["choices"].values()
    ]


def _in(release: str, run: str, order: list[str]) -> bool:
    a, _, b = run.partition("..")
    return order.index(a) <= order.index(release) <= order.index(b or a)
