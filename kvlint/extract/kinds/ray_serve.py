"""Ray Serve LLM configs outside Kubernetes: a Serve config file (`applications:` whose args hold
`llm_configs`, `llm_config` or `prefill_config`/`decode_config`) or one `LLMConfig` as plain YAML
(`model_loading_config`, `engine_kwargs`, `accelerator_type`, `deployment_config`). Each LLMConfig
is a vLLM workload; engine_kwargs are vLLM's engine arguments. GPUs per replica are the
tensor x pipeline parallel workers Ray places for it (the config names no cluster)."""

from __future__ import annotations

from kvlint.deployment import Deployment
from kvlint.extract.kinds import ray
from kvlint.extract.pod import container as ct
from kvlint.load.tree import Mapping


def _is_llm_config(root: Mapping) -> bool:
    return "model_loading_config" in root and any(
        k in root for k in ("engine_kwargs", "accelerator_type", "deployment_config")
    )


def is_serve_config(root: Mapping) -> bool:
    if "apiVersion" in root:
        return False
    if _is_llm_config(root):
        return True
    apps = root.seq("applications")
    return apps is not None and any(isinstance(a, Mapping) and ray.llm_configs(a) for a in apps)


def extract(root: Mapping, path: str, base_dir: str, lines: list[str]) -> list[Deployment]:
    ctx = ct.ObjectContext(path, lines, base_dir, root, "ray-serve-config", "", {})
    scratch = (Deployment(path, root.where(path), "ray-serve-config", "", base_dir), 0)
    out: list[Deployment] = []
    if _is_llm_config(root):
        out.append(ray.llm_config_deployment(ctx, root, root, scratch))
    for app in root.seq("applications") or ():
        if isinstance(app, Mapping):
            for role, cfg in ray.llm_configs(app):
                out.append(ray.llm_config_deployment(ctx, app, cfg, scratch, role))
    for d in out:
        ct.finish(d)
    return out
