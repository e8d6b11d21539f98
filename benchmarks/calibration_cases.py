"""Calibration logs -> kvlint deployments, per engine (used by accuracy.py; a script helper, not a test).

Each builder turns one logged start-up into the Deployment its log describes (model, GPU,
parallelism, the settings the log states, the version it printed) and returns the figures the
log states, in GiB and tokens, for accuracy.py to compare with kvlint's plan.
"""

from __future__ import annotations

from pathlib import Path

from kvlint.catalog import gpus as gpu_catalog
from kvlint.catalog import models as model_catalog
from kvlint.deployment import Deployment, stated
from kvlint.engines.llamacpp import ollama_tags
from kvlint.findings import Location

HERE = Path(__file__).resolve().parent
DATA = HERE / "calibration"


def load_yaml(path: Path):
    from kvlint.load import load_bytes
    from kvlint.load.tree import to_plain

    loaded = load_bytes(path.read_bytes(), str(path), 64 * 1024 * 1024)
    if loaded.issues:
        raise SystemExit(f"{path}: {loaded.issues[0].message}")
    return to_plain(loaded.documents[0].root, [10_000_000])


def model_ref(text: str) -> str | None:
    head = text.split(" (")[0].strip()
    found = model_catalog.resolve(head)
    # A model matched only by its name (KV007) carries its base's facts: not an exact reference for
    # checking the engine accounting, so such cases are kept out of the fit/scored figures and
    # scored on their own line instead (named_ref, accuracy.py "matched by name").
    return head if found.arch is not None and not found.derived else None


def named_ref(text: str) -> str | None:
    """The id of a model kvlint resolves only by a name rule (kvlint/catalog/derived.py: a quantized
    or republished copy priced from its catalogued base), else None."""
    head = text.split(" (")[0].strip()
    found = model_catalog.resolve(head)
    return head if found.arch is not None and found.derived else None


def gpu_ref(text: str | None) -> str | None:
    if not text or "+" in text:
        return None  # heterogeneous GPUs in one deployment: not modelled
    head = text.split(" (")[0].strip()
    for candidate in (head, *head.split()):
        if gpu_catalog.lookup(candidate) is not None:
            return candidate
    return None


def quant_of(text: str | None) -> str | None:
    if not text:
        return None
    t = text.lower()
    if any(k in t for k in ("checkpoint", "compressed", "marlin", "mxfp4", "awq")):
        return None  # the checkpoint's own quantization_config says it
    return t.split()[0]


def _base(case: dict, engine: str, version: str | None) -> tuple[Deployment | None, str]:
    """The deployment every engine's case starts from: the engine (at `version`, when known), model, GPU,
    parallelism, dtype and quantization the case states; or None and why it cannot be planned."""
    ref = model_ref(case["model"]) or named_ref(case["model"])
    if ref is None:
        return None, f"model {case['model']!r} not in the catalog"
    gpu = gpu_ref(case.get("gpu"))
    if gpu is None:
        return None, f"GPU {case.get('gpu')!r} not resolvable"
    where = Location(case["id"], 1, 1)
    d = Deployment(case["id"], where, "calibration", case["id"])
    d.engine = stated(engine, where)
    if version:
        d.engine_version = stated(version, where)
    d.model = stated(ref, where)
    d.gpu = stated(gpu, where)
    if case.get("gpus"):  # the GPUs the run saw (llama.cpp splits its layers over them)
        d.gpus = stated(int(case["gpus"]), where)
    for key, attr in (
        ("tensor_parallel_size", "tensor_parallel"),
        ("pipeline_parallel_size", "pipeline_parallel"),
    ):
        if case.get(key):
            setattr(d, attr, stated(int(case[key]), where))
    if case.get("dtype"):
        d.dtype = stated(case["dtype"], where)
    q = quant_of(case.get("quantization"))
    if q:
        d.quantization = stated(q, where)
    return d, ""


# vLLM releases by the date of their version-bump commit in vllm-project/vllm (vllm/__init__.py):
# 1af090b 0.3.0, 5f08050 0.3.1, 8fbd84b 0.3.2, 82091b8 0.3.3, 430530f 0.4.0, 221d93e 0.4.1.
V0_RELEASES = (
    ("2024-01-31", "0.3.0"),
    ("2024-02-16", "0.3.1"),
    ("2024-02-21", "0.3.2"),
    ("2024-03-01", "0.3.3"),
    ("2024-03-29", "0.4.0"),
    ("2024-04-19", "0.4.1"),
)


