"""KV204 context-beyond-model: a stated max_context above the model's own maximum."""

from __future__ import annotations

import pytest
from rulecase import findings, run

from kvlint.catalog.models import resolve as resolve_model
from kvlint.findings import Severity

QWEN = "Qwen/Qwen3-8B"


def _max_positions() -> int:
    arch = resolve_model(QWEN, ".").arch
    assert arch is not None
    return arch.max_positions


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_boundary_pair_at_the_models_maximum(engine):
    top = _max_positions()
    assert not findings(run(engine=engine, model=QWEN, gpu="H100", max_context=top), "KV204")
    (f,) = findings(run(engine=engine, model=QWEN, gpu="H100", max_context=top + 1), "KV204")
    assert f.severity == Severity.ERROR and f"({top + 1:,})" in f.message
    assert f.fix == f"max_context {top}"


def test_tgi_is_not_judged_by_it():
    """TGI has no such start-up check: KV204 stays silent (its limits are KV205's)."""
    assert not findings(run(engine="tgi", model=QWEN, gpu="H100", max_context=_max_positions() * 2), "KV204")


def test_an_engine_default_context_is_not_a_finding():
    assert not findings(run(model=QWEN, gpu="H100"), "KV204")


def test_a_declared_architecture_has_nothing_to_exceed():
    r = run(
        model="acme/private-model",
        gpu="H100",
        max_context=1_000_000,
        architecture={
            "layers": 32,
            "query_heads": 32,
            "kv_heads": 8,
            "head_dim": 128,
            "hidden_size": 4096,
            "params": "8B",
            "max_positions": 8192,
        },
    )
    assert not findings(r, "KV204")
