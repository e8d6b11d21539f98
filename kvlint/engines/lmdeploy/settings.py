"""LMDeploy's settings in force: what the deployment states, the release's defaults for the rest
(data/releases.json; every default applied is named in `in_force`).

Defaults (InternLM/lmdeploy, the tag named in each row): --backend turbomind (lmdeploy/cli/utils.py
ArgumentHelper.backend `default='turbomind'`), --tp 1 (ArgumentHelper.tp), --session-len the model's
maximum length (lmdeploy/utils.py _get_and_verify_max_len: the smallest of max_position_embeddings,
seq_length, … in the model's config; v0.7.0 src/turbomind/triton_backend/llama/LlamaTritonModel.cc:106-108
"`session_len` is not set, default to %d"), --quant-policy 0, --dtype auto.
"""

from __future__ import annotations

from typing import Any

from kvlint.capacity.plan import EngineSettings, default_label
from kvlint.catalog.arch import ModelArch
from kvlint.catalog.gpus import GpuSpec
from kvlint.deployment import Deployment, Value, default
from kvlint.engines import native
from kvlint.engines.base import SettingRefused
from kvlint.engines.filling import Filling
from kvlint.engines.lmdeploy.releases import default as release_default
from kvlint.engines.lmdeploy.releases import parse_version

BACKENDS = ("turbomind", "pytorch")  # lmdeploy/cli/utils.py ArgumentHelper.backend choices
# --quant-policy as written (a number, or from v0.14.0 a QuantPolicy name) -> (policy, kvlint's KV dtype)
POLICIES = {
    "0": (0, "auto"),
    "none": (0, "auto"),
    "auto": (0, "auto"),
    "4": (4, "int4"),
    "int4": (4, "int4"),
    "8": (8, "int8"),
    "int8": (8, "int8"),
    "16": (16, "fp8"),
    "fp8": (16, "fp8"),
    "fp8_e4m3": (16, "fp8"),
    "17": (17, "fp8_e5m2"),
    "fp8_e5m2": (17, "fp8_e5m2"),
}
DTYPES = ("auto", "float16", "bfloat16")  # lmdeploy/cli/utils.py ArgumentHelper.dtype choices


def _text(v: Value | None) -> str:
    return str(v.value).strip().lower() if v is not None else ""


def _backend(f: Filling) -> str:
    said = f.options.get("backend")
    if said is None:
        f.options["backend"] = default(
            "turbomind", "LMDeploy default --backend turbomind (lmdeploy/cli/utils.py)"
        )
        return "turbomind"
    name = _text(said)
    if name not in BACKENDS:
        raise SettingRefused(
            f"LMDeploy: --backend {said.value!r} is not one of {', '.join(BACKENDS)}; the api_server's parser"
            " stops ('argument --backend: invalid choice')",
            said.where,
        )
    return name


def _policy(f: Filling, version: tuple[int, ...] | None, version_text: str | None) -> tuple[int, str]:
    """(quant_policy, KV dtype) from --quant-policy (kv_cache_dtype), checked against the release's choices."""
    said = f.kv_cache_dtype
    if said is None:
        f.kv_cache_dtype = default("auto", "LMDeploy default --quant-policy 0 (no KV quantization)")
        return 0, "auto"
    found = POLICIES.get(_text(said))
    allowed = release_default("kv_policies", version_text)
    if found is None or found[0] not in list(allowed.value):  # type: ignore[call-overload]
        raise SettingRefused(
            f"LMDeploy: --quant-policy {said.value!r} is not one the release accepts"
            f" ({', '.join(str(p) for p in allowed.value)}; {allowed.source})",  # type: ignore[attr-defined]
            said.where,
        )
    policy, dtype = found
    if policy == 4 and version is not None and version < (0, 4):
        policy, dtype = (
            8,
            "int8",
        )  # before v0.4.0, 4 was the int8 KV cache (v0.3.0 cli/utils.py:132 'kv int8')
    return policy, dtype


def _fraction(f: Filling, version: tuple[int, ...] | None, version_text: str | None) -> float:
    said = f.options.get("cache_max_entry_count")
    if said is None:
        row = release_default("cache_max_entry_count", version_text)
        f.options["cache_max_entry_count"] = default(
            row.value, f"LMDeploy default --cache-max-entry-count {row.value} ({row.source})"
        )
        return float(row.value)  # type: ignore[arg-type]
    value = float(said.value)
    if not 0 < value < 1 and (version is None or version >= (0, 4, 1)):
        raise SettingRefused(
            f"LMDeploy: --cache-max-entry-count {said.value} is not between 0 and 1; the engine config refuses it"
            " (lmdeploy/messages.py TurbomindEngineConfig.__post_init__ `assert self.cache_max_entry_count > 0"
            " and self.cache_max_entry_count < 1, 'invalid cache_max_entry_count'`, from v0.4.1)",
            said.where,
        )
    return value


