"""kthena ModelBooster (workload.serving.volcano.sh, volcano-sh/kthena@3cc0572), read as its controller
converts it into a ModelServing (pkg/model-booster-controller/convert/model_serving.go
BuildModelServing, buildCommands; utils/template.go ConvertVLLMArgsFromJson):

- only the `vLLM` and `vLLMDisaggregated` backend types are converted (any other is refused);
- each worker (`server`, or `prefill` and `decode`) runs `python3 -m vllm.entrypoints.openai.api_server
  --model <download path>` followed by its `config` keys as `--key value` (underscores become dashes,
  keys sorted); the download path holds `backend.modelURI` (an `hf://org/name` URI is that Hub model),
  which an init container downloads; the worker's `image`, `resources` and the backend's `env` apply;
- a server worker of `pods` > 1 is one replica over that many pods (a Ray cluster,
  --distributed_executor_backend ray); /dev/shm is mounted for the engine.
"""

from __future__ import annotations

from kvlint.deployment import Deployment, stated
from kvlint.extract.pod import container as ct
from kvlint.extract.pod import synthetic
from kvlint.extract.pod.bounded import crd_int
from kvlint.load.tree import Mapping, Node, Scalar
from kvlint.record import replace

SOURCE = "volcano-sh/kthena@3cc0572 pkg/model-booster-controller/convert/model_serving.go"
VLLM_TYPES = ("vLLM", "vLLMDisaggregated")
ROLES = ("server", "prefill", "decode")
ENTRY = ("python3", "-m", "vllm.entrypoints.openai.api_server")
PODS_MAX = 1_000_000  # +kubebuilder:validation:Minimum=0 / Maximum=1000000
PODS_SOURCE = (
    "volcano-sh/kthena@3cc0572 model_booster_types.go Pods int32, 0 to 1,000,000: the API server rejects it"
)


def model_booster(ctx: ct.ObjectContext) -> list[Deployment]:
    backend = ctx.root.at("spec", "backend")
    if not isinstance(backend, Mapping):
        return []
    kind = backend.scalar("type")
    if kind is None or kind.value not in VLLM_TYPES:
        d = Deployment(ctx.file, ctx.where, ctx.kind, ctx.name, ctx.base_dir)
        d.ignores = dict(ctx.ignores)
        where = (kind or backend).where(ctx.file)
        shown = kind.value if kind is not None else "(none)"
        why = f"backend type {shown}: kthena converts only vLLM and vLLMDisaggregated ({SOURCE})"
        return [ct.not_checked(d, where, "kthena backend", why)]
    out: list[Deployment] = []
    for worker in backend.seq("workers") or ():
        if not isinstance(worker, Mapping) or worker.value("type") not in ROLES:
            continue
        found = _worker(ctx, backend, worker)
        if found is not None:
            out.append(found)
    return out


def _worker(ctx: ct.ObjectContext, backend: Mapping, worker: Mapping) -> Deployment | None:
    role = str(worker.value("type"))
    args: list[Node] = [synthetic.scalar(worker, w) for w in ENTRY]
    uri = backend.scalar("modelURI")
    if uri is not None and isinstance(uri.value, str):
        model = uri.value[5:] if uri.value.startswith("hf://") else uri.value
        args += [synthetic.scalar(uri, "--model"), synthetic.scalar(uri, model)]
    config = worker.map("config")
    for key, value in config.items() if config is not None else ():
        flag = synthetic.scalar(config.keys[key], "--" + key.replace("_", "-"))  # type: ignore[union-attr]
        args.append(flag)
        if isinstance(value, Scalar) and value.value is not None and value.value != "":
            shown = str(value.value).lower() if isinstance(value.value, bool) else str(value.value)
            node = synthetic.scalar(value, shown)
            args.append(node)
    container = synthetic.mapping(
        worker,
        {
            "name": synthetic.scalar(worker, "engine"),
            "image": worker.get("image"),
            "command": synthetic.sequence(worker, args),
            "resources": worker.get("resources"),
            "env": backend.get("env"),
            "volumeMounts": synthetic.from_data([{"name": "dshm", "mountPath": "/dev/shm"}], worker),
        },
    )
    pod = synthetic.mapping(
        worker,
        {
            "containers": synthetic.sequence(worker, [container]),
            "volumes": synthetic.from_data([{"name": "dshm", "emptyDir": {"medium": "Memory"}}], worker),
        },
    )
    d = ct.build(replace(ctx, name=f"{ctx.name}/{role}"), pod, container)
    if d is None:
        return None
    typed = worker.scalar("type")
    d.where = (typed or worker).where(ctx.file)  # each worker is its own workload
    stated_pods = worker.get("pods")
    pods, bad = crd_int(stated_pods, ctx.file, "kthena worker pods", 0, PODS_MAX, PODS_SOURCE)
    if stated_pods is not None and pods is not None and pods > 1:
        d.pods = stated(pods, stated_pods.where(ctx.file), "kthena worker pods (one Ray cluster)")
    if bad is not None:
        d.issues.append(bad)
        d.unreadable.append("pods")
    return d
