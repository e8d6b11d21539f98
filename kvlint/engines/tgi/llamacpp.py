"""TGI's llama.cpp backend (backends/llamacpp, from v3.1.1): its router's own options and how it sizes
llama.cpp's context.

backends/llamacpp/src/main.rs (v3.3.7): `n_threads` defaults to num_cpus::get(), `n_threads_batch` to
n_threads, `max_batch_size` to n_threads_batch, `max_batch_total_tokens` to max_batch_size x
max_total_tokens (default 2048); backend.rs then builds the llama.cpp context with
`n_ctx = max_batch_total_tokens`, `n_seq_max = max_batch_size`, `offload_kqv = !disable_offload_kqv`,
`type_k` / `type_v` (default f16), and loads the GGUF with `n_gpu_layers` (default 0: every layer, and
so its KV cache, in host memory). Without --model-gguf the router converts the checkpoint and quantizes
it to Q4_0 (quantize::model(…, QuantizeType::MostlyQ4_0, …)).
"""

from __future__ import annotations

import os

from kvlint.codes import UNPARSED_SETTING
from kvlint.deployment import Deployment, default, stated
from kvlint.extract.pod import bounded
from kvlint.extract.pod.argv import EnvVar, Token
from kvlint.extract.pod.engine_args.apply import apply, env_value, report_unknown
from kvlint.extract.pod.engine_args.options import load_table
from kvlint.findings import Issue

# the backend router's option names and kinds
OPTIONS = os.path.join(os.path.dirname(__file__), "data", "llamacpp_options.json")

SOURCE = "huggingface/text-generation-inference@v3.3.7 backends/llamacpp/src/main.rs"
MAPPING: dict[str, tuple[str, str]] = {
    "--model-id": ("model", "text"),
    "--max-total-tokens": ("max_context", "int"),
    "--max-input-tokens": ("max_input_tokens", "int"),
    "--max-batch-total-tokens": ("llamacpp_n_ctx", "int"),
    "--max-batch-size": ("max_sequences", "int"),
    "--n-threads": ("llamacpp_n_threads", "int"),
    "--n-threads-batch": ("llamacpp_n_threads_batch", "int"),
    "--n-gpu-layers": ("llamacpp_n_gpu_layers", "int"),
    "--type-k": ("llamacpp_type_k", "text"),
    "--type-v": ("llamacpp_type_v", "text"),
    "--model-gguf": ("llamacpp_gguf", "text"),
}
MAX_TOTAL_DEFAULT = 2048  # `#[clap(default_value = "2048", long, env)] max_total_tokens`
# backend.rs `#[derive(clap::ValueEnum)] enum LlamacppGGMLType` variants, as clap spells values (kebab-case)
GGML_TYPES = [
    "f32",
    "f16",
    "q4-0",
    "q4-1",
    "q5-0",
    "q5-1",
    "q8-0",
    "q8-1",
    "q2-k",
    "q3-k",
    "q4-k",
    "q5-k",
    "q6-k",
    "q8-k",
    "iq2-xxs",
    "iq2-xs",
    "iq3-xxs",
    "iq1-s",
    "iq4-nl",
    "iq3-s",
    "iq2-s",
    "iq4-xs",
    "i8",
    "i16",
    "i32",
    "i64",
    "f64",
    "iq1-m",
    "bf16",
    "tq1-0",
    "tq2-0",
]


def read(d: Deployment, tokens: list[Token], env: dict[str, EnvVar]) -> None:
    parsed = load_table(OPTIONS, "tgi-llamacpp").parse(tokens)
    for option in MAPPING:  # clap `env`: FIELD_NAME when the flag is not given
        if option not in parsed.values:
            tok = env_value(env, option[2:].upper().replace("-", "_"))
            if tok is not None:
                parsed.values[option] = (Token(option, tok.where, tok.note), tok, False)
    for option in ("--disable-offload-kqv",):
        entry = parsed.get(option)
        if entry is not None:
            d.extra["llamacpp_offload_kqv"] = stated(False, entry[0].where, option)
    apply(d, parsed, MAPPING, "TGI llama.cpp backend", {"--model-id"})
    for option, (target, _) in MAPPING.items():  # stated but unreadable (a KV005 said so): not its default
        if parsed.get(option) is not None and target not in d.extra and getattr(d, target, None) is None:
            d.unreadable.append(target)
    for key in ("llamacpp_type_k", "llamacpp_type_v"):
        said = d.extra.get(key)
        if said is not None and str(said.value).strip().lower() not in GGML_TYPES:
            d.issues.append(
                Issue(
                    UNPARSED_SETTING,
                    f"TGI llama.cpp backend: {OPTION_OF[key]} {str(said.value)!r} is not one of its types"
                    f" (backend.rs LlamacppGGMLType: {', '.join(GGML_TYPES[:8])}, …); the router refuses it",
                    said.where or d.where,
                )
            )
            del d.extra[key]
            d.unreadable.append(key)
    bounded.check(d)  # before describe() reads them: -1 layers is refused (usize), not taken for 0
    report_unknown(d, parsed, "TGI's llama.cpp backend has no option {name}")


