"""One serving container (in its pod) -> a Deployment: engine, arguments, GPUs, shm, memory."""

from __future__ import annotations

import re

from kvlint import engines
from kvlint.codes import NOT_CHECKABLE, UNPARSED_SETTING
from kvlint.deployment import Deployment, inferred, stated
from kvlint.extract.kinds import node_pools
from kvlint.extract.pod import (
    adapters,
    dra,
    folder,
    gpu_fraction,
    gpu_selectors,
    gpu_sharing,
    mounted,
    pods,
    vgpu,
    visible,
)
from kvlint.extract.pod.argv import EnvVar, Token, container_commands, read_env, split_flag
from kvlint.extract.pod.engine_args import UNSUPPORTED, Launch, find_launch
from kvlint.findings import Issue, IssueKind, Location
from kvlint.load.nearby import Nearby
from kvlint.load.tree import Mapping, Scalar
from kvlint.record import field, record, replace


@record
class ObjectContext:
    """What every workload in one Kubernetes object shares."""

    file: str
    lines: list[str]
    base_dir: str
    root: Mapping
    kind: str
    name: str
    ignores: dict[str, tuple[str, Location]] = field(default_factory=dict)
    nearby: Nearby | None = None  # other documents' objects (a KServe runtime); None: none looked for

    @property
    def where(self) -> Location:
        meta = self.root.map("metadata")
        name = meta.scalar("name") if meta is not None else None
        node: Scalar | Mapping = name if name is not None else self.root
        return node.where(self.file)


def read_ignores(root: Mapping, path: str) -> dict[str, tuple[str, Location]]:
    """`kvlint.io/ignore: "KV103=reason, KV102=other reason"` on the object (or its pod template)."""
    out: dict[str, tuple[str, Location]] = {}
    for meta in (root.map("metadata"), root.at("spec", "template", "metadata")):
        if not isinstance(meta, Mapping):
            continue
        ann = meta.map("annotations")
        node = ann.scalar("kvlint.io/ignore") if ann is not None else None
        if node is None or node.value is None:
            continue
        # "KV103=reason, with commas, KV102" : a comma starts a new entry only before a rule code or name
        for part in re.split(r",\s*(?=(?:[Kk][Vv]\d{3}|[a-z]+(?:-[a-z]+)+)\s*(?:=|,|$))", str(node.value)):
            code, _, reason = part.partition("=")
            if code.strip():
                out[code.strip().upper()] = (reason.strip(), node.where(path))
    return out


def image_version(image: str, engine: str) -> str | None:
    """The release the image's tag names for a modelled engine (`vllm/vllm-openai:v0.10.0` -> "0.10.0");
    None for latest/nightly, an image of another project or an engine kvlint does not model."""
    return engines.get(engine).image_version(image) if engines.known(engine) else None


def build(
    ctx: ObjectContext,
    pod: Mapping,
    container: Mapping,
    env_extra: dict[str, EnvVar] | None = None,
    storage: Token | None = None,
) -> Deployment | None:
    """A Deployment for this container if it runs an LLM engine, else None."""
    path = ctx.file
    env = read_env(container, path)
    if env_extra:
        env = {**env_extra, **env}
    commands = container_commands(container, path, ctx.lines, env)
    image_node = container.scalar("image")
    image = str(image_node.value) if image_node is not None and image_node.value is not None else ""
    launch = find_launch(commands, image)
    if launch is None:
        launch = _custom_server(commands, container, path)
        if launch is None:
            return None
    name = ctx.name
    d = Deployment(file=path, where=ctx.where, kind=ctx.kind, name=name, base_dir=ctx.base_dir)
    d.ignores = dict(ctx.ignores)
    entry_where = (
        launch.entry.where
        if launch.entry is not None and launch.entry.where
        else (image_node.where(path) if image_node is not None else container.where(path))
    )
    d.engine = stated(launch.engine, entry_where, launch.how)
    if image_node is not None:
        d.image = stated(image, image_node.where(path))
        version = image_version(image, launch.engine)
        if version:
            d.engine_version = inferred(version, f"from the image tag {image}", image_node.where(path))
    first_tokens = commands[0] if commands else []
    d.args_where = (
        first_tokens[0].where if first_tokens and first_tokens[0].where else None
    ) or container.where(path)
    written = [t for t in (launch.entry, *launch.tokens) if t is not None and t.where and not t.note]
    d.args_end = written[-1].where if written else None
    read_engine(d, launch, env, storage)
    _option_files(d, ctx, pod, container, commands)
    add_container_facts(d, ctx, pod, container)
    visible.apply(d, {**env, **visible.from_script(launch)}, container)
    if "lora_adapters" not in d.extra:
        adapters.record(d, adapters.lora_syncer(ctx.nearby, pod))
    return d


