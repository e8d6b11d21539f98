"""A deployment that names no GPU: the configured fleet, or the usual cloud cards."""

from __future__ import annotations

import pytest
from conftest import FIXTURES

from kvlint.findings import Severity
from kvlint.run.config import ConfigError, load_settings
from kvlint.run.lint import read_and_lint
from kvlint.run.settings import Settings


def run(path, settings):
    result = read_and_lint(str(path), settings, path.name)
    assert not isinstance(result, str), result
    return result


def test_fleet_fits_on_some_types_only():
    settings = load_settings(str(FIXTURES / "fleet" / ".kvlint.yaml"))
    assert settings.defaults.fleet == ("L4", "A100-80GB", "H100")
    r = run(FIXTURES / "fleet" / "llama-70b-tp2.yaml", settings)
    by_rule = {f.rule: f for f in r.findings}
    assert set(by_rule) == {"KV002", "KV101"}, [f.message for f in r.findings]
    kv002 = by_rule["KV002"]
    assert kv002.severity == Severity.INFO
    assert "fits on NVIDIA A100 80GB SXM4, NVIDIA H100 SXM5 80GB" in kv002.message
    assert "does not fit on NVIDIA L4" in kv002.message
    kv101 = by_rule["KV101"]
    assert kv101.severity == Severity.WARNING  # an error only where it fails on every fleet type
    assert kv101.message.startswith("on NVIDIA L4 (not on NVIDIA A100 80GB SXM4, NVIDIA H100 SXM5 80GB)")


def test_fleet_error_stays_an_error_when_every_type_fails(tmp_path):
    (tmp_path / ".kvlint.yaml").write_text("fleet: [L4, A10G]\n")
    settings = load_settings(str(tmp_path / ".kvlint.yaml"))
    r = run(FIXTURES / "fleet" / "llama-70b-tp2.yaml", settings)
    (kv101,) = [f for f in r.findings if f.rule == "KV101"]
    assert kv101.severity == Severity.ERROR and kv101.message.startswith("on every fleet GPU")
    (kv002,) = [f for f in r.findings if f.rule == "KV002"]
    assert (
        "does not fit on NVIDIA L4, NVIDIA A10G" in kv002.message
        and "fits on" not in kv002.message.split(";")[1]
    )


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("fleet: [L4, A100]\n", "is not one card kvlint knows (it is sold as"),
        ("fleet: [L4, H1000]\n", "did you mean"),
        ("gpu: L4\nfleet: [L4, H100]\n", "either gpu"),
    ],
)
def test_fleet_names_are_checked(tmp_path, text, error):
    (tmp_path / ".kvlint.yaml").write_text(text)
    with pytest.raises(ConfigError, match="fleet|gpu") as exc:
        load_settings(str(tmp_path / ".kvlint.yaml"))
    assert error in str(exc.value)


def test_no_gpu_no_config_names_the_smallest_card():
    r = run(FIXTURES / "KV002" / "bad-no-gpu-smallest-card.yaml", Settings())
    (f,) = r.findings
    assert f.severity == Severity.INFO


def test_no_gpu_weights_beyond_the_largest_card_is_an_error():
    r = run(FIXTURES / "KV002" / "bad-no-gpu-weights-fit-no-card.yaml", Settings())
    (f,) = r.findings
    assert f.severity == Severity.ERROR


def test_a_stated_gpu_is_not_replaced_by_the_fleet():
    settings = load_settings(str(FIXTURES / "fleet" / ".kvlint.yaml"))
    r = run(FIXTURES / "KV101" / "bad-70b-bf16-one-h100.yaml", settings)
    assert [f.rule for f in r.findings] == ["KV101"] and r.findings[0].severity == Severity.ERROR
    assert "fleet" not in r.findings[0].message
