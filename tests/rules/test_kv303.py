"""KV303 declared-figure-mismatch: an architecture figure the author wrote differs from the model's."""

from __future__ import annotations

import pytest
from rulecase import findings, run

from kvlint.rules.base import Thresholds

LLAMA = "meta-llama/Llama-3.1-8B-Instruct"  # 32 layers, hidden 4096


@pytest.mark.parametrize(("key", "actual"), [("layers", 32), ("hidden_size", 4096)])
def test_boundary_pair_at_the_default_5_percent(key, actual):
    inside = int(actual * 1.05)  # 33 layers (3.1 %), 4300 hidden (4.98 %)
    outside = inside + 1 if key == "layers" else int(actual * 1.06)
    ok = run(model=LLAMA, gpu="H100", max_context=8192, architecture={key: inside})
    assert not findings(ok, "KV303"), [f.message for f in ok.findings]
    (f,) = findings(run(model=LLAMA, gpu="H100", max_context=8192, architecture={key: outside}), "KV303")
    assert f.message == f"architecture.{key} {outside:,} but {LLAMA}'s config says {actual:,}"
    assert f.fix == f"{key}: {actual}"


def test_the_tolerance_is_configurable():
    strict = Thresholds(declared_tolerance=0.01)
    assert findings(
        run(strict, model=LLAMA, gpu="H100", max_context=8192, architecture={"layers": 33}), "KV303"
    )
    assert not findings(run(model=LLAMA, gpu="H100", max_context=8192, architecture={"layers": 33}), "KV303")


def test_exact_figures_pass():
    assert not findings(
        run(model=LLAMA, gpu="H100", max_context=8192, architecture={"layers": 32, "hidden_size": 4096}),
        "KV303",
    )
