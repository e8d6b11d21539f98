"""vLLM's command line and environment -> Deployment fields."""

from __future__ import annotations

import os

from kvlint.bounds import show
from kvlint.codes import UNPARSED_SETTING
from kvlint.deployment import Deployment, stated
from kvlint.engines import flag_sets
from kvlint.engines.vllm import memory_options as memory_table
from kvlint.extract.pod import adapters
from kvlint.extract.pod.argv import EnvVar, Token
from kvlint.extract.pod.engine_args import memory_options
from kvlint.extract.pod.engine_args.apply import apply, env_value, override_model, report_unknown
from kvlint.extract.pod.engine_args.options import json_value, load_table
from kvlint.findings import Issue, Location

OPTIONS = os.path.join(os.path.dirname(__file__), "data", "options.json")  # option names and kinds

MAPPING: dict[str, tuple[str, str]] = {
    "--model": ("model", "text"),
    "--tensor-parallel-size": ("tensor_parallel", "int"),
    "--pipeline-parallel-size": ("pipeline_parallel", "int"),
    "--data-parallel-size": ("data_parallel", "int"),
    "--max-model-len": ("max_context", "tokens"),
    "--max-num-seqs": ("max_sequences", "int"),
    "--max-num-batched-tokens": ("max_batched_tokens", "tokens"),
    "--gpu-memory-utilization": ("gpu_memory_utilization", "float"),
    "--dtype": ("dtype", "text"),
    "--quantization": ("quantization", "text"),
    "--kv-cache-dtype": ("kv_cache_dtype", "text"),
    "--block-size": ("block_size", "int"),
    "--enforce-eager": ("enforce_eager", "bool"),
    "--enable-chunked-prefill": ("chunked_prefill", "bool"),
    "--disable-hybrid-kv-cache-manager": ("hybrid_kv_cache_manager", "bool-inverted"),
    "--disable-sliding-window": ("disable_sliding_window", "bool"),
    "--kv-cache-memory-bytes": ("kv_cache_memory_bytes", "bytes"),
    "--enable-expert-parallel": ("expert_parallel", "bool"),
    "--swap-space": ("swap_space", "float"),
    "--cpu-offload-gb": ("cpu_offload_gb", "float"),
    "--num-gpu-blocks-override": ("num_gpu_blocks_override", "int"),
    "--num-redundant-experts": ("num_redundant_experts", "int"),
    "--distributed-executor-backend": ("distributed_executor_backend", "text"),
    "--enable-prefix-caching": ("enable_prefix_caching", "bool"),
    "--mamba-cache-mode": ("mamba_cache_mode", "text"),
    "--enable-lora": ("enable_lora", "bool"),
    "--max-loras": ("max_loras", "int"),
    "--max-lora-rank": ("max_lora_rank", "int"),
    "--performance-mode": ("performance_mode", "text"),
    "--max-cudagraph-capture-size": ("max_cudagraph_capture_size", "int"),
    "--kv-transfer-config": ("kv_transfer_config", "text"),
    "--disable-custom-all-reduce": ("disable_custom_all_reduce", "bool"),
    "--limit-mm-per-prompt": ("limit_mm_per_prompt", "text"),
    "--skip-mm-profiling": ("skip_mm_profiling", "bool"),
    "--mm-encoder-tp-mode": ("mm_encoder_tp_mode", "text"),
}
NEEDED = {
    "--model",
    "--tensor-parallel-size",
    "--pipeline-parallel-size",
    "--data-parallel-size",  # the GPUs one replica uses (KV201) and how MoE experts are split
    "--max-model-len",
    "--max-num-seqs",
    "--gpu-memory-utilization",
    "--max-num-batched-tokens",
    "--kv-cache-dtype",
    "--quantization",
    "--kv-cache-memory-bytes",  # these three change the KV pool: unreadable, no plan is made from a guess
    "--block-size",
    "--cpu-offload-gb",
}
ENV = {
    "VLLM_USE_V1": "VLLM_USE_V1",
    "VLLM_ALLOW_LONG_MAX_MODEL_LEN": "VLLM_ALLOW_LONG_MAX_MODEL_LEN",
    "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS": "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS",
    "VLLM_USE_FLASHINFER_SAMPLER": "VLLM_USE_FLASHINFER_SAMPLER",  # the profile run's sampler (vllm_sampler.py)
    "VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE": "VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE",
}