def _option_files(
    d: Deployment, ctx: ObjectContext, pod: Mapping, container: Mapping, commands: list[list[Token]]
) -> None:
    """Files of options the engine's command line names (TensorRT-LLM's LLM-API YAML), read from the
    ConfigMap mounted there when it is in reach, and folders it names (Triton's model repository), read
    from mounted ConfigMaps or the linted tree (folder.py); the engine says what it does without them."""
    if not engines.known(d.engine_name):
        return
    engine = engines.get(d.engine_name)
    for path in engine.option_files(d):
        engine.read_option_file(d, path, mounted.text_at(ctx.nearby, pod, container, path))
    for path in engine.option_folders(d):
        engine.read_option_folder(d, path, folder.folder_at(ctx.nearby, pod, container, path, commands))


def read_engine(d: Deployment, launch: Launch, env: dict[str, EnvVar], storage: Token | None = None) -> None:
    """`storage`: the model a KServe storage initializer puts at /mnt/models, for servers that default to it."""
    if engines.known(launch.engine):
        engines.get(launch.engine).read(d, launch, env, storage)
    elif launch.engine == "hfserver":
        from kvlint.extract.pod.engine_args import hfserver

        hfserver.read(d, launch.tokens, env, storage)
    else:
        _model_of_unmodelled(d, launch)
        mark_unsupported(d, launch.engine, d.engine.where if d.engine else d.where)  # type: ignore[arg-type]


def _model_of_unmodelled(d: Deployment, launch: Launch) -> None:
    """The model an engine kvlint does not model serves (`--model-path X`, `vllm-omni serve X`), so the
    KV004 names a workload a reader can recognise."""
    tokens = launch.tokens
    for i, tok in enumerate(tokens):
        name, inline = split_flag(tok)
        if name in ("--model-path", "--model", "--model-id", "--model_path"):
            value = inline or (tokens[i + 1] if i + 1 < len(tokens) else None)
            if value is not None and value.text and not value.unresolved:
                d.model = stated(value.text, value.where or d.where, value.note)
            return
    positional = launch.engine == "vllm-omni"  # `… serve MODEL`
    if positional and tokens and not tokens[0].text.startswith("-"):
        if not tokens[0].unresolved:
            d.model = stated(tokens[0].text, tokens[0].where or d.where, tokens[0].note)


_MODEL_FLAGS = (
    "--model",
    "--model-id",
    "--model-path",
    "--model-name",
    "--model_id",
    "--model_path",
    "--model_name",
)


def _custom_server(commands: list, container: Mapping, path: str) -> Launch | None:
    """A GPU container whose command names a model (`--model …`) but whose engine kvlint does not
    know: not silently skipped, but reported as a workload kvlint cannot check."""
    if not any(pods.is_gpu(r.name) for r in pods.device_resources(container, path)):
        return None
    for tokens in commands:
        for tok in tokens:
            if tok.text.split("=", 1)[0] in _MODEL_FLAGS:
                entry = tokens[0] if tokens and tokens[0].where else tok
                return Launch("other", [], entry, f"a program started with {entry.text!r}")
    return None


def mark_unsupported(d: Deployment, engine: str, where: Location, why: str = "") -> None:
    """One KV004: the engine (a launch kind of UNSUPPORTED, or `why` it is not read) is not modelled."""
    d.issues.append(
        Issue(
            NOT_CHECKABLE,
            f"{d.label()}: {why or UNSUPPORTED.get(engine, engine)}",
            where,
            kind=IssueKind.ENGINE_NOT_MODELLED,
        )
    )
    d.extra["unsupported"] = stated(engine, where)


def not_checked(d: Deployment, where: Location, source: str, why: str) -> Deployment:
    """A workload whose engine is decided by something kvlint cannot read here (an object that is not in
    this file or beside it, a backend type the stack does not convert): one KV004 saying why."""
    d.engine = stated("other", where, source)
    d.issues.append(Issue(NOT_CHECKABLE, f"{d.label()}: {why}: not checked", where))
    d.extra["unsupported"] = stated("other", where)
    return d


