from collections.abc import Iterator

from kvlint import engines
from kvlint.capacity.whatif import replan, smallest_tp
from kvlint.findings import Finding, Severity
from kvlint.rules.base import PlanContext, PlanRule
from kvlint.rules.facts import spec_key, unit, where_of
from kvlint.units import gib


class WeightsExceedMemory(PlanRule):
    """The model's weights on one GPU exceed the memory the engine may use there.

    ## What it does
    Computes the weight bytes each GPU holds (parameters x bytes per parameter for the dtype or
    quantization, split by tensor and pipeline parallelism as the engine splits them, with the
    embedding's vocabulary padding) and compares them with what the engine may use on that GPU:
    the memory it sees (torch `total_memory`, not the marketed size) x `gpu_memory_utilization`
    (SGLang: x `mem_fraction_static`; TGI: x `CUDA_MEMORY_FRACTION` x 0.9).

    ## Why is this bad?
    The engine cannot even load the model: vLLM fails with CUDA out of memory while loading
    weights, or with "No available memory for the cache blocks". Nothing is served.

    ## Formula
    `weights per GPU = Σ sharded parameters / TP × bytes + replicated parameters × bytes` on the
    largest pipeline stage; error when it is above `total memory × utilization`.

    ## Example
    Llama-3.1-70B in bf16 (141 GB of weights) on one H100.

    Use instead: `tensor_parallel: 2` (two GPUs) or fp8 weights (`quantization: fp8`).

    ## How to fix
    More GPUs with tensor parallelism, a quantized checkpoint (fp8, AWQ, GPTQ), or a larger GPU.
    The message names the smallest TP that fits.

    ## Suppress
    `# kvlint: disable=KV101 -- reason` on the flagged line, or `kvlint.io/ignore: "KV101=reason"`.
    """

    id = "KV101"
    name = "weights-exceed-memory"
    severity = Severity.ERROR

    def check(self, ctx: PlanContext) -> Iterator[Finding]:
        p, d, s = ctx.plan, ctx.deployment, ctx.settings
        if p.weights_per_gpu <= p.weights_limit:
            return
        gpu = ctx.gpu
        per = unit(gpu)
        fixes = []
        found = (
            None  # no tensor parallelism over MIG slices (KV209)
            if gpu.mig_profile
            else smallest_tp(ctx.model, gpu, s, lambda q: q.weights_per_gpu <= q.weights_limit)
        )
        if gpu.mig_profile:
            fixes.append(f"a larger MIG profile than {gpu.mig_profile} (or the whole card)")
        cap = d.gpu_limit_bytes or d.gpu_limit_share  # an enforced cap on each GPU (HAMi nvidia.com/gpumem)
        if cap is not None:
            fixes.append("a larger memory cap per GPU")
        if found:
            tp, q = found
            fixes.append(
                f"{spec_key(d, 'tensor_parallel', s.engine)} {tp} ({tp * s.pp} {per}s: {gib(q.weights_per_gpu)} of weights each)"
            )
        if ctx.model.quant is None and not s.quantization and engines.get(s.engine).names_fp8_weights_fix:
            q = replan(ctx.model, gpu, s, quantization="fp8")
            if q.weights_per_gpu <= q.weights_limit:
                fixes.append(
                    f"fp8 weights ({spec_key(d, 'quantization', s.engine)} fp8: {gib(q.weights_per_gpu)} per {per})"
                )
        where = where_of(d, ctx.in_force.tensor_parallel, cap, d.gpus, ctx.in_force.gpu, d.model)
        yield ctx.finding(
            self,
            where,
            f"weights need {gib(p.weights_per_gpu)} per {per} but {engines.display(s.engine)} may use {gib(p.weights_limit)} of the "
            f"{gib(p.gpu_total)} {_one(gpu.name, per)} gives it (x {p.utilization:g}): the model cannot load",
            details=[f"weights: {gib(p.weights_total)} in all ({p.weights_source})", *p.lines],
            fix=("use " + " or ".join(fixes)) if fixes else "use a larger GPU or a quantized checkpoint",
        )


def _one(name: str, per: str) -> str:
    """'a NVIDIA H100', 'a Google TPU v6e (Trillium)', or 'one TensorCore of a Google TPU7x (Ironwood)' where the
    device is a part of the chip the catalog names."""
    return f"a {name}" if per in ("GPU", "chip") else f"one {per} of a {name}"
