"""A one-file run (how pre-commit calls the hook) does the work its file needs and no more, counted
rather than timed (benchmarks/speed.py times it): the files and directories it opens, and the modules
it imports, each recorded in a fresh interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"

# Runs kvlint's entry point with an audit hook that records every file opened and every directory
# listed; writes them and the imported modules as JSON to the file named by argv[1].
PROBE = r"""
import gc, json, os, sys
sys.path[:] = [p for p in sys.path if p not in ("", ".")]  # as the console script: no import from cwd
out, args = sys.argv[1], sys.argv[2:]
seen = []
collections = [0]  # garbage collections started so far
gc.callbacks.append(lambda phase, info: collections.__setitem__(0, collections[0] + (phase == "start")))
def hook(event, a):
    if event == "open" and isinstance(a[0], str):
        seen.append(("open", os.path.abspath(a[0])))
        seen.append(("collections", f"{collections[0]} {gc.isenabled()}"))
    elif event in ("os.listdir", "os.scandir"):
        seen.append(("list", os.path.abspath(a[0] if isinstance(a[0], str) else ".")))
sys.addaudithook(hook)
sys.argv = ["kvlint", *args]
from kvlint.entry import main
collections[0] = 0  # counted from the command's start
try:
    main()
except SystemExit:
    pass
with open(out, "w") as fh:
    json.dump({"seen": seen, "modules": sorted(sys.modules), "frozen": gc.get_freeze_count()}, fh)
"""

# A vLLM Deployment as the corpus holds hundreds: catalogued model, GPU by node selector, a Secret
# for the Hub token (kvlint reads no Secret), a Service beside it in the same file.
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm-gemma
spec:
  replicas: 1
  template:
    spec:
      nodeSelector:
        cloud.google.com/gke-accelerator: nvidia-l4
      containers:
        - name: inference-server
          image: vllm/vllm-openai:v0.10.0
          command: ["python3", "-m", "vllm.entrypoints.openai.api_server"]
          args: ["--model=google/gemma-7b-it", "--tensor-parallel-size=2", "--max-model-len=4096"]
          env:
            - name: HUGGING_FACE_HUB_TOKEN
              valueFrom: {secretKeyRef: {name: hf-secret, key: hf_api_token}}
          resources:
            limits: {nvidia.com/gpu: 2}
---
apiVersion: v1
kind: Service
metadata:
  name: llm-service
spec:
  selector: {app: gemma-server}
  ports: [{port: 8000}]
"""

SHARING_CONFIG = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: time-slicing-config
data:
  any: |-
    version: v1
    sharing:
      timeSlicing:
        resources:
          - name: nvidia.com/gpu
            replicas: 4
"""

RUNTIME = """\
apiVersion: serving.kserve.io/v1alpha1
kind: ServingRuntime
metadata:
  name: vllm-runtime
spec:
  supportedModelFormats: [{name: huggingface}]
  containers:
    - name: kserve-container
      image: vllm/vllm-openai:v0.10.1
      args: ["--model", "Qwen/Qwen2.5-1.5B-Instruct"]
"""


def _probe(cwd: Path, *args: str) -> tuple[list[tuple[str, str]], set[str]]:
    seen, modules, _frozen = _probe_all(cwd, *args)
    return seen, modules


def _probe_all(cwd: Path, *args: str) -> tuple[list[tuple[str, str]], set[str], int]:
    out = cwd.parent / f"{cwd.name}-probe.json"
    subprocess.run(
        [sys.executable, "-c", PROBE, str(out), *args],
        cwd=cwd,
        env={**os.environ, "KVLINT_NO_CACHE": "1"},
        capture_output=True,
        check=False,
    )
    data = json.loads(out.read_text())
    return [tuple(s) for s in data["seen"]], set(data["modules"]), data["frozen"]


def _collector_when_opened(seen: list[tuple[str, str]], name: str) -> tuple[int, bool]:
    """(garbage collections started so far, whether the collector was on) when `name` was opened."""
    for (kind, path), (_, state) in zip(seen, seen[1:], strict=False):
        if kind == "open" and os.path.basename(path) == name:
            count, enabled = state.split()
            return int(count), enabled == "True"
    raise AssertionError(f"{name} was not opened")


def _touched(seen: list[tuple[str, str]], where: Path) -> set[str]:
    """What the run opened or listed inside `where`, as `open NAME` / `list NAME`."""
    top = str(where.resolve())
    return {
        f"{kind} {os.path.relpath(p, top)}"
        for kind, p in seen
        if kind != "collections" and (p == top or p.startswith(top + os.sep))
    }


def _beside(tmp_path: Path, workload: str) -> Path:
    """A directory holding `deploy.yaml` and, beside it, a device-plugin sharing config and a
    KServe runtime: objects a workload may refer to."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "deploy.yaml").write_text(workload)
    (repo / "sharing.yaml").write_text(SHARING_CONFIG)
    (repo / "runtime.yaml").write_text(RUNTIME)
    return repo


