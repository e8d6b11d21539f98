"""TGI's multi-backend images: the tag selects the backend (huggingface/text-generation-inference
.github/workflows/build.yaml label extensions), ROCm is priced as the CUDA server with its image's
ATTENTION=paged, and every other backend is one located KV004 naming what is not checked and why.

The image tags are the ones TGI's own docs run at v3.3.7 (docs/source/installation_amd.md,
installation_intel.md, backends/gaudi.mdx, backends/neuron.md, backends/trtllm.md), the Gaudi fork's
`ghcr.io/huggingface/tgi-gaudi:2.0.6`, openEuler's `openeuler/text-generation-inference-cpu:2.4.0-oe2403lts`
(opea-project/GenAIExamples@15b0d468 CodeGen/docker_compose/intel/cpu/xeon/compose_tgi_openeuler.yaml), and the corpus' `2.4.0-intel-cpu` (opea-project/GenAIInfra) and
`3.0.2-rocm` (silogen/ai-workloads)."""

from __future__ import annotations

import pytest
from conftest import carried, lint

from kvlint.catalog.gpus import lookup
from kvlint.catalog.models import resolve as model
from kvlint.engines.tgi import plan as tgi
from kvlint.engines.tgi.backends import backend_of_image
from kvlint.engines.tgi.launcher import resolve_attention
from kvlint.resolve import Defaults
from kvlint.run.settings import Settings

DOC_TAGS = {
    "ghcr.io/huggingface/text-generation-inference:3.3.5-rocm": "rocm",
    "ghcr.io/huggingface/text-generation-inference:3.3.5-intel-xpu": "intel-xpu",
    "ghcr.io/huggingface/text-generation-inference:3.3.5-intel-cpu": "intel-cpu",
    "ghcr.io/huggingface/text-generation-inference:3.3.5-gaudi": "gaudi",
    "ghcr.io/huggingface/text-generation-inference:3.3.5-neuron": "neuron",
    "ghcr.io/huggingface/text-generation-inference:latest-neuron": "neuron",
    "ghcr.io/huggingface/text-generation-inference:latest-trtllm": "trtllm",
    "ghcr.io/huggingface/text-generation-inference:2.4.0-intel-cpu": "intel-cpu",
    "ghcr.io/huggingface/text-generation-inference:3.0.2-rocm": "rocm",
    "ghcr.io/huggingface/tgi-gaudi:2.0.6": "gaudi",
    "tgi-llamacpp": "llamacpp",
    "openeuler/text-generation-inference-cpu:2.4.0-oe2403lts": "cpu",
    "ghcr.io/huggingface/text-generation-inference:3.3.5": "cuda",
    "ghcr.io/huggingface/text-generation-inference:latest": "cuda",
}


@pytest.mark.parametrize("image", sorted(DOC_TAGS))
def test_the_image_tag_selects_the_backend(image):
    found = backend_of_image(image)
    assert found is not None and found[0] == DOC_TAGS[image]


def test_images_of_other_projects_are_not_tgi_backends():
    assert backend_of_image("vllm/vllm-openai:v0.10.0-rocm") is None
    assert backend_of_image("ghcr.io/ggml-org/llama.cpp:server-cuda") is None


def _pod(image: str, args: list[str], resources: str = "nvidia.com/gpu: 1", env: str = "") -> str:
    quoted = ", ".join(f"'{a}'" for a in args)
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: tgi}}
spec:
  containers:
  - name: tgi
    image: {image}
    args: [{quoted}]
{env}    resources:
      limits: {{{resources}}}
