"""llama-server's options and their LLAMA_ARG_* variables, and Ollama's OLLAMA_* variables -> Deployment fields.

llama-server (ggml-org/llama.cpp@master common/arg.cpp): every option also reads a variable (`set_env(
"LLAMA_ARG_CTX_SIZE")` for -c/--ctx-size, ...); the command line wins over the variable ("warn:
LLAMA_ARG_HOST environment variable is set, but will be overwritten by command line argument"). `-c` is
the context of the whole server, which its `-np` slots share (plan.py). Ollama takes no options: `ollama
serve` reads OLLAMA_NUM_PARALLEL, OLLAMA_CONTEXT_LENGTH, OLLAMA_KV_CACHE_TYPE, OLLAMA_FLASH_ATTENTION and
OLLAMA_GPU_OVERHEAD (ollama/ollama envconfig/config.go), and the model comes from a pull at run time.
"""

from __future__ import annotations

import os
from typing import Any

from kvlint.bounds import show
from kvlint.codes import NOT_CHECKABLE, UNPARSED_SETTING
from kvlint.deployment import Deployment, Value, stated
from kvlint.engines import flag_sets
from kvlint.engines.llamacpp import ollama_tags
from kvlint.extract.pod.argv import EnvVar, Token, split_flag
from kvlint.extract.pod.engine_args.apply import apply, env_value
from kvlint.extract.pod.engine_args.options import load_table
from kvlint.findings import Issue, Location, Severity

OPTIONS = os.path.join(os.path.dirname(__file__), "data", "options.json")

MAPPING: dict[str, tuple[str, str]] = {
    "--model": ("model", "text"),
    "--ctx-size": ("max_context", "int"),
    "--parallel": ("max_sequences", "int"),
    "--cache-type-k": ("kv_cache_dtype", "text"),
    "--cache-type-v": ("cache_type_v", "text"),
    "--flash-attn": ("flash_attn", "text"),
    "--n-gpu-layers": ("n_gpu_layers", "text"),
    "--batch-size": ("n_batch", "int"),
    "--ubatch-size": ("n_ubatch", "int"),
    "--kv-unified": ("kv_unified", "bool"),
    "--no-kv-offload": ("no_kv_offload", "bool"),
    "--no-op-offload": ("no_op_offload", "bool"),
    "--swa-full": ("swa_full", "bool"),
    "--fit": ("fit", "text"),
    "--hf-repo": ("hf_repo", "text"),
    "--hf-file": ("hf_file", "text"),
    "--split-mode": ("split_mode", "text"),
    "--tensor-split": ("tensor_split", "text"),
    "--main-gpu": ("main_gpu", "int"),
    "--override-tensor": ("override_tensor", "text"),
    "--cpu-moe": ("cpu_moe", "bool"),
    "--n-cpu-moe": ("n_cpu_moe", "int"),
}
ENV = {  # option -> its variable (common/arg.cpp set_env)
    "--model": "LLAMA_ARG_MODEL",
    "--ctx-size": "LLAMA_ARG_CTX_SIZE",
    "--parallel": "LLAMA_ARG_N_PARALLEL",
    "--cache-type-k": "LLAMA_ARG_CACHE_TYPE_K",
    "--cache-type-v": "LLAMA_ARG_CACHE_TYPE_V",
    "--flash-attn": "LLAMA_ARG_FLASH_ATTN",
    "--n-gpu-layers": "LLAMA_ARG_N_GPU_LAYERS",
    "--batch-size": "LLAMA_ARG_BATCH",
    "--ubatch-size": "LLAMA_ARG_UBATCH",
    "--kv-unified": "LLAMA_ARG_KV_UNIFIED",
    "--no-kv-offload": "LLAMA_ARG_NO_KV_OFFLOAD",
    "--swa-full": "LLAMA_ARG_SWA_FULL",
    "--fit": "LLAMA_ARG_FIT",
    "--hf-repo": "LLAMA_ARG_HF_REPO",
    "--hf-file": "LLAMA_ARG_HF_FILE",
    "--split-mode": "LLAMA_ARG_SPLIT_MODE",
    "--tensor-split": "LLAMA_ARG_TENSOR_SPLIT",
    "--main-gpu": "LLAMA_ARG_MAIN_GPU",
    "--cpu-moe": "LLAMA_ARG_CPU_MOE",
    "--n-cpu-moe": "LLAMA_ARG_N_CPU_MOE",
}
NEEDED = {"--ctx-size", "--parallel", "--n-gpu-layers", "--cache-type-k", "--cache-type-v"}
# -fa takes on|off|auto from the release that made it auto (PR #15434); before, it was a bare switch
FA_WORDS = {"on", "off", "auto", "true", "false", "1", "0", "enabled", "disabled"}

