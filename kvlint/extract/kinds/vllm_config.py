"""A vLLM `--config` YAML file: engine arguments as keys (`max-model-len: 32768` or `max_model_len`)."""

from __future__ import annotations

from kvlint import engines
from kvlint.deployment import Deployment, stated
from kvlint.extract.pod.argv import Token, scalar_where
from kvlint.load.tree import Mapping, Scalar

SIGNATURE = {
    "model",
    "max-model-len",
    "tensor-parallel-size",
    "gpu-memory-utilization",
    "max-num-seqs",
    "served-model-name",
}


def is_vllm_config(root: Mapping) -> bool:
    keys = {k.replace("_", "-") for k in root.values}
    return (
        "apiVersion" not in root
        and len(keys & SIGNATURE) >= 2
        and all(isinstance(v, Scalar) or k in ("served-model-name",) for k, v in root.items())
    )


def extract(root: Mapping, path: str, base_dir: str, lines: list[str]) -> list[Deployment]:

    d = Deployment(path, root.where(path), "vllm-config", "(root)", base_dir)
    d.engine = stated("vllm", root.where(path), "vLLM --config file")
    tokens: list[Token] = []
    for key, node in root.items():
        if not isinstance(node, Scalar) or node.value is None:
            continue
        option = "--" + key.replace("_", "-")
        if isinstance(node.value, bool):
            tokens.append(Token(option if node.value else "--no-" + option[2:], scalar_where(node, path)))
        else:
            tokens += [
                Token(option, root.keys[key].where(path)),
                Token(str(node.value), scalar_where(node, path)),
            ]
    engines.get("vllm").read_options(d, tokens, {}, positional_model=False)
    return [d]
