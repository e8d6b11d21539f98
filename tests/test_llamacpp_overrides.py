"""llama-server's --override-tensor (-ot), --cpu-moe and --n-cpu-moe (kvlint/engines/llamacpp/overrides.py): the
tensors they keep on the CPU leave the GPU's model buffer, the first matching item decides, and an item kvlint
cannot evaluate is named, never ignored. The settings are the ones llama.cpp's own documentation and users
write for a MoE model on a small GPU (`-ot ".ffn_.*_exps.=CPU"`, ggml-org/llama.cpp pull request #11397;
`--cpu-moe` / `--n-cpu-moe`, pull request #15077)."""

from __future__ import annotations

import time

from conftest import gpu_pod, lint

from kvlint.engines.llamacpp import layers as L

IMAGE = "ghcr.io/ggml-org/llama.cpp:server-cuda-b6500"
MOE = ["-m", "/m/Qwen3-30B-A3B-Q4_K_M.gguf", "-c", "32768", "-ngl", "99"]


def _run(*extra: str):
    result = lint(gpu_pod(IMAGE, MOE + list(extra)))
    (d,) = result.deployments
    return d, [f for f in result.findings if f.rule == "KV004"]


def _weights(d) -> int:
    return next(t.bytes for t in d.plan.terms if t.label == "weights")


def test_experts_kept_on_the_cpu_leave_only_attention_norms_and_output_on_the_gpu():
    whole, _ = _run()
    kept, said = _run("-ot", ".ffn_.*_exps.=CPU")
    arch = whole.model
    groups = L.groups_by_layer(arch)
    routed = sum(g[2] for g in groups)
    assert routed > 0 and not said
    # every layer's routed experts leave the GPU; nothing else does
    assert abs((_weights(whole) - _weights(kept)) - routed) <= arch.layers
    # the cells that fit grow by what the experts held
    assert kept.plan.max_len_that_fits > whole.plan.max_len_that_fits


def test_cpu_moe_and_an_n_cpu_moe_of_every_layer_are_the_same_as_the_pattern():
    by_pattern, _ = _run("-ot", r"\.ffn_(up|down|gate)_exps=CPU")
    cpu_moe, _ = _run("--cpu-moe")
    every, _ = _run("--n-cpu-moe", "48")
    assert _weights(by_pattern) == _weights(cpu_moe) == _weights(every)


def test_n_cpu_moe_keeps_the_first_layers_experts_only():
    whole, _ = _run()
    half, _ = _run("--n-cpu-moe", "24")
    groups = L.groups_by_layer(whole.model)
    assert abs((_weights(whole) - _weights(half)) - sum(g[2] for g in groups[:24])) <= 24


def test_the_first_matching_item_decides_and_every_ot_is_read():
    # layer 0..9's experts stay on the GPU (CUDA0 first), every other layer's go to the CPU
    first, _ = _run("-ot", r"blk\.[0-9]\.=CUDA0", "-ot", "exps=CPU")
    whole, _ = _run()
    groups = L.groups_by_layer(whole.model)
    assert abs((_weights(whole) - _weights(first)) - sum(g[2] for g in groups[10:])) <= whole.model.layers


def test_the_gpu_copies_in_the_largest_cpu_kept_tensor_for_its_op():
    # the compute buffer's FFN phase holds the largest tensor kept on the CPU while the GPU runs its op
    kept, _ = _run("-ot", "exps=CPU", "-ub", "512")
    copy = L.largest_moved(kept.model, kept.settings.extra["moved"])
    assert copy > 0 and kept.settings.extra["weight_copy"] == copy
    small, _ = _run("-ot", "exps=CPU", "-ub", "16", "-b", "16")
    assert small.settings.extra["weight_copy"] == 0  # an op of fewer than 32 tokens stays on the CPU
    # --no-op-offload keeps the ops of CPU-kept tensors on the CPU (common.cpp:1401): nothing is copied in
    off, _ = _run("-ot", "exps=CPU", "-ub", "512", "--no-op-offload")
    assert off.settings.extra["weight_copy"] == 0 and _weights(off) == _weights(kept)
    compute = [next(t.bytes for t in d.plan.terms if t.label == "compute buffer") for d in (off, kept)]
    assert compute[0] <= compute[1]


def test_a_pattern_kvlint_cannot_evaluate_is_named_once_and_nothing_moves():
    whole, _ = _run()
    # a look-ahead: std::regex takes it, RE2 does not
    d, said = _run("-ot", "ffn_(?=up)=CPU", "-ot", "ffn_(?=up)=CPU")
    assert _weights(d) == _weights(whole)
    assert len(said) == 1 and "ffn_(?=up)=CPU" in said[0].message and "not checked" in said[0].message


def test_a_buffer_kvlint_does_not_place_is_named():
    whole, _ = _run()
    d, said = _run("-ot", "exps=CUDA1")
    assert _weights(d) == _weights(whole)
    assert len(said) == 1 and "'CUDA1'" in said[0].message


def test_an_item_without_a_buffer_is_the_start_up_failure_llama_cpp_reports():
    result = lint(gpu_pod(IMAGE, ["-m", "/m/Qwen3-30B-A3B-Q4_K_M.gguf", "-ot", "exps"]))
    assert any("invalid value" in f.message for f in result.findings)


def test_a_backtracking_pattern_on_every_tensor_name_is_linear():
    # (a|a)*b-style patterns are exponential for a backtracking engine; RE2 is linear in the name
    start = time.process_time()
    _run("-ot", "(a|aa)*(a|aa)*(a|aa)*(a|aa)*$x=CPU," * 50 + "exps=CPU")
    assert time.process_time() - start < 20  # a backtracking engine takes hours; kvlint well under a second
