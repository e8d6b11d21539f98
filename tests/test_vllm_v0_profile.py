"""vLLM V0 before v0.6.4 took the profile peak from free device memory (the caching allocator's
reserved segments, kvlint/engines/vllm/v0.py); from v0.6.4 (vllm PR #9352) torch's
allocated peak. Checked against the one log of that era in the calibration set: v-024,
BatsResearch/bonito#7 (Mistral-7B-v0.1 geometry on one A10G, max_model_len 32768, gmu default 0.9:
"larger than the maximum number of tokens that can be stored in KV cache (16816)")."""

from __future__ import annotations

import sys

import pytest
from conftest import ROOT, vllm_logs

sys.path.insert(0, str(ROOT / "benchmarks"))

from calibration_cases import build_vllm, vllm_version  # noqa: E402

from kvlint import engines  # noqa: E402
from kvlint.resolve import Defaults, resolve  # noqa: E402

GIB = 1 << 30


@pytest.fixture(scope="module")
def bonito():
    (case,) = [c for c in vllm_logs() if c["model"] == "BatsResearch/bonito-v1"]
    return case


def _resolved(case, version):
    d, why = build_vllm(case, version)
    assert d is not None, why
    return resolve(d, Defaults())


def test_an_unversioned_v0_log_gets_the_release_current_on_its_date(bonito):
    # 2024-03-11: v0.3.3 (bumped 2024-03-01) was the newest; v0.4.0 came on 2024-03-29
    assert vllm_version(bonito) == "0.3.3"
    assert vllm_version({**bonito, "date": "2024-03-30"}) == "0.4.0"
    assert vllm_version({**bonito, "date": "2024-12-02"}) == "0.6.4"  # past the table: the old default


def test_v0_profile_peak_is_the_reserved_segments_before_v0_6_4(bonito):
    old, new = _resolved(bonito, "0.3.3"), _resolved(bonito, "0.6.4")
    t = old.settings.max_batched_tokens
    assert t == 32768  # V0: max(max_model_len, 2048)
    sampler = 256 * 32000 * 4
    # embedding, first norm, attention and o_proj outputs (4 x 4096), qkv 6144, gate_up + act 3 x 14336
    assert old.plan.term("activation peak") == t * 65536 * 2 + sampler
    # the tensors alive at once at down_proj: 3 x 4096 + 3 x 14336
    assert new.plan.term("activation peak") == t * 55296 * 2 + sampler
    assert "reserved segments" in [x.note for x in old.plan.terms if x.label == "activation peak"][0]


def test_v0_3_3_pool_matches_the_logged_refusal(bonito):
    r = _resolved(bonito, vllm_version(bonito))
    logged = bonito["measured"]["kv_cache_tokens"]
    # The A10G's CUDA-visible total depends on the driver: 21.98 GiB (the catalog's, the lowest observed:
    # driver 550.90.07) or 22,587 MiB (newer drivers); the log does not say which. The logged pool lies
    # between the two plans: 16,416 <= 16,816 <= 16,992.
    fields = {n: getattr(r.gpu, n) for n in r.gpu.__record_fields__}
    newer = type(r.gpu)(**{**fields, "engine_bytes": 22587 << 20})
    high = engines.get("vllm").plan(r.model, newer, r.settings).kv_tokens
    assert r.plan.kv_tokens <= logged <= high
    assert high - r.plan.kv_tokens < 0.04 * logged  # 80 MiB x 0.9 of Mistral-7B KV, ~3.4 %
    assert r.plan.kv_tokens < bonito["settings"]["max_model_len"]  # and vLLM refused to start
    # the allocated-peak accounting of later releases would have overstated it by about 30 %
    assert _resolved(bonito, "0.6.4").plan.kv_tokens > 1.25 * logged


def test_the_version_table_names_the_source_of_each_profile_peak_row():
    from kvlint.engines.vllm import versions as vv

    assert vv.reserved_peak((0, 3, 3)) and vv.reserved_peak((0, 6, 3))
    assert not vv.reserved_peak((0, 6, 4)) and not vv.reserved_peak(None)
    assert "init_gpu_memory - free_gpu_memory" in vv.lookup("profile_peak", (0, 5)).source
    assert "#9352" in vv.lookup("profile_peak", (0, 7)).source


def test_a_plan_without_a_vllm_version_says_which_behaviour_it_assumed():
    """Kimi-Dev-72B on 2 x H100 (calibration v-061, vLLM 0.19.0 logged 19,776 tokens): without the tag kvlint
    applies the CUDA-graph subtraction of v0.20+ and finds half the pool; the plan must say it assumed that."""
    (case,) = [c for c in vllm_logs() if c["model"] == "moonshotai/Kimi-Dev-72B"]
    tagged, bare = _resolved(case, vllm_version(case)).plan, _resolved(case, None).plan
    assert not [n for n in tagged.notes if "version" in n]
    (note,) = [n for n in bare.notes if n.startswith("vLLM version unknown")]
    assert "v0.20.0" in note and "v0.33.0" in note and "pin the image tag" in note
    assert bare.term("CUDA graphs") > 0 and tagged.term("CUDA graphs") == 0
    assert bare.kv_tokens < 0.6 * case["measured"]["kv_cache_tokens"] < tagged.kv_tokens