def _batch(f: Filling, gpu: GpuSpec | None, version_text: str | None) -> int:
    if f.max_sequences is not None:
        return int(f.max_sequences.value)
    row = release_default("max_batch_size", version_text)
    table: list[Any] = list(row.value)  # type: ignore[call-overload]
    size, on = int(table[0]), "other devices"
    name = " ".join(str(n or "") for n in (gpu.name, gpu.nvidia_smi_name, gpu.id)).lower() if gpu else ""
    for word, value in table[1:]:
        if word in name:
            size, on = int(value), f"an {word.upper()}"
            break
    f.max_sequences = default(size, f"LMDeploy default --max-batch-size {size} on {on} ({row.source})")
    return size


def default_session_len(arch: ModelArch) -> Value:
    """--session-len when not stated: the smallest of the config's length keys, with no RoPE scaling applied
    (lmdeploy/utils.py _get_and_verify_max_len @v0.10.0:266-328; v0.7.0 LlamaTritonModel.cc:106-108)."""
    scaled = arch.config_positions and arch.config_positions != arch.max_positions
    if not arch.config_positions or not scaled:
        n, how = arch.max_positions, arch.max_positions_note
    else:
        n, how = (
            arch.config_positions,
            f"the config's {arch.config_positions:,}, its RoPE scaling not applied",
        )
    return default(
        n,
        f"LMDeploy default --session-len: the model's maximum length ({how}; lmdeploy/utils.py _get_and_verify_max_len)",
    )


def _release_int(key: str, version_text: str | None) -> tuple[int, str]:
    row = release_default(key, version_text)
    return int(str(row.value)), row.source


def _int_option(f: Filling, key: str, value: int, note: str) -> int:
    said = f.options.get(key)
    if said is not None and isinstance(said.value, int) and said.value > 0:
        return int(said.value)
    f.options[key] = default(value, note)
    return value


def settings(d: Deployment, arch: ModelArch, gpu: GpuSpec | None, version_text: str | None) -> EngineSettings:
    """EngineSettings for `lmdeploy serve api_server`."""
    version = parse_version(version_text)
    f = Filling.of(d)
    native.carry(f, "lmdeploy")
    backend = _backend(f)
    if f.tensor_parallel is None:
        f.tensor_parallel = default(1, "LMDeploy default --tp 1 (lmdeploy/cli/utils.py ArgumentHelper.tp)")
    if f.max_context is None:
        f.max_context = default_session_len(arch)
    dtype = _text(d.dtype) or "auto"
    if dtype not in DTYPES:
        raise SettingRefused(
            f"LMDeploy: --dtype {d.dtype.value!r} is not one of {', '.join(DTYPES)} (lmdeploy/cli/utils.py"  # type: ignore[union-attr]
            " ArgumentHelper.dtype); the parser stops",
            d.dtype.where if d.dtype is not None else d.where,
        )
    policy, kv_dtype = _policy(f, version, version_text)
    fraction = _fraction(f, version, version_text)
    batch = _batch(f, gpu, version_text)
    if f.block_size is None:
        block, source = _release_int("block_len", version_text)
        f.block_size = default(block, f"LMDeploy default --cache-block-seq-len {block} ({source})")
    tokens_, source = _release_int("prefill_tokens", version_text)
    prefill = _int_option(
        f, "max_prefill_token_num", tokens_, f"LMDeploy default --max-prefill-token-num {tokens_} ({source})"
    )
    cache_of = release_default("cache_of", version_text).value if backend == "turbomind" else "free"
    extra = {k: v.value for k, v in f.options.items()}
    extra.update(backend=backend, quant_policy=policy, cache_of=cache_of)
    return EngineSettings(
        engine="lmdeploy",
        version=version_text,
        generation=backend,
        tp=int(f.tensor_parallel.value),
        pp=1,
        dp=int(d.data_parallel.value) if d.data_parallel is not None else 1,
        max_model_len=int(f.max_context.value),
        max_num_seqs=batch,
        max_batched_tokens=prefill,
        dtype=None if dtype == "auto" else dtype,
        quantization=None,
        kv_cache_dtype=kv_dtype,
        utilization=fraction,
        utilization_default=default_label(f.options["cache_max_entry_count"], "LMDeploy"),
        block_size=int(f.block_size.value),
        enforce_eager=bool(extra.get("eager_mode")),
        hybrid_kv_cache_manager=False,
        chunked_prefill=True,
        extra=extra,
        in_force=f.in_force(),
    )


__all__ = ["settings"]
