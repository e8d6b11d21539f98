"""TGI's request-size defaults by release, from huggingface/text-generation-inference at the tags.

v1.x launcher: max_input_length 1024, max_total_tokens 2048, max_batch_prefill_tokens 4096.
v2.0.0-v2.4.0 launcher/src/main.rs: `let max_default = 4096;` caps max_position_embeddings;
    max_input_tokens = that - 1, max_total_tokens = that, max_batch_prefill_tokens = max_input_tokens
    + 50 (or --max-batch-size x max_input_tokens).
v2.4.1 on (PR #2673 "Choosing input/total tokens automatically based on available VRAM", commit
    0c9b6cdd): the launcher leaves max_input_tokens / max_total_tokens unset; the router's warm-up
    sends one prompt of the whole prefill budget with max_new_tokens 1
    (backends/v3/src/client/grpc_client.rs `warmup`), and the server's FlashCausalLM.warmup picks
    max_total_tokens when it is unset:
      prefill chunking on:  v2.4.1: num_blocks x BLOCK_SIZE; v3.0.0-v3.0.1: min(that, tokenizer
                            model_max_length); v3.0.2+: min(that, model_max_length, max_position_embeddings)
      prefill chunking off: sum(batch.cache_lengths), the warm-up batch's prompt tokens
    and max_input_tokens = max_total_tokens - 1. max_batch_prefill_tokens unset: v2.4.1
    `4096.min(max_position_embeddings)`; v3.0+ compute-optimal (tgi_launcher.launcher_defaults).
Prefill chunking (models/model.py `support_chunking and PREFILL_CHUNKING`): PREFILL_CHUNKING defaults
    to "0" in v2.4.1 and "1" from v3.0.0 (models/globals.py); off for attention other than flashinfer /
    flashdecoding (/ flashdecoding-ipex, v3.1+); off with speculation (`speculate != 0`); off for VLMs up to v3.2 (vlm_causal_lm.py "FIXME: VLM
    do not work with context chunking yet"), from v3.3 only for Gemma 3, Mllama, Qwen2-VL and
    Qwen2.5-VL (models/__init__.py `support_chunking=False`).
The tokenizer's model_max_length is not read by kvlint: where it is below the other terms TGI's
context is shorter than kvlint shows.
"""

from __future__ import annotations

from kvlint.catalog.arch import ModelArch
from kvlint.catalog.gpus import GpuSpec
from kvlint.engines.base import SettingRefused
from kvlint.engines.filling import Filling
from kvlint.engines.tgi.launcher import launcher_defaults, resolve_attention, v2_positions
from kvlint.record import record

AUTO_FROM = (2, 4, 1)  # the release whose launcher leaves max_input/max_total_tokens to the warm-up
CHUNKING_ATTENTION = ("flashinfer", "flashdecoding", "flashdecoding-ipex")
NO_CHUNKING_VLMS = ("gemma3", "mllama", "qwen2_vl", "qwen2_5_vl")  # v3.3+ models/__init__.py


@record(frozen=True)
class Settled:
    """What TGI's launcher and server settle that no option states, for its plan (`fill` below)."""

    attention: str | None = None  # the attention backend the server runs (launcher resolve_attention)
    attention_note: str | None = None  # why that one
    total_default: bool = False  # max_total_tokens unset: the server's warm-up picks it (v2.4.1 on)
    total_rule: str | None = (
        None  # how: "prefill" (no chunking) or "kv" (before v3.0.2); None: min(KV, positions)
    )
    input_unset: bool = False  # max_input_tokens unset: the warm-up sends the whole prefill as one prompt
    version_known: bool = False  # a release kvlint read (a newer one is said in the plan)


def auto_limits(version: tuple[int, ...] | None) -> bool:
    """Whether the release leaves max_total_tokens to the server's warm-up when it is unset."""
    return version is None or version >= AUTO_FROM


def prefill_chunking(
    version: tuple[int, ...] | None, arch: ModelArch, attention: str, env: str | None, speculate: int = 0
) -> tuple[bool, str]:
    """(chunking on, why not when off) as models/model.py decides it for this release."""
    default_on = version is None or version >= (3, 0)
    on = env.strip().lower() in ("1", "true") if env is not None else default_on
    if not on:
        return False, "PREFILL_CHUNKING=" + (env if env is not None else "0 (the v2.4 default)")
    if speculate:
        return False, f"--speculate {speculate}: 'Prefill chunking does not support speculation yet'"
    if attention not in CHUNKING_ATTENTION:
        return False, f"ATTENTION={attention} does not chunk prefills"
    if arch.vision_params and (version is not None and version < (3, 3) or arch.family in NO_CHUNKING_VLMS):
        return False, f"TGI serves this {arch.family} VLM without prefill chunking"
    return True, ""