# ollama/ollama envconfig/config.go: the variable -> (field, kind)
OLLAMA_ENV: dict[str, tuple[str, str]] = {
    "OLLAMA_NUM_PARALLEL": ("max_sequences", "int"),
    "OLLAMA_CONTEXT_LENGTH": ("max_context", "int"),
    "OLLAMA_KV_CACHE_TYPE": ("kv_cache_dtype", "text"),
    "OLLAMA_FLASH_ATTENTION": ("flash_attn", "text"),
    "OLLAMA_GPU_OVERHEAD": ("gpu_overhead", "int"),
    "OLLAMA_NEW_ENGINE": ("ollama_new_engine", "text"),
}


def read(d: Deployment, tokens: list[Token], env: dict[str, EnvVar], strict: bool = True) -> None:
    """llama-server's command line and variables (a bare `-fa` is `on`)."""
    tokens = _bare_fa(tokens)
    table = load_table(OPTIONS, "llamacpp")
    joined = _one_argument(table, tokens, d.where)
    d.issues.extend(joined)
    parsed = table.parse(tokens)
    every = _every_override(table, tokens)
    if every is not None:
        parsed.values["--override-tensor"] = every
    from_env: dict[str, str] = {}
    for option, var in ENV.items():
        if option not in parsed.values:
            tok = env_value(env, var)
            if tok is not None:
                parsed.values[option] = (Token(option, tok.where, tok.note), tok, False)
                from_env[option] = var
    _with_equals(d, parsed)
    apply(d, parsed, MAPPING, "llama.cpp", NEEDED)
    _model(d)
    if strict:  # an option the build in force lacks stops it: judged at resolve (kvlint/engines/flag_sets.py)
        said = {i.where for i in joined}  # `-c 8192` as one argument: said above
        parsed.unknown[:] = [tok for tok in parsed.unknown if tok.where not in said]
        flag_sets.record_flags(d, "llamacpp", flag_sets.written(parsed, from_env))


def _one_argument(table: Any, tokens: list[Token], d_where: Location) -> list[Issue]:
    """An option and its value written as one argument (`- -c 8192` in an exec-form list, `"--port 8080"`):
    llama-server looks the whole text up as an option name, finds none, and exits ("error: invalid argument:
    -c 8192", common/arg.cpp common_params_parse_ex), so the server never starts and the value is not read.
    Said where the first word is an option llama-server has and the argument is not the value of the one
    before it."""
    out = []
    for i, tok in enumerate(tokens):
        words = tok.text.split()
        if len(words) < 2 or not words[0].startswith("-") or not isinstance(table.lookup(words[0]), tuple):
            continue
        before = table.lookup(tokens[i - 1].text) if i else None
        if isinstance(before, tuple) and table.options[before[0]].kind == "value":
            continue  # the value of the option before it
        out.append(
            Issue(
                UNPARSED_SETTING,
                f"'{tok.text}' is one argument: llama-server has no option of that name and exits at start-up "
                f'("error: invalid argument: {tok.text}", common/arg.cpp common_params_parse_ex); the '
                f"{words[0]} it holds is not read",
                tok.where or d_where,
                fix=f"write {words[0]} and its value as two arguments",
                severity=Severity.ERROR,
            )
        )
    return out


def _with_equals(d: Deployment, parsed: Any) -> None:
    """`--ctx-size=8192`: llama-server looks the whole argument up as an option name (common_params_parse_ex
    has no `--x=value` form in any build read, b3716 to b11434: common/arg.cpp `arg_to_options.find(arg)`),
    finds none and exits ("error: invalid argument: --ctx-size=8192"), so the value is not read."""
    for canonical, (flag, _value, _negated) in list(parsed.values.items()):
        if not flag.text.startswith("-") or "=" not in flag.text:
            continue
        del parsed.values[canonical]
        name = flag.text.split("=", 1)[0]
        d.issues.append(
            Issue(
                UNPARSED_SETTING,
                f"'{show(flag.text, 60)}' is one argument: llama-server has no {name}=VALUE form and exits at"
                f' start-up ("error: invalid argument: {show(flag.text, 60)}", common/arg.cpp'
                f" common_params_parse_ex); the {name} it holds is not read",
                flag.where or d.where,
                fix=f"write {name} and its value as two arguments",
                severity=Severity.ERROR,
            )
        )


def _every_override(table: Any, tokens: list[Token]) -> tuple[Token, Token, bool] | None:
    """Every -ot given, joined by commas in their order: llama.cpp appends each one's items
    (common/arg.cpp parse_tensor_buffer_overrides), where the table keeps the last."""
    found: list[tuple[Token, Token]] = []
    for i, tok in enumerate(tokens):
        name, inline = split_flag(tok)
        if not name.startswith("-") or table.lookup(name) != ("--override-tensor", False):
            continue
        value = inline if inline is not None else tokens[i + 1] if i + 1 < len(tokens) else None
        if value is not None:
            found.append((tok, value))
    if len(found) < 2:
        return None
    first, value = found[0]
    return first, Token(",".join(v.text for _, v in found), value.where, value.note), False