def read(
    d: Deployment,
    tokens: list[Token],
    env: dict[str, EnvVar],
    positional_model: bool = True,
    strict: bool = True,
    unknown: tuple[str, str] | None = None,
    argv: bool = True,
) -> None:
    """`strict=False` under a launcher with options of its own (Dynamo): unknown options are its.
    `unknown`: (message, fix) for an option neither has, under a launcher that ignores them.
    `argv=False`: the options are keyword arguments (Ray Serve's engine_kwargs), not read by vLLM's argparse."""
    table = load_table(OPTIONS, "vllm")
    parsed = table.parse(tokens)
    if not strict:
        parsed.unknown.clear()
    if positional_model and parsed.positionals and "--model" not in parsed.values:
        _positional_model(d, parsed.positionals[0])
    max_len = parsed.get("--max-model-len")
    if max_len and max_len[1] is not None and max_len[1].text.strip().lower() in ("auto", "-1"):
        d.extra["max_model_len_auto"] = stated(True, max_len[1].where)
        del parsed.values["--max-model-len"]
    # prefixes several options share, judged against the release in force (kvlint/engines/flag_sets.py)
    prefixes = flag_sets.ambiguous(parsed) if strict and argv and unknown is None else []
    apply(d, parsed, MAPPING, "vLLM", NEEDED, refuses=_argparse_type if argv else None)
    adapters.record(d, adapters.vllm_lora_modules(tokens))
    # vLLM's --rope-scaling / --rope-theta (older releases) are hf_overrides of one key each
    override_model(
        d,
        parsed,
        "vLLM",
        ("--hf-overrides",),
        {"--rope-scaling": "rope_scaling", "--rope-theta": "rope_theta"},
    )
    _unknown_options(d, parsed, strict, unknown, argv, prefixes)
    _capture_sizes(d, parsed, tokens)
    _compilation(d, parsed)
    _eplb(d, parsed)
    _device_and_speculation(d, parsed)
    # options whose memory the plan leaves out: said, at the option
    memory_options.report(d, parsed, memory_table.table(), "vLLM", env)
    _environment(d, env)


def _positional_model(d: Deployment, first: Token) -> None:
    """`vllm serve MODEL`: the model, or a KV005 when it is an unset variable."""
    if first.unresolved:
        d.issues.append(
            Issue(
                UNPARSED_SETTING,
                f"vLLM: model {first.text} uses an unset variable; the model is unknown",
                first.where or d.where,
                unset=tuple(first.unresolved),
            )
        )
        d.unreadable.append("model")
    else:
        d.model = stated(first.text, first.where or d.where, first.note)


def _unknown_options(
    d: Deployment, parsed, strict: bool, unknown: tuple[str, str] | None, argv: bool, prefixes: list
) -> None:
    """Options vLLM does not have: reported here under a launcher that ignores them or as keyword
    arguments (no argparse); else recorded, to be judged against the release in force when it is known
    (kvlint/engines/flag_sets.py)."""
    if unknown is not None or not argv:
        message, fix = unknown or (
            "vLLM has no option {name} (as of the versions kvlint knows); vLLM's AsyncEngineArgs refuses an"
            " unknown keyword (TypeError)",
            "remove it, or check the spelling against `vllm serve --help`",
        )
        report_unknown(d, parsed, message, fix=fix)
    elif strict:
        flag_sets.record_flags(d, "vllm", flag_sets.written(parsed) + prefixes)


def _device_and_speculation(d: Deployment, parsed) -> None:
    """`--device cpu` (0.6 to 0.9, vllm==0.9.2:vllm/engine/arg_utils.py:818) runs no GPU; a speculative
    config or model keeps a long context's prefill whole under V0 (vllm_versions.v0_long_context_chunk)."""
    device = parsed.get("--device")
    if device is not None and device[1] is not None and device[1].text.strip().lower() == "cpu":
        d.device = stated("cpu", device[1].where or d.where, "--device cpu")
    spec = parsed.get("--speculative-config") or parsed.get("--speculative-model")
    if spec is not None:
        d.extra["speculative"] = stated(True, (spec[1] or spec[0]).where or d.where, spec[0].text)


def _environment(d: Deployment, env: dict[str, EnvVar]) -> None:
    """The vLLM environment variables kvlint reads; one int() refuses stops the engine (a KV005)."""
    for name in ENV:
        tok = env_value(env, name)
        if tok is None:
            continue
        if name in INT_ENV and not _int_text(tok.text):
            d.issues.append(
                Issue(
                    UNPARSED_SETTING,
                    f"vLLM: {name}={show(tok.text, 40)!r}: vLLM reads it with int() when the sampler starts"
                    " (vllm/envs.py `bool(int(os.environ[...]))`), which raises ValueError on it; the engine stops",
                    tok.where or d.where,
                    fix=f"write {name}=0 or {name}=1",
                )
            )
            continue
        d.extra[name] = stated(tok.text, tok.where)


