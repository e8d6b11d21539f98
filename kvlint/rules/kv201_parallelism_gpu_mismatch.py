from collections.abc import Iterator

from kvlint import engines
from kvlint.capacity.whatif import valid_tp
from kvlint.catalog import tpus
from kvlint.extract.pod.visible import SEEN, VARIABLE
from kvlint.findings import Finding, Severity
from kvlint.rules.base import DeploymentContext, DeploymentRule
from kvlint.rules.facts import spec_key, unit, where_of

# vLLM on TPU: the tpu-inference worker keeps the first TP x PP JAX devices of the host and leaves the rest
# (vllm-project/tpu-inference@v0.27.0 tpu_inference/worker/tpu_worker.py:397-410)
TPU_TAKES_FIRST = " (the TPU worker takes the first {world}: tpu-inference tpu_worker.py:397-410)"
# ... and with fewer than TP x PP it cannot build its device mesh: the runner refuses (tpu_runner.py:980-984)
# and, under pipeline parallelism, the worker asserts jax.local_device_count() >= TP (tpu_worker.py:401-404)
TPU_REFUSES = (
    '("Insufficient devices for 2D mesh: found {have}, expected {world} for mesh shape (1, {tp})": '
    "vllm-project/tpu-inference@v0.27.0 tpu_inference/runner/tpu_runner.py:980-984)"
)
TPU_PP_REFUSES = (
    "(its TPU worker asserts jax.local_device_count() >= the devices of a stage: "
    "vllm-project/tpu-inference@v0.27.0 tpu_inference/worker/tpu_worker.py:399-404)"
)


