"""TGI's launcher arguments and their environment forms -> Deployment fields."""

from __future__ import annotations

import os

from kvlint.codes import UNPARSED_SETTING
from kvlint.deployment import Deployment, stated
from kvlint.engines.tgi import memory_options as memory_table
from kvlint.extract.pod.argv import EnvVar, Token
from kvlint.extract.pod.engine_args import memory_options
from kvlint.extract.pod.engine_args.apply import apply, env_value
from kvlint.extract.pod.engine_args.options import Parsed, load_table
from kvlint.findings import Issue

OPTIONS = os.path.join(os.path.dirname(__file__), "data", "options.json")  # option names and kinds

# launcher/src/main.rs: every `#[clap(long, env)]` field reads --field-name or FIELD_NAME.
MAPPING: dict[str, tuple[str, str]] = {
    "--model-id": ("model", "text"),
    "--num-shard": ("tensor_parallel", "int"),
    "--sharded": ("sharded", "bool"),
    "--max-total-tokens": ("max_context", "int"),
    "--max-input-tokens": ("max_input_tokens", "int"),
    "--max-input-length": ("max_input_tokens", "int"),
    "--max-batch-prefill-tokens": ("max_batch_prefill_tokens", "int"),
    "--max-batch-total-tokens": ("max_batch_total_tokens", "int"),
    "--max-concurrent-requests": ("max_sequences", "int"),
    "--max-batch-size": ("max_batch_size", "int"),
    "--speculate": ("speculate", "int"),
    "--quantize": ("quantization", "text"),
    "--dtype": ("dtype", "text"),
    "--kv-cache-dtype": ("kv_cache_dtype", "text"),
    "--cuda-memory-fraction": ("cuda_memory_fraction", "float"),
}
NEEDED = {"--model-id", "--num-shard", "--max-total-tokens"}


def read(d: Deployment, tokens: list[Token], env: dict[str, EnvVar]) -> None:
    from kvlint.engines.tgi import backends as tgi_backends

    backend = tgi_backends.backend_of_image(str(d.image.value)) if d.image is not None else None
    if backend is not None and backend[0] == "llamacpp":
        from kvlint.engines.tgi import llamacpp as tgi_llamacpp

        tgi_llamacpp.read(d, tokens, env)  # its router has options of its own
        tgi_backends.apply(d)
        return
    parsed = load_table(OPTIONS, "tgi").parse(tokens)
    # environment forms, where the command line does not set the option (clap: the flag wins)
    from_env: dict[str, str] = {}
    for option in MAPPING:
        if option in parsed.values:
            continue
        tok = env_value(env, option[2:].upper().replace("-", "_"))
        if tok is not None:
            flag = Token(option, tok.where, tok.note)
            parsed.values[option] = (flag, tok, False)
            from_env[option] = option[2:].upper().replace("-", "_")
    cuda = env_value(env, "CUDA_MEMORY_FRACTION")
    if cuda is not None and "--cuda-memory-fraction" not in parsed.values:
        parsed.values["--cuda-memory-fraction"] = (Token("CUDA_MEMORY_FRACTION", cuda.where), cuda, False)
    apply(d, parsed, MAPPING, "TGI", NEEDED)
    _rope(d, parsed, env)
    _attention(d, env)
    if backend is None or backend[0] not in tgi_backends.REASONS:
        # the TensorRT-LLM router's options differ; a backend kvlint does not model is one KV004, not a list
        # the flags the command line writes, judged against the release in force at resolve
        # (kvlint/engines/flag_sets.py: the launcher's clap stops on an option its release lacks)
        from kvlint.engines import flag_sets

        flag_sets.record_flags(d, "tgi", flag_sets.written(parsed, from_env) + _enum_env(parsed, env))
        memory_options.report(d, parsed, memory_table.table(), "TGI", env, env_forms=True)
    tgi_backends.apply(d)


def _enum_env(parsed: Parsed, env: dict[str, EnvVar]) -> list:
    """The `value_enum` options (ROPE_SCALING, USAGE_STATS, ...) whose variable sets them, beyond
    MAPPING's: clap checks those values too (kvlint/engines/flag_choices.py)."""
    from kvlint.engines import flag_choices, flag_sets

    out = []
    for option, name in flag_choices.env_names("tgi").items():
        tok = env_value(env, name)
        if option not in parsed.values and tok is not None:
            out.append(flag_sets.Written(option, True, tok.where, option, tok, name))
    return out


def _attention(d: Deployment, env: dict[str, EnvVar]) -> None:
    """ATTENTION (paged | flashdecoding | flashdecoding-ipex | flashinfer) chooses the server's KV block
    size (server/text_generation_server/models/globals.py BLOCK_SIZE, v2.3+); the launcher's
    resolve_attention only picks one when it is unset."""
    for name in ("PREFIX_CACHING", "USE_PREFIX_CACHING"):  # v2.4+ / v2.3.x spelling (globals.py)
        caching = env_value(env, name)
        if caching is not None:
            d.extra["prefix_caching"] = stated(caching.text.strip(), caching.where, f"env {name}")
            break
    devices = env_value(env, "CUDA_VISIBLE_DEVICES")  # launcher num_cuda_devices reads it first
    if devices is not None and devices.text.strip():
        d.extra["cuda_visible_devices"] = stated(
            devices.text.strip(), devices.where, "env CUDA_VISIBLE_DEVICES"
        )
    chunking = env_value(env, "PREFILL_CHUNKING")  # models/globals.py: "1"/"true" turn it on
    if chunking is not None:
        d.extra["prefill_chunking"] = stated(chunking.text.strip(), chunking.where, "env PREFILL_CHUNKING")
    tok = env_value(env, "ATTENTION")
    if tok is not None and tok.text.strip() in ATTENTIONS:  # compared as written (globals.py)
        d.extra["attention"] = stated(tok.text.strip(), tok.where, "env ATTENTION")
    elif tok is not None:
        d.issues.append(
            Issue(
                UNPARSED_SETTING,
                f"TGI: ATTENTION {tok.text!r} is not one of {', '.join(sorted(ATTENTIONS))}; the server refuses it"
                " (globals.py: `assert ATTENTION in _expected`)",
                tok.where or d.where,
            )
        )


ATTENTIONS = frozenset({"paged", "flashdecoding", "flashdecoding-ipex", "flashinfer"})


def _rope(d: Deployment, parsed: Parsed, env: dict[str, EnvVar]) -> None:
    """TGI's --rope-scaling {linear,dynamic} and --rope-factor (or ROPE_SCALING / ROPE_FACTOR) set the
    model's rope_scaling (launcher/src/main.rs)."""
    kind = parsed.get("--rope-scaling")
    factor = parsed.get("--rope-factor")
    kind_tok = kind[1] if kind else env_value(env, "ROPE_SCALING")
    factor_tok = factor[1] if factor else env_value(env, "ROPE_FACTOR")
    if kind_tok is None and factor_tok is None:
        return
    try:
        value = float(factor_tok.text) if factor_tok is not None else 1.0
    except ValueError:
        d.issues.append(
            Issue(
                UNPARSED_SETTING,
                f"TGI: cannot read --rope-factor {factor_tok.text!r}",  # type: ignore[union-attr]
                factor_tok.where or d.where,  # type: ignore[union-attr]
            )
        )
        return
    scaling = {"type": kind_tok.text if kind_tok is not None else "linear", "factor": value}
    where = (factor_tok or kind_tok).where or d.where  # type: ignore[union-attr]
    d.extra["model_overrides"] = stated({"rope_scaling": scaling}, where, "TGI --rope-scaling/--rope-factor")


__all__ = ["Parsed", "read"]
