"""Issue 12, later pieces: findings that follow from another's assumption, KServe multi-node runtimes,
values read from another file located there, KAITO InferenceSets, OME / llmaz readers. Fixtures in
fixtures/stacks/ follow the real layouts; corpus files are read in place."""

from __future__ import annotations

from pathlib import Path

from conftest import FIXTURES

from kvlint.lint import read_and_lint
from kvlint.settings import Settings

STACKS = FIXTURES / "stacks"
CHARTS = STACKS / "helm-charts"


def run(path: Path, name: str | None = None):
    result = read_and_lint(str(path), Settings(), name or str(path))
    assert not isinstance(result, str), result
    return result


def test_no_gpu_type_on_a_pod_that_requests_no_gpu_follows_from_the_request_finding():
    """production-stack requestGPU left out -> 0 GPUs (KV005 warning); the missing GPU type follows from
    it and is an info, not a second warning on the same line."""
    result = run(CHARTS / "bad-production-stack-no-gpu-request.yaml")
    by_rule = {f.rule: f for f in result.findings}
    assert by_rule["KV005"].severity.name == "WARNING"
    assert by_rule["KV002"].severity.name == "INFO"
    assert "requests no GPU" in by_rule["KV002"].message
    assert by_rule["KV002"].where.line == by_rule["KV005"].where.line