# read with `bool(int(os.environ[...]))` in every release kvlint knows (vllm/envs.py, 0.6.3 .. 0.33.0) when the
# CUDA sampler starts (v1/sample/ops/topk_topp_sampler.py), so a value int() refuses stops the engine
INT_ENV = frozenset({"VLLM_USE_FLASHINFER_SAMPLER"})


def _argparse_type(option: str, kind: str, value: Token) -> str | None:
    """What vLLM's argparse says of a number kvlint cannot read: the options MAPPING reads as int or float are
    typed so in every release read (add_argument type=int/float, vllm==0.6.0:vllm/engine/arg_utils.py; from
    0.8 the config fields' int/float annotations, which get_kwargs turns into type=int/float:
    vllm==0.10.1:vllm/config.py, vllm==0.33.0:vllm/config/*.py). "None" is left out: optional fields take it."""
    text = value.text.strip()
    if kind not in ("int", "float") or value.note or text in ("", "None"):
        return None
    said = show(value.text, 60)
    return (
        f"{option} {said!r} is not {'an int' if kind == 'int' else 'a number'}: vLLM's argparse reads it with"
        f" {kind}() in every release kvlint read and exits at start-up"
        f" ('error: argument {option}: invalid ... value: {said!r}')"
    )


def _int_text(text: str) -> bool:
    """Whether Python's int() takes `text` as os.environ holds it."""
    try:
        int(text)
    except ValueError:
        return False
    return True


def json_config(d: Deployment, parsed, option: str) -> tuple[dict, Location] | None:
    """A JSON option as one object: `--eplb-config '{"num_redundant_experts": 32}'` and its dotted keys
    (`--eplb-config.num_redundant_experts 32`, vLLM's FlexibleArgumentParser), where it is written; None when
    it is not. A value that is not a JSON object is a KV005: what it sets is unknown."""
    found: dict = {}
    where: Location | None = None
    hit = parsed.get(option)
    if hit is not None and hit[1] is not None:
        try:
            whole = json_value(hit[1].text)
        except ValueError:
            whole = None
        where = hit[1].where or d.where
        if not isinstance(whole, dict):
            if whole is None or option != "--compilation-config":  # a bare integer there is a level (-O3)
                d.issues.append(
                    Issue(
                        UNPARSED_SETTING,
                        f"vLLM: {option} expects a JSON object, got {hit[1].text[:60]!r}; what it sets is unknown",
                        where,
                    )
                )
            whole = {}
        found.update(whole)
    for name, (flag, value, _) in parsed.values.items():
        if name.startswith(option + ".") and value is not None:
            try:
                found[name[len(option) + 1 :]] = json_value(value.text)
            except ValueError:
                found[name[len(option) + 1 :]] = value.text
            where = where or value.where or flag.where or d.where
    return (found, where) if where is not None else None


def _compilation(d: Deployment, parsed) -> None:
    """--compilation-config's CUDA-graph capture sizes (max_cudagraph_capture_size, else the largest of
    cudagraph_capture_sizes) and cudagraph_mode NONE (no graphs, as --enforce-eager), which the plan's
    CUDA-graph estimate reads (vllm==0.33.0:vllm/config/compilation.py:610, 651, 695); the flags win."""
    read = json_config(d, parsed, "--compilation-config")
    if read is None:
        return
    config, where = read
    size = config.get("max_cudagraph_capture_size")
    sizes = config.get("cudagraph_capture_sizes")
    bad = _not_sizes(size, sizes)
    if bad is not None:
        d.issues.append(
            Issue(
                UNPARSED_SETTING,
                f"vLLM: --compilation-config {bad}: CompilationConfig takes whole numbers there"
                " (max_cudagraph_capture_size: int, cudagraph_capture_sizes: list[int];"
                " vllm==0.22.0:vllm/config/compilation.py:631, 675, a pydantic dataclass), so vLLM refuses it",
                where,
            )
        )
        d.unreadable.append("max_cudagraph_capture_size")
        return
    size = _lax_int(size)
    sizes = [_lax_int(x) for x in sizes] if isinstance(sizes, list) else None
    if size is None and sizes and all(type(x) is int for x in sizes):
        size = max(sizes)  # type: ignore[type-var]
    if type(size) is int and size > 0 and "max_cudagraph_capture_size" not in d.extra:
        d.extra["max_cudagraph_capture_size"] = stated(size, where, "--compilation-config")
    if str(config.get("cudagraph_mode", "")).upper() == "NONE" and d.enforce_eager is None:
        d.enforce_eager = stated(True, where, "--compilation-config cudagraph_mode NONE")


