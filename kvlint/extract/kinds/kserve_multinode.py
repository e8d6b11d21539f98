"""KServe multi-node InferenceService: a predictor with `workerSpec` on a runtime with `workerSpec`,
read as KServe's controller builds it (kserve/kserve@aaac4e29
pkg/controller/v1beta1/inferenceservice/components/predictor.go multiNodeProcess,
computeRayNodeAndGPUs, computeMpNodeAndGPUs; reconcilers/deployment/deployment_reconciler.go
createRawDeployment; pkg/apis/serving/v1beta1/inference_service_validation.go
validateMultiNodeVariables):

- `tensorParallelSize` / `pipelineParallelSize`: the InferenceService's workerSpec wins over the
  runtime's, which defaults both to 1 (constants DefaultTensorParallelSize / DefaultPipelineParallelSize);
- the head container (`kserve-container`) gets TENSOR_PARALLEL_SIZE, PIPELINE_PARALLEL_SIZE,
  RAY_NODE_COUNT, REQUEST_GPU_COUNT and MODEL_NAME (the InferenceService's name), and MODEL_DIR
  (/mnt/models) for a pvc:// or oci:// storageUri; a runtime's command reads them;
- the worker container is the runtime's workerSpec container merged with the InferenceService's;
- GPUs: with the runtime annotation `multinode/executor-backend: mp`, PP nodes of TP GPUs each; by
  default (Ray) TP x PP GPUs over a head pod and `RAY_NODE_COUNT - 1` worker pods sized from the
  worker's (else the head's) GPU request; KServe rewrites both pods' GPU requests to those counts,
  and refuses the InferenceService when the requests cannot cover TP x PP.
"""

from __future__ import annotations

from kvlint.bounds import PARALLEL_MAX
from kvlint.codes import UNPARSED_SETTING
from kvlint.deployment import Deployment, default, inferred, stated
from kvlint.extract.pod import pods, synthetic
from kvlint.extract.pod.argv import EnvVar
from kvlint.extract.pod.bounded import crd_int
from kvlint.findings import Issue, Location, Severity
from kvlint.load.tree import Mapping, Node, Scalar
from kvlint.record import record

SOURCE = "kserve/kserve@aaac4e29 components/predictor.go multiNodeProcess"
SIZE_SOURCE = (
    "KServe takes a whole number of at least 1 and refuses the InferenceService otherwise "
    "(kserve/kserve@aaac4e29 pkg/apis/serving/v1beta1 predictor.go WorkerSpec *int, "
    "inference_service_validation.go validateMultiNodeVariables 'cannot be less than 1')"
)
MP_ANNOTATION = "multinode/executor-backend"


@record
class MultiNode:
    tp: int
    pp: int
    tp_where: Location
    pp_where: Location
    tp_stated: bool
    pp_stated: bool
    mp: bool
    worker_gpus: int  # the merged worker container's GPU request (0: none)
    env: dict[str, EnvVar]
    # sizes KServe refuses (not a whole number of at least 1): said once at the value; the workload is
    # read with 1 in their place so nothing else is reported about them, and gets no plan
    refused: list[tuple[str, Issue]]


def read(
    predictor: Mapping, runtime: Mapping, file: str, isvc_name: str, storage_uri: str
) -> tuple[MultiNode | None, Issue | None]:
    """The multi-node facts, or (None, why KServe refuses it); (None, None) for a single-node predictor."""
    if predictor.get("workerSpec") is None:
        return None, None
    mine = predictor.map("workerSpec") or synthetic.mapping(predictor, {})
    theirs = runtime.map("workerSpec")
    if theirs is None:
        where = (predictor.get("workerSpec") or predictor).where(file)
        return None, Issue(
            UNPARSED_SETTING,
            'workerSpec is set but the runtime has none: KServe refuses the InferenceService ("you cannot set '
            f'WorkerSpec in the InferenceService if the ServingRuntime does not have a WorkerSpec"; {SOURCE})',
            where,
            fix="use a multi-node runtime (one with workerSpec, e.g. kserve-huggingfaceserver-multinode)",
            severity=Severity.WARNING,
        )
    tp, tp_where, tp_stated, bad_tp = _size(mine, theirs, "tensorParallelSize", file)
    pp, pp_where, pp_stated, bad_pp = _size(mine, theirs, "pipelineParallelSize", file)
    annotations = runtime.map("annotations")
    mp = annotations is not None and annotations.value(MP_ANNOTATION) == "mp"
    worker = _worker_container(theirs, mine)
    gpus = [r for r in pods.device_resources(worker, file) if pods.is_gpu(r.name)] if worker else []
    worker_gpus = gpus[0].count or 0 if gpus else 0
    env = {
        "TENSOR_PARALLEL_SIZE": EnvVar(str(tp), tp_where),
        "PIPELINE_PARALLEL_SIZE": EnvVar(str(pp), pp_where),
        "MODEL_NAME": EnvVar(isvc_name, None),
    }
    if storage_uri.split("://")[0] in ("pvc", "oci"):
        env["MODEL_DIR"] = EnvVar("/mnt/models", None)
    bad = [(k, i) for k, i in (("tensor_parallel", bad_tp), ("pipeline_parallel", bad_pp)) if i is not None]
    mn = MultiNode(tp, pp, tp_where, pp_where, tp_stated, pp_stated, mp, worker_gpus, env, bad)
    return mn, None


