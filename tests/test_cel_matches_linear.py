"""CEL `matches()` in a DRA device selector runs on a linear-time engine (RE2): sequential
wildcards that made Python's backtracking engine take minutes are evaluated, and what RE2 cannot
run (a backreference) is unread, never run by `re`. Rebuilt from security review 3's S1."""

from __future__ import annotations

from conftest import cpu_seconds
from test_dra import V1, pod

from kvlint.extract.pod.cel import Selector
from kvlint.run.lint import read_and_lint
from kvlint.run.settings import Settings


def test_s01_sequential_wildcards_in_matches_run_in_linear_time(tmp_path):
    """S1: `.*` x10 then `Z` took minutes on Python's backtracking engine (x8: 56 s), once per
    catalogued device. Through RE2 it is evaluated, and the whole lint stays well under 2 s."""
    pattern = ".*" * 12 + "Z"
    cel = f'device.attributes["gpu.nvidia.com"].productName.matches("{pattern}")'
    selector = Selector(cel)
    assert not selector.unread  # evaluated, not refused
    assert selector.admits({"productName": "NVIDIA H100 80GB HBM3" * 20}) is False
    assert selector.admits({"productName": "NVIDIA H100 80GB HBM3 Z"}) is True
    path = tmp_path / "deploy.yaml"
    path.write_text(V1.format(name="c", cls="gpu.nvidia.com", count=1, cel=cel) + "---\n" + pod())
    start = cpu_seconds()
    result = read_and_lint(str(path), Settings(), "deploy.yaml")
    assert not isinstance(result, str), result
    assert cpu_seconds() - start < 2.0


def test_s01_matches_reads_re2_syntax_and_refuses_what_re2_cannot_run():
    # a backreference has no linear-time engine: the term is unread (named), not run by `re`
    back = Selector(r'device.attributes["gpu.nvidia.com"].productName.matches("(a+)\1")')
    assert back.unread and back.admits({"productName": "aa"}) is None
    alt = Selector('device.attributes["gpu.nvidia.com"].productName.matches("L40S|A10G")')
    assert alt.admits({"productName": "NVIDIA L40S"}) is True
    assert alt.admits({"productName": "NVIDIA L4"}) is False
