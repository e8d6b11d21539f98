"""Triton's TensorRT-LLM backend: the `parameters` of the tensorrt_llm model's config.pbtxt, as the backend reads
them, onto the deployment.

The backend (triton-inference-server/tensorrtllm_backend, inflight_batcher_llm/src at v0.18.2; later releases
keep it in NVIDIA/TensorRT-LLM triton_backend/, compared row by row in triton_releases.py) reads each
parameter's `string_value` (model_state.cc:249 GetParameter<std::string>) and converts it with std::stoi /
std::stof / "true"|"false"|"1"|"0" (model_state.cc:272-325); a parameter that is absent or does not convert
throws, and model_instance_state.cc catches it and uses its default (each row below names the line). The
Python backend's model.py (all_models/inflight_batcher_llm/tensorrt_llm/1/model.py:126) reads a value still
spelled `${…}` as not given: so does kvlint (an unfilled fill_template placeholder is not stated). Values are
converted as the C++ backend converts them (the Python backend's int() / float() refuse "4096tokens" where
std::stoi reads 4096, and it takes any bool other than 1/true as false: model.py:123-137).

tools/fill_template.py (v0.18.2) fills the template with string.Template.safe_substitute from
`key:value,key:value` (a backslash escapes `,` and `:`; `max_queue_size` is 0 unless given): `filled`
does the same.
"""

from __future__ import annotations

import re
from string import Template

from kvlint.codes import INVALID_INPUT, NOT_CHECKABLE, UNPARSED_SETTING
from kvlint.deployment import Deployment, default, stated
from kvlint.engines.trtllm import triton_releases as rel
from kvlint.engines.trtllm.pbtxt import Message, PbtxtError, Scalar, parse
from kvlint.findings import Issue, IssueKind, Location, Severity
from kvlint.record import record

TAG = "v0.18.2"


@record(frozen=True)
class Param:
    """One config.pbtxt parameter the backend reads that changes GPU memory or what kvlint plans."""

    key: str
    target: str  # Deployment field or `extra` key it sets
    kind: str  # int | float | bool | text
    default: str  # what the backend uses when it is not given
    at: str  # the backend source line of its GetParameter (inflight_batcher_llm/src at TAG)