def test_a_workload_that_names_nothing_beside_it_reads_no_other_file(tmp_path):
    repo = _beside(tmp_path, DEPLOYMENT)
    seen, _ = _probe(repo, "--isolated", "deploy.yaml")
    assert _touched(seen, repo) == {"open deploy.yaml"}


def test_pods_sharing_a_card_read_the_sharing_config_beside_them(tmp_path):
    """The control: two time-sliced pods on one card need the device plugin's config, so the
    directory is listed and the ConfigMap read."""
    repo = _beside(tmp_path, (FIXTURES / "KV208" / "bad-time-sliced-pair.yaml").read_text())
    seen, _ = _probe(repo, "--isolated", "deploy.yaml")
    touched = _touched(seen, repo)
    assert {"open deploy.yaml", "list .", "open sharing.yaml"} <= touched


def test_an_inference_service_without_its_runtime_reads_the_runtime_beside_it(tmp_path):
    isvc = """\
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: qwen
spec:
  predictor:
    model:
      modelFormat: {name: huggingface}
      runtime: vllm-runtime
      storageUri: hf://Qwen/Qwen2.5-1.5B-Instruct
      resources:
        limits: {nvidia.com/gpu: 1}
"""
    repo = _beside(tmp_path, isvc)
    seen, _ = _probe(repo, "--isolated", "deploy.yaml")
    assert {"list .", "open runtime.yaml"} <= _touched(seen, repo)


def test_a_one_file_run_imports_only_what_its_file_needs(tmp_path):
    """A vLLM Deployment: no pydantic (no configuration to validate), no Hub client, no RE2 (no DRA
    selector), no HCL reader, no report format but text, no other input kind's reader, and of the
    other engines only what recognising a launch asks (their launch words)."""
    repo = _beside(tmp_path, DEPLOYMENT)
    _, mods = _probe(repo, "deploy.yaml")
    assert "kvlint.run.lint" in mods and "kvlint.extract.kinds.kubernetes" in mods
    for absent in (
        "pydantic",
        "huggingface_hub",
        "re2",
        "hcl2",
        "click",
        "kvlint.report.json_report",
        "kvlint.report.sarif",
        "kvlint.report.markdown",
        "kvlint.report.github",
        "kvlint.report.rdjson",
        "kvlint.report.concise",
        "kvlint.extract.kinds.helm_values",
        "kvlint.extract.kinds.compose",
        "kvlint.extract.kinds.kserve",
        "kvlint.extract.kinds.ray",
        "kvlint.extract.kinds.production_stack",
        "kvlint.extract.charts.chart_layouts",
        "kvlint.engines.sglang.options",
        "kvlint.engines.sglang.plan",
        "kvlint.engines.tgi.options",
        "kvlint.engines.tgi.plan",
        "kvlint.catalog.quant_modules",  # a quantized checkpoint's module patterns
        "kvlint.catalog.blocks",  # Nemotron-NAS block configs
        "kvlint.catalog.gguf_roles",  # a GGUF file type's tensors
        "fractions",
        "dataclasses",  # the chart layouts' records
        "difflib",  # did-you-mean suggestions, for a misspelt key only
        "pathlib",
        "shlex",  # shell lines are split by expressions; shlex only for a line they cannot split
        "encodings.utf_8_sig",  # a UTF-8 BOM is dropped by hand (kvlint/load/source.py decode)
    ):
        assert absent not in mods, absent


def test_start_up_runs_no_garbage_collection(tmp_path):
    """The collector is paused until the first file is linted (kvlint/entry.py): the objects start-up
    builds live as long as the process, and collecting them dozens of times was 5 % of the run."""
    repo = _beside(tmp_path, DEPLOYMENT)
    seen, _, frozen = _probe_all(repo, "deploy.yaml")
    assert _collector_when_opened(seen, "deploy.yaml") == (0, False)
    # after the file the collector runs again, what start-up built frozen out of its collections
    assert frozen > 10_000


def test_a_helm_values_file_loads_its_reader_on_demand(tmp_path):
    """The readers the one-file run leaves out still load when a file needs them."""
    repo = tmp_path / "chart"
    repo.mkdir()
    (repo / "values.yaml").write_text("servingEngineSpec:\n  modelSpec: []\n")
    _, mods = _probe(repo, "--isolated", "values.yaml")
    assert "kvlint.extract.kinds.helm_values" in mods


