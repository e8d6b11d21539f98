"""Helm charts that write the engine's command line from values keys of their own.

A family is recognised by its keys (never by the file name), then read as its templates render the
container: the model key becomes `--model`, the chart's argument list comes before the chart's own flags,
and what the values leave out takes the chart's default (named as the chart's default, with its source).

- OPEA `vllm` chart (opea-project/GenAIInfra@9200b371 helm-charts/common/vllm): templates/deployment.yaml
  renders `args: [extraCmdArgs..., --model LLM_MODEL_ID, --host 0.0.0.0, --port <port>, --download-dir /data]`
  on the image's entrypoint, mounts a memory-backed emptyDir of `shmSize` at /dev/shm, and takes
  `resources` as written; values.yaml defaults LLM_MODEL_ID meta-llama/Meta-Llama-3-8B-Instruct, shmSize 1Gi,
  accelDevice "" ("empty for CPU"), resources without any accelerator.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvlint.codes import NOT_CHECKABLE
from kvlint.deployment import Deployment, default, stated
from kvlint.extract.argv import Token, option_tokens, scalar_where
from kvlint.findings import Issue
from kvlint.load.tree import Mapping, Scalar, Sequence


@dataclass(frozen=True)
class Layout:
    name: str
    source: str
    keys: tuple[str, ...]  # all of these at the top of the values
    any_of: tuple[str, ...]  # and at least one of these
    model_key: str  # rendered as `--model <value>`
    args_key: str  # a list rendered before the chart's own flags
    shm_key: str  # sizeLimit of the memory-backed /dev/shm the chart always mounts
    defaults: tuple[tuple[str, str], ...]  # the chart's values.yaml defaults for the keys above


LAYOUTS: tuple[Layout, ...] = (
    Layout(
        name="OPEA vllm chart",
        source="opea-project/GenAIInfra helm-charts/common/vllm values.yaml",
        keys=("extraCmdArgs",),
        any_of=("LLM_MODEL_ID", "accelDevice"),
        model_key="LLM_MODEL_ID",
        args_key="extraCmdArgs",
        shm_key="shmSize",
        defaults=(("LLM_MODEL_ID", "meta-llama/Meta-Llama-3-8B-Instruct"), ("shmSize", "1Gi")),
    ),
)


def layout_of(root: Mapping) -> Layout | None:
    for layout in LAYOUTS:
        if all(k in root for k in layout.keys) and any(k in root for k in layout.any_of):
            return layout
    return None


def args(layout: Layout, root: Mapping) -> Sequence | None:
    """The chart's argument list (what comes before its own flags), to add to the container."""
    seq = root.seq(layout.args_key)
    return seq if seq is not None and seq.items else None


def model_tokens(layout: Layout, root: Mapping, path: str) -> list[Token]:
    """`--model <value>` as the template writes it, when the values state the model."""
    node = root.scalar(layout.model_key)
    if isinstance(node, Scalar) and node.value:
        return option_tokens([("--model", node)], path)
    return []


def apply(d: Deployment, layout: Layout, root: Mapping, path: str) -> None:
    """What the chart adds to the container beyond the command line: its defaults, /dev/shm, no GPU."""
    defaults = dict(layout.defaults)
    if d.model is None and layout.model_key in defaults:
        d.model = default(
            defaults[layout.model_key], f"the {layout.name}'s default {layout.model_key} ({layout.source})"
        )
    shm = root.scalar(layout.shm_key)
    d.has_shm = True
    if isinstance(shm, Scalar) and shm.value:
        where = shm.where(path)
        d.shm_size = stated(str(shm.value), where, f"{layout.shm_key}: the chart's memory-backed /dev/shm")
        d.memory_quantities.append(("/dev/shm sizeLimit", str(shm.value), where))
    elif layout.shm_key in defaults:
        d.shm_size = default(
            defaults[layout.shm_key],
            f"memory-backed /dev/shm of the {layout.name}'s default {layout.shm_key} ({layout.source})",
        )
    if d.gpus_per_pod is None and d.accelerator == "gpu" and "gpus_per_pod" not in d.unreadable:
        res = root.map("resources")
        where = (res or root).where(path)
        d.accelerator = "cpu"
        d.issues.append(
            Issue(
                NOT_CHECKABLE,
                f"{d.label()}: `resources` requests no GPU, so the {layout.name} renders a CPU vLLM "
                "(its default; set resources.limits nvidia.com/gpu for a GPU); kvlint models GPU memory",
                where,
            )
        )
        d.extra["unsupported"] = stated("cpu", where)


__all__ = ["LAYOUTS", "Layout", "apply", "args", "layout_of", "model_tokens"]


# --- charts whose engine options are a mapping of flag -> value --------------------------------
# silogen/ai-workloads workloads/llm-inference-vllm/helm (templates/_entrypoint.tpl, deployment.yaml):
# `python3 -m vllm.entrypoints.openai.api_server --<key>=<value> (a null value: a bare --<key>) ...
# --model=<model> --tensor-parallel-size=<gpus>`, resources amd.com/gpu: <gpus>, /dev/shm a
# memory-backed emptyDir of dshm.sizeLimit. `gpus` left out: its values.yaml default 1 (corpus copy,
# commit c32f131c); the default image and /dev/shm are not assumed (the benchmark chart beside it has its own).
SILOGEN_SOURCE = "silogen/ai-workloads workloads/llm-inference-vllm/helm values.yaml"
SILOGEN_GPUS = 1


def is_engine_args_chart(root: Mapping) -> bool:
    return isinstance(root.map("vllm_engine_args"), Mapping) and "model" in root and "kind" not in root


def engine_args_tokens(root: Mapping, path: str) -> list[Token]:
    """`vllm_engine_args` as the template writes it: `--key=value`, or `--key` for a null value."""
    tokens: list[Token] = []
    args = root.map("vllm_engine_args")
    if args is None:
        return tokens
    for key, node in args.items():
        flag = key if key.startswith("--") else f"--{key}"
        value = node.value if isinstance(node, Scalar) else None
        where = args.keys[key].where(path) if key in args.keys else node.where(path)
        tokens.append(Token(flag, where))
        if value is not None:
            tokens.append(Token(str(value), scalar_where(node, path)))  # type: ignore[arg-type]
    return tokens
