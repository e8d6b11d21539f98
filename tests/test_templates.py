"""`{{` in a file (security review F18): a file is skipped as an unrendered Helm template only
where it is one — in a chart's templates/ directory, or where the YAML does not parse, or where an
action is YAML structure (`name: {{ .Release.Name }}`). Template text inside strings (an
annotation, a PrometheusRule summary, a CI script) is read as written: the rest of the file is
checked, and one located KV004 names the string kvlint could not read as rendered.
"""

from __future__ import annotations

import json
import time

from click.testing import CliRunner
from conftest import FIXTURES

from kvlint.cli import main

DEPLOYMENT_70B_ON_L4 = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: m, annotations: {{docs: "{docs}"}}}}
spec:
  template:
    spec:
      nodeSelector: {{cloud.google.com/gke-accelerator: nvidia-l4}}
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.1
          command: ["vllm", "serve", "meta-llama/Llama-3.1-70B-Instruct"]
          resources: {{limits: {{nvidia.com/gpu: "1"}}}}
"""

PROMETHEUS_RULE = """\
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata: {name: r}
spec:
  groups:
    - name: g
      rules:
        - alert: Down
          expr: up == 0
          annotations:
            summary: "{{ $labels.instance }} down"
            description: |
              {{ $labels.instance }} has been down for {{ $value }} minutes.
---
"""


def findings(path) -> tuple[int, list[dict]]:
    r = CliRunner().invoke(main, ["--isolated", "--format", "json", str(path)])
    return r.exit_code, json.loads(r.stdout)["findings"]


def test_f18_a_template_in_an_annotation_no_longer_hides_the_deployment(tmp_path):
    """The review's attack: `rendered by CI as {{ .Release.Name }}` made a 70B-on-L4 exit 0."""
    target = tmp_path / "d.yaml"
    target.write_text(DEPLOYMENT_70B_ON_L4.format(docs="rendered by CI as {{ .Release.Name }}"))
    code, found = findings(target)
    assert code == 1 and "KV101" in {f["rule"] for f in found}
    (note,) = [f for f in found if f["rule"] == "KV004"]
    assert (note["line"], note["column"]) == (3, 41) and note["severity"] == "info"
    assert (
        "unrendered template text" in note["message"] and "the rest of the file is checked" in note["message"]
    )


def test_f18_a_prometheus_rule_beside_a_deployment_does_not_hide_it(tmp_path):
    target = tmp_path / "prom.yaml"
    target.write_text(PROMETHEUS_RULE + (FIXTURES / "KV101" / "bad-70b-bf16-one-h100.yaml").read_text())
    code, found = findings(target)
    assert code == 1 and "KV101" in {f["rule"] for f in found}
    (note,) = [f for f in found if f["rule"] == "KV004"]
    assert note["line"] == 11 and note["message"].startswith("2 strings hold")


def test_f18_a_ci_script_with_template_text_is_read(tmp_path):
    target = tmp_path / "workflow.yaml"
    target.write_text('on: push\njobs:\n  a:\n    steps:\n      - run: |\n          echo "{{ .Values.x }}"\n')
    code, found = findings(target)
    assert code == 0 and found == []  # not skipped as a template: no kvlint object, nothing to say


def test_real_templates_are_still_skipped_as_templates(tmp_path):
    cases = {
        "structure.yaml": "metadata:\n  name: {{ .Release.Name }}\n",  # an action as YAML structure
        "broken.yaml": "args: [--max-model-len={{ .Values.ctx }}]\nx: [\n",  # does not parse as YAML
        "chart/templates/cm.yaml": 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "{{ .Release.Name }}"\n',
        "mixed.yaml": 'a: "{{ .Values.a }}"\n{{- if .Values.b }}\nb: 1\n{{- end }}\n',
    }
    for name, text in cases.items():
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        code, found = findings(target)
        assert code == 0 and [f["rule"] for f in found] == ["KV004"], (name, found)
        assert "unrendered Helm template" in found[0]["message"], name


def test_strict_makes_the_string_note_an_error(tmp_path):
    target = tmp_path / "d.yaml"
    target.write_text(PROMETHEUS_RULE)
    r = CliRunner().invoke(main, ["--isolated", "--strict", "--format", "concise", str(target)])
    assert r.exit_code == 1 and "error KV004" in r.stdout


def test_many_template_strings_are_classified_in_linear_time(tmp_path):
    """Every action is checked against the strings in one sweep (was: the first action only)."""
    for n in (20_000, 80_000):
        target = tmp_path / f"many{n}.yaml"
        target.write_text("apiVersion: v1\nkind: List\nitems:\n" + '  - "{{ .Values.x }}"\n' * n)
        start = time.perf_counter()
        code, found = findings(target)
        elapsed = time.perf_counter() - start
        assert code == 0 and found[0]["message"].startswith(f"{n:,} strings hold"), found[:1]
        assert elapsed < 20, (n, elapsed)


def test_kserve_placeholder_scan_is_linear(tmp_path):
    """`\\{\\{.*?\\}\\}` retried every `{{` to the line's end: 250 KB of `{{ .x` in a ServingRuntime
    took 40 s of CPU. The scan that replaced it finds the same actions in one pass."""
    import random
    import re

    from kvlint.load import _actions

    spec = re.compile(r"\{\{.*?\}\}")
    rng = random.Random(1)
    for _ in range(5000):
        text = "".join(rng.choice("{}\nx ") for _ in range(rng.randint(0, 30)))
        assert list(_actions(text)) == [m.group(0) for m in spec.finditer(text)], text
    target = tmp_path / "runtime.yaml"
    target.write_text('kind: ServingRuntime\na: "' + "{{ .x" * 50_000 + '"\n')
    start = time.perf_counter()
    code, _ = findings(target)
    assert code == 0 and time.perf_counter() - start < 10
