"""Triton's TensorRT-LLM backend from its model repository: `tritonserver --model-repository=<path>` (also
`--model-store`, tensorrtllm_backend scripts/launch_triton_server.py `--model_repo` (:56) and a
`--triton_model_repo_dir`), each model a folder `<path>/<model>/config.pbtxt`.

Where the repository is in reach (extract/pod/folder.py: a ConfigMap mounted under it, or a folder of the
linted tree the path maps to), its tensorrt_llm model's config.pbtxt is read (triton.py), after the
`fill_template.py -i <that file> key:value,...` commands of the container, and the deployment is planned on
the engine-build path (the C++ executor runs the built engine: inflight_batcher_llm/src/model_instance_state.cc
creates `executor::Executor(decoderModelPath, …)` at v0.18.2, :686). The built engine's own config.json
(engine_config.py) gives its limits; the preprocessing model's `tokenizer_dir` (preprocessing/1/model.py:62, the
tokenizer of the model the engine was built from) names the model where the workload does not. Without the
repository the workload is one KV004 that says what to lint with it.
"""

from __future__ import annotations

import posixpath

from kvlint.codes import NOT_CHECKABLE
from kvlint.deployment import Deployment, stated
from kvlint.engines.trtllm import options, triton
from kvlint.engines.trtllm.engine_config import SOURCE as BUILD_DEFAULTS
from kvlint.engines.trtllm.engine_config import read_engine_config
from kvlint.engines.trtllm.launch import FILL_TEMPLATE
from kvlint.extract.pod.argv import Token
from kvlint.findings import Issue, Location, Severity

# what sets each field of a Triton deployment, as a fix names it: the tensorrt_llm model's config.pbtxt parameter,
# or trtllm-build's option, as the engine's limits are fixed when it is built (builder.py BuildConfig)
KNOBS = {
    "gpu_memory_utilization": "kv_cache_free_gpu_mem_fraction",
    "max_context": "trtllm-build --max_seq_len",
    "max_sequences": "trtllm-build --max_batch_size",
    "max_batched_tokens": "trtllm-build --max_num_tokens",
}
REPOSITORY_OPTIONS = ("--model-repository", "--model-store", "--model_repo", "--triton_model_repo_dir")
WORLD = "--world_size"  # launch_triton_server.py:12 "world size, only support tensor parallelism now"
KEY = "triton_model_repository"
# tritonserver --model-control-mode: none (the default) loads every model of the repository at start-up
CONTROL_MODE, CONTROL_KEY = "--model-control-mode", "triton_model_control_mode"


def _value(words: list[Token], names: tuple[str, ...]) -> Token | None:
    for i, tok in enumerate(words):
        name, eq, value = tok.text.partition("=")
        if name not in names:
            continue
        if eq:
            return Token(value, tok.where, tok.note, tok.unresolved)
        return words[i + 1] if i + 1 < len(words) else None
    return None


def read_launch(d: Deployment, launch) -> None:
    """The model repository the launch names (kept for `read_folder`); one KV004 when it names none."""
    words = ([launch.entry] if launch.entry is not None else []) + list(launch.tokens)
    repo = _value(words, REPOSITORY_OPTIONS)
    if repo is None or repo.unresolved or not repo.text.strip():
        return options.not_modelled(
            d, options.TRITON + ": the launch names no model repository", "trtllm-triton"
        )
    d.extra[KEY] = stated(repo.text.strip(), repo.where or d.where, repo.note)
    mode = _value(words, (CONTROL_MODE,))
    if mode is not None:
        d.extra[CONTROL_KEY] = stated(mode.text.strip().lower(), mode.where or d.where, CONTROL_MODE)
    world = _value(words, (WORLD,))
    if world is not None and world.text.isdigit() and 0 < int(world.text) <= 4096:
        d.tensor_parallel = stated(
            int(world.text), world.where, "launch_triton_server.py --world_size (TP ranks)"
        )


def _out_of_reach(d: Deployment, path: str, why: str) -> None:
    """One KV004 naming the repository and saying what to lint with it."""
    options.not_modelled(
        d,
        "Triton's TensorRT-LLM backend reads its settings (engine directory, kv_cache_free_gpu_mem_fraction,"
        f" max_tokens_in_paged_kv_cache) from the config.pbtxt of each model of its model repository {path},"
        f" {why}: lint this file with the repository beside it (the tensorrtllm_backend"
        " all_models/inflight_batcher_llm layout, <model>/config.pbtxt) or its config.pbtxt in a ConfigMap"
        " mounted there",
        "trtllm-triton",
    )


def _fills(folder, model: str) -> list[str]:
    """The substitutions of each `fill_template.py -i FILE SUBS` of the container whose FILE is this model's
    config.pbtxt (its path in the repository, or a relative path that ends in `<model>/config.pbtxt`)."""
    target = posixpath.normpath(posixpath.join(folder.path, model, "config.pbtxt"))
    out = []
    for command in folder.commands:
        at = next((i for i, t in enumerate(command) if posixpath.basename(t.text) == FILL_TEMPLATE), None)
        if at is None:
            continue
        args = command[at + 1 :]
        in_place = any(t.text in ("-i", "--in_place") for t in args)
        rest = [t for t in args if not t.text.startswith("-")]
        if not in_place or len(rest) < 2:
            continue
        file = posixpath.normpath(rest[0].text)
        named = file == target or (not posixpath.isabs(file) and file.endswith(f"{model}/config.pbtxt"))
        if named:
            out.append(rest[1].text)
    return out


