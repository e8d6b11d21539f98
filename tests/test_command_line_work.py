"""What a long engine command line costs, counted in calls rather than seconds (a timed bound that
holds here fails on a slower machine): every word of an args list or a shell script is read at a
bounded cost, whatever the number of words. The hostile inputs of benchmarks/hostile.py (70,000 to
90,000 made-up flags in 1 MB) are where the seconds are measured."""

from __future__ import annotations

import importlib
import json
import random
import shlex
import sys

import pytest
from conftest import gpu_pod, lint

from kvlint.extract.pod import shell_words
from kvlint.fix import tokens as fix_tokens

IMAGE = "vllm/vllm-openai:v0.10.1"
MODEL = "meta-llama/Llama-3.1-8B-Instruct"
# Python calls (functions and builtins) a made-up flag costs from load to report. Measured at 66
# (args list) and 42 (shell script); the args list cost 140 when the engine registry went through
# the import system twice a word. The budget leaves room for new per-word checks, not for a loop
# over the words or the option table per word.
CALLS_PER_FLAG = 100


def _args_list(n: int) -> str:
    """Args after the image's entrypoint: every word is a candidate entry point."""
    return gpu_pod(IMAGE, ["serve", MODEL, *[f"--x{i}=1" for i in range(n)]])


def _shell_script(n: int) -> str:
    script = f"vllm serve {MODEL} " + " ".join(f"--x{i}=1" for i in range(n))
    return gpu_pod(IMAGE, []).replace(
        "args: []", 'command: ["sh", "-c"]\n        args: ' + json.dumps([script])
    )


def _calls(text: str) -> int:
    count = 0

    def profile(frame, event, arg) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    lint(text)  # imports and caches first: only the per-word work is counted
    sys.setprofile(profile)
    try:
        lint(text)
    finally:
        sys.setprofile(None)
    return count


@pytest.mark.parametrize("make", [_args_list, _shell_script], ids=["args list", "shell script"])
def test_each_unknown_flag_costs_a_bounded_number_of_calls(make):
    one, two, four = (_calls(make(n)) for n in (500, 1000, 2000))
    per_flag, per_flag_later = (two - one) / 500, (four - two) / 1000
    assert per_flag <= CALLS_PER_FLAG and per_flag_later <= CALLS_PER_FLAG, (per_flag, per_flag_later)
    assert per_flag_later <= per_flag * 1.1  # the thousandth flag costs what the first did
    findings = lint(make(1000)).findings
    assert sum(f.rule == "KV005" for f in findings) == 101  # 100 listed and one counting the rest


def test_the_engine_registry_is_not_asked_per_word(monkeypatch):
    lint(_args_list(10))
    asked = 0
    real = importlib.import_module

    def counting(name, package=None):
        nonlocal asked
        asked += 1
        return real(name, package)

    monkeypatch.setattr("kvlint.engines.import_module", counting)
    lint(_args_list(1000))
    assert asked <= 3  # at most once per engine, not once per word


def test_one_fix_in_a_long_list_builds_the_tokens_it_looks_at(monkeypatch):
    made = 0
    real = fix_tokens.ScalarToken

    def counting(*args):
        nonlocal made
        made += 1
        return real(*args)

    monkeypatch.setattr(fix_tokens, "ScalarToken", counting)
    on_l4 = _args_list(1000).replace("NVIDIA-H100-80GB-HBM3", "NVIDIA-L4")  # 128k tokens do not fit
    result = lint(on_l4)
    fixes = [x for f in result.findings for x in f.fixes if x.edits]
    assert fixes  # KV102's fix appends --max-model-len to the args list
    assert made <= 4 * sum(len(x.edits) for x in fixes)  # not one a scalar of the file


def test_a_script_line_is_split_without_shlex_unless_shlex_must_say_why(monkeypatch):
    made = 0
    real = shlex.shlex

    def counting(*args, **kwargs):
        nonlocal made
        made += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(shlex, "shlex", counting)  # shell_words imports shlex only for its fallback
    assert (
        shell_words.split_line("vllm serve m " + " ".join(f"--x{i}='a b'" for i in range(1000)))[-1]
        == "--x999=a b"
    )
    assert made == 0
    with pytest.raises(ValueError, match="No closing quotation"):
        shell_words.split_line("vllm serve m --x 'open")
    assert made == 1


def _by_shlex(line: str) -> tuple[str, object]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        return "words", list(lexer)
    except ValueError as exc:
        return "error", str(exc)


def _by_split_line(line: str) -> tuple[str, object]:
    try:
        return "words", shell_words.split_line(line)
    except ValueError as exc:
        return "error", str(exc)


def test_script_lines_split_as_shlex_splits_them():
    """Random lines over the characters shlex treats specially (quotes, backslash, `#`, `;&|`,
    its four blanks and two it does not count as blanks) split to the same words or the same error."""
    chars = list("ab '\"\\#;&|\t\r=$()-") + ["\x0b", "\u3000", "é"]
    rng = random.Random(23)
    for _ in range(20_000):
        line = "".join(rng.choice(chars) for _ in range(rng.randint(0, 16)))
        assert _by_split_line(line) == _by_shlex(line), repr(line)
    for line in ["vllm serve \"a b\" --x='c d' && echo done # note", 'a\\ b "c\\"d" e\\\\', '""', "x;;y|z&"]:
        assert _by_split_line(line) == _by_shlex(line), line


def test_a_did_you_mean_is_looked_for_only_for_the_flags_listed(monkeypatch):
    """The pinned release (the image's tag) rejects each made-up flag; difflib runs for the 100 KV005s
    listed, not for the other 900, and each flag is looked up in the release's flags, not scanned."""
    import difflib

    from kvlint.bounds import FINDINGS_PER_RULE_MAX

    asked = 0
    real = difflib.get_close_matches

    def counting(*args, **kwargs):
        nonlocal asked
        asked += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(difflib, "get_close_matches", counting)
    findings = lint(_args_list(1000)).findings
    kv005 = [f for f in findings if f.rule == "KV005"]
    assert len(kv005) == FINDINGS_PER_RULE_MAX + 1 and "not listed" in kv005[-1].message
    assert all("unrecognized arguments" in f.message for f in kv005[:-1])  # judged against v0.10.1
    assert asked <= FINDINGS_PER_RULE_MAX