"""


NOT_MODELLED = {
    "ghcr.io/huggingface/text-generation-inference:3.3.5-intel-xpu": (
        "XPU_MEMORY_FRACTION",
        "gpu.intel.com/i915: 1",
    ),
    "ghcr.io/huggingface/text-generation-inference:3.3.5-intel-cpu": ("host memory", "cpu: 8"),
    "openeuler/text-generation-inference-cpu:2.4.0-oe2403lts": ("host memory", "cpu: 8"),
    "ghcr.io/huggingface/text-generation-inference:3.3.5-gaudi": (
        "TGI_GRAPH_RESERVED_MEM",
        "habana.ai/gaudi: 1",
    ),
    "ghcr.io/huggingface/tgi-gaudi:2.0.6": ("TGI_GRAPH_RESERVED_MEM", "habana.ai/gaudi: 1"),
    "ghcr.io/huggingface/text-generation-inference:3.3.5-neuron": (
        "sequence_length",
        "aws.amazon.com/neuron: 1",
    ),
    "ghcr.io/huggingface/text-generation-inference:latest-trtllm": (
        "engine built beforehand",
        "nvidia.com/gpu: 1",
    ),
}


@pytest.mark.parametrize("image", sorted(NOT_MODELLED))
def test_a_backend_kvlint_does_not_model_is_one_located_kv004(image):
    """Never the CUDA server's numbers on another backend, never a silent pass: one KV004 at the image
    line saying which backend and what it sizes memory by; no capacity rule runs, and the backend's
    own options (the TensorRT-LLM router's --tokenizer-name) are not reported as unknown."""
    why, resources = NOT_MODELLED[image]
    args = ["--model-id", "teknium/OpenHermes-2.5-Mistral-7B"]
    if "trtllm" in image:
        args = ["--model-id", "/data/", "--tokenizer-name", "meta-llama/Llama-3.1-8B-Instruct"]
    result = lint(_pod(image, args, resources), defaults=Defaults(gpu="h100"))
    kv004 = [f for f in result.findings if f.rule == "KV004"]
    assert len(kv004) == 1, [f.message for f in result.findings]
    assert why in kv004[0].message and "not checked" in kv004[0].message
    assert kv004[0].where.line == 7  # the image line
    assert not [f for f in result.findings if f.rule.startswith("KV1") or f.rule == "KV005"]
    assert all(r.plan is None for r in result.deployments)


def _rocm_plan(image: str, env: str = ""):
    text = _pod(image, ["--model-id", "meta-llama/Llama-3.1-8B-Instruct"], "amd.com/gpu: 1", env)
    result = lint(text, defaults=Defaults(gpu="mi300x"))
    assert not [f for f in result.findings if f.rule == "KV004"]
    (r,) = result.deployments
    return r


def test_rocm_is_priced_as_the_cuda_server_with_its_images_paged_attention():
    """Dockerfile_amd sets ATTENTION=paged from v2.3.1: blocks of 16, named in the plan; the rest is
    the CUDA server's warm-up (utils/import_utils.py: SYSTEM rocm takes get_cuda_free_memory)."""
    r = _rocm_plan("ghcr.io/huggingface/text-generation-inference:3.3.5-rocm")
    assert r.plan is not None and r.plan.block_size == 16
    assert r.plan.kv_tokens % 16 == 0
    assert any("ATTENTION=paged" in line and "Dockerfile_amd" in line for line in r.plan.lines)
    cuda = _rocm_plan("ghcr.io/huggingface/text-generation-inference:3.3.5")
    assert cuda.plan is not None and cuda.plan.block_size == 1  # flashinfer, the launcher's default
    # the same memory model: pools within one block of 16 of each other
    assert abs(cuda.plan.kv_tokens - r.plan.kv_tokens) < 16 + 1


def test_a_stated_attention_env_wins_and_a_bad_one_is_kv005():
    env = "    env: [{name: ATTENTION, value: flashdecoding}]\n"
    r = _rocm_plan("ghcr.io/huggingface/text-generation-inference:3.3.5-rocm", env)
    assert r.plan is not None and r.plan.block_size == 256
    bad = "    env: [{name: ATTENTION, value: flash}]\n"
    text = _pod("ghcr.io/huggingface/text-generation-inference:3.3.5", ["--model-id", "x/y"], env=bad)
    assert [f.where.line for f in lint(text).findings if f.rule == "KV005"] == [9]  # the env line


def test_attention_default_follows_the_launchers_resolve_attention():
    """launcher/src/main.rs resolve_attention (v2.3.1-v3.3.7): flashinfer for head sizes 64/128/256,
    else "paged" below compute capability 8 and "flashdecoding" from 8; falcon falls back too."""
    h100, t4 = lookup("H100"), lookup("T4")
    llama = model("meta-llama/Llama-3.1-8B-Instruct").arch
    falcon = model("tiiuae/falcon-7b").arch
    assert resolve_attention((3, 3, 5), llama, h100, None)[0] == "flashinfer"
    assert resolve_attention((3, 3, 5), falcon, h100, None)[0] == "flashdecoding"
    assert resolve_attention((3, 3, 5), falcon, t4, None)[0] == "paged"
    assert resolve_attention((2, 3, 0), falcon, t4, None)[0] == "flashdecoding"  # v2.3.0: no GPU check
    assert resolve_attention((2, 2, 0), llama, h100, None)[0] == "paged"  # no ATTENTION before v2.3
    assert tgi.block_size((3, 3, 5), "flashdecoding") == 256
    assert tgi.block_size((2, 2, 0), "flashinfer") == 16


def test_gemma2_falls_back_through_v2_3_1_and_takes_flashinfer_from_v2_4_0():
    """resolve_attention matches `Some("gemma2") | Some("falcon") | Some("deepseek_v2")` in v2.3.0 and
    v2.3.1 (launcher/src/main.rs:97 @v2.3.1) and only falcon | deepseek_v2 from v2.4.0: GKE's TGI 2.3 build
    (cu124.2-3, from the v2.3.1 tag) serves Gemma 2 with flashdecoding's 256-token blocks."""
    l4 = lookup("L4")
    gemma2 = model("google/gemma-2-27b-it").arch
    assert resolve_attention((2, 3, 1), gemma2, l4, None)[0] == "flashdecoding"
    assert resolve_attention((2, 3), gemma2, l4, None)[0] == "flashdecoding"  # a 2.3 tag floats to 2.3.1
    assert resolve_attention((2, 4, 0), gemma2, l4, None)[0] == "flashinfer"


def test_llamacpp_backend_reads_its_own_options_and_says_what_it_holds():
    """backends/llamacpp/src/main.rs: n_ctx = max_batch_total_tokens, else max_batch_size x
    max_total_tokens; --n-gpu-layers 0 (default) keeps everything in host memory."""
    args = ["--model-id", "Qwen/Qwen2.5-3B-Instruct", "--n-gpu-layers", "99", "--max-batch-size", "4"]
    result = lint(_pod("tgi-llamacpp", args))
    (kv004,) = [f for f in result.findings if f.rule == "KV004"]
    assert "n_ctx = 8,192 cells (max_batch_size 4 x max_total_tokens 2,048 (default))" in kv004.message
    assert "99 layers on the GPU" in kv004.message
    # Qwen2.5-3B: 36 layers, 2 KV heads of 128; f16 K and V: 8,192 x 36 x 2 x 128 x 4 B = 0.28 GiB
    assert "8,192 cells x 36 layers x 2 KV heads x 128 x (2 + 2 B, f16/f16) = 0.28 GiB" in kv004.message
    q8 = lint(_pod("tgi-llamacpp", [*args, "--type-k", "q8-0", "--n-gpu-layers", "10"]))  # clap's kebab-case
    (kv004,) = [f for f in q8.findings if f.rule == "KV004"]
    assert "x 10 layers x" in kv004.message and "(1.0625 + 2 B, q8-0/f16)" in kv004.message
    bad = lint(_pod("tgi-llamacpp", [*args, "--type-v", "fp8"]))
    (kv005,) = [f for f in bad.findings if f.rule == "KV005"]
    assert "--type-v 'fp8' is not one of its types" in kv005.message
    assert not [f for f in bad.findings if "KV cache on the GPU" in f.message]  # not priced as f16
    assert not [f for f in result.findings if f.rule == "KV005"]  # --n-gpu-layers is its option
    cpu = lint(_pod("tgi-llamacpp", ["--model-id", "Qwen/Qwen2.5-3B-Instruct"]))
    (kv004,) = [f for f in cpu.findings if f.rule == "KV004"]
    assert "--n-gpu-layers 0 (its default)" in kv004.message and "the container's CPU count" in kv004.message


def test_silogen_tgi_chart_on_rocm_is_read_and_priced():
    """silogen/ai-workloads llm-inference-tgi values (corpus excerpt): `image: …:3.0.2-rocm`, `model`,
    `gpus: 1`; the chart runs `/tgi-entrypoint.sh … --model-id=<model> --num-shard=<gpus>`
    (templates/_entrypoint.tpl). On an MI300X it is TGI 3.0.2's CUDA-server warm-up with the ROCm
    image's paged attention."""
    from kvlint.run.lint import lint_text

    path = carried("silogen__ai-workloads__workloads__llm-inference-tgi__helm__values.yaml")
    result = lint_text(path.read_bytes(), str(path), Settings(defaults=Defaults(gpu="mi300x")), ".")
    (r,) = result.deployments
    d = r.deployment
    assert (d.engine_name, d.engine_version.value, d.model.value) == (
        "tgi",
        "3.0.2",
        "TinyLlama/TinyLlama-1.1B-Chat-v1.0",
    )
    assert d.tensor_parallel.value == 1 and d.tensor_parallel.where.line == 8  # `gpus: 1`
    assert r.plan is not None and r.plan.block_size == 16
    assert any("block 16: ATTENTION=paged, set by the TGI ROCm image" in line for line in r.plan.lines)
    assert not [f for f in result.findings if f.rule in ("KV004", "KV005")]


def test_prefix_caching_with_paged_attention_is_refused_where_it_is_set():
    """globals.py: prefix caching runs only with flashinfer / flashdecoding (/ flashdecoding-ipex from v3.1);
    on the ROCm image (ATTENTION=paged) a stated PREFIX_CACHING=1 stops the server: a KV005 at the env
    value, no plan. With the CUDA image's flashinfer it plans."""
    env = "    env: [{name: PREFIX_CACHING, value: '1'}]\n"
    args = ["--model-id", "meta-llama/Llama-3.1-8B-Instruct"]
    rocm = lint(
        _pod("ghcr.io/huggingface/text-generation-inference:3.3.5-rocm", args, "amd.com/gpu: 1", env),
        defaults=Defaults(gpu="mi300x"),
    )
    (kv005,) = [f for f in rocm.findings if f.rule == "KV005"]
    assert "Prefix caching is only supported with flashinfer" in kv005.message and kv005.where.line == 9
    assert rocm.deployments[0].plan is None
    cuda = lint(
        _pod("ghcr.io/huggingface/text-generation-inference:3.3.5", args, env=env),
        defaults=Defaults(gpu="h100"),
    )
    assert cuda.deployments[0].plan is not None and not [f for f in cuda.findings if f.rule == "KV005"]


@pytest.mark.parametrize("tag", ["2.3.1-rocm", "2.3-rocm"])
def test_the_rocm_image_sets_paged_attention_from_v2_3_1(tag):
    """Dockerfile_amd gained `ENV ATTENTION=paged` / `ENV USE_PREFIX_CACHING=0` in v2.3.1 (PR #2579,
    f9e561ec; v2.3.0's has neither), so a 2.3.1 ROCm image pages in blocks of 16 and refuses a stated
    USE_PREFIX_CACHING=1; a `2.3` tag is its newest patch, 2.3.1."""
    r = _rocm_plan(f"ghcr.io/huggingface/text-generation-inference:{tag}")
    assert r.plan is not None and r.plan.block_size == 16
    assert any("ATTENTION=paged" in line and "Dockerfile_amd" in line for line in r.plan.lines)
    env = "    env: [{name: USE_PREFIX_CACHING, value: '1'}]\n"
    args = ["--model-id", "meta-llama/Llama-3.1-8B-Instruct"]
    image = f"ghcr.io/huggingface/text-generation-inference:{tag}"
    refused = lint(_pod(image, args, "amd.com/gpu: 1", env), defaults=Defaults(gpu="mi300x"))
    (kv005,) = [f for f in refused.findings if f.rule == "KV005"]
    assert "Prefix caching is only supported with flashinfer" in kv005.message and kv005.where.line == 9


def test_the_rocm_image_before_v2_3_1_sets_no_attention():
    r = _rocm_plan("ghcr.io/huggingface/text-generation-inference:2.3.0-rocm")
    assert not any("Dockerfile_amd" in line for line in r.plan.lines)


@pytest.mark.parametrize("value", ["PAGED", "FlashInfer"])
def test_attention_is_matched_as_written(value):
    """globals.py compares os.environ["ATTENTION"] as written (`assert ATTENTION in _expected`), so an
    upper-case spelling stops the server: KV005 at the env line, not a plan with that backend's blocks."""
    env = f"    env: [{{name: ATTENTION, value: {value}}}]\n"
    text = _pod("ghcr.io/huggingface/text-generation-inference:3.3.5", ["--model-id", "x/y"], env=env)
    assert [f.where.line for f in lint(text).findings if f.rule == "KV005"] == [9]


def test_google_cloud_tgi_containers_carry_the_release_in_their_name():
    """Google Cloud's TGI containers name CUDA then TGI major-minor (`…-cu124.2-3.ubuntu2204.py311` is built
    from TGI v2.3.1: huggingface/Google-Cloud-Containers@8d6aa78b containers/tgi/README.md, gpu/2.3.1/Dockerfile).
    The corpus' GKE samples run them untagged; their release's defaults apply, not the newest's."""
    from kvlint.extract.pod.container import image_version

    dlc = "us-docker.pkg.dev/deeplearning-platform-release/gcr.io/huggingface-text-generation-inference-"
    assert image_version(dlc + "cu124.2-3.ubuntu2204.py311", "tgi") == "2.3"
    assert image_version(dlc + "cu121.2-2.ubuntu2204:latest", "tgi") == "2.2"
    assert image_version(dlc + "cu121.1-4.ubuntu2204.py310", "tgi") == "1.4"
    assert image_version(dlc + "cu124.2-3.ubuntu2204.py311", "vllm") is None
    assert backend_of_image(dlc + "tpu.0.2.3.py310")[0] == "tpu"
    # a GKE sample's way (kubernetes-engine-samples ai-ml/llm-multiple-gpus): the settings in TGI's env
    env = "    env: [{name: MODEL_ID, value: tiiuae/falcon-40b-instruct}, {name: NUM_SHARD, value: '2'}]\n"
    (r,) = lint(_pod(dlc + "cu121.1-4.ubuntu2204.py310", [], "nvidia.com/gpu: 2", env)).deployments
    assert r.deployment.engine_version.value == "1.4"
    assert r.in_force.max_context.value == 2048 and "TGI v1 default" in r.in_force.max_context.note


def test_unchunked_prefill_below_the_input_limit_is_refused_by_the_router():
    """backends/v3/src/main.rs (v2.4.0-v3.3.7): `max_input_tokens > max_batch_prefill_tokens &&
    !support_chunking` stops the router. On the ROCm image (paged attention, no chunking) a stated
    --max-total-tokens 8192 leaves max_input_tokens 8,191 against the default prefill budget of 4,096;
    the CUDA image chunks prefills and starts."""
    args = ["--model-id", "meta-llama/Llama-3.1-8B-Instruct", "--max-total-tokens", "8192"]
    rocm = lint(
        _pod("ghcr.io/huggingface/text-generation-inference:3.3.5-rocm", args, "amd.com/gpu: 1"),
        defaults=Defaults(gpu="mi300x"),
    )
    (kv205,) = [f for f in rocm.findings if f.rule == "KV205"]
    assert "Given: 4,096" in kv205.message and "8,191" in kv205.message and kv205.where.line == 8
    assert "ATTENTION=paged does not chunk prefills" in kv205.message
    cuda = lint(
        _pod("ghcr.io/huggingface/text-generation-inference:3.3.5", args), defaults=Defaults(gpu="h100")
    )
    assert not [f for f in cuda.findings if f.rule == "KV205"]
