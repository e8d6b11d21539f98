"""KServe's Hugging Face server (`python -m huggingfaceserver`: the kserve/huggingfaceserver image and
the kserve-huggingfaceserver runtimes): its own options, then vLLM's when its backend is vLLM.

What its source does (kserve/kserve python/huggingfaceserver/huggingfaceserver/__main__.py, and the
model server's options in python/kserve/kserve/model_server.py):
- its own options: --model_dir (default /mnt/models, where KServe's storage initializer puts the
  InferenceService's storageUri), --model_id (a Hub id; wins over --model_dir), --model_revision,
  --max_length / --max_model_len (one setting), --backend auto|huggingface|vllm (default auto),
  --dtype, --task, --trust_remote_code …, and the model server's (--model_name, --http_port …);
- backend vllm, or auto when vLLM supports every architecture of the model's config: vLLM's own
  parser is added, `model = model_id or model_dir`, and the engine starts from vLLM's engine args;
- otherwise (huggingface, or auto for an architecture vLLM lacks) transformers runs the model;
- the command line is read with parse_known_args: an option neither parser knows is ignored.
"""

from __future__ import annotations

from kvlint import engines
from kvlint.catalog import models
from kvlint.codes import NOT_CHECKABLE, UNPARSED_SETTING
from kvlint.deployment import Deployment, inferred, stated
from kvlint.extract.pod.argv import EnvVar, Token, split_flag
from kvlint.findings import Issue

SOURCE = "kserve/kserve python/huggingfaceserver/huggingfaceserver/__main__.py"
MODEL_DIR = "/mnt/models"
BACKENDS = ("auto", "huggingface", "vllm")
# options that take a value (names with `_`; `-` is read the same)
VALUE = {
    "model_dir",
    "model_id",
    "model_revision",
    "tokenizer_revision",
    "max_length",
    "max_model_len",
    "backend",
    "dtype",
    "task",
    "max_log_len",
    "tensor_input_names",
    "model_name",
    "http_port",
    "grpc_port",
    "workers",
    "max_threads",
    "max_asyncio_workers",
    "enable_grpc",
    "enable_docs_url",
    "enable_latency_logging",
    "configure_logging",
    "log_config_file",
    "access_log_format",
    "event_loop",
    "timeout_keep_alive",
    "predictor_host",
    "protocol",
    "predictor_protocol",
    "predictor_use_ssl",
    "predictor_request_timeout_seconds",
    "grpc_max_send_message_length",
    "grpc_max_receive_message_length",
    "predictor_request_retries",
}
FLAG = {
    "trust_remote_code",
    "disable_lower_case",
    "disable_special_tokens",
    "return_token_type_ids",
    "return_offsets_mapping",
    "return_probabilities",
    "return_raw_logits",
    "disable_log_requests",
    "enable_predictor_health_check",
}
# the server's own options that are vLLM settings under the vLLM backend
TO_VLLM = {
    "max_length": "--max-model-len",
    "max_model_len": "--max-model-len",
    "dtype": "--dtype",
    "model_revision": "--revision",
    "trust_remote_code": "--trust-remote-code",
}
IGNORED = (
    "{name} is an option of neither KServe's Hugging Face server nor vLLM: the server reads its command "
    "line with parse_known_args and ignores it",
    "remove it, or check the spelling against the server's and `vllm serve --help`'s options",
)


def _split(tokens: list[Token]) -> tuple[dict[str, tuple[Token, Token | None]], list[Token]]:
    """The server's own options (name -> (flag, value)) and the rest, in order."""
    own: dict[str, tuple[Token, Token | None]] = {}
    rest: list[Token] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        name, inline = split_flag(tok)
        key = name[2:].replace("-", "_") if name.startswith("--") else ""
        if key in VALUE:
            value = inline
            if value is None and i + 1 < len(tokens):
                value = tokens[i + 1]
                i += 1
            own[key] = (tok, value)
        elif key in FLAG:
            own[key] = (tok, None)
        else:
            rest.append(tok)
        i += 1
    return own, rest


def read(d: Deployment, tokens: list[Token], env: dict[str, EnvVar], storage: Token | None = None) -> None:
    """`storage`: the model KServe's storage initializer puts at /mnt/models (an hf:// storageUri)."""

    own, rest = _split(tokens)
    backend_flag, backend_value = own.get("backend", (None, None))
    backend = backend_value.text.strip().lower() if backend_value is not None else "auto"
    model = _model(own, storage)
    where = (backend_value or backend_flag or model or Token("", d.where)).where or d.where
    if backend not in BACKENDS:
        d.issues.append(
            Issue(
                UNPARSED_SETTING,
                f"KServe Hugging Face server: --backend {backend_value.text if backend_value else ''} is not one "
                f"of {', '.join(BACKENDS)}: the server refuses to start",
                where,
                fix="--backend=vllm",
            )
        )
        _not_modelled(d, model, where, "with an unknown --backend does not start")
        return
    if backend == "huggingface":
        _not_modelled(
            d,
            model,
            where,
            "with --backend huggingface runs the model on transformers, not vLLM: not modelled",
        )
        return
    if backend == "auto" and not _vllm_supported(model):
        named = f"for {model.text} " if model is not None and not model.unresolved else ""
        _not_modelled(
            d,
            model,
            where,
            f"with --backend auto (its default) runs vLLM only for an architecture vLLM supports, which kvlint "
            f"cannot tell {named}(not in its catalog): not checked; --backend=vllm would have it checked",
        )
        return
    d.engine = (
        stated("vllm", where, "KServe Hugging Face server, --backend vllm")
        if engines.called("kserve huggingface backend", backend) is not None
        else inferred(
            "vllm",
            f"KServe Hugging Face server: --backend auto (its default) runs vLLM for {model.text if model else 'the model'}, "
            f"an architecture vLLM supports ({SOURCE})",
            where,
        )
    )
    vtokens = [Token("--model", model.where, model.note), model] if model is not None else []
    for key, option in TO_VLLM.items():
        if key in own:
            flag, value = own[key]
            vtokens += [Token(option, flag.where)] + ([value] if value is not None else [])
    engines.get("vllm").read_options(d, vtokens + rest, env, positional_model=False, unknown=IGNORED)


def _model(own: dict[str, tuple[Token, Token | None]], storage: Token | None) -> Token | None:
    """--model_id, else --model_dir (default /mnt/models: the storageUri's model, when known)."""
    for key in ("model_id", "model_dir"):
        _flag, value = own.get(key, (None, None))
        if value is not None and (key == "model_id" or value.text.rstrip("/") != MODEL_DIR):
            return value
    return storage


def _vllm_supported(model: Token | None) -> bool:
    """A catalogued model that keeps a KV cache: a decoder architecture vLLM serves."""
    if model is None or model.unresolved:
        return False
    row = models.lookup(model.text)
    return row is not None and row.get("kv_cache") != "none"


def _not_modelled(d: Deployment, model: Token | None, where, why: str) -> None:
    if model is not None and not model.unresolved and d.model is None:
        d.model = stated(model.text, model.where or d.where, model.note)
    d.engine = stated("hfserver", where, "KServe Hugging Face server")
    d.issues.append(Issue(NOT_CHECKABLE, f"{d.label()}: KServe's Hugging Face server {why}", where))
    d.extra["unsupported"] = stated("hfserver", where)
