"""llama.cpp on more than one GPU (kvlint/engines/llamacpp/devices.py, split.py, multi.py, ollama_gpus.py): each
GPU holds whole layers with their KV cache, so the per-GPU buffers are checked against real two-GPU logs, and
the fit is per GPU: one GPU short of memory fails the start-up whatever the others have free."""

from __future__ import annotations

import sys

from conftest import ROOT, lint

sys.path.insert(0, str(ROOT / "benchmarks"))

from calibration_cases import DATA, build_llamacpp, load_yaml  # noqa: E402

from kvlint.deployment import stated  # noqa: E402
from kvlint.engines.llamacpp import compute, devices  # noqa: E402
from kvlint.resolve import Defaults, resolve  # noqa: E402

MIB = 1 << 20


def _case(case_id: str) -> dict:
    return next(
        c for c in load_yaml(DATA / "llamacpp_startup_logs.yaml")["llamacpp_cases"] if c["id"] == case_id
    )


def test_tensor_split_10_6_gives_each_gpu_the_kv_buffer_the_log_printed():
    # ggml-org/llama.cpp#11200 (l-012): Qwen2.5-Coder-32B, -ts 10,6, -c 32768, q8_0 cache on two GPUs:
    # "CUDA0 KV buffer size = 2788.00 MiB", "CUDA1 KV buffer size = 1564.00 MiB"
    case = _case("l-012")
    d, why = build_llamacpp(case, case["engine_version"])
    assert d is not None, why
    plan = resolve(d, Defaults()).plan
    assert [b / MIB for b in plan.stage_pools] == case["measured"]["kv_by_device_mib"] == [2788.0, 1564.0]
    assert not plan.warmup_fails and plan.kv_tokens == 32768


def test_a_layer_and_its_kv_cache_sit_on_the_device_the_split_points_name():
    # ggml-org/llama.cpp#6122 (l-011): Command-R's 40 layers of 128 MiB (4096 cells, f16) split 12 / 28 with the
    # output on the second GPU: "CUDA0 KV buffer size = 1536.00 MiB", "CUDA1 KV buffer size = 3584.00 MiB".
    # Layer counts as the shares (as Ollama's runner passes them) reproduce that placement.
    per_layer = 128 * MIB
    held = devices.shares([1] * 40, 1, [per_layer] * 40, 99, devices.split_points([12, 29]))
    assert [s.kv / MIB for s in held] == [1536.0, 3584.0]
    assert [(s.layers, s.output) for s in held] == [(12, False), (28, True)]


def _plan(case: dict, **extra: str):
    d, why = build_llamacpp(case, case.get("engine_version"))
    assert d is not None, why
    for key, value in extra.items():
        d.extra[key] = stated(value, d.where)
    return resolve(d, Defaults()).plan


def test_the_pipeline_keeps_four_copies_of_each_gpus_inputs_in_its_compute_buffer():
    # l-012 ("pipeline parallelism enabled (n_copies=4)", flash attention, -ub 256, 32768 cells): CUDA1 reads the
    # hidden state and the F16 mask CUDA0 casts, 4 x (5 + 16) MiB beside its logits; CUDA0 the F32 mask and the
    # embeddings from the CPU: "CUDA0 compute buffer size = 233.00 MiB", "CUDA1 ... = 237.51 MiB"; and l-015
    # (-ub 512, 32000 cells, -ts 3,10): "CUDA0 ... = 459.26 MiB", "CUDA1 ... = 472.02 MiB"
    for case_id in ("l-012", "l-015"):
        case = _case(case_id)
        got = [b / MIB for b in _plan(case).stage_compute]
        logged = case["measured"]["compute_by_device_mib"]
        assert [round(g - m, 1) for g, m in zip(got, logged, strict=True)] == [0.0, 0.0], case_id
    case = _case("l-012")
    got = [b / MIB for b in _plan(case).stage_compute]
    # --split-mode row turns the pipeline off: each GPU's buffer is its largest phase alone (CUDA0's FFN with
    # the 16 MiB F16 mask it casts, which the pipeline's CUDA0 holds too)
    row = _plan(case, split_mode="row").stage_compute
    # CUDA0: (5 MiB row + 32 MiB F32 mask + 1 KiB positions) x 4; CUDA1: (5 + 16) x 4
    assert [got[i] * MIB - row[i] for i in (0, 1)] == [
        compute.N_COPIES * (37 * MIB + 1024),
        compute.N_COPIES * (21 * MIB + 1024),
    ]


