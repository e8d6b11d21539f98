"""llama.cpp's --fit (kvlint/engines/llamacpp/autofit.py): from the builds that fit by default, an unset context
whose cache does not fit is cut to what fits (KV102 says the length it starts with); a context the user set is
kept, and fails as before; --fit off and older builds keep the old start-up."""

from __future__ import annotations

from conftest import lint

POD = """apiVersion: apps/v1
kind: Deployment
metadata: {{name: t}}
spec:
  template:
    spec:
      nodeSelector: {{cloud.google.com/gke-accelerator: nvidia-l4}}
      containers:
      - name: s
        image: ghcr.io/ggml-org/llama.cpp:server-cuda-{build}
        args: [-m, /m/Meta-Llama-3.1-8B-Instruct-Q8_0.gguf, -ngl, "99"{more}]
        resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


def _kv102(build: str, more: str = ""):
    result = lint(POD.format(build=build, more=more))
    return [f for f in result.findings if f.rule == "KV102"], result.deployments[0].plan


def test_an_unset_context_that_does_not_fit_is_cut_to_what_fits():
    # Llama 3.1 8B at Q8_0 on an L4: 131,072 cells of 128 KiB (16 GiB) do not fit beside 7.4 GiB of weights
    (f,), plan = _kv102("b7500")
    assert "starts with a maximum length of" in f.message and "context size reduced from 131072" in f.message
    assert 4096 <= plan.kv_tokens < 131072 and not plan.warmup_fails
    # the cut leaves llama.cpp's 1 GiB margin free, less the cells llama-context then pads n_ctx up by
    left = plan.budget - sum(t.bytes for t in plan.terms)
    assert left - plan.kv_pool >= (1 << 30) - 256 * plan.kv_per_token


def test_a_context_the_user_set_is_kept_and_fails():
    (f,), plan = _kv102("b7500", ', -c, "131072"')
    assert "failed to allocate buffer for kv cache" in f.message and plan.warmup_fails


def test_fit_off_and_builds_before_it_do_not_cut():
    (f,), _ = _kv102("b7500", ', --fit, "off"')
    assert "failed to allocate buffer for kv cache" in f.message
    assert _kv102("b7000")[0] == []  # its default -c is 4096, which fits