def test_every_reader_the_registry_names_exists():
    from kvlint.extract import registry

    refs = [
        *registry.KUBERNETES_KINDS.values(),
        *registry.GROUP_KINDS.values(),
        *(r for _n, claims, read in registry.DOCUMENT_KINDS for r in (claims, read)),
        *(r for _n, claims, check in registry.DOCUMENT_CHECKS for r in (claims, check)),
        *registry.NODE_POOL_KINDS.values(),
        *(read for _n, _suffix, read in registry.NODE_POOL_FILES),
    ]
    for ref in refs:
        assert callable(registry.load(ref)), ref


def test_a_configured_run_with_its_settings_remembered_loads_neither_pydantic_nor_openssl(tmp_path):
    """benchmarks/speed.py's configured row: `.kvlint.yaml` beside the file, validated by an earlier run.
    The remembered settings are checked without pydantic, and the entry's SHA-256 name is made by
    CPython's own module: hashlib would load OpenSSL's libcrypto (~3.5 ms, ~4 MiB) for that one digest."""
    repo = _beside(tmp_path, DEPLOYMENT)
    (repo / ".kvlint.yaml").write_text("fail-on: warning\nignore: [KV004]\ngpu: H100\n")
    env = {**os.environ, "KVLINT_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("KVLINT_NO_CACHE", None)
    out = tmp_path / "probe.json"
    for _ in range(2):  # the first run validates and remembers
        subprocess.run([sys.executable, "-c", PROBE, str(out), "deploy.yaml"], cwd=repo, env=env, check=False)
    data = json.loads(out.read_text())
    mods = set(data["modules"])
    opened = {os.path.basename(p) for kind, p in data["seen"] if kind == "open"}
    assert "kvlint.run.config_cache" in mods and any(n.startswith("config-") for n in opened)  # remembered
    assert {"pydantic", "hashlib", "_hashlib"}.isdisjoint(mods)


def test_the_cache_entry_is_named_by_the_sha256_hashlib_gives():
    import hashlib

    from kvlint.run import config_cache

    for text in (b"", b"fail-on: warning\n", bytes(range(256)) * 40):
        assert config_cache._sha256(text).hexdigest() == hashlib.sha256(text).hexdigest()


# Runs kvlint's entry point with re's functions wrapped: every call made while a kvlint module's body
# runs (its import) is recorded by that module's name; writes them as JSON to the file named by argv[1].
COMPILES_PROBE = r"""
import json, re, sys
sys.path[:] = [p for p in sys.path if p not in ("", ".")]
out, args = sys.argv[1], sys.argv[2:]
at_import = []

def importing():
    f = sys._getframe(2)
    while f is not None and f.f_code.co_name != "<module>":
        f = f.f_back
    name = f.f_globals.get("__name__", "") if f is not None else ""
    return name if name.split(".")[0] == "kvlint" else None

def wrap(real):
    def call(*a, **k):
        name = importing()
        if name is not None:
            at_import.append(name)
        return real(*a, **k)
    return call

for fn in ("compile", "match", "fullmatch", "search", "sub", "subn", "split", "findall", "finditer"):
    setattr(re, fn, wrap(getattr(re, fn)))
sys.argv = ["kvlint", *args]
from kvlint.entry import main
try:
    main()
except SystemExit:
    pass
with open(out, "w") as fh:
    json.dump({"at_import": sorted(set(at_import)), "modules": sorted(sys.modules)}, fh)
"""

COMPILES_AT_IMPORT: set[str] = set()  # no module of a one-file run compiles a pattern at import


def test_a_one_file_run_compiles_no_regular_expression_at_import(tmp_path):
    """The modules a one-file run imports name their patterns with kvlint.lazy_re.lazy, compiled on
    first use: a pattern compiled at import was paid on every start, used or not (49 of them, 16 used)."""
    repo = _beside(tmp_path, DEPLOYMENT)
    out = tmp_path / "compiles.json"
    subprocess.run(
        [sys.executable, "-c", COMPILES_PROBE, str(out), "deploy.yaml"],
        cwd=repo,
        env={**os.environ, "KVLINT_NO_CACHE": "1"},
        capture_output=True,
        check=False,
    )
    data = json.loads(out.read_text())
    assert "kvlint.run.lint" in data["modules"] and "kvlint.report.safe" in data["modules"]
    assert set(data["at_import"]) <= COMPILES_AT_IMPORT, data["at_import"]


def test_a_lazy_pattern_is_compiled_once_on_first_use(monkeypatch):
    import re

    from kvlint.lazy_re import lazy

    calls = []
    real = re.compile
    monkeypatch.setattr(re, "compile", lambda *a: calls.append(a) or real(*a))
    tag = lazy(r"^v?(\d+)\.(\d+)", re.IGNORECASE)
    assert calls == []  # naming it compiles nothing
    assert tag().match("V0.10").groups() == ("0", "10")
    assert tag() is tag() and tag().flags & re.IGNORECASE
    assert len(calls) == 1
