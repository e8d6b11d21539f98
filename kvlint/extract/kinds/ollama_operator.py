"""Ollama Operator's `Model` (ollama.ayaka.io/v1, nekomeowww/ollama-operator): one Ollama server Deployment
serving the model `spec.image` names, as the operator builds it (pkg/model/pod.go and model.go @v0.10.10):

- the pod is `spec.podTemplate` (nodeSelector, tolerations, affinity, ... as written) with the operator's
  `server` container put in it: image `ollama/ollama` (untagged: the registry's latest), args `serve`,
  env `spec.extraEnv` with OLLAMA_HOST 0.0.0.0 added, resources `spec.resources` (NewOllamaServerContainer,
  AssignOllamaServerContainer); `spec.runtimeClassName` and `spec.replicas` are the Deployment's;
- an init container pulls `spec.image` (an Ollama library name such as `phi` or `llama3:8b`) into the shared
  image store before the server starts, so the server holds that model once a request names it.
"""

from __future__ import annotations

from kvlint.deployment import Deployment, stated
from kvlint.extract.pod import container as ct
from kvlint.extract.pod import synthetic as syn
from kvlint.extract.pod.argv import EnvVar, env_entries
from kvlint.extract.pod.engine_args import find_launch
from kvlint.load.tree import Mapping

SOURCE = "nekomeowww/ollama-operator@v0.10.10 pkg/model/pod.go"
IMAGE = "ollama/ollama"  # OllamaBaseImage (pod.go): no tag


def model(ctx: ct.ObjectContext) -> list[Deployment]:
    spec = ctx.root.map("spec")
    named = spec.scalar("image") if spec is not None else None
    if spec is None or named is None or not isinstance(named.value, str) or not named.value.strip():
        return []
    path = ctx.file
    where = named.where(path)
    pod = spec.at("podTemplate", "spec")
    pod = pod if isinstance(pod, Mapping) else syn.mapping(spec, {})
    resources = spec.get("resources")
    container = syn.mapping(spec, {"name": syn.scalar(spec, "server"), "resources": resources})
    d = Deployment(path, ctx.where, ctx.kind, ctx.name, ctx.base_dir)
    d.ignores = dict(ctx.ignores)
    launch = find_launch([], IMAGE)
    assert launch is not None
    d.engine = stated(
        launch.engine, where, f"an Ollama Operator Model: the operator runs {IMAGE} serve ({SOURCE})"
    )
    d.image = stated(IMAGE, where, f"the operator's server image ({SOURCE} OllamaBaseImage)")
    d.model = stated(
        named.value.strip(),
        where,
        "an Ollama library name, pulled into the image store before the server starts",
    )
    env = env_entries(spec.seq("extraEnv"), path)
    env.setdefault("OLLAMA_HOST", EnvVar("0.0.0.0", None))
    ct.read_engine(d, launch, env)
    ct.add_container_facts(
        d, ctx, pod, container
    )  # spec.replicas is read from the object, as for a Deployment
    return [d]