def vllm_version(case: dict) -> str | None:
    """The version the log printed; V0/V1 logs without one get a release of that log format. A V0
    log with neither a version nor a log format, dated while the releases above were current, gets
    the release an unpinned `pip install vllm` gave on that day (the newest one bumped before it)."""
    version = case.get("engine_version")
    gen = str(case.get("engine_generation") or "")
    if version:
        return str(version).split("+")[0].split("rc")[0]
    date = str(case.get("date") or "")[:10]
    if gen == "V0" and V0_RELEASES[0][0] <= date < V0_RELEASES[-1][0]:
        return [v for day, v in V0_RELEASES if day <= date][-1]
    if gen.startswith("V0"):
        return "0.6.4"  # the V0 log format of ~0.6.4 (the case says V0)
    if gen.startswith("V1"):
        return "0.10.0"  # a V1 release before CUDA-graph profiling
    return None


def with_facts(case: dict, facts: dict) -> dict:
    """The case with what benchmarks/calibration/vllm_case_facts.yaml adds to it from the same source."""
    extra = facts.get(case.get("id")) or {}
    merged = dict(case)
    for key in ("engine_version", "gpu", "env"):
        if extra.get(key) is not None:
            merged[key] = extra[key]
    return merged


def build_vllm(case: dict, version: str | None) -> tuple[Deployment | None, str]:
    d, why = _base(case, "vllm", version)
    if d is None:
        return None, why
    where = d.where
    for name, value in (case.get("env") or {}).items():
        d.extra[str(name)] = stated(str(value), where)
    s = case.get("settings") or {}
    for key, attr in (
        ("gpu_memory_utilization", "gpu_memory_utilization"),
        ("max_model_len", "max_context"),
        ("max_num_seqs", "max_sequences"),
        ("max_num_batched_tokens", "max_batched_tokens"),
        ("block_size", "block_size"),
        ("enforce_eager", "enforce_eager"),
    ):
        if s.get(key) is not None:
            setattr(d, attr, stated(s[key], where))
    if case.get("kv_cache_dtype"):
        d.kv_cache_dtype = stated(case["kv_cache_dtype"], where)
    return d, ""


def build_sglang(case: dict, version: str | None) -> tuple[Deployment | None, str]:
    d, why = _base(case, "sglang", version)
    if d is None:
        return None, why
    where = d.where
    s = case.get("settings") or {}
    if case.get("dp_size"):
        d.data_parallel = stated(int(case["dp_size"]), where)
    for key, attr in (
        ("context_length", "max_context"),
        ("max_running_requests", "max_sequences"),
        ("page_size", "block_size"),
    ):
        if s.get(key) is not None:
            setattr(d, attr, stated(s[key], where))
    for key in (
        "mem_fraction_static",
        "chunked_prefill_size",
        "max_total_tokens",
        "enable_dp_attention",
        "speculative_algorithm",
        "cuda_graph_max_bs",
        "enable_piecewise_cuda_graph",
        "disable_piecewise_cuda_graph",
        "piecewise_cuda_graph_max_tokens",
    ):
        if s.get(key) is not None:
            d.extra[key] = stated(s[key], where)
    if s.get("kv_cache_dtype") and s["kv_cache_dtype"] != "auto":
        d.kv_cache_dtype = stated(s["kv_cache_dtype"], where)
    return d, ""


def build_tgi(case: dict, version: str | None) -> tuple[Deployment | None, str]:
    d, why = _base(case, "tgi", version)
    if d is None:
        return None, why
    where = d.where
    s = case.get("settings") or {}
    if s.get("max_total_tokens") is not None:
        d.max_context = stated(s["max_total_tokens"], where)
    if s.get("max_concurrent_requests") is not None:
        d.max_sequences = stated(s["max_concurrent_requests"], where)
    for key in ("max_input_tokens", "max_batch_prefill_tokens", "cuda_memory_fraction"):
        if s.get(key) is not None:
            d.extra[key] = stated(s[key], where)
    if s.get("gpu_memory_in_use_bytes"):
        # memory the log says other processes held before TGI started (TGI measures free memory)
        d.extra["gpu_memory_in_use"] = stated(int(s["gpu_memory_in_use_bytes"]), where)
    return d, ""


