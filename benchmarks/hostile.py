"""Hostile inputs of up to 1 MB: time and memory of one kvlint run each (issue 10).

    python benchmarks/hostile.py [--formats text,json] [--only NAME] [--limit-s 2] [--limit-mb 200]

Every case of the security review that scales with input size, grown to about 1 MB (never
more), plus the single-value cases. Each runs `kvlint --isolated --format FMT FILE` in a fresh
process (a case of several files, the third review's directories and model checkpoints, writes
them into a directory and lints the files it names, at most 1 MB in all); the table gives wall time, CPU time (user + sys, which other load on the machine
inflates less) and peak RSS from wait4(). A case over the limits is marked; the exit status is
1 when any case is over (by CPU time and RSS; wall time is reported as measured).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MB = 1_000_000
SPEC = "kind: ServingSpec\nmodel: meta-llama/Llama-3.1-8B-Instruct\ngpu: L4\nmax_context: 131072\n"


def _fill(unit: str, head: str = "", tail: str = "") -> str:
    n = max(1, (MB - len(head) - len(tail)) // len(unit))
    return head + unit * n + tail


def _pod(
    args: list[str], env: list[dict] | None = None, command: list[str] | None = None, extra: str = ""
) -> str:
    cmd = command or ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"]
    return (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: m}\nspec:\n  template:\n    spec:\n"
        "      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}\n      containers:\n"
        f"        - name: vllm\n          image: vllm/vllm-openai:v0.10.1\n          command: {json.dumps(cmd)}\n"
        f"          args: {json.dumps(args)}\n          env: {json.dumps(env or [])}\n"
        f'          resources: {{limits: {{nvidia.com/gpu: "1"{extra}}}}}\n'
    )


def _entrypoint_args(args: list[str]) -> str:
    """A pod with args and no command: the image's entrypoint runs them, and every word is a
    candidate entry point."""
    text = _pod(args)
    return text.replace(text[text.index("          command:") : text.index("          args:")], "")


def _fit(make) -> str:
    """make(n) for the largest n whose text stays within 1 MB: the case stays valid YAML (cutting
    the text at 1 MB would make it a syntax error, and measure only the error path)."""
    unit = len(make(2).encode("utf-8")) - len(make(1).encode("utf-8"))
    lo, hi = (
        1,
        MB // max(1, unit) + 1,
    )  # never build much more than 1 MB (the parent's RSS is the child's floor)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if len(make(mid).encode("utf-8")) <= MB:
            lo = mid
        else:
            hi = mid - 1
    return make(lo)


def _deployments() -> str:
    one = _pod(["--max-model-len=131072"])
    return _fill("---\n" + one)


def _expansion_bomb() -> str:
    a = "x" * 10_000
    head = _pod(["--max-model-len="], [{"name": "A", "value": a}])
    refs = (MB - len(head)) // 4
    return _pod(["--max-model-len=" + "$(A)" * refs], [{"name": "A", "value": a}])[:MB]


def _shell_positions() -> str:
    head = 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: m}\nspec: {template: {spec: {containers: [{name: v, image: vllm/vllm-openai:v0.10.1, command: ["sh", "-c"], args: ['
    body = _fill('e "a"b\\n', head=head + '"', tail='vllm serve x"]}]}}}\n')
    return body


_OPEN_MODEL = (
    "apiVersion: llmaz.io/v1alpha1\nkind: OpenModel\nmetadata: {name: m}\nspec:\n"
    "  source: {modelHub: {modelID: Qwen/Qwen2-0.5B-Instruct}}\n"
    "  inferenceConfig: {flavors: [{name: l4, limits: {nvidia.com/gpu: 1}}]}\n"
)
_PLAYGROUND = (
    "---\napiVersion: inference.llmaz.io/v1alpha1\nkind: Playground\nmetadata: {name: p}\n"
    "spec: {replicas: 1, modelClaim: {modelName: m}, backendRuntimeConfig: {backendName: sglang}}\n"
)
_OME_ISVC = (
    "---\napiVersion: ome.io/v1beta1\nkind: InferenceService\nmetadata: {name: i}\n"
    "spec: {model: {name: b}, runtime: {name: r}}\n"
)


def _model_booster(n: int) -> str:
    config = "".join(f"          k{i}: {i}\n" for i in range(n))
    return (
        "apiVersion: workload.serving.volcano.sh/v1alpha1\nkind: ModelBooster\nmetadata: {name: b}\nspec:\n"
        "  backend:\n    type: vLLM\n    modelURI: hf://Qwen/Qwen2-0.5B-Instruct\n    workers:\n"
        "      - type: server\n        pods: 1\n        resources: {limits: {nvidia.com/gpu: 1}}\n"
        "        config:\n" + config
    )


_LLAMA = (
    '{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 512, '
    '"intermediate_size": 1024, "num_hidden_layers": 4, "num_attention_heads": 8, '
    '"num_key_value_heads": 2, "vocab_size": 1000, "max_position_embeddings": 4096, "torch_dtype": "bfloat16"}'
)
_LOCAL_SPEC = "kind: ServingSpec\nname: m\nmodel: ./m\ngpu: L4\nmax_context: 4096\nmax_sequences: 4\n"
_DEEP = "[" * 240_000 + "]" * 240_000  # ~480 KB: two of them stay within 1 MB
_ISVC = (
    "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {name: m}\nspec:\n"
    "  predictor:\n    model:\n      modelFormat: {name: huggingface}\n      runtime: vllm\n"
    "      storageUri: hf://meta-llama/Llama-3.1-8B-Instruct\n"
    "      resources: {limits: {nvidia.com/gpu: 1}}\n"
)


def _claims(n: int) -> str:
    """DRA claims whose selector is the third review's S1 pattern (`.*` x12 then Z), with a pod."""
    cel = 'device.attributes["gpu.nvidia.com"].productName.matches("' + ".*" * 12 + 'Z")'
    claim = (
        "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {{name: c{i}}}\n"
        "spec: {{spec: {{devices: {{requests: [{{name: gpu, exactly: {{deviceClassName: gpu.nvidia.com, "
        "count: 1, selectors: [{{cel: {{expression: '{cel}'}}}}]}}}}]}}}}}}\n"
    )
    return "".join(claim.format(i=i, cel=cel) for i in range(n)) + "---\n" + _pod([], extra="")


