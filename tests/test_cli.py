"""The command line: exit codes, formats, stdin, and start-up that imports nothing heavy."""

import json
import os
import subprocess
import sys

from click.testing import CliRunner
from conftest import FIXTURES, ROOT

from kvlint.cli import main


def run(*args, input=None, env=None):
    runner = CliRunner()
    return runner.invoke(main, list(args), input=input, env=env, catch_exceptions=False)


def test_bad_fixture_exits_1_with_located_finding():
    r = run(str(FIXTURES / "KV102" / "bad-llama-8b-l4-128k.yaml"), "--no-color")
    assert r.exit_code == 1
    assert "bad-llama-8b-l4-128k.yaml:6:14: error KV102 kv-cache-below-max-context:" in r.output
    assert "    6 | max_context: 131072" in r.output and "^~~~~~" in r.output
    assert "kvlint: 1 finding (1 error)" in r.output


def test_good_fixture_exits_0():
    r = run(str(FIXTURES / "KV102" / "good-llama-8b-l4-16k.yaml"))
    assert r.exit_code == 0 and "no problems found" in r.output


def test_warnings_exit_0_unless_fail_on_warning():
    path = str(FIXTURES / "KV103" / "bad-too-many-sequences.yaml")
    assert run(path).exit_code == 0
    assert run(path, "--fail-on", "warning").exit_code == 1
    assert run(path, "--fail-on", "warning", "--exit-zero").exit_code == 0


def test_missing_path_exits_2():
    r = run("does/not/exist.yaml")
    assert r.exit_code == 2


def test_no_paths_is_a_usage_error():
    assert run().exit_code == 2


def test_unknown_rule_in_select_is_a_usage_error():
    assert run("--select", "KV999", str(FIXTURES)).exit_code == 2


def test_select_and_ignore():
    path = str(FIXTURES / "KV302" / "bad-query-heads.yaml")
    assert run(path, "--ignore", "KV302").exit_code == 0
    assert run(path, "--select", "KV1").exit_code == 0
    assert run(path, "--select", "query-heads-as-kv-heads").exit_code == 1


def test_stdin_with_filename():
    text = (FIXTURES / "KV102" / "bad-llama-8b-l4-128k.yaml").read_text()
    r = run("-", "--stdin-filename", "deploy/llama.yaml", "--format", "concise", input=text)
    assert r.exit_code == 1
    assert r.output.startswith("deploy/llama.yaml:6:14: error KV102 ")


def test_json_schema():
    r = run(str(FIXTURES / "KV102" / "bad-llama-8b-l4-128k.yaml"), "--format", "json")
    doc = json.loads(r.output)
    assert doc["version"] == 1
    (f,) = doc["findings"]
    assert set(f) >= {"rule", "name", "severity", "message", "file", "line", "column", "fix"}
    assert (f["rule"], f["line"], f["column"], f["severity"]) == ("KV102", 6, 14, "error")
    (d,) = doc["deployments"]
    assert set(d) >= {
        "file",
        "line",
        "name",
        "engine",
        "model",
        "gpu",
        "gpus",
        "tensor_parallel",
        "pipeline_parallel",
        "max_context",
        "max_sequences",
        "gpu_memory_utilization",
        "kv_cache_dtype",
        "plan",
    }
    plan = d["plan"]
    assert set(plan) >= {
        "gpu_memory_bytes",
        "weights_bytes_per_gpu",
        "kv_bytes_per_token_per_gpu",
        "kv_cache_bytes_per_gpu",
        "kv_cache_tokens",
        "max_concurrency",
    }
    assert plan["kv_bytes_per_token_per_gpu"] == 131072
    assert plan["kv_cache_tokens"] % 16 == 0
    assert d["gpu"] == "l4" and d["max_context"] == 131072 and d["gpus"] == 1