def build_llamacpp(case: dict, version: str | None) -> tuple[Deployment | None, str]:
    """A llama-server (or Ollama) start-up: the cells, slots, flash attention, offload and cache types the log
    states (benchmarks/calibration/llamacpp_startup_logs.yaml)."""
    d, why = _base(case, "llamacpp", version)
    if d is None:
        return None, why
    where = d.where
    s = case.get("settings") or {}
    if s.get("ollama"):
        d.extra["llamacpp_server"] = stated("ollama", where)
        d.max_context = stated(int(s["num_ctx"]), where)
        d.max_sequences = stated(int(s["num_parallel"]), where)
        if s.get("ollama_tag"):  # the GGUF file type the library tag pulls (kvlint's Ollama tag table)
            tag, why = ollama_tags.resolve(str(s["ollama_tag"]))
            if tag is None:
                return None, why
            d.extra["gguf_file_type"] = stated(tag.file_type, where)
    else:
        d.max_context = stated(int(s["n_ctx"]), where)
        if s.get("n_parallel") is not None:
            d.max_sequences = stated(int(s["n_parallel"]), where)
        if s.get("n_gpu_layers") is not None:
            d.extra["n_gpu_layers"] = stated(str(s["n_gpu_layers"]), where)
        if s.get("n_ubatch") is not None:
            d.extra["n_ubatch"] = stated(int(s["n_ubatch"]), where)
        if s.get("tensor_split"):
            d.extra["tensor_split"] = stated(str(s["tensor_split"]), where)
        if s.get("split_mode"):  # --split-mode (layer, the default; row: no pipeline)
            d.extra["split_mode"] = stated(str(s["split_mode"]), where)
    if s.get("flash_attn") is not None:
        d.extra["flash_attn"] = stated(str(s["flash_attn"]), where)
    if s.get("cache_type_k"):
        d.kv_cache_dtype = stated(str(s["cache_type_k"]), where)
    if s.get("cache_type_v"):
        d.extra["cache_type_v"] = stated(str(s["cache_type_v"]), where)
    if s.get("gguf_file_type"):  # the file type the log's loader prints (`file type = Q4_K - Medium`)
        d.extra["gguf_file_type"] = stated(str(s["gguf_file_type"]).lower(), where)
    return d, ""


def build_lmdeploy(case: dict, version: str | None) -> tuple[Deployment | None, str]:
    """An `lmdeploy serve api_server` start-up: the backend and the TurboMind / PyTorch engine settings the log
    states (benchmarks/calibration/lmdeploy_startup_logs.yaml)."""
    d, why = _base(case, "lmdeploy", version)
    if d is None:
        return None, why
    where = d.where
    s = case.get("settings") or {}
    if case.get("backend"):
        d.extra["backend"] = stated(str(case["backend"]), where)
    for key, attr in (
        ("session_len", "max_context"),
        ("max_batch_size", "max_sequences"),
        ("cache_block_seq_len", "block_size"),
    ):
        if s.get(key) is not None:
            setattr(d, attr, stated(int(s[key]), where))
    if s.get("quant_policy") is not None:
        d.kv_cache_dtype = stated(str(s["quant_policy"]), where)
    for key in ("cache_max_entry_count", "max_prefill_token_num"):
        if s.get(key) is not None:
            d.extra[key] = stated(s[key], where)
    return d, ""


def build_trtllm(case: dict, version: str | None) -> tuple[Deployment | None, str]:
    """A trtllm-serve (LLM API, PyTorch backend) start-up: the batch, token and length limits, the memory
    fraction, the block size and the KV dtype the log states (benchmarks/calibration/trtllm_startup_logs.yaml)."""
    d, why = _base(case, "trtllm", version)
    if d is None:
        return None, why
    where = d.where
    s = case.get("settings") or {}
    for key, attr in (
        ("max_batch_size", "max_sequences"),
        ("max_num_tokens", "max_batched_tokens"),
        ("max_seq_len", "max_context"),
        ("free_gpu_memory_fraction", "gpu_memory_utilization"),
        ("tokens_per_block", "block_size"),
        ("kv_cache_dtype", "kv_cache_dtype"),
    ):
        if s.get(key) is not None:
            setattr(d, attr, stated(s[key], where))
    if s.get("backend"):  # trtllm-serve --backend (pytorch, or trt: a trtllm-build engine directory)
        d.extra["backend"] = stated(str(s["backend"]), where)
    if s.get("ep_size"):
        d.extra["moe_expert_parallel_size"] = stated(int(s["ep_size"]), where)
    if s.get("max_tokens"):
        d.extra["kv_max_tokens"] = stated(int(s["max_tokens"]), where)
    return d, ""