def _bare_fa(tokens: list[Token]) -> list[Token]:
    """`-fa` with no value after it (the switch of the releases before -fa took on|off|auto) -> `-fa on`."""
    out: list[Token] = []
    for i, tok in enumerate(tokens):
        out.append(tok)
        if tok.text in ("-fa", "--flash-attn"):
            nxt = tokens[i + 1].text.strip().lower() if i + 1 < len(tokens) else ""
            if nxt not in FA_WORDS:
                out.append(Token("on", tok.where, "a bare -fa"))
    return out


def _model(d: Deployment) -> None:
    """The GGUF the server loads: -m PATH, else -hf REPO[:TYPE] with --hf-file FILE naming the file."""
    hf_file, hf_repo = d.extra.pop("hf_file", None), d.extra.pop("hf_repo", None)
    if d.model is not None:
        return
    if hf_file is not None:
        d.model = stated(str(hf_file.value), hf_file.where, "--hf-file")
    elif hf_repo is not None:
        d.model = stated(str(hf_repo.value), hf_repo.where, "--hf-repo")


def read_ollama(d: Deployment, env: dict[str, EnvVar], pulled: list[Token] | None = None) -> None:
    """`ollama serve`'s variables; the model is pulled at run time: by the container's own start script
    (`pulled`: the one model it pulls is the model), else by a request, which the file does not name."""
    d.extra["llamacpp_server"] = stated("ollama", d.engine.where if d.engine else d.where, "ollama serve")
    parsed = load_table(OPTIONS, "llamacpp").parse([])
    mapping: dict[str, tuple[str, str]] = {}
    for var, (target, kind) in OLLAMA_ENV.items():
        tok = env_value(env, var)
        if tok is not None:
            parsed.values[var] = (Token(var, tok.where, tok.note), tok, False)
            mapping[var] = (target, kind)
    apply(d, parsed, mapping, "Ollama", set(mapping))
    pulled = pulled or []
    if d.model is None and len(pulled) == 1:
        d.model = stated(pulled[0].text, pulled[0].where, "the start script's `ollama pull`")
    if d.model is None:  # `ollama pull` or a request's `model` names it, at run time
        where = (d.engine.where if d.engine else None) or d.where
        several = (
            f"the start script pulls {len(pulled)} models ({', '.join(t.text for t in pulled[:4])}"
            f"{' …' if len(pulled) > 4 else ''}) and serves whichever a request names, so which ones are loaded "
            "at once is not known"
            if pulled
            else NO_MODEL
        )
        d.issues.append(
            Issue(
                NOT_CHECKABLE,
                f"{d.label()}: {several}: not checked",
                (pulled[0].where or where) if pulled else where,
            )
        )
        d.extra["unsupported"] = stated("ollama", where)
    elif ollama_tags.is_tag(str(d.model.value)):
        _library_model(d, d.model)


def _library_model(d: Deployment, model: Value) -> None:
    """An Ollama library tag -> the Hugging Face base it was converted from and the GGUF file type it pulls
    (ollama_tags.py); a tag the table does not hold is a KV004 that says so, and nothing is planned."""
    where = model.where or d.where
    tag, why = ollama_tags.resolve(str(model.value))
    if tag is None:
        d.issues.append(
            Issue(
                NOT_CHECKABLE,
                f"{d.label()}: the model is the Ollama tag {model.value!r}, which kvlint does not resolve to its"
                f" GGUF: {why}: not checked",
                where,
            )
        )
        d.extra["unsupported"] = stated("ollama", where)
        return
    said = f"Ollama library tag {tag.name} ({tag.source})"
    d.model = stated(tag.base, where, said)
    d.extra["gguf_file_type"] = stated(tag.file_type, where, said)


NO_MODEL = "Ollama pulls the model it serves at run time (`ollama pull`, a request's `model`), so the file names none"


def cpu_only(d: Deployment, image: str) -> None:
    """llama.cpp's CPU build (launch.cpu_build) keeps weights and KV cache in host memory: one KV004."""
    where = (d.image.where if d.image else None) or d.where
    why = (
        f"the image {image} is llama.cpp's CPU build (its tag names no GPU backend: -cuda, -rocm, -vulkan, -musa,"
        " -intel), so the weights and the KV cache stay in host memory; kvlint models GPU memory"
    )
    d.issues.append(Issue(NOT_CHECKABLE, f"{d.label()}: {why}: not checked", where))
    d.extra["unsupported"] = stated("llamacpp-cpu", where)