def _config_of(d: Deployment, folder, model: str) -> tuple[triton.ModelConfig | None, str]:
    """The model's config.pbtxt, filled as the container's fill_template commands fill it; else (None, why it
    was not read: "" when there is none)."""
    found = folder.read(f"{model}/config.pbtxt")
    if found is None or found.text is None:
        return None, found.why if found is not None else ""
    shown = (
        found.where.file if found.where is not None else posixpath.join(folder.path, model, "config.pbtxt")
    )
    text = found.text
    for spec in _fills(folder, model):
        subs = triton.substitutions(spec)
        if subs is not None:
            text = triton.filled(text, subs)
    # the text of a ConfigMap's key, not the tree's file: its locations point at the key
    anchor = (
        found.where if found.where is not None and not found.where.file.endswith("config.pbtxt") else None
    )
    config, issue = triton.read_config(text, shown, anchor)
    if issue is not None:
        d.issues.append(issue)
        return None, f"{shown} does not parse"
    return config, ""


def read_folder(d: Deployment, folder) -> None:
    """The tensorrt_llm model of the repository onto the deployment, or one KV004 saying why not."""
    path = str(d.extra[KEY].value)
    configs, unread = {}, []
    for model in folder.entries():
        config, why = _config_of(d, folder, model)
        if config is not None:
            configs[model] = config
        elif why:
            unread.append(why)
    llm = [m for m, c in configs.items() if c.runs_trtllm()]
    if not llm:
        looked = " or ".join(f"{name}/" for name in folder.looked)
        if unread:
            why = f"whose models cannot all be read ({'; '.join(unread[:3])})"
        elif configs:
            why = f"whose models ({', '.join(sorted(configs))}) include no tensorrt_llm model (backend tensorrtllm)"
        else:
            why = (
                f"which is not in reach (no {looked} beside this file)" if looked else "which is not in reach"
            )
        _out_of_reach(d, path, why)
        return
    config = configs[llm[0]]
    at = config.where(config.backend) if config.backend is not None else Location(config.shown, 1, 1)
    mode = d.extra.get(CONTROL_KEY)
    if len(llm) > 1 and (mode is None or mode.value == "none"):
        d.issues.append(_others(llm, at))
    d.extra["backend"] = stated(
        "trt", at, f"{config.shown}: Triton's TensorRT-LLM backend runs the built engine"
    )
    triton.apply(d, config)
    _engine(d, folder, path)
    _tokenizer(d, configs)


def _others(llm: list[str], at: Location) -> Issue:
    """Several tensorrt_llm models in one repository: Triton loads them all at start-up (model control mode
    `none`, its default: "Triton attempts to load all models in the model repository at startup",
    triton-inference-server/server docs/user_guide/model_management.md), each engine taking its share of the
    memory free when it loads, in an order the repository does not fix; kvlint plans the first alone."""
    return Issue(
        NOT_CHECKABLE,
        f"the model repository holds {len(llm)} tensorrt_llm models ({', '.join(llm)}): Triton loads all of"
        " them at start-up (model control mode none, its default), each engine taking its"
        " kv_cache_free_gpu_mem_fraction of the memory free when it loads, in no fixed order; kvlint plans"
        f" {llm[0]} alone, and the others and their sharing of the GPU are not checked",
        at,
        severity=Severity.INFO,
    )


def _engine(d: Deployment, folder, path: str) -> None:
    """The engine's config.json, where gpt_model_path maps into the repository; an info when it does not."""
    engine = d.extra.get("engine_dir")
    if engine is None:
        return
    rel = posixpath.relpath(posixpath.normpath(str(engine.value)), posixpath.normpath(path))
    found = None if rel.startswith("..") else folder.read(posixpath.join(rel, "config.json"))
    if found is not None and found.text is not None and found.where is not None:
        read_engine_config(d, found.text, found.where.file)
        return
    why = f" ({found.why})" if found is not None and found.why else ""
    d.issues.append(
        Issue(
            NOT_CHECKABLE,
            f"{d.label()}: the built engine's config.json in {engine.value} is not in reach{why}: its limits are"
            " taken as trtllm-build's defaults (max_batch_size 2048, max_num_tokens 8192, max_seq_len the model's"
            f" max_position_embeddings; {BUILD_DEFAULTS}); lint with the engine folder inside the model repository"
            " to check the engine that was built",
            engine.where or d.where,
            severity=Severity.INFO,
        )
    )


def _tokenizer(d: Deployment, configs: dict[str, triton.ModelConfig]) -> None:
    if d.model is not None:
        return
    for config in configs.values():
        s = config.params.get("tokenizer_dir")
        if s is not None and not s.unfilled and s.text.strip():
            d.model = stated(s.text.strip(), config.where(s), f"tokenizer_dir of {config.shown}")
            return
