from collections.abc import Iterator

from kvlint.capacity.weights import effective_quant
from kvlint.findings import Finding, Severity
from kvlint.rules.base import ModelGpuContext, ModelGpuRule
from kvlint.rules.facts import where_of
from kvlint.rules.fixes import UNSAFE, set_setting

# Models whose config forbids float16 (vLLM _get_and_verify_dtype: "Numerical instability").
NO_FP16 = ("gemma2", "gemma3", "gemma3_text")


class DtypeUnsupportedOnGpu(ModelGpuRule):
    """A dtype or quantization the GPU's compute capability cannot run.

    ## What it does
    Reports `bfloat16` on GPUs below compute capability 8.0 (T4, V100), where vLLM refuses an
    explicit bf16 and casts `auto` to float16 (which Gemma 2/3 forbid), and weight quantization
    below its method's minimum capability (vLLM `get_min_capability()`: AWQ 7.5, GPTQ 6.0, FP8
    7.5, MXFP4 8.0, ModelOpt FP8 8.9, bitsandbytes 7.0). FP8 below 8.9 is reported as a warning:
    it runs as weight-only W8A16 through Marlin, not as FP8 compute.

    ## Why is this bad?
    "Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 GPU
    has compute capability 7.5." — the engine exits; or it silently runs slower than planned.

    ## Formula
    GPU compute capability (catalog) against the dtype's and the method's minimum.

    ## Example
    `--dtype=bfloat16` on `nvidia-tesla-t4`.

    Use instead: `--dtype=half` (float16), or an Ampere or newer GPU.

    ## How to fix
    Use float16 on pre-Ampere GPUs, or a GPU that supports the format.

    `--unsafe-fixes` writes `half` where bfloat16 is stated: unsafe, since the numerics change (the
    other way out, another GPU, is the user's choice).

    ## Suppress
    `# kvlint: disable=KV206 -- reason` on the line.
    """

    id = "KV206"
    name = "dtype-unsupported-on-gpu"
    severity = Severity.ERROR
    fix_applicability = "unsafe"

    def check(self, ctx: ModelGpuContext) -> Iterator[Finding]:
        d, arch, gpu = ctx.deployment, ctx.model, ctx.gpu
        cc = gpu.cc_int
        if cc is None or gpu.vendor != "nvidia":
            return
        dtype = str(d.dtype.value).lower() if d.dtype else "auto"
        if cc < 80:
            if dtype in ("bfloat16", "bf16"):
                yield ctx.finding(
                    self,
                    where_of(d, d.dtype),
                    f"Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your {gpu.name} GPU has "
                    f"compute capability {gpu.cc_text}",
                    fix="--dtype=half (float16)",
                    fixes=[
                        set_setting(
                            d,
                            ctx.in_force.engine_name,
                            d.dtype,
                            "dtype",
                            "half",
                            "set --dtype half (float16)",
                            UNSAFE,
                        )
                    ],
                )
            elif dtype == "auto" and arch.dtype == "bfloat16" and arch.family in NO_FP16:
                yield ctx.finding(
                    self,
                    where_of(d, d.model, ctx.in_force.gpu),
                    f"{arch.id} is bf16 and {gpu.name} (compute capability {gpu.cc_text}) has no bf16, so the engine would "
                    f"cast it to float16, which {arch.family} does not support (numerical instability)",
                    fix="use an Ampere or newer GPU",
                )
        quant = effective_quant(
            arch, str(d.quantization.value) if d.quantization else None, ctx.in_force.engine_name
        )
        if quant is None or quant.min_capability is None:
            return
        where = where_of(d, d.quantization, d.model)
        if cc < quant.min_capability:
            yield ctx.finding(
                self,
                where,
                f"The quantization method {quant.method} is not supported for the current GPU. Minimum capability: "
                f"{quant.min_capability}. Current capability: {cc} ({gpu.name})",
                fix="use a GPU of that capability, or a checkpoint in another format",
            )
        elif quant.method in ("fp8", "modelopt") and cc < 89:
            yield ctx.finding(
                self,
                where,
                f"FP8 weights on {gpu.name} (compute capability {gpu.cc_text}, below 8.9) run as weight-only W8A16 through "
                "Marlin: memory as planned, but no FP8 compute speed-up",
                fix="an Ada, Hopper or Blackwell GPU for FP8 compute",
                severity=Severity.WARNING,
            )
