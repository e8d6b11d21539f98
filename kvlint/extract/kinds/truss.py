"""Baseten Truss `config.yaml`: the GPU from `resources.accelerator`, the engine from `docker_server`
or `trt_llm` (basetenlabs/truss truss/base/truss_config.py @v0.18.26).

- `resources.accelerator` is `NAME` or `NAME:COUNT` (or `{accelerator, count}`), NAME one of Truss's
  Accelerator names (truss_config.py:82-97, read by AcceleratorSpec :100-140); what card each is, is
  data (catalog/data/platform_gpus.json `truss`). `use_gpu` is not read by Truss itself: it is dropped
  and recomputed from the accelerator (:956-978). `node_count` is the nodes of one deployment (:930-934).
- `docker_server.start_command` is the server's command line: Truss runs it with `sh -c`
  (truss/templates/server.Dockerfile.jinja:124-130) or as supervisord's program command
  (truss/contexts/image_builder/serving_image_builder.py:488-489); the image is `base_image.image`;
  `environment_variables` are its environment (a `null` value is set at deploy time).
- `trt_llm` is Baseten's TensorRT-LLM engine builder (truss/base/trt_llm_config.py: build
  :265-315, runtime v1 :198-222, v2 :225-258): its settings are read as TensorRT-LLM options and go
  to the engine registry like any TensorRT-LLM command line.
- Otherwise the model is Python code (`model/model.py`), which kvlint does not read: on a GPU, one
  KV004 says so.
"""

from __future__ import annotations

import json
import os
import shlex
from functools import lru_cache
from typing import Any

from kvlint.codes import UNPARSED_SETTING
from kvlint.deployment import Deployment, inferred, stated
from kvlint.extract.pod import container as ct
from kvlint.extract.pod import synthetic as syn
from kvlint.extract.pod.argv import SHELLS, EnvVar, Token, _split_commands, _split_script, option_tokens
from kvlint.extract.pod.engine_args import Launch, find_launch
from kvlint.findings import Issue, IssueKind, Location
from kvlint.load.tree import Mapping, Node, Scalar
from kvlint.record import replace

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "catalog", "data", "platform_gpus.json")
TRUSS_KEYS = (
    "model_name",
    "model_metadata",
    "python_version",
    "model_class_name",
    "requirements",
    "base_image",
    "model_cache",
    "secrets",
    "environment_variables",
)
# trt_llm settings -> TensorRT-LLM's option names (trtllm-serve's), runtime after build so it wins (v2)
TRT_OPTIONS = (
    (("build", "max_seq_len"), "--max_seq_len"),
    (("build", "max_batch_size"), "--max_batch_size"),
    (("build", "max_num_tokens"), "--max_num_tokens"),
    (("build", "tensor_parallel_count"), "--tp_size"),
    (("build", "pipeline_parallel_count"), "--pp_size"),
    (("runtime", "max_seq_len"), "--max_seq_len"),
    (("runtime", "max_batch_size"), "--max_batch_size"),
    (("runtime", "max_num_tokens"), "--max_num_tokens"),
    (("runtime", "tensor_parallel_size"), "--tp_size"),
    (("runtime", "kv_cache_free_gpu_mem_fraction"), "--kv_cache_free_gpu_memory_fraction"),
    (
        ("runtime", "patch_kwargs", "kv_cache_config", "free_gpu_memory_fraction"),
        "--kv_cache_free_gpu_memory_fraction",
    ),
)
TRT_NOTED = (("build", "quantization_type"), ("build", "base_model"), ("inference_stack",))


@lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    with open(DATA, encoding="utf-8") as fh:
        return json.load(fh)["truss"]  # type: ignore[no-any-return]


def is_truss(root: Mapping) -> bool:
    """A Truss config: a `docker_server`, a `trt_llm` or a `resources.accelerator` / `use_gpu`, beside
    keys only Truss has. A chart's values (`resources: {limits: ...}`) or a compose file have neither."""
    if "apiVersion" in root or not any(k in root for k in TRUSS_KEYS):
        return False
    res = root.map("resources")
    gpu = res is not None and ("accelerator" in res or "use_gpu" in res)
    return gpu or isinstance(root.get("docker_server"), Mapping) or isinstance(root.get("trt_llm"), Mapping)