class ParallelismGpuMismatch(DeploymentRule):
    """Tensor x pipeline (x data) parallelism does not match the GPUs one replica gets.

    ## What it does
    Compares `tensor_parallel x pipeline_parallel` (x `data_parallel` when set) with the GPUs
    available to one model replica: `resources.limits` `nvidia.com/gpu` (or `amd.com/gpu`) per
    pod, times the pods of the group for a LeaderWorkerSet, an AIBrix pod group or a multi-node
    Ray cluster; an instance type's GPU count where no limit is set. A KServe multi-node
    InferenceService (`workerSpec`) gets the head and worker pods KServe sizes for
    `tensorParallelSize x pipelineParallelSize` (kserve/kserve components/predictor.go
    computeRayNodeAndGPUs): requests that cannot cover it are this error (KServe refuses it). vLLM's
    `--distributed-executor-backend ray` in a plain Deployment (no KubeRay object, no pod group)
    adds no GPUs: Ray starts a one-node cluster of the pod's own GPUs. SGLang's `--dp-size` with
    `--enable-dp-attention` runs data-parallel attention inside the TP group (sgl-project/sglang
    server_args.py: dp_size must divide tp_size), so it adds no GPUs there. vLLM on a TPU counts JAX
    devices: a chip each on v5e, v5p and v6e, two TensorCores per TPU7x chip (`google.com/tpu: 4` is 8
    devices); the worker takes the first TP x PP of them, and with fewer it cannot build its device mesh
    (tpu-inference tpu_runner.py:980-984: "Insufficient devices for 2D mesh"). A pod asking more chips than
    one node of its `cloud.google.com/gke-tpu-topology` slice has (2x4: 8 chips; a multi-host v6e or v5p
    slice: VMs of 4 chips) is never scheduled.

    ## Why is this bad?
    Fewer GPUs than the world size: the engine cannot start (vLLM: "World size (4) is larger
    than the number of available GPUs (1) in this node"). More GPUs than it uses: you pay for GPUs
    that sit idle (reported as a warning; as an info when the GPU count is kvlint's assumption, such
    as one of several allowed SkyPilot accelerator counts or an instance type's GPUs).

    ## Formula
    `tensor_parallel x pipeline_parallel x data_parallel` must equal `GPUs per pod x pods`.

    ## Example
    `--tensor-parallel-size=4` in a pod with `nvidia.com/gpu: 1`.

    Use instead: `nvidia.com/gpu: 4`, or `--tensor-parallel-size=1`.

    A container's `CUDA_VISIBLE_DEVICES` (its env, or its start script's `export CUDA_VISIBLE_DEVICES=...` or
    `CUDA_VISIBLE_DEVICES=... vllm serve`) that lists fewer of the pod's GPUs than it reserves narrows what the
    engine sees: the NVIDIA device plugin (or a compose device request) gives the container only its own
    GPUs, numbered 0 to N-1 inside it, and CUDA shows a program only the listed ones, up to the first index
    that is not one of them (CUDA C++ Programming Guide, "CUDA Environment Variables").
    `CUDA_VISIBLE_DEVICES=2,3` copied from a host script into a pod with `nvidia.com/gpu: 2` hides both, and
    the engine finds no GPU (an error); `0` under `nvidia.com/gpu: 4` leaves three reserved GPUs idle (a
    warning). Only a list of device numbers is judged: UUIDs, a value from a variable, a container that sets
    `NVIDIA_VISIBLE_DEVICES` itself or runs privileged are left alone.

    TGI's `--sharded true` with one shard (stated, or the one GPU it defaults to) is refused by its
    launcher (launcher/src/main.rs `find_num_shards`): "`sharded` is true but `num_shard` <= 1".

    A NIM whose `NIM_TENSOR_PARALLEL_SIZE` is a TP no profile of its image's release offers for the
    pod's GPUs (kvlint's table of published profiles) is a warning at the variable, naming the TPs the
    release does publish for that GPU: a pre-built TensorRT-LLM engine runs only at the TP it was built
    for, and a vLLM profile run at another TP is a layout NVIDIA does not publish for the model. The same
    holds for a `NIM_PIPELINE_PARALLEL_SIZE` no runnable profile has, and for a `NIM_TAGS_SELECTOR` that
    leaves none (the warning counts the profiles each reading left, and names the tag values they have).

    ## How to fix
    Make the GPU request equal the parallel world size: raise the GPU limit, lower TP/PP, or
    spread the replica over a LeaderWorkerSet group. The fix names another tensor-parallel size only
    where it works: the model's heads split that many ways (KV202's checks) and the engine starts at it
    (NIM: a published profile of that TP is left by the variables the file sets); with the PP and DP
    as stated; and it says how many GPUs that size leaves idle, if any.

    ## Suppress
    `# kvlint: disable=KV201 -- reason` on the flagged line, or `kvlint.io/ignore: "KV201=reason"`.
    """

    id = "KV201"
    name = "parallelism-gpu-mismatch"
    infos = {
        None: "replicas whose parallelism leaves {device}s idle on a {device} count kvlint assumed (not the file's) — "
        "check the count each names"
    }
    severity = Severity.ERROR

    def check(self, ctx: DeploymentContext) -> Iterator[Finding]:
        d = ctx.deployment
        if not engines.known(ctx.in_force.engine_name):
            return
        engine = engines.get(ctx.in_force.engine_name)
        refused = engine.parallelism_refusal(d, ctx.in_force)
        if refused is not None:
            yield ctx.finding(
                self, where_of(d, *refused.at), refused.says, fix=refused.fix, severity=refused.severity
            )
            return
        yield from self._world(ctx, d, engine)

    def _world(self, ctx: DeploymentContext, d, engine) -> Iterator[Finding]:
        """The GPUs the parallel sizes need against the GPUs one replica gets."""
        on_tpu = d.accelerator == "tpu" and engine.plans_on_tpu and ctx.gpu is not None
        if not _checkable(ctx, d, on_tpu):
            return
        tp, pp, dp = _sizes(ctx, d, engine)
        world = tp * pp * dp
        have = int(d.gpus.value)
        if on_tpu:
            yield from self._tpu_slice(ctx, d)
        parts = _parts((tp, pp, dp))
        seen = d.extra.get(SEEN)
        if seen is not None and not on_tpu:
            yield from self._hidden(ctx, d, engine, (tp, pp, dp), seen)
            return
        if world == have or have <= 0:
            return
        per = unit(ctx.gpu)
        several = getattr(ctx.gpu, "devices_per_unit", 1)
        chips = f"{have // several} chips x {several}; " if on_tpu and several > 1 else ""
        gpus = f"{have} {per}{'s' if have != 1 else ''} ({chips}{d.gpus.note or 'per replica'})"
        tp_key = spec_key(d, "tensor_parallel", ctx.in_force.engine_name)
        if world > have:
            yield ctx.finding(
                self,
                where_of(
                    d, ctx.in_force.tensor_parallel, ctx.in_force.pipeline_parallel, d.data_parallel, d.gpus
                ),
                f"{parts} = {world} {per}s, but one replica gets {gpus}: {engine.display} cannot start "
                + _refusal(d, on_tpu, (tp, pp, dp), have),
                fix=f"request {_request(ctx.gpu, world, per)} per replica"
                + _smaller_tp(ctx, d, engine, (tp_key, per), have, pp * dp),
            )
            return
        # idle GPUs are the author's only when the GPU count is theirs; a count kvlint picked (one
        # of several allowed, from a label or instance type) is said as an info naming that
        per_pod = d.gpus_per_pod is not None and d.gpus_per_pod.origin == "stated"
        written = d.gpus.origin == "stated" or (per_pod and (d.pods is None or d.pods.origin == "stated"))
        yield ctx.finding(
            self,
            where_of(d, d.gpus, ctx.in_force.tensor_parallel),
            f"one replica gets {gpus} but {parts} uses {world}: {have - world} {per}{'s sit' if have - world != 1 else ' sits'} idle"
            + (TPU_TAKES_FIRST.format(world=world) if on_tpu else "")
            + ("" if written else f"; that {per} count is kvlint's assumption, not the file's"),
            fix=f"request {_request(ctx.gpu, world, per)}"
            + (
                f", or raise {tp_key} to {all_} to use all {have}"
                if (all_ := _all_tp(ctx, d, engine, have, pp * dp))
                else ""
            ),
            severity=Severity.WARNING if written else Severity.INFO,
        )

    def _hidden(
        self, ctx: DeploymentContext, d, engine, sizes: tuple[int, int, int], seen
    ) -> Iterator[Finding]:
        """CUDA_VISIBLE_DEVICES shows the engine fewer GPUs than the pod reserves (extract/pod/visible.py):
        none, or fewer than the parallel world, and it cannot start; else the hidden ones sit idle."""
        tp, pp, dp = sizes
        world, parts = tp * pp * dp, _parts(sizes)
        pods = int(d.pods.value) if d.pods is not None else 1
        shown, reserved = int(seen.value) * pods, int(d.gpus.value)
        per = unit(ctx.gpu)
        each = " per pod" if pods > 1 else ""
        undo = f"drop {VARIABLE} (the container is given only its own GPUs, numbered from 0)"
        if shown < world:
            cannot = (
                "no GPU, so it cannot start"
                if shown == 0
                else f'{shown}: it cannot start ("World size ({world}) is larger than the number of available '
                f'GPUs ({shown})")'
            )
            yield ctx.finding(
                self,
                where_of(d, seen, ctx.in_force.tensor_parallel),
                f"{seen.note}{each}; {parts} needs {world}, and {engine.display} sees {cannot}",
                fix=f"{undo}, or list only the container's own devices in it (0 to {int(d.gpus_per_pod.value) - 1})",
            )
            return
        idle = reserved - world
        all_ = _all_tp(ctx, d, engine, reserved, pp * dp)
        tp_key = spec_key(d, "tensor_parallel", ctx.in_force.engine_name)
        yield ctx.finding(
            self,
            where_of(d, seen, d.gpus),
            f"{seen.note}{each}, and {parts} uses {world}: {idle} of the {reserved} reserved "
            f"{per}s {'sit' if idle != 1 else 'sits'} idle",
            fix=f"request {_request(ctx.gpu, world, per)}"
            + (f", or {undo} and raise {tp_key} to {all_} to use all {reserved}" if all_ else ""),
            severity=Severity.WARNING,
        )

    def _tpu_slice(self, ctx: DeploymentContext, d) -> Iterator[Finding]:
        """A pod asking more chips than one node of its TPU slice has (cloud.google.com/gke-tpu-topology 2x4: 2 x 4
        = 8 chips; a multi-host v6e slice: VMs of 4, catalog/tpus.py node_chips) is never scheduled (GKE: "the
        topology determines the number of TPU chips in the slice",
        https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus)."""
        topology, per_pod = d.tpu_topology, d.gpus_per_pod
        node = tpus.node_chips(ctx.gpu.id, str(topology.value)) if topology and ctx.gpu else None
        several = getattr(ctx.gpu, "devices_per_unit", 1)
        if node is None or per_pod is None or int(per_pod.value) <= node[0] * several:
            return
        asked, (most, said) = int(per_pod.value) // several, node
        yield ctx.finding(
            self,
            where_of(d, per_pod, topology),
            f"a pod requests {asked} chips ({d.gpu_resource or 'google.com/tpu'}), but {said}: no node of it has "
            f"{asked}, so the pod is never scheduled",
            fix=f"request at most {most} chips per pod, or a topology whose nodes have {asked}",
        )


