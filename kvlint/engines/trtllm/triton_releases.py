"""Triton's TensorRT-LLM backend by release: which TensorRT-LLM release a Triton image runs, and the
config.pbtxt defaults (triton.PARAMS) that changed after v0.18.2.

Every row of triton.PARAMS was compared with inflight_batcher_llm/src at triton-inference-server/
tensorrtllm_backend v0.19.0 (the last tag that still holds the source; LATER gives each GetParameter's line
there, model_state.cc is unchanged from v0.18.2, so the conversions are the same) and with NVIDIA/TensorRT-LLM
triton_backend/inflight_batcher_llm/src/model_instance_state.cc at c8c6df08 (a commit after the move; which
release it belongs to is not stated there). Each key is still read, with the same conversion and the same
default, except enable_kv_cache_reuse: `bool enableKVCacheReuse = false` at v0.18.2 (:165) and
`= true` from v0.19.0 (:167, "enable_kv_cache_reuse is not specified, will be set to true"), still true at
c8c6df08. CHANGES holds it; a release before it keeps the v0.18.2 default (v0.17.0, v0.18.0, v0.18.1 have
false at :165 too).

Parameters v0.19.0 reads that v0.18.2 did not: num_nodes (ParallelConfig numNodes, :276), lookahead_window_size,
lookahead_ngram_size, lookahead_verification_set_size (required when decoding_mode is lookahead),
guided_decoding_backend, xgrammar_tokenizer_info_path and tokenizer_dir (guided decoding). None of them sizes
the KV cache, the batch or the weights on the GPU, so the plan is unchanged by them. The executor's
max_batch_size and max_num_tokens are still not taken from config.pbtxt (std::nullopt, :696: the engine's).

The image `nvcr.io/nvidia/tritonserver:<yy.mm>-trtllm-python-py3` ships the TensorRT-LLM release of
IMAGE_RELEASES (triton-inference-server/server docs/introduction/compatibility.md @0f963c9a, "Container Name:
trtllm-python-py3", column "TensorRT-LLM version"). An image whose tag is not there (`latest`, a digest, a
build of one's own) states no release: the newest in the table is assumed and named as assumed.
"""

from __future__ import annotations

import re

from kvlint.engines.trtllm.releases import parse_version
from kvlint.record import record

SOURCE = "triton-inference-server/server docs/introduction/compatibility.md@0f963c9a"
CHECKED = "tensorrtllm_backend v0.19.0, NVIDIA/TensorRT-LLM triton_backend@c8c6df08"
IMAGE_RELEASES: dict[str, str] = {
    "24.04": "0.9.0",
    "24.05": "0.9.0",
    "24.06": "0.10.0",
    "24.07": "0.11.0",
    "24.08": "0.12.0",
    "24.09": "0.13.0",
    "24.10": "0.14.0",
    "24.11": "0.15.0",
    "24.12": "0.16.0",
    "25.01": "0.17.0",
    "25.02": "0.17.0.post1",
    "25.03": "0.18.0",
    "25.04": "0.18.2",
    "25.05": "0.19.0",
    "25.06": "0.20.0",
    "25.07": "0.20.0",
    "25.08": "0.21.0",
    "25.09": "1.0.0",
    "25.10": "1.0.0",
    "25.11": "1.0.3.2510",
    "25.12": "1.1.0",
    "26.01": "1.1.0",
    "26.02": "1.1.0",
    "26.03": "1.2.0",
    "26.04": "1.2.1",
    "26.05": "1.2.1",
    "26.06": "1.2.1",
    "26.07": "1.2.1",
}
NEWEST = max(IMAGE_RELEASES)
# each GetParameter of triton.PARAMS in inflight_batcher_llm/src at tensorrtllm_backend v0.19.0
LATER: dict[str, str] = {
    "gpt_model_path": "model_instance_state.cc:746",
    "kv_cache_free_gpu_mem_fraction": "model_instance_state.cc:99",
    "max_tokens_in_paged_kv_cache": "model_instance_state.cc:86",
    "max_beam_width": "model_instance_state.cc:462",
    "enable_kv_cache_reuse": "model_instance_state.cc:170",
    "enable_chunked_context": "model_instance_state.cc:521",
    "max_attention_window_size": "model_instance_state.cc:144",
    "batch_scheduler_policy": "model_instance_state.cc:360",
    "gpu_weights_percent": "model_instance_state.cc:652",
    "gpu_device_ids": "model_state.cc:97",
    "gpt_model_type": "model_instance_state.cc:62",
}


@record(frozen=True)
class Change:
    """A default that changed: from `release` on, the backend uses `default` (its line `at` that tag)."""

    release: str
    default: str  # as triton.Param.default says it
    value: object  # the value the plan takes from `release` on
    before: object  # the value the plan takes before it (triton.Param.default at v0.18.2)
    at: str


CHANGES: dict[str, Change] = {
    "enable_kv_cache_reuse": Change("0.19.0", "true", True, False, "model_instance_state.cc:167@v0.19.0"),
}
_TAG = re.compile(r"^(\d{2}\.\d{2})-trtllm")


@record(frozen=True)
class Release:
    """The TensorRT-LLM release the deployment's Triton image runs, and how kvlint knows it."""

    version: str
    how: str
    stated: bool  # False: the image names no release, the newest is assumed


def release_of(image: str | None) -> Release:
    """The release of `nvcr.io/nvidia/tritonserver:<yy.mm>-trtllm-python-py3`; the newest, named as
    assumed, for an image the table does not hold."""
    if image and "@" not in image:
        repo, _, tag = image.rpartition(":")
        m = _TAG.match(tag) if "tritonserver" in repo.lower() else None
        if m is not None and m.group(1) in IMAGE_RELEASES:
            version = IMAGE_RELEASES[m.group(1)]
            return Release(
                version, f"TensorRT-LLM {version}, the release Triton {m.group(1)} ships ({SOURCE})", True
            )
    version = IMAGE_RELEASES[NEWEST]
    how = (
        f"TensorRT-LLM {version} assumed: the image names no Triton release kvlint maps, so the newest"
        f" trtllm-python-py3 image's ({NEWEST}; {SOURCE})"
    )
    return Release(version, how, False)


def changed(key: str, release: Release) -> Change | None:
    """The change of `key`'s default in force at `release` (None: the v0.18.2 default holds)."""
    c = CHANGES.get(key)
    ours, since = parse_version(release.version), parse_version(c.release) if c else None
    if c is None or ours is None or since is None or ours < since:
        return None
    return c
