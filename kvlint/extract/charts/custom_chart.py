"""Values of an in-house chart that runs an engine image with keys of its own (`modelName:`, `hfModel:`,
`extraArgs: [--tensor-parallel-size, "4"]`, `gpuCount: 2`), read by the class of key, never by the chart's
name. Taken only where no chart kvlint knows claims the values (the vLLM project's chart reads only
`image.command`; OPEA's and silogen's layouts have their own keys) and the image names the engine
(helm_values.chart_values); each fact is inferred, named with the key it came from, as the chart's
templates, not kvlint, decide what reaches the container.

- The model: the first of MODEL_KEYS whose value is a Hugging Face Hub id (`org/name`) or an id or alias
  the model catalog knows (a bare `mistral-7b` that it does not know is not taken for one).
- The engine's arguments: the first of ARGS_KEYS that is a list holding an engine option (`--max-model-len`,
  `--tensor-parallel-size`, …: link/unread.ENGINE_FLAGS, the options only an LLM engine takes), added to the
  image's command line as the chart's `args:`.
- The GPUs: `resources` as the container's (read by the pod reader), else the first of GPU_KEYS holding a
  whole number.
"""

from __future__ import annotations

import re

from kvlint.load.tree import Mapping, Node, Scalar, Sequence

MODEL_KEYS: tuple[tuple[str, ...], ...] = (
    ("modelName",),
    ("model_name",),
    ("hfModel",),
    ("hfModelId",),
    ("huggingfaceId",),
    ("modelID",),
    ("model_id",),
    ("model", "huggingfaceName"),
    ("model", "hfModel"),
    ("model", "repository"),
    ("model", "uri"),
    ("llm", "model"),
)
ARGS_KEYS = ("extraArgs", "args", "engineArgs", "vllmArgs", "serverArgs", "extra_args")
GPU_KEYS = ("gpuCount", "numGpus", "num_gpus", "gpus", "gpu")
# the options only an LLM engine's command line takes (vLLM, SGLang, TGI spellings; link/unread.py ENGINE_FLAGS)
ENGINE_FLAGS = re.compile(
    r"^--(tensor-parallel-size|pipeline-parallel-size|max-model-len|gpu-memory-utilization|max-num-seqs|"
    r"quantization|served-model-name|model|tp-size|context-length|mem-fraction-static|num-shard|"
    r"max-total-tokens|max-input-length|model-id|dtype|kv-cache-dtype|max-num-batched-tokens)(=|$)"
)


def model(root: Mapping) -> tuple[Scalar, str] | None:
    """(the value, the key path) of the first model key naming a model id."""
    from kvlint.catalog import models

    for path in MODEL_KEYS:
        node = root.at(*path)
        if not isinstance(node, Scalar) or not isinstance(node.value, str):
            continue
        text = models.strip_ref(node.value)
        if models.is_hub_id(text) or models.lookup(text) is not None:
            return node, ".".join(path)
    return None


def args(root: Mapping) -> tuple[Sequence, str] | None:
    """(the list, its key) of the first argument list holding an engine option."""
    for key in ARGS_KEYS:
        seq = root.seq(key)
        if seq is not None and any(_flag(item) for item in seq.items):
            return seq, key
    return None


def _flag(item: Node) -> bool:
    return isinstance(item, Scalar) and isinstance(item.value, str) and bool(ENGINE_FLAGS.match(item.value))


def gpus(root: Mapping) -> tuple[Scalar, str] | None:
    """(the value, its key) of the first GPU count key holding a whole number above 0."""
    for key in GPU_KEYS:
        node = root.get(key)
        if isinstance(node, Scalar) and isinstance(node.value, int) and not isinstance(node.value, bool):
            if node.value > 0:
                return node, key
    return None