def _checkable(ctx: DeploymentContext, d, on_tpu: bool) -> bool:
    """Whether the parallel sizes and the device count are known well enough to compare."""
    if d.gpus is None or (d.accelerator != "gpu" and not on_tpu) or "unsupported" in d.extra:
        return False  # (an engine run kvlint does not model, KV004: its parallel sizes are not known)
    if {"tensor_parallel", "pipeline_parallel", "data_parallel", "gpus_per_pod"} & set(d.unreadable):
        return False  # a parallel size kvlint could not read (KV005 says which): no guess at idle GPUs
    # the engine could not settle its settings here (NIM: the profile waits for the GPU type)
    return not (ctx.model is not None and ctx.settings is None and ctx.in_force.tensor_parallel is None)


def _sizes(ctx: DeploymentContext, d, engine) -> tuple[int, int, int]:
    """TP, PP and the data-parallel ranks of one replica."""
    tp = int(ctx.in_force.tensor_parallel.value) if ctx.in_force.tensor_parallel else 1
    pp = int(ctx.in_force.pipeline_parallel.value) if ctx.in_force.pipeline_parallel else 1
    dp = int(d.data_parallel.value) if d.data_parallel else 1
    return tp, pp, engine.replica_dp(d, dp)


def _parts(sizes: tuple[int, int, int]) -> str:
    """ "TP 4 x PP 1" (" x DP 2" when there are data-parallel ranks)."""
    tp, pp, dp = sizes
    return f"TP {tp} x PP {pp}" + (f" x DP {dp}" if dp > 1 else "")