def _lax_int(v: object) -> int | None:
    """An int as pydantic's lax mode takes one (4, "4", 4.0); None otherwise (bools left out)."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return int(v) if isinstance(v, str) and v.strip().isdigit() else None


def _not_sizes(size: object, sizes: object) -> str | None:
    """The key and value of --compilation-config's capture sizes that are not whole numbers, or None."""
    if size is not None and not isinstance(size, bool) and _lax_int(size) is None:
        return f"max_cudagraph_capture_size {show(str(size), 40)!r}"
    if sizes is None:
        return None
    wrong = not isinstance(sizes, list) or any(not isinstance(x, bool) and _lax_int(x) is None for x in sizes)
    return f"cudagraph_capture_sizes {show(str(sizes), 40)!r}" if wrong else None


def _whole(word: str) -> int | None:
    """`word` as argparse's int reads it, or None: past 4,300 digits int() refuses (in vLLM too, which
    then exits), and some characters str.isdigit accepts (superscripts) are no digits to int()."""
    try:
        return int(word) if word.isdigit() else None
    except ValueError:
        return None


def _capture_sizes(d: Deployment, parsed, tokens: list[Token]) -> None:
    """--cudagraph-capture-sizes 1 2 4 8 (nargs '+'; vllm==0.33.0:vllm/engine/arg_utils.py:1824) and its 0.10
    spelling --cuda-graph-sizes (one value N: [1, 2, 4] + range(8, N + 1, 8); several: the list itself;
    vllm==0.10.2:vllm/config/__init__.py:3652-3658): the largest size captured, as the CUDA-graph estimate reads
    --max-cudagraph-capture-size, which wins."""
    for option in ("--cudagraph-capture-sizes", "--cuda-graph-sizes"):
        hit = parsed.get(option)
        if hit is None or hit[1] is None or "max_cudagraph_capture_size" in d.extra:
            continue
        first = hit[1]
        words = [first.text]
        at = next((i for i, t in enumerate(tokens) if t is first), None)
        for tok in tokens[at + 1 :] if at is not None else ():
            if tok.text.startswith("--"):
                break  # nargs '+' takes every word up to the next option
            words.append(tok.text)
        values = " ".join(words).replace(",", " ").strip("[] ").split()
        bad = next((w for w in values if _whole(w) is None), None)
        if bad is not None:
            why = (
                "kvlint reads sizes of 1 or more"
                if bad.startswith("-") and bad[1:].isdigit()
                else "vLLM reads them with argparse type int (nargs '+') and exits on it"
            )
            d.issues.append(
                Issue(
                    UNPARSED_SETTING,
                    f"vLLM: {option} {show(bad, 40)!r} is not a CUDA-graph batch size ({why});"
                    " the capture sizes are unknown",
                    first.where or d.where,
                )
            )
            d.unreadable.append("max_cudagraph_capture_size")
            continue
        sizes = [int(w) for w in values]  # each checked by _whole
        if sizes:
            d.extra["max_cudagraph_capture_size"] = stated(max(sizes), first.where or d.where, option)


def _eplb(d: Deployment, parsed) -> None:
    """--eplb-config's num_redundant_experts (vllm==0.33.0:vllm/config/parallel.py:77); --num-redundant-experts
    (the older flag) wins."""
    read = json_config(d, parsed, "--eplb-config")
    spare = read[0].get("num_redundant_experts") if read is not None else None
    if isinstance(spare, str) and spare.strip().isdigit():
        spare = int(spare)  # pydantic's lax mode takes "4" for an int
    if read is not None and spare is not None and (type(spare) is not int or spare < 0):
        d.issues.append(
            Issue(
                UNPARSED_SETTING,
                f"vLLM: --eplb-config num_redundant_experts {show(str(spare), 40)!r}: EPLBConfig takes a whole number"
                " >= 0 (vllm==0.22.0:vllm/config/parallel.py:68 Field(default=0, ge=0)); vLLM refuses it and does"
                " not start",
                read[1],
            )
        )
        d.unreadable.append("num_redundant_experts")
        return
    if read is not None and type(spare) is int and spare >= 0 and "num_redundant_experts" not in d.extra:
        d.extra["num_redundant_experts"] = stated(spare, read[1], "--eplb-config")
