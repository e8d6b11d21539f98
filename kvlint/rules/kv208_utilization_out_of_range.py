from collections.abc import Iterator

from kvlint.findings import Finding, Severity
from kvlint.rules.base import DeploymentContext, DeploymentRule
from kvlint.rules.fixes import SAFE, UNSAFE, replace_text

# Keys whose value is a fraction of GPU memory the engine claims.
_FRACTIONS = (
    ("gpu_memory_utilization", "--gpu-memory-utilization"),
    ("mem_fraction_static", "--mem-fraction-static"),
    ("cuda_memory_fraction", "CUDA_MEMORY_FRACTION"),
)


class UtilizationOutOfRange(DeploymentRule):
    """A GPU-memory fraction outside (0, 1], or so high that start-up fails when anything else holds memory.

    ## What it does
    Checks vLLM `--gpu-memory-utilization`, SGLang `--mem-fraction-static` and TGI
    `CUDA_MEMORY_FRACTION`: an error at or below 0 or above 1, a warning above 0.95.

    ## Why is this bad?
    vLLM V1 requires that much memory to be free at start-up, after the CUDA context and NCCL
    buffers took their share (0.3-0.6 GiB): "Free memory on device (…) on startup is less than
    desired GPU memory utilization". Above 0.95 any other process, a second engine or a driver
    update can stop the pod from starting.

    On a shared GPU (time-slicing or MPS: `nvidia.com/gpu.shared`, a `-SHARED` product label,
    `nvidia.com/gpu.sharing-strategy`) several pods use one card's memory, with no limit per pod
    under time-slicing: the fractions of the pods that can land on one card must add up to less
    than 1. Up to `replicas` pods share a card when the device plugin's sharing config (a ConfigMap
    with `sharing.timeSlicing` / `sharing.mps`) is in the file or its directory; without it, every
    shared-GPU pod of the file may. Each deployment's pods count (`spec.replicas`), the largest
    fractions first. A time-slicing config that keeps the resource name (`renameByDefault` false,
    the default, and no `rename`) advertises each card's replicas as `nvidia.com/gpu`: pods asking
    plain `nvidia.com/gpu` beside it share cards too (`fixtures/sharing/time-sliced-unrenamed.yaml`:
    3 replicas at 0.9 each on a card shared 4 ways). A replica is a turn on the card, not a share
    of its memory.

    ## Formula
    error if `u <= 0` or `u > 1`; warning if `u > 0.95`; on a shared GPU, error if
    `sum of the N largest u >= 1` (N = the sharing replicas, or every shared-GPU pod of the file).

    ## Example
    `--gpu-memory-utilization=0.99`.

    Use instead: 0.9-0.95, and fix capacity by other means.

    Two time-sliced vLLM pods, each `--gpu-memory-utilization 0.6`, on a card shared two ways:
    0.6 + 0.6 = 1.2. Use instead: 0.45 each (0.9 together).

    ## How to fix
    Keep it at 0.95 or below. On a shared GPU, divide: about 0.9 / (pods per card) each.

    A value outside (0, 1] cannot start, so `--fix` writes 0.9 in its place (safe: nothing that
    worked changes). Above 0.95 the engine may start, and lowering it shrinks the KV pool, so that
    fix (0.95) is unsafe.

    ## Suppress
    `# kvlint: disable=KV208 -- reason` on the line.
    """

    id = "KV208"
    name = "utilization-out-of-range"
    severity = Severity.ERROR
    fix_applicability = "safe (outside (0, 1]); unsafe (above 0.95)"

    def check(self, ctx: DeploymentContext) -> Iterator[Finding]:
        d = ctx.deployment
        for attr, flag in _FRACTIONS:
            v = getattr(d, attr, None) if attr == "gpu_memory_utilization" else ctx.in_force.options.get(attr)
            if v is None or v.origin == "default" or not isinstance(v.value, (int, float)):
                continue
            u = float(v.value)
            if u <= 0 or u > 1:
                yield ctx.finding(
                    self,
                    v.where,
                    f"{flag} {u:g} is outside (0, 1]: the engine rejects it",
                    fix=f"{flag} 0.9",
                    fixes=[replace_text(v, "0.9", f"set {flag} 0.9", SAFE)],
                )
            elif u > 0.95:
                yield ctx.finding(
                    self,
                    v.where,
                    f"{flag} {u:g} leaves under 5 % of the GPU for the CUDA context, NCCL and anything else: start-up fails "
                    "when that much is not free",
                    fix=f"{flag} 0.95 or lower",
                    severity=Severity.WARNING,
                    fixes=[replace_text(v, "0.95", f"lower {flag} to 0.95", UNSAFE)],
                )
        shared = ctx.in_force.gpu_sharing
        if shared is not None:
            yield ctx.finding(
                self,
                shared.where,
                shared.note,
                fix="lower each engine's fraction so the pods of one card add up to less than 1 "
                "(about 0.9 / pods per card), or give each engine a whole GPU",
            )