def test_directory_is_walked():
    r = run(str(FIXTURES / "KV102"), "--format", "concise")
    assert r.exit_code == 1
    failing = [
        p
        for p in (FIXTURES / "KV102").glob("*.yaml")
        if p.name.startswith(("bad", "fix")) and ".after." not in p.name
    ]
    # one finding per failing file; the summary of what the files' own annotations suppress is not a finding
    lines = [line for line in r.output.splitlines() if not line.startswith("kvlint: ")]
    assert len(lines) == len(failing) >= 2 and all(" KV102 " in line for line in lines)
    # errors, but for a warning that says why it is one (a shrink from the engine's default length)
    assert all(" error KV102 " in line or "a warning, not an error" in line for line in lines)
    assert sum(" error KV102 " in line for line in lines) >= 2


def test_rules_and_explain():
    r = run("rules")
    assert r.exit_code == 0 and "KV102  kv-cache-below-max-context" in r.output
    r = run("explain", "KV102")
    assert r.exit_code == 0 and "## What it does" in r.output
    assert run("explain", "kv-cache-below-max-context").exit_code == 0
    assert run("explain", "KV999").exit_code == 2


def _imported_modules(*args):
    code = (
        "import sys; sys.argv = ['kvlint', *sys.argv[1:]]\n"
        "from kvlint.entry import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('\\n'.join(sorted(sys.modules)), file=sys.stderr)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT, env={**os.environ}
    )
    return set(out.stderr.split())


def test_version_and_help_import_nothing_heavy():
    for args in (["--version"], ["--help"]):
        mods = _imported_modules(*args)
        for heavy in ("pydantic", "ruamel.yaml", "kvlint.run.lint", "kvlint.engines.vllm.plan"):
            assert heavy not in mods, (args, heavy)


def test_linting_a_kubernetes_manifest_does_not_import_pydantic(tmp_path):
    path = tmp_path / "svc.yaml"
    path.write_text("apiVersion: v1\nkind: Service\nmetadata:\n  name: x\n")
    mods = _imported_modules(str(path), "--isolated")
    assert "pydantic" not in mods and "ruamel.yaml" in mods


def test_a_catalogued_vllm_deployment_loads_only_what_it_meets():
    """A hook run on a catalogued model served by vLLM does not load the name rules, the other-kind
    classes, the safetensors reader, the CEL evaluator, the DRA claim reader, the unread-layout net or the TGI engine: each loads when
    an input needs it."""
    mods = _imported_modules(str(FIXTURES / "KV102" / "good-llama-8b-l4-16k.yaml"), "--isolated")
    assert "kvlint.run.lint" in mods and "kvlint.catalog.models" in mods
    for lazy in (
        "kvlint.catalog.name_rules",
        "kvlint.catalog.derived",
        "kvlint.catalog.model_kinds",
        "kvlint.catalog.safetensors",
        "kvlint.extract.pod.cel",
        "kvlint.extract.pod.dra",
        "kvlint.link.claims",
        "kvlint.link.unread",
        "kvlint.engines.tgi.plan",
    ):
        assert lazy not in mods, lazy


def test_a_hook_call_with_only_paths_skips_click_and_matches_its_defaults(tmp_path):
    """`kvlint FILE…` (how pre-commit calls the hook) runs without importing click; what it passes
    is exactly what click would pass with no option given."""
    from kvlint.cli import check
    from kvlint.entry import DEFAULTS, only_paths

    params = dict(check.make_context("check", ["x.yaml"]).params)
    for name in ("paths", "fmt", "output"):
        params.pop(name)
    assert params == DEFAULTS
    assert only_paths(["a.yaml", "b.yml"]) and not only_paths([])
    assert not only_paths(["a.yaml", "--fail-on", "warning"]) and not only_paths(["-"])
    assert not only_paths(["rules"])
    path = tmp_path / "bad.yaml"
    path.write_text((FIXTURES / "KV102" / "bad-llama-8b-l4-128k.yaml").read_text())
    mods = _imported_modules(str(path))
    assert "click" not in mods and "kvlint.run.lint" in mods
    assert "click" in _imported_modules(str(path), "--isolated")