PARAMS: tuple[Param, ...] = (
    Param(
        "gpt_model_path",
        "engine_dir",
        "text",
        "none: the backend refuses to load",
        "model_instance_state.cc:645",
    ),
    Param(
        "kv_cache_free_gpu_mem_fraction",
        "gpu_memory_utilization",
        "float",
        "0.9",
        "model_instance_state.cc:97",
    ),
    Param("max_tokens_in_paged_kv_cache", "kv_max_tokens", "int", "no cap", "model_instance_state.cc:84"),
    Param("max_beam_width", "max_beam_width", "int", "1", "model_instance_state.cc:392"),
    Param("enable_kv_cache_reuse", "enable_block_reuse", "bool", "false", "model_instance_state.cc:168"),
    Param("enable_chunked_context", "enable_chunked_prefill", "bool", "false", "model_instance_state.cc:451"),
    Param(
        "max_attention_window_size",
        "max_attention_window",
        "text",
        "max_seq_len",
        "model_instance_state.cc:142",
    ),
    Param(
        "batch_scheduler_policy",
        "batch_scheduler_policy",
        "text",
        "guaranteed_no_evict",
        "model_instance_state.cc:335",
    ),
    Param("gpu_weights_percent", "gpu_weights_percent", "float", "1.0", "model_instance_state.cc:560"),
    Param("gpu_device_ids", "gpu_device_ids", "text", "the instance's visible GPUs", "model_state.cc:97"),
    Param(
        "gpt_model_type",
        "batching_type",
        "text",
        "none: the backend refuses to load",
        "model_instance_state.cc:60",
    ),
)
BY_KEY = {p.key: p for p in PARAMS}
# parameters whose effect on GPU memory the plan leaves out: a KV004 info at the parameter, as for an engine
# option (extract/pod/engine_args/memory_options.py), when its value changes memory
UNPLANNED: dict[str, str] = {
    # executor KvCacheConfig maxAttentionWindowVec: each sequence keeps at most that many tokens' KV
    "max_attention_window_size": "caps the KV cache each sequence keeps at that many tokens (a sliding window)",
    # executor ExecutorConfig gpuWeightsPercent below 1.0: the rest of the weights stream from host memory
    "gpu_weights_percent": "keeps only that share of the weights on the GPU and streams the rest from the host",
}
_INT = re.compile(r"^\s*[-+]?\d+")
_FLOAT = re.compile(r"^\s*[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


@record
class ModelConfig:
    """One model's config.pbtxt: its backend, Triton's max_batch_size and the parameters' string values."""

    shown: str  # the file as findings show it
    backend: Scalar | None
    max_batch_size: Scalar | None
    params: dict[str, Scalar]
    anchor: Location | None = None  # the ConfigMap key that holds the text: every location points at it

    def where(self, s: Scalar) -> Location:
        if self.anchor is not None:
            return self.anchor
        return Location(self.shown, s.line, s.column, s.line, s.end_column)

    def runs_trtllm(self) -> bool:
        """The tensorrt_llm model: the C++ backend, or a model (the Python backend's tensorrt_llm/1/model.py, or a
        template whose backend is unfilled) given the executor's batching type `gpt_model_type`, which only that
        model reads (model_instance_state.cc:60, model.py:835); the preprocessing model has a gpt_model_path too."""
        name = "" if self.backend is None or self.backend.unfilled else self.backend.text.strip().lower()
        return name == "tensorrtllm" or (name in ("", "python") and "gpt_model_type" in self.params)


def read_config(
    text: str, shown: str, anchor: Location | None = None
) -> tuple[ModelConfig | None, Issue | None]:
    """The model configuration `text` (config.pbtxt) writes, or a located KV001 when Triton cannot parse it
    (Triton then fails to load the model: "Error parsing text-format inference.ModelConfig"). `anchor`: the
    ConfigMap key the text is from, where every location then points."""
    try:
        root = parse(text)
    except PbtxtError as e:
        where = anchor or Location(shown, e.line, e.column)
        message = f"{shown} is not a Triton model configuration Triton can parse: {e.message} (the model does not load)"
        return None, Issue(INVALID_INPUT, message, where, severity=Severity.ERROR)
    return ModelConfig(
        shown, root.scalar("backend"), root.scalar("max_batch_size"), _params(root), anchor
    ), None


def _params(root: Message) -> dict[str, Scalar]:
    """`parameters: { key: "k" value: { string_value: "v" } }` (a map field, written once per entry or as a
    list); the last entry of a key wins, as protobuf's map parsing keeps it."""
    out: dict[str, Scalar] = {}
    for entry in root.all("parameters"):
        if not isinstance(entry, Message):
            continue
        key, value = entry.scalar("key"), entry.message("value")
        text = value.scalar("string_value") if value is not None else None
        if key is not None and text is not None:
            out[key.text] = text
    return out


def _converted(p: Param, raw: str) -> object | None:
    """The value as GetParameter<T> converts it, or None where it throws (the backend then uses its default).
    std::stoi / std::stof read a leading number and ignore what follows (model_state.cc:272, :304)."""
    if p.kind == "text":
        return raw
    if p.kind == "bool":  # model_state.cc:310 GetParameter<bool>
        return (
            True
            if raw in ("True", "true", "TRUE", "1")
            else False
            if raw in ("False", "false", "FALSE", "0")
            else None
        )
    m = (_INT if p.kind == "int" else _FLOAT).match(raw)
    if m is None:
        return None
    return int(m.group()) if p.kind == "int" else float(m.group())


def apply(d: Deployment, config: ModelConfig) -> None:
    """The parameters the backend reads onto the deployment, each stated at its line of config.pbtxt; an
    unfilled `${…}` is not stated (the backend's default applies), and a value the backend cannot convert is
    a KV005 warning naming the default it falls back to. A parameter whose default changed after v0.18.2
    (triton_releases.CHANGES) and is not given takes the default of the release the image runs, named."""
    note = f"{config.shown} (Triton model configuration)"
    release = rel.release_of(str(d.image.value) if d.image is not None else None)
    for p in PARAMS:
        s = config.params.get(p.key)
        if s is None or s.unfilled or not s.text.strip():
            _release_default(d, p, release)
            continue
        value = _converted(p, s.text.strip())
        if value is None:
            d.issues.append(
                Issue(
                    UNPARSED_SETTING,
                    f"{d.label()}: Triton's TensorRT-LLM backend cannot read {p.key} {s.text[:60]!r} as"
                    f" {'a number' if p.kind != 'bool' else 'true or false'} and uses its default"
                    f" ({_default_of(p, release)})",
                    config.where(s),
                )
            )
            _release_default(d, p, release)
            continue
        if p.key in UNPLANNED and not (p.kind == "float" and isinstance(value, float) and value >= 1.0):
            d.issues.append(_unplanned(p, s.text.strip(), config.where(s)))
        _set(d, p, stated(value, config.where(s), note))


def _set(d: Deployment, p: Param, v) -> None:
    if hasattr(d, p.target):
        setattr(d, p.target, v)
    else:
        d.extra[p.target] = v


def _default_of(p: Param, release: rel.Release) -> str:
    """The default the backend uses at `release`, with the source line that says it."""
    c = rel.changed(p.key, release)
    said = f"{p.default}; tensorrtllm_backend inflight_batcher_llm/src/{p.at}@{TAG}"
    if c is not None:
        said = f"{c.default} from TensorRT-LLM {c.release}, inflight_batcher_llm/src/{c.at}"
    return f"{said}; {release.how}" if p.key in rel.CHANGES else said


def _release_default(d: Deployment, p: Param, release: rel.Release) -> None:
    """A default that changed after v0.18.2, as the release in force has it (the release named)."""
    change = rel.CHANGES.get(p.key)
    if change is not None:
        value = change.value if rel.changed(p.key, release) is not None else change.before
        _set(d, p, default(value, f"Triton's TensorRT-LLM backend default {p.key} {_default_of(p, release)}"))


def _unplanned(p: Param, text: str, where: Location) -> Issue:
    return Issue(
        NOT_CHECKABLE,
        f"Triton's TensorRT-LLM backend {p.key} {text[:60]!r}: {UNPLANNED[p.key]} (tensorrtllm_backend"
        f" inflight_batcher_llm/src/{p.at}@{TAG}); kvlint's plan leaves this out, so its capacity figures are"
        " for the deployment without it",
        where,
        severity=Severity.INFO,
        kind=IssueKind.OPTION_NOT_MODELLED,
    )


# --- tools/fill_template.py: `python3 tools/fill_template.py -i <config.pbtxt> key:value,key:value`


def _split(text: str, delimiter: str) -> list[str]:
    """fill_template.py split(): `delimiter` separates, a backslash makes the next character literal."""
    out, current, escape = [], "", False
    for char in text:
        if escape:
            current, escape = current + char, False
        elif char == delimiter:
            out.append(current)
            current = ""
        elif char == "\\":
            escape = True
        else:
            current += char
    out.append(current)
    return out


def substitutions(spec: str) -> dict[str, str] | None:
    """fill_template's `key:value,...` as the dict it substitutes, or None where fill_template itself fails
    (an entry that is not one `key:value`: its `key, value = split(sub, ":")` raises)."""
    out: dict[str, str] = {"max_queue_size": "0"}
    for sub in _split(spec, ","):
        parts = _split(sub, ":")
        if len(parts) != 2:
            return None
        out[parts[0]] = parts[1]
    return out


def filled(text: str, subs: dict[str, str]) -> str:
    """The template with fill_template's substitutions made (placeholders it is not given stay)."""
    return Template(text).safe_substitute(subs)
