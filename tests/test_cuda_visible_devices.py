"""CUDA_VISIBLE_DEVICES in a container that is given only its own GPUs (kvlint/extract/pod/visible.py): inside it
they are devices 0 to N-1, and CUDA shows the engine the listed ones up to the first index that is not one of
them (CUDA C++ Programming Guide, "CUDA Environment Variables"). And a compose device request that names no
count and no ids is `count: all` (compose-spec/compose-go transform/devices.go deviceRequestDefaults)."""

from __future__ import annotations

import json

import pytest
from conftest import gpu_pod, lint, rules_of

from kvlint.extract.pod.visible import seen
from kvlint.findings import Severity
from kvlint.resolve import Defaults

VLLM = "vllm/vllm-openai:v0.10.1"
QWEN = ["--model", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "8192", "--max-num-seqs", "8"]


@pytest.mark.parametrize(
    ("reserved", "text", "shown"),
    [
        (4, "0,2,-1,1", 2),  # the guide's own example: 0 and 2 shown, 1 after the invalid -1 hidden
        (4, "2,1", 2),
        (2, "2,3", 0),  # a host's numbers in a two-GPU container: neither exists there
        (2, "0, 1", 2),
        (4, "0", 1),
        (1, "1", 0),
        (3, "", 0),  # set and empty: no device
        (2, "GPU-6f1e2a4c-0000-0000-0000-000000000000", None),  # a UUID kvlint cannot check
        (2, "0,0", None),  # a repeated index is not judged
        (2, "0,x", None),
    ],
)
def test_cuda_shows_the_listed_devices_up_to_the_first_invalid_one(reserved, text, shown):
    assert seen(reserved, text) == shown


def _kv201(result):
    return [f for f in result.findings if f.rule == "KV201"]


def test_a_host_scripts_device_numbers_hide_every_gpu_of_the_pod():
    args = [*QWEN, "--tensor-parallel-size", "2"]
    result = lint(gpu_pod(VLLM, args, {"CUDA_VISIBLE_DEVICES": "2,3"}, gpus=2))
    (f,) = _kv201(result)
    assert f.severity is Severity.ERROR
    assert "shows the engine 0 of the 2 GPUs" in f.message and "sees no GPU, so it cannot start" in f.message
    assert "drop CUDA_VISIBLE_DEVICES" in (f.fix or "")


def test_fewer_listed_than_the_world_size_is_the_world_size_refusal():
    args = [*QWEN, "--tensor-parallel-size", "2"]
    (f,) = _kv201(lint(gpu_pod(VLLM, args, {"CUDA_VISIBLE_DEVICES": "0"}, gpus=2)))
    assert f.severity is Severity.ERROR
    assert '"World size (2) is larger than the number of available GPUs (1)"' in f.message


def test_gpus_the_variable_hides_sit_idle_and_the_fix_offers_a_tp_that_uses_them():
    (f,) = _kv201(lint(gpu_pod(VLLM, QWEN, {"CUDA_VISIBLE_DEVICES": "0"}, gpus=4)))
    assert f.severity is Severity.WARNING
    assert "3 of the 4 reserved GPUs sit idle" in f.message
    assert (f.fix or "").startswith("request 1 GPU, or drop CUDA_VISIBLE_DEVICES")
    assert "raise --tensor-parallel-size to 4" in (f.fix or "")
    # the TP the fix offers, with the variable dropped, lints clean of KV201 and KV202
    fixed = lint(gpu_pod(VLLM, [*QWEN, "--tensor-parallel-size", "4"], gpus=4))
    assert not {"KV201", "KV202"} & set(rules_of(fixed))


@pytest.mark.parametrize(
    "env",
    [
        {"CUDA_VISIBLE_DEVICES": "0,1"},  # the container's own two
        {"CUDA_VISIBLE_DEVICES": "1,0"},  # the same two, in another order
        {"CUDA_VISIBLE_DEVICES": "2,3", "NVIDIA_VISIBLE_DEVICES": "all"},  # the runtime's choice overridden
        {"CUDA_VISIBLE_DEVICES": "GPU-6f1e2a4c-0000-0000-0000-000000000000"},
    ],
)
def test_what_cannot_be_judged_or_is_right_is_left_alone(env):
    args = [*QWEN, "--tensor-parallel-size", "2"]
    assert not _kv201(lint(gpu_pod(VLLM, args, env, gpus=2)))