def logged(engine: str, case: dict) -> dict[str, float]:
    """The figures a log states, as accuracy.py compares them: weights, kv (GiB), tokens."""
    m = case.get("measured") or {}
    out: dict[str, float] = {}
    if engine in LLAMACPP_SERVERS:
        for key, name in (("kv_cache_mib", "kv"), ("compute_mib", "compute"), ("weights_mib", "weights")):
            if m.get(key) is not None:
                out[name] = float(m[key]) / 1024
        if m.get("n_ctx") is not None:
            out["tokens"] = float(m["n_ctx"])
        return out
    if engine == "lmdeploy":
        if m.get("max_block_count") is not None:
            out["tokens"] = float(m["max_block_count"]) * float(m.get("block_len") or 64)
            if m.get("block_mib") is not None:
                out["kv"] = float(m["max_block_count"]) * float(m["block_mib"]) / 1024
        return out
    if engine == "trtllm":
        # free_after_engine_gib: the engine-build path's "available" that the fraction is taken of
        for key, name in (
            ("weights_gib", "weights"),
            ("kv_cache_gib", "kv"),
            ("kv_tokens", "tokens"),
            ("free_after_engine_gib", "free"),
        ):
            if m.get(key) is not None:
                out[name] = float(m[key])
        return out
    if engine in VLLM_SETS:
        for key, name in (("weights_gib", "weights"), ("kv_cache_gib", "kv"), ("kv_cache_tokens", "tokens")):
            if m.get(key) is not None:
                out[name] = float(m[key])
        return out
    if m.get("weights_gib") is not None:
        out["weights"] = float(m["weights_gib"])
    tokens_key = "max_total_num_tokens" if engine == "sglang" else "max_batch_total_tokens"
    if m.get(tokens_key) is not None:
        out["tokens"] = float(m[tokens_key])
    if m.get("k_size_gib") is not None:
        out["kv"] = float(m["k_size_gib"]) + float(m.get("v_size_gib") or m["k_size_gib"])
    if m.get("max_mamba_cache_size") is not None:  # "Mamba Cache is allocated. max_mamba_cache_size: N"
        out["slots"] = float(m["max_mamba_cache_size"])
    return out


ENGINES = {
    "vllm": {"key": "cases", "build": build_vllm, "version": vllm_version},
    "sglang": {"key": "sglang_cases", "build": build_sglang, "version": lambda c: c.get("engine_version")},
    "tgi": {"key": "tgi_cases", "build": build_tgi, "version": lambda c: c.get("engine_version")},
    "llamacpp": {
        "key": "llamacpp_cases",
        "build": build_llamacpp,
        "version": lambda c: c.get("engine_version"),
    },
    # Ollama runs llama.cpp's runner (kvlint.engines.llamacpp), scored on its own rows from its own logs
    "ollama": {
        "key": "ollama_cases",
        "build": build_llamacpp,
        "version": lambda c: c.get("engine_version"),
    },
    "lmdeploy": {
        "key": "lmdeploy_cases",
        "build": build_lmdeploy,
        "version": lambda c: c.get("engine_version"),
    },
    "trtllm": {"key": "trtllm_cases", "build": build_trtllm, "version": lambda c: c.get("engine_version")},
    # vLLM on TPU chips (kvlint.engines.vllm.tpu), scored on its own rows from its own logs
    "vllm-tpu": {"key": "vllm_tpu_cases", "build": build_vllm, "version": lambda c: c.get("engine_version")},
}
VLLM_SETS = ("vllm", "vllm-tpu")  # the calibration sets planned by kvlint.engines.vllm
LLAMACPP_SERVERS = ("llamacpp", "ollama")  # the calibration sets planned by kvlint.engines.llamacpp
