"""The fix engine edits source characters, not decoded values (security review 3, class D: S4, S5,
S6, S22): each reproducer rebuilt from the review's description, run through `--fix` /
`--unsafe-fixes`, and the file checked afterwards by reading it again (it parses, the engine reads
the value the fix said, and each fix counted once)."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from kvlint.cli import main
from kvlint.load import load_bytes
from kvlint.run.lint import lint_text
from kvlint.run.settings import Settings

_HEAD = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: llama-8b
spec:
  replicas: 1
  selector:
    matchLabels: {app: llama-8b}
  template:
    metadata:
      labels: {app: llama-8b}
    spec:
      nodeSelector:
        nvidia.com/gpu.product: NVIDIA-L4
      containers:
"""
_LIMITS = """          resources:
            limits:
              nvidia.com/gpu: 1
"""
MODEL = "meta-llama/Llama-3.1-8B-Instruct"


def _kvlint(*args: str):
    return CliRunner().invoke(main, ["--isolated", *args], catch_exceptions=False)


def _findings(data: bytes) -> list:
    return lint_text(data, "d.yaml", Settings()).findings


def _args(data: bytes) -> list[str]:
    """The engine container's command and args as YAML reads them (no syntax error first)."""
    loaded = load_bytes(data, "d.yaml")
    assert not [i for i in loaded.issues if i.code == "KV001"], [i.message for i in loaded.issues]
    root = loaded.documents[0].root
    container = root.at("spec", "template", "spec", "containers", -1)
    out = []
    for key in ("command", "args"):
        node = container.get(key)
        out += [str(n.value) for n in getattr(node, "items", [])]
    return out


S04 = (
    _HEAD
    + f"""        - name: vllm
          image: vllm/vllm-openai:v0.10.1
          args: ["\\x2D-gpu-memory-utilization=1.5", "--model", "{MODEL}", "--max-model-len", "8192"]
"""
    + _LIMITS
)


def test_s04_escaped_flag_is_not_edited_at_decoded_columns(tmp_path):
    work = tmp_path / "d.yaml"
    work.write_text(S04)
    result = _kvlint("--fix", str(work))
    assert work.read_text() == S04  # was: "\x2D-gpu-memory-utilizati0.91.5", and "fixed 1 finding"
    assert "fixed" not in result.output and result.exit_code == 1
    kv208 = next(f for f in _findings(S04.encode()) if f.rule == "KV208")
    (fix,) = kv208.fixes
    assert fix.applicability == "display-only" and "escapes" in fix.message
    line = S04.splitlines()[kv208.where.line - 1]
    assert kv208.where.column == line.index('"\\x2D') + 1  # at the value, not inside it


S05 = (
    _HEAD
    + f"""        - name: sidecar
          image: busybox
          env: [{{name: RATIO, value: &u "1.5"}}]
        - name: vllm
          image: vllm/vllm-openai:v0.10.1
          args: ["--model", "{MODEL}", "--max-model-len", "8192", "--gpu-memory-utilization", *u]
"""
    + _LIMITS
)


def test_s05_value_reached_through_an_alias_is_not_edited(tmp_path):
    work = tmp_path / "d.yaml"
    work.write_text(S05)
    result = _kvlint("--fix", "--unsafe-fixes", str(work))
    assert work.read_text() == S05  # was: `value: &0.91.5"}]`, which no longer parses
    assert "fixed" not in result.output
    kv208 = next(f for f in _findings(S05.encode()) if f.rule == "KV208")
    assert kv208.fixes[0].applicability == "display-only" and "anchor" in kv208.fixes[0].message


S06A = (
    _HEAD
    + f"""        - name: vllm
          image: vllm/vllm-openai:v0.10.1
          command: ["vllm", "serve", "{MODEL}"]
          args: [
            "--max-num-seqs", "4",
            "--enforce-eager"
          ]
"""
    + _LIMITS
)


def test_s06a_flag_goes_after_the_last_item_of_a_multi_line_flow_sequence(tmp_path):
    work = tmp_path / "d.yaml"
    work.write_text(S06A)
    result = _kvlint("--unsafe-fixes", "--show-fixes", str(work))
    args = _args(work.read_bytes())
    # was: "--enforce-eager --max-model-len 35248 --max-model-len 35248 …" (6 times in one item)
    assert args[args.index("--enforce-eager") + 1] == "--max-model-len", args
    assert args.count("--max-model-len") == 1
    assert "KV102" not in {f.rule for f in _findings(work.read_bytes())}
    assert result.output.count("KV102 set --max-model-len") == 1


@pytest.mark.parametrize("tail", [" # tail", "; echo done", " && true", " &", " | cat"])
def test_s06b_flag_goes_inside_the_shell_string_at_a_word_boundary(tail, tmp_path):
    text = (
        _HEAD
        + f"""        - name: vllm
          image: vllm/vllm-openai:v0.10.1
          command: ["sh", "-c", "vllm serve {MODEL} --max-num-seqs 4{tail}"]
"""
        + _LIMITS
    )
    work = tmp_path / "d.yaml"
    work.write_text(text)
    _kvlint("--unsafe-fixes", str(work))
    script = _args(work.read_bytes())[2]  # was: `…4, --max-model-len, "35248" # tail"]`: invalid YAML
    assert script.endswith(tail) and " --max-model-len 35248" in script, script
    assert "KV102" not in {f.rule for f in _findings(work.read_bytes())}


def test_s22_a_fix_applied_in_several_rounds_counts_once(tmp_path):
    work = tmp_path / "d.yaml"
    work.write_text(S06A)
    result = _kvlint("--unsafe-fixes", "--show-fixes", str(work))
    # the --show-fixes list (`  path:line: KVnnn message`), not a remaining finding's detail lines
    shown = [line for line in result.output.splitlines() if re.match(r"^  \S+:\d+: KV\d{3} ", line)]
    assert shown and len(shown) == len(
        set(shown)
    )  # was: the same KV102 fix listed 6 times, "fixed 6 findings"
    assert f"fixed {len(shown)} finding" in result.output


def test_a_fix_whose_check_fails_is_not_written_and_the_run_says_where(tmp_path, monkeypatch):
    """The safety net under the placement rules: an edit that lands where the engine does not read
    it (simulated: the materialized edit moved one column into the flag's name) is not written."""
    from kvlint.fix import materialize

    real = materialize._replacement

    def off_by_some(edit, src):
        made = real(edit, src)
        if made is None or edit.reads is None:
            return made
        w = made.where
        return type(made)(
            type(w)(w.file, w.line, w.column - 3, w.end_line, w.end_column - 3), made.text, reads=made.reads
        )

    monkeypatch.setattr(materialize, "_replacement", off_by_some)
    text = S04.replace("\\x2D", "-")
    work = tmp_path / "d.yaml"
    work.write_text(text)
    result = _kvlint("--fix", str(work))
    assert work.read_text() == text
    assert result.exit_code == 2
    assert "d.yaml:18: KV208 fix not applied" in result.output and "fixed" not in result.output


def test_display_only_note_reaches_the_json_report(tmp_path):
    work = tmp_path / "d.yaml"
    work.write_text(S05)
    report = json.loads(_kvlint("--format", "json", "--exit-zero", str(work)).output)
    fixes = [x for f in report["findings"] if f["rule"] == "KV208" for x in f["fixes"]]
    assert fixes and all(x["applicability"] == "display-only" and not x["edits"] for x in fixes)