def test_without_flash_attention_every_gpu_copies_the_f32_mask_in_place_of_its_own():
    # l-011 (Command-R, 4096 cells, -ub 512, no flash attention) split 12 / 28 as its KV buffers show:
    # "CUDA0 compute buffer size = 672.01 MiB" (its scores phase with the mask's four copies)
    case = _case("l-011")
    case = {**case, "gpus": 2, "settings": {**case["settings"], "tensor_split": "12,29"}}
    assert abs(_plan(case).stage_compute[0] / MIB - 672.01) < 0.01


def test_row_split_runs_no_pipeline_and_each_gpu_holds_its_own_layers():
    # l-014 (Qwen3-30B-A3B Q8_0, -sm row on four GPUs, b5261): the KV cache by the layer split
    # ("CUDA2 KV buffer size = 703.50 MiB", "CUDA3 ... = 644.88 MiB"), CUDA0's weights in its two buffers
    # (7969.22 + 248.62 MiB) and four equal compute buffers with no copies ("1958.63 MiB" each)
    case = _case("l-014")
    plan = _plan(case)
    assert [round(b / MIB, 2) for b in plan.stage_pools][2:] == [703.5, 644.88]
    assert round(plan.weights_per_gpu / MIB, 2) == case["measured"]["weights_mib"]
    assert len(set(plan.stage_compute)) == 1 and "pipeline" not in plan.terms[1].note
    assert abs(plan.stage_compute[0] / MIB / 1958.63 - 1) < 0.01


def test_parse_split_reads_llama_cpp_separators_and_refuses_words():
    assert devices.parse_split("3/1", 2) == [3.0, 1.0]
    assert devices.parse_split("1", 3) == [1.0, 0.0, 0.0]
    assert devices.parse_split("1,1,1", 2) == [1.0, 1.0]  # load_tensors reads one per device
    assert devices.parse_split("1,x", 2) is None


POD = """apiVersion: apps/v1
kind: Deployment
metadata: {{name: t}}
spec:
  template:
    spec:
      nodeSelector: {{nvidia.com/gpu.product: {gpu}}}
      containers:
      - name: s
        image: ghcr.io/ggml-org/llama.cpp:server-cuda-{build}
        args: [-m, /m/Meta-Llama-3.1-70B-Instruct-Q4_K_M.gguf, -ngl, "99", -fa, "on"{more}]
        env: {env}
        resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}
"""


def _lint(more: str = "", gpus: int = 2, build: str = "b6500", gpu: str = "NVIDIA-L40S", env: str = "[]"):
    result = lint(POD.format(more=more, gpus=gpus, build=build, gpu=gpu, env=env))
    rules = {f.rule: f for f in result.findings}
    return rules, result.deployments[0].plan


def test_the_default_layer_split_uses_every_gpu_and_each_holds_its_own_buffers():
    rules, plan = _lint(', -c, "65536"')
    assert "KV102" not in rules and "KV101" not in rules
    assert "KV201" not in rules  # llama.cpp uses both GPUs: none sits idle
    assert "KV207" not in rules  # one process, no NCCL: no /dev/shm asked for
    assert (
        len(plan.stage_pools) == 2 and sum(plan.stage_pools) == 65536 * 327680
    )  # 80 layers x 8 x 128 x 2 x f16
    one = _lint(', -c, "65536"', gpus=1)[1]
    assert plan.weights_per_gpu < one.weights_per_gpu / 1.9  # each GPU about half the weights