def _refusal(d, on_tpu: bool, sizes: tuple[int, int, int], have: int) -> str:
    """What the engine says when a replica has fewer devices than TP x PP (x DP): vLLM's world-size check on
    GPUs, tpu-inference's device mesh on a TPU."""
    tp, pp, dp = sizes
    world = tp * pp * dp
    if on_tpu:
        return TPU_REFUSES.format(have=have, world=world, tp=tp) if pp == dp == 1 else TPU_PP_REFUSES
    ray = d.ray_without_cluster
    why = (
        f"; --distributed-executor-backend ray adds none: this {ray.value} is no Ray cluster "
        "(no KubeRay object, no pod group), so Ray sees only the pod's own GPUs"
        if ray is not None
        else ""
    )
    return f'("World size ({world}) is larger than the number of available GPUs ({have})"){why}'


def _all_tp(ctx: DeploymentContext, d, engine, have: int, group: int) -> int | None:
    """The TP that uses all `have` devices with the stated PP x DP (`group`), where the model's heads split that
    many ways and the engine starts at it (NIM: a published profile of that TP is left); None otherwise, and the
    fix offers only the smaller request."""
    if group < 1 or have % group:
        return None
    return next(iter(_workable(ctx, d, engine, (have // group,), group)), None)


def _smaller_tp(ctx: DeploymentContext, d, engine, named: tuple[str, str], have: int, group: int) -> str:
    """ ", or set TP to N": the largest TP that fits `have` devices with the stated PP x DP (`group`) and that the
    model's heads and the engine take, naming the devices it leaves idle (3 GPUs and a model whose heads split 2
    or 4 ways: TP 2, one idle); "" when none fits (then only the larger request is a fix)."""
    tp_key, per = named
    fits = next(iter(_workable(ctx, d, engine, range(have // max(group, 1), 0, -1), group)), None)
    if fits is None:
        return ""
    idle = have - fits * group
    left = f" ({idle} {per}{' then sits' if idle == 1 else 's then sit'} idle)" if idle else ""
    return f", or set {tp_key} to {fits}{left}"


def _workable(ctx: DeploymentContext, d, engine, sizes, group: int) -> Iterator[int]:
    """The sizes among `sizes` a fix may offer as the TP: each one KV202 would not refuse (capacity/whatif.valid_tp,
    when the model is known) and the engine starts at on that many devices (Engine.runs_at_tp)."""
    version = ctx.settings.version if ctx.settings is not None else None  # the release's KV-head sharding
    for tp in sizes:
        if tp < 1 or (
            ctx.model is not None and not valid_tp(ctx.model, tp, ctx.in_force.engine_name, version)
        ):
            continue
        if engine.runs_at_tp(d, ctx.gpu, tp * group, tp):
            yield tp


def _request(gpu, world: int, per: str) -> str:
    """What to request for `world` devices: "4 GPUs", "2 chips (4 TensorCores)" where a chip shows several."""
    several = getattr(gpu, "devices_per_unit", 1)
    if several > 1 and world % several == 0:
        return f"{world // several} chips ({world} {per}s)"
    return f"{world} {per}{'s' if world != 1 else ''}"