def fill(
    f: Filling, arch: ModelArch, gpu: GpuSpec | None, version: tuple[int, ...] | None, fraction: float
) -> Settled:
    """Name every unset request-size limit with the release's default in the settings in force; returns
    what the server settles: the attention backend (which decides the block size) and how its limits
    were picked. Whether it chunks prefills (v2.4+) goes to `f.prefill_chunking`."""
    from kvlint.deployment import default

    assert f.tensor_parallel is not None  # settings() fills it first
    shards = int(f.tensor_parallel.value)
    said = f.options.get("attention")
    attention, attention_note = resolve_attention(
        version, arch, gpu, (said.value, said.note) if said is not None else None
    )
    _prefix_caching(f, version, attention)
    if "max_batch_prefill_tokens" not in f.options:
        stated_input = f.options["max_input_tokens"].value if "max_input_tokens" in f.options else None
        if auto_limits(version) and version is not None and version < (3, 0):
            value, note = (
                min(4096, arch.max_positions),
                "TGI v2.4.1 default max_batch_prefill_tokens = min(4096, max_position_embeddings)",
            )
        else:
            value, note = launcher_defaults(arch, gpu, version, shards, fraction, stated_input)
        batch = f.options.get("max_batch_size")
        if batch is not None and version is not None and (2, 0) <= version < AUTO_FROM:
            # v2.0-v2.4.0: `max_batch_size * max_input_tokens` when --max-batch-size is given
            max_input = stated_input or v2_positions(arch) - 1
            value, note = (
                int(batch.value) * max_input,
                "TGI v2 default max_batch_prefill_tokens = max_batch_size x max_input_tokens",
            )
        f.options["max_batch_prefill_tokens"] = default(value, note)
    if version is not None and version < (2, 0):
        _fixed(
            f, (2048, "TGI v1 default max_total_tokens 2048"), (1024, "TGI v1 default max_input_length 1024")
        )
        return Settled(attention, attention_note)
    if version is None or version >= (2, 4):
        # the v2.4+ router refuses max_input_tokens above the prefill budget when prefills are not chunked
        env = f.options.get("prefill_chunking")
        spec = f.options.get("speculate")
        speculate = spec.value if spec is not None and isinstance(spec.value, int) else 0
        chunking, why = prefill_chunking(
            version, arch, attention, env.value if env is not None else None, speculate
        )
        f.prefill_chunking = default(chunking, why)
    if not auto_limits(version):
        n = v2_positions(arch)
        _fixed(
            f,
            (
                n,
                "TGI v2.0-v2.4.0 default max_total_tokens = max_position_embeddings, capped at 4096 by the launcher",
            ),
            (n - 1, "TGI v2.0-v2.4.0 default max_input_tokens = max_position_embeddings - 1, capped at 4095"),
        )
        return Settled(attention, attention_note)
    total_default = f.max_context is None
    total_rule = _warmup_total(f, arch, version) if total_default else None
    input_unset = "max_input_tokens" not in f.options
    assert f.max_context is not None  # stated, or the warm-up's just named
    if input_unset:
        f.options["max_input_tokens"] = default(
            int(f.max_context.value) - 1, "TGI default max_input_tokens = max_total_tokens - 1"
        )
    return Settled(attention, attention_note, total_default, total_rule, input_unset)


def _warmup_total(f: Filling, arch: ModelArch, version: tuple[int, ...] | None) -> str | None:
    """max_total_tokens unset from v2.4.1: the server's warm-up picks it (named in `f.max_context`);
    returns how: "prefill" (prefills not chunked), "kv" (before v3.0.2), None (min(KV, positions))."""
    from kvlint.deployment import default

    assert f.prefill_chunking is not None  # decided for every release that leaves it to the warm-up
    chunking, why = f.prefill_chunking.value, f.prefill_chunking.note
    if not chunking:
        prefill = int(f.options["max_batch_prefill_tokens"].value)
        f.max_context = default(
            prefill,
            "TGI default max_total_tokens = the warm-up batch's prompt tokens (sum(batch.cache_lengths),"
            f" flash_causal_lm.py warmup: no prefill chunking, {why})",
        )
        return "prefill"
    if version is not None and version < (3, 0, 2):
        f.max_context = default(
            arch.max_positions,
            "TGI v2.4.1-v3.0.1 default max_total_tokens = the KV cache's tokens (num_blocks x BLOCK_SIZE;"
            " v3.0 also the tokenizer's model_max_length, not read)",
        )
        return "kv"  # not capped at max_position_embeddings before v3.0.2
    f.max_context = default(
        arch.max_positions,
        "TGI default max_total_tokens = min(what the KV cache holds, max_position_embeddings; the"
        " tokenizer's model_max_length, not read)",
    )
    return None


def _prefix_caching(f, version: tuple[int, ...] | None, attention: str) -> None:
    """models/globals.py (v2.3+): `if PREFIX_CACHING and ATTENTION not in {"flashinfer", "flashdecoding"}`
    (v3.1+ also "flashdecoding-ipex") `raise RuntimeError("Prefix caching is only supported with
    flashinfer")`; the variable is USE_PREFIX_CACHING in v2.3.x, PREFIX_CACHING from v2.4.0."""
    said = f.options.get("prefix_caching")
    if said is None or version is not None and version < (2, 3):
        return
    name = "USE_PREFIX_CACHING" if version is not None and version < (2, 4) else "PREFIX_CACHING"
    if said.note != f"env {name}" or str(said.value).lower() not in ("1", "true"):
        return
    allowed = ("flashinfer", "flashdecoding") + (
        ("flashdecoding-ipex",) if version is None or version >= (3, 1) else ()
    )
    if attention not in allowed:
        raise SettingRefused(
            f"TGI refuses {name}={said.value} with ATTENTION={attention}: 'Prefix caching is only supported with"
            f" flashinfer' (server/text_generation_server/models/globals.py; it takes {' / '.join(allowed)})",
            said.where,
        )


def _fixed(f: Filling, total: tuple[int, str], max_input: tuple[int, str]) -> None:
    from kvlint.deployment import default

    if f.max_context is None:
        f.max_context = default(*total)
    if "max_input_tokens" not in f.options:
        f.options["max_input_tokens"] = default(*max_input)
