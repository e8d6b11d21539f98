"""Which runner Ollama starts for a model (kvlint/engines/llamacpp/ollama_runner.py), and what that does on several
GPUs: its llama.cpp runner pipelines the layer split with 4 copies of each GPU's inputs, its own engine does not,
while its scheduler places the layers without the copies either way; where they do not fit, the vendored llama.cpp
of v0.13.2 on reserves again without them, earlier ones fail (ollama/ollama, read tag by tag)."""

from __future__ import annotations

from conftest import lint

from kvlint.catalog import models
from kvlint.engines.llamacpp import compute
from kvlint.engines.llamacpp.ollama_runner import LLAMA, OWN, gguf_arch, runner


def _values(tag: str, model: str, ctx: int, env: str = "") -> str:
    """The ollama Helm chart's values: `model` pulled at start on two L4, a `ctx`-token context."""
    return (
        f'image:\n  tag: "{tag}"\nollama:\n  gpu:\n    enabled: true\n    number: 2\n  models:\n    pull: [{model}]\n'
        f'extraEnv:\n  - name: OLLAMA_CONTEXT_LENGTH\n    value: "{ctx}"\n{env}'
        "nodeSelector:\n  cloud.google.com/gke-accelerator: nvidia-l4\n"
    )


def _run(tag: str, ctx: int = 8192, env: str = ""):
    result = lint(_values(tag, "llama3.3:70b", ctx, env), "values.yaml")
    (r,) = result.deployments
    return r.plan, result.findings


def _arch(ref: str):
    return models.arch_for_entry(models._key(ref))


def test_the_gguf_architecture_decides_the_runner_by_release():
    llama, qwen3, oss = (
        _arch(m) for m in ("meta-llama/Llama-3.3-70B-Instruct", "Qwen/Qwen3-8B", "openai/gpt-oss-20b")
    )
    assert (gguf_arch(llama), gguf_arch(qwen3), gguf_arch(oss)) == ("llama", "qwen3", "gptoss")
    assert runner(llama, "0.15.5", False)[0] == LLAMA
    assert runner(oss, "0.11.0", False)[0] == OWN and runner(oss, "0.10.1", False)[0] == LLAMA
    # v0.12.5's list dropped qwen3 (not qwen3moe) and v0.12.6 put it back
    assert [runner(qwen3, v, False)[0] for v in ("0.12.2", "0.12.5", "0.12.6")] == [OWN, LLAMA, OWN]
    assert runner(llama, "0.15.5", True)[0] == OWN  # OLLAMA_NEW_ENGINE


def test_the_llama_cpp_runner_keeps_the_pipelines_copies_on_each_gpu():
    piped, _ = _run("0.15.5")
    own, _ = _run("0.15.5", env='  - name: OLLAMA_NEW_ENGINE\n    value: "1"\n')
    note = next(t.note for t in piped.terms if t.label == "compute buffer")
    assert "4 copies" in note and "llama.cpp runner" in note
    # the same layers on each GPU; the llama.cpp runner's buffers hold the input copies on top
    assert piped.stage_pools == own.stage_pools
    assert all(
        p - o >= compute.N_COPIES * 8192 * 512 * 2
        for p, o in zip(piped.stage_compute, own.stage_compute, strict=True)
    )


def test_copies_the_scheduler_did_not_count_fail_the_start_before_the_retry_came():
    # 10,240 cells: the scheduler's placement fits both L4 without the copies, the pipeline's copies do not
    old, said_old = _run("0.13.1", ctx=10240)
    new, said_new = _run("0.13.2", ctx=10240)
    assert old.warmup_fails and [f.rule for f in said_old] == ["KV102"]
    assert not new.warmup_fails and said_new == []
    assert "retrying without pipeline parallelism" in next(
        t.note for t in new.terms if t.label == "compute buffer"
    )