def test_one_gpu_short_fails_the_start_up_whatever_the_others_have_free():
    rules, plan = _lint(', -c, "65536", --tensor-split, "9,1"')
    f = rules["KV102"]
    assert f.message.startswith("GPU 0's buffers do not fit it") and "llama-server exits" in f.message
    assert "without --tensor-split (the split by free memory) every GPU's buffers fit" in f.message
    assert plan.stage_pools[0] > 9 * plan.stage_pools[1]  # the first GPU holds most of the cache


def test_the_variable_sets_the_split_as_the_option_does():
    rules, _ = _lint(', -c, "65536"', env='[{name: LLAMA_ARG_TENSOR_SPLIT, value: "9,1"}]')
    assert rules["KV102"].message.startswith("GPU 0's buffers do not fit it")


def test_builds_that_retry_without_the_pipeline_start_when_only_its_copies_do_not_fit():
    # 62,464 cells with -ts 3,1: GPU 0 fits its weights, KV cache and largest phase, not the pipeline's four
    # copies of its inputs (the F32 mask alone is 122 MiB a copy). b6500 fails to allocate; from 7f8ef50c
    # llama.cpp reserves the buffers again without pipeline parallelism and starts
    more = ', -c, "62464", -np, "1", -ts, "3,1"'
    old, piped = _lint(more, build="b6500")
    assert old["KV102"].message.startswith("GPU 0's buffers do not fit it")
    new, plain = _lint(more, build="b7400")
    assert "KV102" not in new and not plain.warmup_fails
    assert "retrying without pipeline parallelism" in plain.terms[1].note
    assert plain.stage_compute[0] < piped.stage_compute[0] - 4 * 122 * MIB


def test_split_mode_none_plans_the_main_gpu_alone_and_the_other_sits_idle():
    rules, plan = _lint(', -c, "8192", -sm, none', gpu="NVIDIA-L4")
    assert "KV101" in rules and not plan.stage_pools  # 39 GiB of weights on one 22 GiB L4
    assert "1 GPU sits idle" in rules["KV201"].message


def test_a_split_llama_cpp_refuses_is_a_located_kv005():
    for more, said in (
        (', --tensor-split, "1,x"', "--tensor-split '1,x' is not a list of shares"),
        (", -sm, bogus", "--split-mode 'bogus' is not one of none, layer, row"),
        (', -sm, none, -mg, "3"', "invalid value for main_gpu"),
    ):
        rules, plan = _lint(', -c, "8192"' + more)
        assert said in rules["KV005"].message and rules["KV005"].where.line == 11, more  # the args line
        assert plan is None


def test_fit_cuts_an_unset_context_by_what_every_gpu_together_lacks():
    # a build that fits by default, -c unset: 131,072 cells of a 70B on two L4 do not fit; llama_params_fit
    # cuts by the summed deficit with its 1 GiB margin on each GPU (src/llama.cpp:228), and every GPU then fits
    rules, plan = _lint(", -np, '1'", build="b7400", gpu="NVIDIA-L4")
    assert "context size reduced from 131072" in rules["KV102"].message and not plan.warmup_fails
    assert 4096 <= plan.kv_tokens < 131072 and len(plan.stage_pools) == 2


KUBEAI = """apiVersion: kubeai.org/v1
kind: Model
metadata: {{name: m}}
spec:
  features: [TextGeneration]
  url: ollama://llama3.3:70b
  engine: OLlama
  resourceProfile: nvidia-gpu-l4:{gpus}
"""


def test_ollama_spreads_a_model_one_gpu_cannot_hold_over_the_fewest_that_can():
    one = lint(KUBEAI.format(gpus=1))
    assert any("layers on the CPU" in f.message or "on the CPU" in f.message for f in one.findings)
    two = lint(KUBEAI.format(gpus=2))
    assert not any("on the CPU" in f.message for f in two.findings)
    plan = two.deployments[0].plan
    assert len(plan.stage_pools) == 2 and not plan.warmup_fails
    assert "KV201" not in {f.rule for f in two.findings}