def add_container_facts(d: Deployment, ctx: ObjectContext, pod: Mapping, container: Mapping) -> None:
    path = ctx.file
    for res in pods.device_resources(container, path):
        if res.count is None:
            d.issues.append(Issue(UNPARSED_SETTING, _unread_count(d, res.name, res.text), res.where))
            if pods.is_gpu(res.name):
                d.unreadable.append("gpus_per_pod")
        elif pods.is_gpu(res.name):
            d.gpus_per_pod, d.gpu_resource = stated(res.count, res.where, res.name), res.name
        elif res.name in pods.TPU_RESOURCES:
            d.accelerator = "tpu"
            # TPU chips: one JAX device each
            d.gpus_per_pod, d.gpu_resource = stated(res.count, res.where, res.name), res.name
        elif res.name in pods.NEURON_RESOURCES:
            d.accelerator = "neuron"
        elif res.name in pods.GAUDI_RESOURCES:
            d.accelerator = "gaudi"
        elif pods.is_ascend(res.name):
            d.accelerator = "ascend"
    mem = pods.memory_limit(container, path)
    if mem is not None:
        d.memory_limit = stated(mem[0], mem[1])
        d.memory_quantities.append(("resources.limits.memory", mem[0], mem[1]))
    s = pods.shm(pod, container, path)
    d.has_shm = s.present
    if s.present:
        d.shm_size = stated(s.size or "", s.where)
        if s.size:
            d.memory_quantities.append(("/dev/shm sizeLimit", s.size, s.where))  # type: ignore[arg-type]
    labels = pods.node_labels(pod, path)
    d.placement = inferred(node_pools.placement(pod, path), "node selectors and tolerations")
    apply_labels(d, labels)
    vgpu.read(d, ctx.root, container, path)
    gpu_fraction.read(d, ctx.root, container, path)
    gpu_sharing.apply(d, ctx.root, pod, container, labels, path)
    dra.read_refs(d, ctx.root, pod, container, path)


# the API server counts an extended resource (nvidia.com/gpu, amd.com/gpu ...) in whole units: a fraction
# fails validation with "must be an integer" (kubernetes/kubernetes pkg/apis/core/helper/helpers.go
# IsIntegerResourceName, release-1.26, and validation.go validateResourceQuantityValue)
K8S_INTEGER = "kubernetes pkg/apis/core/helper/helpers.go IsIntegerResourceName"


def _unread_count(d: Deployment, name: str, text: str) -> str:
    """The KV005 for a device count kvlint cannot read; a fraction says why Kubernetes refuses it."""
    try:
        fraction = not float(text).is_integer()
    except ValueError:
        fraction = False
    if not fraction:
        return f"{d.label()}: cannot read {name} {text!r} as a device count"
    return (
        f"{d.label()}: {name} {text!r} asks for part of a device; Kubernetes counts {name} in whole units and "
        f'rejects the pod ("must be an integer", {K8S_INTEGER}); a share of a GPU is asked for another way '
        "(a MIG slice, a time-sliced or MPS nvidia.com/gpu.shared, KAI Scheduler's gpu-fraction annotation)"
    )


def apply_labels(d: Deployment, labels: list[tuple[str, list[str], Location]]) -> None:
    d.issues.extend(gpu_selectors.labels_no_node_carries(labels))
    choice, accel = gpu_selectors.choose(labels)
    if accel is not None:
        d.accelerator = accel
        if choice is not None and choice.spec is not None and d.gpu is None:  # a TPU chip (catalog/tpus.py)
            d.gpu = inferred(choice.spec.id, choice.note, choice.where)
            _devices_of_chips(d, choice.spec.devices_per_unit)
        topology = next(((v[0], at) for k, v, at in labels if k == gpu_selectors.TPU_KEYS[1] and v), None)
        if topology is not None and d.tpu_topology is None:
            d.tpu_topology = stated(topology[0], topology[1], gpu_selectors.TPU_KEYS[1])
        return
    if choice is None or d.gpu is not None:
        return
    d.gpu = inferred(choice.spec.id if choice.spec else choice.label, choice.note, choice.where)
    if choice.count and d.gpus_per_pod is None:
        d.gpus_per_pod = inferred(choice.count, choice.note, choice.where)


def _devices_of_chips(d: Deployment, per_chip: int) -> None:
    """google.com/tpu counts chips; on a chip that shows several JAX devices (TPU7x: two TensorCores) the
    engine's parallelism counts the devices (catalog/tpus.py). The resource the pod requests stays
    google.com/tpu (`Deployment.gpu_resource`, which landing and admission read: link/landing.py)."""
    got = d.gpus_per_pod
    if per_chip <= 1 or got is None or not isinstance(got.value, int):
        return
    d.gpus_per_pod = replace(got, value=got.value * per_chip)


RAY_KINDS = (
    "RayService",
    "RayCluster",
    "RayJob",
    "RayClusterFleet",
)  # objects that make a Ray cluster of pods


def _ray_places_workers(d: Deployment) -> bool:
    return engines.known(d.engine_name) and engines.get(d.engine_name).ray_places_workers


