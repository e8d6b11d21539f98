"""tests/data/vllm_logs.yaml carries the figures of real vLLM start-up logs from the reference
calibration set, so the accounting tests run on a bare clone. Every carried fact must be what the
reference set says, and every row must name its source."""

from __future__ import annotations

import yaml_free_loader
from conftest import ROOT, shared

CARRIED = yaml_free_loader.load(ROOT / "tests" / "data" / "vllm_logs.yaml")["cases"]


def _known(value):
    """A mapping without its null fields (the carried rows leave them out)."""
    return {k: v for k, v in value.items() if v is not None} if isinstance(value, dict) else value


def test_every_carried_case_names_its_source():
    assert len({c["id"] for c in CARRIED}) == len(CARRIED)
    for case in CARRIED:
        source = case["source"]
        assert source["set"] == f"calibration/vllm_startup_logs.yaml {case['id']}"
        assert source["url"].startswith("https://github.com/") and source["repo"], case["id"]


def test_carried_facts_are_the_reference_sets():
    reference = {
        c["id"]: c for c in yaml_free_loader.load(shared("calibration", "vllm_startup_logs.yaml"))["cases"]
    }
    for case in CARRIED:
        ref = reference[case["id"]]
        for key, value in case.items():
            want = (
                {"set": case["source"]["set"], **_known(ref["source"])}
                if key == "source"
                else _known(ref[key])
            )
            assert value == want, (case["id"], key)
        for key, value in ref.items():  # nothing the tests read was left behind
            if key in ("settings", "measured") or (key in case or value is None):
                continue
            assert key in (
                "source_kind",
                "engine",
                "gpu_total_memory_gib_logged",
                "error",
                "log_lines",
                "notes",
            ), (
                case["id"],
                key,
            )
    versions = {c["id"] for c in reference.values() if str(c.get("engine_version") or "").startswith("0.19")}
    assert versions <= {c["id"] for c in CARRIED}  # every 0.19 log, as tests/test_engine_logs.py selects from
