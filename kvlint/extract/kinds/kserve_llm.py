"""KServe `LLMInferenceService` (serving.kserve.io v1alpha1/v1alpha2): vLLM started by the base
`LLMInferenceServiceConfig` presets the service inherits.

What the well-known base preset does (kserve/kserve config/llmisvcconfig/config-llm-template.yaml),
applied here as named defaults: the container runs `vllm serve /mnt/models --served-model-name
<spec.model.name> … --tensor-parallel-size <spec.parallelism.tensor> ${VLLM_ADDITIONAL_ARGS} "$@"`
(the service's container args come last), and mounts a memory-backed `/dev/shm` emptyDir of 1Gi.
`spec.parallelism`: tensor, pipeline, data, dataLocal (ranks per pod), expert (expert parallelism);
with a `worker` template one replica is `data / dataLocal` pods (leader + workers). `spec.prefill`
is a second workload with its own parallelism and template.
"""

from __future__ import annotations

from kvlint import engines
from kvlint.codes import NOT_CHECKABLE
from kvlint.deployment import Deployment, default, inferred, stated
from kvlint.extract.pod import adapters, pods
from kvlint.extract.pod import container as ct
from kvlint.extract.pod.argv import _split_script, read_env, scalar_tokens
from kvlint.findings import Issue, IssueKind
from kvlint.load.tree import Mapping, Scalar

PRESET = "KServe base preset config-llm-template (kserve/kserve config/llmisvcconfig)"
PRESET_SHM = "1Gi"


def extract(ctx: ct.ObjectContext) -> list[Deployment]:
    spec = ctx.root.map("spec")
    if spec is None:
        return []
    roles: list[tuple[str, Mapping]] = [("", spec)]
    prefill = spec.map("prefill")
    if prefill is not None:
        roles.append(("prefill", prefill))
    return [_role(ctx, spec, role, body) for role, body in roles]


def _int(box: Mapping | None, key: str) -> Scalar | None:
    node = box.scalar(key) if box is not None else None
    return (
        node
        if node is not None and isinstance(node.value, int) and not isinstance(node.value, bool)
        else None
    )


def _role(ctx: ct.ObjectContext, spec: Mapping, role: str, body: Mapping) -> Deployment:
    path = ctx.file
    d = Deployment(path, ctx.where, ctx.kind, ctx.name + (f"/{role}" if role else ""), ctx.base_dir)
    d.ignores = dict(ctx.ignores)
    d.engine = inferred("vllm", f"KServe LLMInferenceService runs `vllm serve` ({PRESET})")
    name = spec.at("model", "name")
    uri = spec.at("model", "uri")
    if isinstance(name, Scalar) and name.value:
        d.model = stated(str(name.value), name.where(path))
    elif isinstance(uri, Scalar) and str(uri.value).startswith("hf://"):
        d.model = stated(str(uri.value)[5:], uri.where(path))
    adapters.kserve_lora(d, spec, path)
    par = body.map("parallelism")  # prefill states its own (spec.prefill is a workload spec of its own)
    for key, attr in (
        ("tensor", "tensor_parallel"),
        ("pipeline", "pipeline_parallel"),
        ("data", "data_parallel"),
    ):
        node = _int(par, key)
        if node is not None:
            setattr(d, attr, stated(node.value, node.where(path), f"spec.parallelism.{key}"))
    expert = par.scalar("expert") if par is not None else None
    if expert is not None and isinstance(expert.value, bool):
        d.expert_parallel = stated(expert.value, expert.where(path), "spec.parallelism.expert")
    template = body.map("template")
    container = next(iter(pods.containers(template)), None) if template is not None else None
    if template is not None and container is not None:
        _read_container(d, ctx, template, container)
    data, local = _int(par, "data"), _int(par, "dataLocal")
    if body.map("worker") is not None and data is not None and local is not None and local.value > 0:
        d.pods = stated(
            max(1, data.value // local.value),
            local.where(path),
            "parallelism data / dataLocal: pods per replica",
        )
    if container is not None and _cpu_only(template, container, path):
        where = (container.scalar("image") or container).where(path)
        d.accelerator = "cpu"
        d.issues.append(
            Issue(
                NOT_CHECKABLE,
                f"{d.label()}: requests no GPU (a CPU vLLM); kvlint models GPU memory",
                where,
                kind=IssueKind.ACCELERATOR_NOT_MODELLED,
            )
        )
        d.extra["unsupported"] = stated("cpu", where)
    if not d.has_shm:
        d.has_shm = True
        d.shm_size = default(PRESET_SHM, f"memory-backed /dev/shm of {PRESET_SHM} from the {PRESET}")
    return d


def _read_container(d: Deployment, ctx: ct.ObjectContext, template: Mapping, c: Mapping) -> None:
    from kvlint.extract.pod.engine_args import is_mock

    path = ctx.file
    ct.add_container_facts(d, ctx, template, c)
    image = c.scalar("image")
    if image is not None and image.value and is_mock(str(image.value)):
        # the template's container replaces vLLM with a simulator (llm-d-inference-sim): its flags are its own
        d.engine = stated("simulator", image.where(path), f"image {image.value}")
        ct.mark_unsupported(d, "simulator", image.where(path))
        return
    env = read_env(c, path)
    tokens = []
    extra = next(
        (
            e
            for e in c.seq("env") or ()
            if isinstance(e, Mapping) and e.value("name") == "VLLM_ADDITIONAL_ARGS"
        ),
        None,
    )
    node = extra.scalar("value") if extra is not None else None
    if node is not None and node.value:
        tokens += [
            t for t in _split_script(node, path, ctx.lines, env) if t.where is not None or t.text != ";"
        ]
    args = c.seq("args")
    if args is not None:
        tokens += scalar_tokens(args, path)
    engines.get("vllm").read_options(d, tokens, env, positional_model=False)


def _cpu_only(template: Mapping | None, c: Mapping, path: str) -> bool:
    """The container states its resources, none of them an accelerator, and the pod claims no device."""
    if (
        template is None
        or template.get("resourceClaims") is not None
        or c.at("resources", "claims") is not None
    ):
        return False
    return c.map("resources") is not None and not pods.device_resources(c, path)