def extract(root: Mapping, path: str, base_dir: str, lines: list[str]) -> list[Deployment]:
    name = root.scalar("model_name")
    label = str(name.value) if name is not None and name.value is not None else "(root)"
    d = Deployment(path, (name or root).where(path), "truss", label, base_dir)
    env = _env(root, path)
    trt = root.get("trt_llm")
    server = root.get("docker_server")
    image = root.at("base_image", "image")
    image_text = str(image.value) if isinstance(image, Scalar) and image.value is not None else ""
    if isinstance(trt, Mapping):
        launch: Launch | None = _trt_launch(trt, path)
    elif isinstance(server, Mapping):
        launch = find_launch(_start_commands(server.scalar("start_command"), path, lines, env), image_text)
    else:
        launch = None
    gpu_read = _gpu(d, root, path)
    if launch is None:
        return _python_model(d, root, server, path, gpu_read)
    where = launch.entry.where if launch.entry is not None and launch.entry.where else d.where
    d.engine = stated(launch.engine, where, launch.how)
    d.args_where = where
    if isinstance(image, Scalar) and image_text:
        d.image = stated(image_text, image.where(path))
        version = ct.image_version(image_text, launch.engine)
        if version:
            d.engine_version = inferred(version, f"from the image tag {image_text}", image.where(path))
    ct.read_engine(d, launch, env)
    if isinstance(trt, Mapping):
        _trt_quant(d, trt, path)
        _trt_said(d, trt)
    _repo_model(d, root, path)
    nodes = root.at("resources", "node_count")
    if isinstance(nodes, Scalar) and isinstance(nodes.value, int) and nodes.value > 1:
        d.pods = stated(nodes.value, nodes.where(path), "Truss resources.node_count")
    ct.finish(d)
    return [d]


def _env(root: Mapping, path: str) -> dict[str, EnvVar]:
    box = root.map("environment_variables")
    return {
        key: EnvVar(None if node.value is None else str(node.value), node.where(path))
        for key, node in (box.items() if box is not None else ())
        if isinstance(node, Scalar)
    }


def _start_commands(
    node: Scalar | None, path: str, lines: list[str], env: dict[str, EnvVar]
) -> list[list[Token]]:
    """The command lines of `start_command`, through the `sh -c "…"` layers it is written in."""
    if node is None or node.value is None:
        return []
    text = str(node.value)
    for _depth in range(3):
        try:
            words = shlex.split(text)
        except ValueError:
            break
        is_shell = len(words) >= 3 and (words[0] in SHELLS or words[0].endswith(("/sh", "/bash")))
        if not (is_shell and words[1].startswith("-") and "c" in words[1]):
            break
        text = words[2]
    script = syn.scalar(node, text)
    return _split_commands(_split_script(script, path, lines, env))


def _trt_launch(trt: Mapping, path: str) -> Launch:
    """The engine builder's settings as TensorRT-LLM's own options, the checkpoint as the model."""
    entries = [
        (option, node)
        for keys, option in TRT_OPTIONS
        if isinstance(node := trt.at(*keys), Scalar) and node.value is not None
    ]
    repo = trt.at("build", "checkpoint_repository", "repo")
    tokens = [Token(str(repo.value), repo.where(path))] if isinstance(repo, Scalar) and repo.value else []
    tokens += option_tokens(entries, path)
    entry = Token("trt_llm", trt.where(path))
    return Launch("trtllm", tokens, entry, "Truss trt_llm (Baseten's TensorRT-LLM engine builder)")


# Baseten's build.quantization_type (truss/base/trt_llm_config.py TrussTRTLLMQuantizationType) -> the weights'
# TensorRT-LLM quant algo and the KV cache dtype it builds the engine with (`_kv`: an FP8 / int8 KV cache)
TRT_QUANT = {
    "fp8": ("fp8", None),
    "fp8_kv": ("fp8", "fp8"),
    "fp4": ("nvfp4", None),
    "fp4_kv": ("nvfp4", "fp8"),
    "weights_int8": ("int8_wo", None),
    "weights_kv_int8": ("int8_wo", "int8"),
    "weights_int4": ("int4_awq", None),
    "weights_int4_kv_int8": ("int4_awq", "int8"),
}


def _trt_quant(d: Deployment, trt: Mapping, path: str) -> None:
    """The engine builder's quantization: the weights' algorithm and the KV cache dtype it builds with."""
    node = trt.at("build", "quantization_type")
    algo = TRT_QUANT.get(str(node.value).lower()) if isinstance(node, Scalar) and node.value else None
    if algo is None:
        return
    where = node.where(path)  # type: ignore[union-attr]
    d.quantization = stated(algo[0], where, "Truss build.quantization_type")
    if algo[1] is not None:
        d.kv_cache_dtype = stated(algo[1], where, "Truss build.quantization_type")