def _pods_of_launch(d: Deployment) -> None:
    """The pods one replica spans as its launch says: SGLang --nnodes, or the Ray cluster an engine's workers
    are placed on; a Ray backend outside a Ray cluster is noted."""
    nnodes = d.extra.get("nnodes")
    if d.pods is None and nnodes is not None and str(nnodes.value).isdigit():
        d.pods = stated(int(str(nnodes.value)), nnodes.where, "SGLang --nnodes: pods per replica")
    backend = d.extra.get("distributed_executor_backend")
    if backend is not None and backend.value == "ray" and d.pods is None and d.kind not in RAY_KINDS:
        # vLLM's Ray backend places workers on the Ray cluster it joins; a pod that is not part of
        # one (no KubeRay object, no pod group) starts a one-node cluster of its own GPUs
        d.ray_without_cluster = stated(d.kind, backend.where, backend.note)
    if d.pods is None and d.gpus_per_pod is not None and d.kind in RAY_KINDS and _ray_places_workers(d):
        tp = int(d.tensor_parallel.value) if d.tensor_parallel else 1
        pp = int(d.pipeline_parallel.value) if d.pipeline_parallel else 1
        per = max(1, int(d.gpus_per_pod.value))
        if tp * pp > per:
            n = -(-tp * pp // per)
            d.pods = inferred(
                n, f"Ray places {tp * pp} GPU workers on {n} pods of {per} GPUs", d.gpus_per_pod.where
            )


def _on_the_cpu(d: Deployment) -> None:
    """An engine that serves on the host CPU when the container is given no GPU (llama.cpp), in a pod that
    states no GPU at all: not checked, said once (KV004)."""
    if d.accelerator != "gpu" or d.gpus_per_pod is not None or d.gpu is not None or "unsupported" in d.extra:
        return
    if "gpus_per_pod" in d.unreadable:
        return  # GPUs asked for in a count kvlint could not read (compose `count: all`, `${GPUS}`): said, not none
    if not engines.known(d.engine_name) or not engines.get(d.engine_name).runs_on_cpu_without_gpu:
        return
    d.accelerator = "cpu"
    display = engines.display(d.engine_name)
    where = (d.engine.where if d.engine is not None else None) or d.where
    d.issues.append(
        Issue(
            NOT_CHECKABLE,
            f"{d.label()}: the container requests no GPU, so {display} runs on the host CPU (weights and KV cache"
            " in host memory); kvlint models GPU memory: not checked",
            where,
        )
    )
    d.extra["unsupported"] = stated(f"{d.engine_name}-cpu", where)


def finish(d: Deployment) -> None:
    """GPUs for one replica = GPUs per pod x pods; a non-GPU accelerator is said once (KV004)."""
    _pods_of_launch(d)
    if d.kind in RAY_KINDS and d.has_shm is False:
        # KubeRay mounts an emptyDir (medium: Memory, sizeLimit = the container's memory limit) at
        # /dev/shm in every Ray container it builds, unless one is mounted there already
        # (ray-project/kuberay ray-operator/controllers/ray/common/pod.go: BuildPod, addEmptyDir)
        d.has_shm = True
    pods_n = int(d.pods.value) if d.pods else 1
    if d.gpus is None and d.gpus_per_pod is not None:
        n = int(d.gpus_per_pod.value) * pods_n
        note = f"{d.gpus_per_pod.value} per pod x {pods_n} pods" if pods_n > 1 else d.gpus_per_pod.note
        d.gpus = (
            stated(n, d.gpus_per_pod.where, note)
            if d.gpus_per_pod.origin == "stated" and pods_n == 1
            else inferred(n, note, d.gpus_per_pod.where)
        )
    if d.accelerator == "gpu" and d.gpus_per_pod is None:
        of_image = gpu_sharing.accelerator_of_image(str(d.image.value)) if d.image is not None else None
        device = d.device  # vLLM --device cpu (0.6 to 0.9)
        d.accelerator = of_image or ("cpu" if device is not None and device.value == "cpu" else "gpu")
    _on_the_cpu(d)
    said = any(i.kind is IssueKind.ACCELERATOR_NOT_MODELLED for i in d.issues)  # by the input kind's reader
    if d.accelerator in gpu_sharing.NOT_MODELLED and "unsupported" not in d.extra and not said:
        why = gpu_sharing.why_not_modelled(d, d.accelerator)
        if not why:
            return  # an engine planned on this TPU chip (catalog/tpus.py)
        d.issues.append(
            Issue(
                NOT_CHECKABLE,
                f"{d.label()}: {why}",
                d.where,
                kind=IssueKind.ACCELERATOR_NOT_MODELLED,
            )
        )
