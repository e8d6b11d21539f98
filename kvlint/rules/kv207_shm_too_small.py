from collections.abc import Iterator

from kvlint import engines
from kvlint.findings import Finding, Severity
from kvlint.rules.base import DeploymentContext, DeploymentRule
from kvlint.units import parse_size

# Where a layout that is not a pod sets /dev/shm: compose's service `shm_size` (Docker's --shm-size) or
# `ipc: host` (the compose specification's shm_size and ipc keys), dstack's `resources.shm_size`
# (dstackai/dstack@0.21.2 runner/internal/shim/docker.go: 64 MiB without it); and what holds the GPUs
# there: one /dev/shm is a container's (a pod's containers share it only through a mounted emptyDir)
_SHM_FIX = {
    "compose": "set shm_size on the service (e.g. 16gb) or ipc: host",
    "dstack": "set resources.shm_size (e.g. 16GB)",
}
_UNIT = {"compose": "container", "dstack": "container"}


class ShmTooSmall(DeploymentRule):
    """A multi-GPU pod without a memory-backed /dev/shm, or an shm larger than the memory limit.

    ## What it does
    Reports pods that hold more than one GPU (or, when the GPU count is not stated, run
    tensor/pipeline parallelism in one pod) with no `emptyDir: {medium: Memory}` volume mounted at
    `/dev/shm`, and an shm `sizeLimit` above the container's memory limit. Ranks spread one GPU per
    pod talk over the network, not /dev/shm; KubeRay mounts a memory-backed /dev/shm in every Ray
    container it builds (kuberay ray-operator/controllers/ray/common/pod.go, sized to the memory
    limit), so Ray pods are not reported for lacking one. llama.cpp and Ollama drive every GPU from one
    process without NCCL, so their pods are not reported for lacking one either.

    ## Why is this bad?
    Containers get a 64 MiB /dev/shm by default; NCCL and the engine's worker processes need far
    more, and fail with bus errors or "Error while creating shared memory segment". Memory-backed
    shm counts against the container's memory limit, so a sizeLimit above it invites an OOM kill.

    ## Formula
    warning when `GPUs per pod > 1` (or, GPUs per pod unknown and one pod, TP x PP > 1) and no
    memory-backed `/dev/shm` mount.

    ## Example
    A TP-2 vLLM pod with no volumes.

    Use instead: `volumes: [{name: dshm, emptyDir: {medium: Memory, sizeLimit: 16Gi}}]` mounted at `/dev/shm`.

    ## How to fix
    Mount a memory-backed emptyDir at /dev/shm, sized below the container's memory limit.

    ## Suppress
    `# kvlint: disable=KV207 -- reason`, or `kvlint.io/ignore: "KV207=reason"`.
    """

    id = "KV207"
    name = "shm-too-small"
    severity = Severity.WARNING

    def check(self, ctx: DeploymentContext) -> Iterator[Finding]:
        d = ctx.deployment
        if d.has_shm is None or d.accelerator != "gpu":
            return
        engine = ctx.in_force.engine_name
        if engines.known(engine) and not engines.get(engine).gpus_share_memory:
            return  # one process drives every GPU (llama.cpp): nothing goes through /dev/shm
        per_pod = int(d.gpus_per_pod.value) if d.gpus_per_pod else 1
        tp = int(ctx.in_force.tensor_parallel.value) if ctx.in_force.tensor_parallel else 1
        pp = int(ctx.in_force.pipeline_parallel.value) if ctx.in_force.pipeline_parallel else 1
        pods = int(d.pods.value) if d.pods else 1
        # one GPU per pod with TP/PP across pods: ranks talk over the network, not /dev/shm
        local = per_pod > 1 or (d.gpus_per_pod is None and pods <= 1 and tp * pp > 1)
        if not d.has_shm and local:
            where = (d.gpus_per_pod.where if d.gpus_per_pod and d.gpus_per_pod.where else None) or d.where
            unit = _UNIT.get(d.kind, "pod")
            what = f"{per_pod} GPU{'s' if per_pod != 1 else ''} per {unit}" + (
                f", TP {tp} x PP {pp}," if tp * pp > 1 else ""
            )
            yield ctx.finding(
                self,
                where,
                f"{what} but no memory-backed /dev/shm: containers get 64 MiB, too little for NCCL and the engine's "
                "worker processes",
                fix=_SHM_FIX.get(d.kind, "mount an emptyDir with medium: Memory at /dev/shm"),
            )
        if d.has_shm and d.shm_size is not None and d.shm_size.value and d.memory_limit is not None:
            try:
                shm = parse_size(str(d.shm_size.value)).bytes
                limit = parse_size(str(d.memory_limit.value)).bytes
            except ValueError:
                return
            if shm > limit:
                yield ctx.finding(
                    self,
                    d.shm_size.where,
                    f"/dev/shm sizeLimit {d.shm_size.value} exceeds the container's memory limit {d.memory_limit.value}: "
                    "shm pages count against the limit, so filling it gets the pod OOM-killed",
                    fix=f"a sizeLimit below {d.memory_limit.value}",
                )