def test_a_privileged_container_may_see_the_nodes_other_gpus():
    text = gpu_pod(VLLM, QWEN, {"CUDA_VISIBLE_DEVICES": "5"}, gpus=1)
    text += "        securityContext: {privileged: true}\n"
    assert not _kv201(lint(text))


def test_the_reserved_count_still_decides_scheduling():
    # gpus_per_pod stays what the pod reserves: the scheduler places 4 GPUs, whatever the engine sees
    result = lint(gpu_pod(VLLM, QWEN, {"CUDA_VISIBLE_DEVICES": "0"}, gpus=4))
    (r,) = result.deployments
    assert r.deployment.gpus_per_pod.value == 4
    assert r.deployment.gpus_seen().value == 1


COMPOSE = """services:
  vllm:
    image: vllm/vllm-openai:v0.10.1
    command: --model Qwen/Qwen2.5-7B-Instruct --max-model-len 8192 --max-num-seqs 8 --tensor-parallel-size 2
    ipc: host
{env}    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
{which}              capabilities: [gpu]
"""


def _compose(env: str = "", which: str = ""):
    return lint(COMPOSE.format(env=env, which=which), "compose.yaml", defaults=Defaults(gpu="l4"))


def test_a_compose_device_request_without_count_or_ids_reserves_every_gpu():
    result = _compose()
    (f,) = [f for f in result.findings if f.rule == "KV005"]
    assert f.message.startswith("a GPU device request with no count or device_ids reserves every GPU")
    assert not _kv201(result)  # no GPU count guessed: no idle or missing GPUs claimed


def test_compose_counts_the_listed_devices_of_every_gpu_reserved():
    env = "    environment:\n      - CUDA_VISIBLE_DEVICES=2,3\n"
    result = _compose(env)
    assert "KV005" not in rules_of(result) and not _kv201(result)  # devices 2 and 3 of the host: two GPUs


def test_compose_device_ids_are_renumbered_inside_the_container():
    env = "    environment:\n      - CUDA_VISIBLE_DEVICES=2,3\n"
    (f,) = _kv201(_compose(env, '              device_ids: ["2", "3"]\n'))
    assert f.severity is Severity.ERROR and "sees no GPU" in f.message


def test_llama_cpp_splits_its_layers_over_the_gpus_it_sees():
    # llama.cpp splits the layers over the CUDA devices it finds (kvlint/engines/llamacpp/split.py): the GPUs
    # CUDA_VISIBLE_DEVICES hides hold none of them
    image, args = "ghcr.io/ggml-org/llama.cpp:server-cuda-b6500", ["-m", "/m/gemma-3-12b-it-Q4_K_M.gguf"]
    (both,) = lint(gpu_pod(image, args, gpus=2)).deployments
    (seen_one,) = lint(gpu_pod(image, args, {"CUDA_VISIBLE_DEVICES": "1"}, gpus=2)).deployments
    (one,) = lint(gpu_pod(image, args, gpus=1)).deployments
    assert len(both.plan.stage_pools) == 2
    assert seen_one.plan.stage_pools == one.plan.stage_pools == []
    assert seen_one.plan.terms == one.plan.terms


def _scripted(script: str):
    text = gpu_pod(VLLM, [], gpus=2).replace(
        "        args: []\n", f"        command: {json.dumps(['bash', '-c', script])}\n"
    )
    return _kv201(lint(text))


SERVE = "vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 8192 --max-num-seqs 8"


@pytest.mark.parametrize(
    ("script", "said"),
    [
        (
            f"CUDA_VISIBLE_DEVICES=2,3 {SERVE} --tensor-parallel-size 2",
            "CUDA_VISIBLE_DEVICES=2,3 shows the engine 0",
        ),
        (f"export CUDA_VISIBLE_DEVICES=1\n{SERVE}", "CUDA_VISIBLE_DEVICES=1 shows the engine 1 of the 2"),
        (f"CUDA_VISIBLE_DEVICES=0 exec {SERVE}", "CUDA_VISIBLE_DEVICES=0 shows the engine 1 of the 2"),
    ],
)
def test_a_start_script_that_sets_the_variable_for_the_engine_is_read(script, said):
    (f,) = _scripted(script)
    assert f.message.startswith(said)


def test_the_variable_of_another_program_in_the_script_is_not_the_engines():
    assert not _scripted(f"CUDA_VISIBLE_DEVICES=1 python3 warmup.py; {SERVE} --tensor-parallel-size 2")