OPTION_OF = {target: option for option, (target, _) in MAPPING.items()}


def _int(d: Deployment, key: str) -> int | None:
    v = d.extra.get(key)
    return v.value if v is not None and isinstance(v.value, int) and v.value > 0 else None


def context_cells(d: Deployment) -> tuple[int | None, str]:
    """(n_ctx, how main.rs derives it); None when it rests on the container's CPU count."""
    n_ctx = _int(d, "llamacpp_n_ctx")
    if n_ctx is not None:
        return n_ctx, "--max-batch-total-tokens"
    # main.rs: max_batch_total_tokens, else max_batch_size (else n_threads_batch, else n_threads) x max_total_tokens
    used = ["llamacpp_n_ctx", "max_context", "max_sequences"]
    if d.max_sequences is None:
        said = "llamacpp_n_threads_batch" in d.extra or "llamacpp_n_threads_batch" in d.unreadable
        used.append("llamacpp_n_threads_batch" if said else "llamacpp_n_threads")
    unread = next((key for key in used if key in d.unreadable), None)
    if unread is not None:
        return None, f"unknown: {OPTION_OF[unread]} is unreadable"
    total = int(d.max_context.value) if d.max_context is not None else MAX_TOTAL_DEFAULT
    total_how = f"max_total_tokens {total:,}" + ("" if d.max_context is not None else " (default)")
    batch = d.max_sequences.value if d.max_sequences is not None else None
    how = "max_batch_size"
    if not isinstance(batch, int) or batch <= 0:
        batch = _int(d, "llamacpp_n_threads_batch") or _int(d, "llamacpp_n_threads")
        how = "max_batch_size = n_threads (default)"
    if batch is None:
        return None, (
            f"max_batch_size x {total_how}, where max_batch_size defaults to n_threads_batch = n_threads ="
            " the container's CPU count (num_cpus::get())"
        )
    return batch * total, f"{how} {batch} x {total_how}"


def priceable(d: Deployment) -> bool:
    """Whether the options fix the GPU's share of the KV cache: layers offloaded, n_ctx known, K/V on the GPU."""
    offload = d.extra.get("llamacpp_offload_kqv")
    types_read = not {"llamacpp_type_k", "llamacpp_type_v"} & set(d.unreadable)
    return (
        bool(_int(d, "llamacpp_n_gpu_layers"))
        and context_cells(d)[0] is not None
        and offload is None
        and types_read
    )


def kv_settings(d: Deployment) -> tuple[int, int, str, str]:
    """(n_ctx, --n-gpu-layers, type_k, type_v) for a priceable deployment."""
    n_ctx = context_cells(d)[0] or 0
    types = [d.extra.get(key) for key in ("llamacpp_type_k", "llamacpp_type_v")]
    type_k, type_v = (str(t.value) if t is not None else "f16" for t in types)
    return n_ctx, _int(d, "llamacpp_n_gpu_layers") or 0, type_k, type_v


def describe(d: Deployment) -> str:
    """What TGI's llama.cpp backend puts where, as far as the options say, and what is not checked."""
    layers = _int(d, "llamacpp_n_gpu_layers")
    n_ctx, how = context_cells(d)
    cells = f"n_ctx = {n_ctx:,} cells ({how})" if n_ctx is not None else f"n_ctx = {how}"
    if "llamacpp_n_gpu_layers" in d.unreadable:
        return (
            f"TGI's llama.cpp backend ({SOURCE}) with an unreadable --n-gpu-layers: whether the GGUF weights and"
            f" the KV cache ({cells}) sit on the GPU or in host memory is not known"
        )
    said = "its default"
    if "llamacpp_n_gpu_layers" not in d.extra:
        d.extra["llamacpp_n_gpu_layers"] = default(0, "TGI llama.cpp backend default --n-gpu-layers 0")
    elif d.extra["llamacpp_n_gpu_layers"].origin != "default":
        said = "as stated"
    if not layers:
        return (
            f"TGI's llama.cpp backend ({SOURCE}) with --n-gpu-layers 0 ({said}) keeps the GGUF weights and the"
            f" KV cache ({cells}) in host memory; kvlint models GPU memory"
        )
    gguf = (
        "the --model-gguf file" if "llamacpp_gguf" in d.extra else "the checkpoint quantized to Q4_0 at start"
    )
    return (
        f"TGI's llama.cpp backend ({SOURCE}) puts {layers} layers on the GPU in llama.cpp's own memory layout,"
        f" with {cells}; the GGUF weights ({gguf}) and llama.cpp's compute buffers are not modelled"
    )
