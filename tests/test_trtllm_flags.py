"""trtllm-serve's options per release (kvlint/engines/trtllm/data/flag_sets.json, read from each release's
sphinx-click listing of `trtllm-serve serve`): an option the pinned release's click command lacks stops it at
start-up ("Error: No such option"), an error where the image tag pins a release read, a warning naming the
assumption where none is pinned; click takes no prefix and reads `--x_y` and `--x-y` as different names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import lint

from kvlint.engines import facts
from kvlint.findings import Severity

FILE = "trtllm.yaml"
OPTIONS = Path(__file__).resolve().parent.parent / "kvlint" / "engines" / "trtllm" / "data" / "options.json"

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


def test_every_option_kvlint_reads_of_trtllm_serve_is_in_some_release_read_or_newer():
    """The options kvlint's option table maps to settings exist in a release read, or are named newer than
    the releases read in the option table's own note (--kv_cache_dtype from 1.3)."""
    from kvlint.engines.trtllm.options import MAPPING

    table = facts.load("trtllm", "flag_sets")
    note = json.loads(OPTIONS.read_text())["note"]
    for option in MAPPING:
        if option == "--model":
            continue  # the model is the positional MODEL (click.argument), not an option
        assert option in table["flags"] or f"{option} (" in note, option


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
    """--fail_fast_on_attention_window_too_large is in 1.0.0's listing of `serve` and not in 0.21.0's."""
    edit = (
        "- --max_batch_size=16",
        "- --max_batch_size=16\n        - --fail_fast_on_attention_window_too_large",
    )
    assert _flag_findings(lint(_text("1.0.0", edit), FILE)) == []
    found = _flag_findings(lint(_text("0.21.0", edit), FILE))
    assert [f.severity for f in found] == [Severity.ERROR]
    assert "TensorRT-LLM 0.21.0 has no option --fail_fast_on_attention_window_too_large" in found[0].message
    assert "(TensorRT-LLM 1.0.0 to 1.1.0 have it)" in found[0].message


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
        ("1.1.0rc2", "kvlint has not read the flags of TensorRT-LLM 1.1.0rc2"),
        ("1.2.0", "kvlint has not read the flags of TensorRT-LLM 1.2.0"),
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
    """--served_model_name is in kvlint's option table (a newer serve.py) but in no release read."""
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


@pytest.mark.parametrize("word", ["--", "-", "--=", "-="])
def test_a_bare_dash_word_is_no_traceback(word):
    edit = ("--max_batch_size=16", f'--max_batch_size=16\n        - "{word}"')
    result = lint(_text(edit=edit), FILE)
    assert not [f for f in result.findings if "Traceback" in f.message]
    assert all(f.severity != Severity.ERROR or f.rule == "KV005" for f in result.findings)
