"""llama.cpp's and Ollama's buffers against the figures public start-up logs state
(benchmarks/calibration/llamacpp_startup_logs.yaml and ollama_startup_logs.yaml, each case with its source link):
the KV cache and its cells to the logged MiB, and the GPU model buffer of a GGUF priced by tensor role."""

from __future__ import annotations

import sys

import pytest
from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))

from calibration_cases import DATA, ENGINES, build_llamacpp, load_yaml, logged  # noqa: E402

from kvlint.resolve import Defaults, resolve  # noqa: E402

GIB = 1 << 30


def _cases(engine: str) -> list[dict]:
    file = "llamacpp_startup_logs.yaml" if engine == "llamacpp" else "ollama_startup_logs.yaml"
    return [dict(c, engine=engine) for c in load_yaml(DATA / file)[ENGINES[engine]["key"]]]


CASES = _cases("llamacpp") + _cases("ollama")


def _plan(case: dict):
    d, why = build_llamacpp(case, case.get("engine_version"))
    assert d is not None, why
    plan = resolve(d, Defaults()).plan
    assert plan is not None
    return plan


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["id"])
def test_the_cache_and_its_cells_are_what_the_log_printed(case):
    real = logged(case["engine"], case)
    plan = _plan(case)
    assert plan.kv_tokens == real["tokens"]
    if "kv" in real:  # the logged MiB: llama.cpp's own product, exact (every GPU's buffer together)
        kv = sum(plan.stage_pools) if plan.stage_pools else plan.kv_pool
        assert abs(kv / GIB - real["kv"]) < 0.005


@pytest.mark.parametrize("case", [c for c in CASES if "weights_mib" in c["measured"]], ids=lambda c: c["id"])
def test_the_gpu_model_buffer_is_the_gguf_priced_by_tensor_role(case):
    """The weights of the offloaded layers and the output (token_embd stays in the CPU buffer), each tensor
    role at the type llama.cpp's quantizer gives it for the file type the tag pulls."""
    plan = _plan(case)
    assert abs(plan.weights_per_gpu / GIB / logged(case["engine"], case)["weights"] - 1) < 0.01


def test_each_set_has_its_own_engine_rows_with_a_fixed_split():
    for engine in ("llamacpp", "ollama"):
        splits = {c["split"] for c in _cases(engine)}
        assert splits == {"fit", "scored"}, engine
    assert all(not c["settings"].get("ollama") for c in _cases("llamacpp"))
    assert all(c["settings"].get("ollama") for c in _cases("ollama"))