def _beside(manifests: int, fillers: int) -> tuple[dict[str, str], list[str]]:
    """S17: KServe InferenceServices in a directory of many small YAML files (each lists it)."""
    files = {f"filler-{i:05}.yaml": "a: 1\n" for i in range(fillers)}
    files.update({f"isvc-{i:04}.yaml": _ISVC for i in range(manifests)})
    return files, [f"isvc-{i:04}.yaml" for i in range(manifests)]


def _checkpoint(files: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """S18: a local model directory beside a spec naming it."""
    return {"spec.yaml": _LOCAL_SPEC, "m/config.json": _LLAMA, **{f"m/{k}": v for k, v in files.items()}}, [
        "spec.yaml"
    ]


CASES: dict[str, object] = {
    # F12: findings and documents
    "duplicate keys (200k)": lambda: _fill("a: 1\n"),
    "documents (110k)": lambda: _fill("a: 1\n---\n"),
    "empty documents (250k)": lambda: _fill("---\n"),
    "ServingSpec documents (11k)": lambda: _fill("---\n" + SPEC),
    "Deployments (1 MB)": _deployments,
    "unused suppressions (33k)": lambda: _fill("a: 1  # kvlint: disable=KV103\n"),
    # F6: expansion bomb
    "$(VAR) expansion bomb": _expansion_bomb,
    # F5/F8: single hostile values
    "layers: 1000000": lambda: (
        "kind: ServingSpec\nmodel: acme/x\ngpu: L4\narchitecture: {layers: 1000000, kv_heads: 8, params: 8B, head_dim: 128}\n"
    ),
    "pipeline_parallel: 10000000": lambda: SPEC + "pipeline_parallel: 10000000\n",
    "max_context: 0x + 900k hex": lambda: (
        "kind: ServingSpec\nmodel: meta-llama/Llama-3.1-8B-Instruct\ngpu: L4\nmax_context: 0x"
        + "f" * 900_000
        + "\n"
    ),
    "--tensor-parallel-size 4,000 digits": lambda: _pod(["--tensor-parallel-size=" + "9" * 4000]),
    # sizes of one value
    "args list (1 MB)": lambda: _pod([f"--x{i}=1" for i in range(MB // 12)])[:MB],
    "unknown engine flags (1 MB, valid YAML)": lambda: _fit(lambda n: _pod([f"--x{i}=1" for i in range(n)])),
    "unknown engine flags after the image's entrypoint (1 MB)": lambda: _fit(
        lambda n: _entrypoint_args(
            ["serve", "meta-llama/Llama-3.1-8B-Instruct", *[f"--x{i}=1" for i in range(n)]]
        )
    ),
    "unknown engine flags in a shell script (1 MB)": lambda: _fit(
        lambda n: _pod(["vllm serve x " + " ".join(f"--x{i}=1" for i in range(n))], command=["sh", "-c"])
    ),
    "one 1 MB line": lambda: "a: " + "x" * (MB - 10) + "\n",
    "1 MB metadata.name with escapes": lambda: _pod(["--max-model-len=131072"]).replace(
        "name: m}", 'name: "' + "\\e[2J\\u202e\\n::error::x" * (MB // 30) + '"}'
    ),
    # input side (issue 10, helper secin): text parsers on adversarial strings
    "suppression comment, 1 MB of spaces": lambda: SPEC.replace(
        "131072", "131072  # kvlint: disable=" + " " * (MB - 200) + "!"
    ),
    "memory limit, 1 MB of spaces": lambda: _pod([], extra=', memory: "1' + " " * (MB - 700) + '!"'),
    "shell script words (F11)": _shell_positions,
    "findings x line suppressions (F14)": lambda: _fill(
        "---\n" + SPEC.replace("131072", "131072  # kvlint: disable=KV103") + "# kvlint: disable=KV201\n" * 4
    ),
    "kvlint comments inside strings (F21)": lambda: _fill(
        "- 'x # kvlint: disable-file=KV102'\n", head=SPEC + "notes:\n"
    )[:MB],
    "suppression comment, 1 MB of tabs and hashes": lambda: SPEC.replace(
        "131072", "131072  " + "#\t" * ((MB - 200) // 2) + "# kvlint: disable=KV102"
    ),
    # readers that look up objects the workload names (issue 12): every workload searches the file
    "llmaz Playgrounds on one OpenModel (1 MB)": lambda: _fill(_PLAYGROUND, head=_OPEN_MODEL),
    "OME InferenceServices, runtime absent (1 MB)": lambda: _fill(_OME_ISVC),
    "kthena worker config keys as flags (1 MB)": lambda: _fit(_model_booster),
    "model: size text with 1 MB of digits (F13)": lambda: (
        SPEC + "budget: {gpu_memory: '" + "1" * (MB - 200) + "!'}\n"
    ),
    # third review (issue 23): A, work that grew faster than the input
    "CEL matches .* x12 Z in DRA claims (S1)": lambda: _fit(_claims),
    # the same 200 files alone: the difference is the directory's cost (one listing a run)
    "200 KServe manifests alone (S17 base)": lambda: _beside(200, 0),
    "200 KServe manifests beside 20,000 files (S17)": lambda: _beside(200, 20_000),
    # F: text the GitHub runner or GitHub Markdown would act on
    "1 MB metadata.name of ##[ and ::cmd (S11/S12)": lambda: _pod(["--max-model-len=131072"]).replace(
        "name: m}", 'name: "' + "##[add-mask]x\\n \\u3000::error::y " * (MB // 40) + '"}'
    ),
    # G: parser edges that were internal errors
    "index.json nested 240k deep (S18)": lambda: _checkpoint(
        {"model.safetensors.index.json": '{"weight_map": ' + _DEEP + "}"}
    ),
    "$((A*B)) on 450k-digit values (S18)": lambda: _pod(
        ["vllm serve x --max-model-len $((A*B))"],
        [{"name": "A", "value": "9" * 450_000}, {"name": "B", "value": "9" * 450_000}],
        command=["sh", "-c"],
    ),
    "--cuda-graph-sizes of 1 MB of digits (S18)": lambda: _pod(["--cuda-graph-sizes=" + "9" * (MB - 800)]),
}


def measure(case_dir: Path, named: list[str], fmt: str) -> tuple[float, float, float, int]:
    cmd = [sys.executable, "-m", "kvlint", "--isolated", "--no-color", "--format", fmt, "--", *named]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=case_dir)
    out_bytes = 0
    assert proc.stdout is not None
    while chunk := proc.stdout.read(1 << 16):
        out_bytes += len(chunk)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out_bytes


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--formats", default="text,json")
    ap.add_argument("--only", default="")
    ap.add_argument("--limit-s", type=float, default=2.0)
    ap.add_argument("--limit-mb", type=float, default=200.0)
    args = ap.parse_args()
    over = 0
    print(f"{'case':40} {'fmt':5} {'size':>9} {'wall s':>7} {'cpu s':>6} {'RSS MB':>7} {'out B':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, make in CASES.items():
            if args.only and args.only not in name:
                continue
            made = make()  # type: ignore[operator]
            files, named = made if isinstance(made, tuple) else ({"case.yaml": made}, ["case.yaml"])
            case_dir = Path(tmp) / f"case{len(os.listdir(tmp))}"
            for rel, text in files.items():
                (case_dir / rel).parent.mkdir(parents=True, exist_ok=True)
                (case_dir / rel).write_bytes(text.encode("utf-8"))
            data_size = sum(len(t.encode("utf-8")) for t in files.values())
            assert data_size <= MB + 1000, (name, data_size)
            for fmt in args.formats.split(","):
                wall, cpu, rss, out = measure(case_dir, named, fmt)
                bad = cpu > args.limit_s or rss > args.limit_mb
                over += bad
                flag = "  OVER" if bad else ""
                print(
                    f"{name:40} {fmt:5} {data_size:>9,} {wall:>7.2f} {cpu:>6.2f} {rss:>7.0f} {out:>9,}{flag}",
                    flush=True,
                )
    print(f"{over} case(s) over {args.limit_s} s CPU or {args.limit_mb} MB")
    return 1 if over else 0


if __name__ == "__main__":
    raise SystemExit(main())