def _trt_said(d: Deployment, trt: Mapping) -> None:
    """When the engine is not modelled, its KV004 names the engine-builder settings it could not check."""
    if "unsupported" not in d.extra:
        return
    read = [
        f"{'.'.join(keys)} {node.value}"
        for keys in (*(k for k, _ in TRT_OPTIONS), *TRT_NOTED)
        if isinstance(node := trt.at(*keys), Scalar) and node.value is not None
    ]
    for i, issue in enumerate(d.issues):
        if issue.kind is IssueKind.ENGINE_NOT_MODELLED and read:
            d.issues[i] = replace(
                issue, details=(*issue.details, "trt_llm settings not checked: " + ", ".join(read))
            )


def _repo_model(d: Deployment, root: Mapping, path: str) -> None:
    """`model_metadata.repo_id` names the model when the engine's own argument could not be read."""
    repo = root.at("model_metadata", "repo_id")
    if d.model is None and isinstance(repo, Scalar) and isinstance(repo.value, str) and repo.value:
        d.model = inferred(repo.value, "Truss model_metadata.repo_id", repo.where(path))


def _gpu(d: Deployment, root: Mapping, path: str) -> bool:
    """`resources.accelerator` -> the GPU and its count; False when none is stated."""
    node = root.at("resources", "accelerator")
    if isinstance(node, Mapping):
        name_node, count_node = node.get("accelerator"), node.get("count")
        name = name_node.value if isinstance(name_node, Scalar) else None
        count = count_node.value if isinstance(count_node, Scalar) else 1
    elif isinstance(node, Scalar) and node.value is not None:
        name, _, count_text = str(node.value).strip().partition(":")
        count = int(count_text) if count_text.isdigit() else (count_text or 1)
    elif node is None or (isinstance(node, Scalar) and node.value is None):
        return False  # no accelerator: Truss gives the model no GPU
    else:
        name, count = None, None
    where = node.where(path)
    table = _table()["accelerators"]
    if name not in table or not isinstance(count, int) or isinstance(count, bool) or count <= 0:
        d.issues.append(_refused(name, count, table, where))
        d.unreadable.append("gpus_per_pod")
        return True
    card = table[name]
    note = f"Truss resources.accelerator {name}" + (
        f" ({_table()['notes'][name]})" if name in _table()["notes"] else ""
    )
    d.gpu = stated(str(card or name), where, note)
    d.gpus_per_pod = stated(count, where, f"Truss resources.accelerator {name}:{count}")
    return True


def _refused(name: object, count: object, table: dict[str, Any], where: Location) -> Issue:
    if name is None:
        why = "no accelerator is named (write NAME, NAME:COUNT or {accelerator: NAME, count: N})"
    elif name not in table:
        why = f"`{name}` is not an accelerator Truss accepts ({', '.join(table)})"
    else:
        why = f"the count `{count}` is not a positive integer"
    return Issue(
        UNPARSED_SETTING,
        f"resources.accelerator: {why}; Truss refuses the config",
        where,
        fix="write NAME or NAME:COUNT, e.g. H100:2",
    )


def _python_model(
    d: Deployment, root: Mapping, server: Node | None, path: str, gpu_read: bool
) -> list[Deployment]:
    """No engine kvlint reads: a Python model (model/model.py), or a start command that starts none.
    On a GPU it is said, never passed over."""
    if not gpu_read:
        return []  # no GPU either: a CPU model (link/unread.py still says an engine command it sees)
    _repo_model(d, root, path)
    if isinstance(server, Mapping):
        start = server.scalar("start_command")
        where = start.where(path) if start is not None else server.where(path)
        shown = f" ({str(start.value)[:80]})" if start is not None and start.value else ""
        why = f"docker_server.start_command{shown} starts no LLM engine kvlint reads"
        ct.not_checked(d, where, "Truss docker_server", why)
        ct.finish(d)
        return [d]
    where = d.gpu.where if d.gpu is not None and d.gpu.where else d.where
    why = "the model is Python code (model/model.py, `model_class_name`), which kvlint does not read"
    ct.not_checked(d, where, "Truss Python model", why)
    ct.finish(d)
    return [d]
