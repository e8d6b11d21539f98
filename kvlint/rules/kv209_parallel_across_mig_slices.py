from collections.abc import Iterator

from kvlint import engines
from kvlint.findings import Finding, Severity
from kvlint.rules.base import GpuContext, GpuRule
from kvlint.rules.facts import where_of


class ParallelAcrossMigSlices(GpuRule):
    """Tensor or pipeline parallelism across MIG slices, or more than one slice per engine.

    ## What it does
    Reports a deployment whose GPU is a MIG slice (`nvidia.com/mig-3g.40gb`, a
    `...-MIG-3g.40gb` product label, GKE `gke-gpu-partition-size`, a DRA `mig.nvidia.com` claim)
    and that asks for more than one slice per replica or sets tensor/pipeline parallelism above 1.

    ## Why is this bad?
    A CUDA process enumerates one MIG device; slices have no peer-to-peer path (no NVLink, no P2P
    between MIG instances), and vLLM does not support MIG devices for its multi-GPU executors
    (vLLM issues #6551 and #7211: `invalid literal for int() ... 'MIG-…'`, "please use docker for
    MIG"). The engine starts on one slice or not at all; the model never spreads over the slices.

    ## Example
    `nvidia.com/mig-3g.40gb: 2` with `--tensor-parallel-size 2` for a 70B model.

    Use instead: one slice big enough for the model (`7g.80gb`, that is the whole card without MIG),
    or whole GPUs with `nvidia.com/gpu: 2`.

    ## How to fix
    Serve one replica per slice with TP 1 and a model that fits the slice (KV101 checks it), or
    request whole GPUs for tensor parallelism.

    ## Suppress
    `# kvlint: disable=KV209 -- reason` on the flagged line, or `kvlint.io/ignore: "KV209=reason"`.
    """

    id = "KV209"
    name = "parallel-across-mig-slices"
    severity = Severity.ERROR

    def check(self, ctx: GpuContext) -> Iterator[Finding]:
        d, gpu = ctx.deployment, ctx.gpu
        if not gpu.mig_profile or not engines.known(ctx.in_force.engine_name):
            return
        tp = int(ctx.in_force.tensor_parallel.value) if ctx.in_force.tensor_parallel else 1
        pp = int(ctx.in_force.pipeline_parallel.value) if ctx.in_force.pipeline_parallel else 1
        slices = int(d.gpus.value) if d.gpus is not None else 1
        if tp * pp <= 1 and slices <= 1:
            return
        what = []
        if tp * pp > 1:
            what.append(f"TP {tp} x PP {pp} = {tp * pp} workers")
        if slices > 1:
            what.append(
                f"{slices} slices per replica ({(d.gpus.note if d.gpus is not None else '') or 'requested'})"
            )
        yield ctx.finding(
            self,
            where_of(
                d, ctx.in_force.tensor_parallel, ctx.in_force.pipeline_parallel, d.gpus, ctx.in_force.gpu
            ),
            f"{' and '.join(what)} on MIG {gpu.mig_profile} slices of {_parent_name(gpu.parent)}: "
            f"{engines.display(ctx.in_force.engine_name)} cannot spread a model over MIG slices (one MIG device per "
            "CUDA process, no peer-to-peer between slices)",
            fix="use one slice that holds the model with TP 1, or whole GPUs (nvidia.com/gpu) for tensor parallelism",
        )


def _parent_name(parent: str | None) -> str:
    from kvlint.catalog.gpus import by_id

    spec = by_id(parent) if parent else None
    return spec.name if spec is not None else str(parent)