def _size(mine: Mapping, theirs: Mapping, key: str, file: str) -> tuple[int, Location, bool, Issue | None]:
    """The InferenceService's size, else the runtime's, else KServe's default 1; one that is not a whole
    number of at least 1 is the refusal (never replaced by the default)."""
    for spec, owner in ((mine, "InferenceService"), (theirs, "runtime")):
        node = spec.get(key)
        value, bad = crd_int(node, file, f"{owner} workerSpec.{key}", 1, PARALLEL_MAX, SIZE_SOURCE)
        if value is not None or bad is not None:
            return value or 1, node.where(file), True, bad  # type: ignore[union-attr]
    return 1, theirs.where(file), False, None


def _worker_container(theirs: Mapping, mine: Mapping) -> Mapping | None:
    base = theirs.seq("containers")
    if base is None or not base.items or not isinstance(base.items[0], Mapping):
        return None
    patch = mine.seq("containers")
    first: Node | None = patch.items[0] if patch is not None and patch.items else None
    merged = synthetic.strategic_merge(base.items[0], first)
    return merged if isinstance(merged, Mapping) else None


def apply(d: Deployment, mn: MultiNode, head_container: Mapping, file: str) -> None:
    """Pods and GPUs of one replica as KServe sizes them."""
    for key, issue in mn.refused:
        d.issues.append(issue)
        d.unreadable.extend([key, "gpus_per_pod"])
    total = mn.tp * mn.pp
    sizes = f"TP {mn.tp} x PP {mn.pp} from workerSpec"
    if mn.mp:
        nodes, head, worker, ok = mn.pp, mn.tp, mn.tp, True
        how = f"{MP_ANNOTATION}: mp: {mn.pp} nodes (PP) of {mn.tp} GPUs (TP) ({SOURCE}, computeMpNodeAndGPUs)"
    else:
        gpus = [r for r in pods.device_resources(head_container, file) if pods.is_gpu(r.name)]
        nodes, head, worker, ok = ray_nodes(total, gpus[0].count or 0 if gpus else 0, mn.worker_gpus)
        how = (
            f"KServe sizes the Ray cluster for {sizes}: a head pod of {head} GPU{'s' if head != 1 else ''}"
            + (f" + {nodes - 1} worker pods of {worker}" if nodes > 1 else "")
            + f" ({SOURCE}, computeRayNodeAndGPUs)"
        )
    where = d.gpus_per_pod.where if d.gpus_per_pod is not None else mn.tp_where
    d.pods = inferred(nodes, how, where)
    d.gpus_per_pod = inferred(head, how, where)
    have = head + worker * (nodes - 1)
    note = (
        how
        if ok
        else how + f"; {have} GPUs cannot cover TP x PP = {total}: KServe refuses the InferenceService"
    )
    d.gpus = inferred(have, note, where)
    if d.tensor_parallel is not None and str(d.tensor_parallel.value) == str(mn.tp):
        d.tensor_parallel = _value(mn.tp, mn.tp_where, mn.tp_stated, "workerSpec.tensorParallelSize")
    if d.pipeline_parallel is not None and str(d.pipeline_parallel.value) == str(mn.pp):
        d.pipeline_parallel = _value(mn.pp, mn.pp_where, mn.pp_stated, "workerSpec.pipelineParallelSize")


def _value(n: int, where: Location, was_stated: bool, key: str):
    if was_stated:
        return stated(n, where, f"{key} (KServe passes it as an env var)")
    return default(n, f"{key} left out: KServe's default 1 ({SOURCE})", where)


def ray_nodes(total: int, head: int, worker: int) -> tuple[int, int, int, bool]:
    """(nodes, head GPUs, worker GPUs, enough) as KServe's computeRayNodeAndGPUs decides them."""

    def ceil(a: int, b: int) -> int:
        return 1 if b == 0 else -(-a // b)

    if worker > 0:
        nodes = ceil(total, worker)
        if head > 0:
            if ceil(total, head) == 1:
                nodes = 1
        else:
            head = total - worker * (nodes - 1)
        if nodes == 1:
            worker, head = 0, total
        return nodes, head, worker, total <= head + worker * (nodes - 1)
    if head > 0:
        nodes, worker = 1, 1
        if total - head > 0:
            nodes = ceil(total - head, 1) + 1
        return nodes, head, worker, total <= head + worker * (nodes - 1)
    return total, 1, 1, True


def storage_uri(model: Mapping) -> str:
    uri = model.scalar("storageUri")
    return str(uri.value) if isinstance(uri, Scalar) and uri.value is not None else ""
