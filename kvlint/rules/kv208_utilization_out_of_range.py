from collections.abc import Iterator

from kvlint.deployment import Value
from kvlint.findings import Finding, Severity
from kvlint.rules.base import DeploymentContext, DeploymentRule
from kvlint.rules.facts import unit
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
    update can stop the pod from starting. vLLM on TPU makes no such check: its worker gives the KV cache
    the HBM limit x `--gpu-memory-utilization` less what is in use (vllm-project/tpu-inference@v0.27.0
    tpu_worker.py:511-520), so above 0.95 the rest of each chip's HBM is all XLA's compiled programs
    have for their buffers when they run.

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

    A pod that asks KAI Scheduler for a share of one GPU (`gpu-fraction: "0.5"`, or `gpu-memory` in MiB,
    as pod annotations; NVIDIA/KAI-Scheduler docs/gpu-sharing/README.md) runs on one shared card whose
    memory KAI does not isolate: the engine's fraction in force, its default included, must stay within
    the share (a warning above it). A `gpu-memory` share on a card kvlint does not know is an info.

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
                    _too_high(ctx, flag, u),
                    fix=f"{flag} 0.95 or lower",
                    severity=Severity.WARNING,
                    fixes=[replace_text(v, "0.95", f"lower {flag} to 0.95", UNSAFE)],
                )
        yield from self._beyond_share(ctx)
        shared = ctx.in_force.gpu_sharing
        if shared is not None:
            yield ctx.finding(
                self,
                shared.where,
                shared.note,
                fix="lower each engine's fraction so the pods of one card add up to less than 1 "
                "(about 0.9 / pods per card), or give each engine a whole GPU",
            )

    def _beyond_share(self, ctx: DeploymentContext) -> Iterator[Finding]:
        """The engine's fraction in force (stated or its default) above the share of one GPU the pod asks
        for (KAI Scheduler `gpu-fraction` / `gpu-memory`, which isolates no memory: see
        extract/pod/gpu_fraction.py); a share in MiB on a card kvlint does not know is said unchecked."""
        d = ctx.deployment
        share, asked = _share(ctx)
        if share is None:
            if asked is not None:
                yield ctx.finding(
                    self,
                    asked.where,
                    f"{asked.note}: the GPU type is not stated, so the share of its memory is not known and the "
                    "engine's memory fraction was not checked against it",
                    fix="name the GPU (a node label or --gpu), or ask for a gpu-fraction",
                    severity=Severity.INFO,
                )
            return
        asked_at = d.gpu_share or d.gpu_share_bytes  # where the pod asks for its share
        for attr, flag in _FRACTIONS:
            v = (
                ctx.in_force.gpu_memory_utilization
                if attr == "gpu_memory_utilization"
                else ctx.in_force.options.get(attr)
            )
            if v is None or not isinstance(v.value, (int, float)) or float(v.value) <= share:
                continue
            said = f" ({v.note})" if v.origin == "default" and v.note else ""
            yield ctx.finding(
                self,
                v.where or (asked_at.where if asked_at else None) or d.where,
                f"{flag} {float(v.value):g}{said} claims more of the GPU than the pod's share of it ({share:.2g}, "
                f"{asked_at.note if asked_at else ''}): the engine takes memory the card's other pods were "
                "given, and they or it fail to start",
                fix=f"{flag} {share:.2g} or lower, or a larger share",
                severity=Severity.WARNING,
            )


def _too_high(ctx: DeploymentContext, flag: str, u: float) -> str:
    """Why a fraction above 0.95 is a risk, on the device it runs on: a GPU engine needs that much free at
    start-up; vLLM's TPU worker makes no such check and gives the KV cache the HBM limit x u less what is in use
    (vllm-project/tpu-inference@v0.27.0 tpu_inference/worker/tpu_worker.py:511-520 determine_available_memory),
    so the rest is all that XLA's programs have for their buffers at run time."""
    if ctx.deployment.accelerator == "tpu":
        return (
            f"{flag} {u:g} leaves under 5 % of each {unit(ctx.gpu)}'s HBM outside the KV cache: vLLM's TPU worker "
            f"sizes the cache as the HBM limit x {u:g} less what is in use (tpu-inference tpu_worker.py:511-520), "
            "so the rest is all XLA's compiled programs have for their buffers at run time"
        )
    return (
        f"{flag} {u:g} leaves under 5 % of the GPU for the CUDA context, NCCL and anything else: start-up fails "
        "when that much is not free"
    )


def _share(ctx: DeploymentContext) -> tuple[float | None, Value[int] | None]:
    """(the pod's share of the card as a fraction, or None; the gpu-memory value when its card is unknown)."""
    d = ctx.deployment
    if d.gpu_share is not None:
        return float(d.gpu_share.value), None
    if d.gpu_share_bytes is None:
        return None, None
    total = ctx.gpu.engine_bytes if ctx.gpu is not None else None
    if not total:
        return None, d.gpu_share_bytes
    return min(1.0, int(d.gpu_share_bytes.value) / total), None
