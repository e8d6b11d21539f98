"""TensorRT-LLM's weight quantization algorithms (tensorrt_llm/quantization/mode.py QuantAlgo), priced per weight
with their scales, for a precision the launch states rather than the checkpoint carries (a NIM profile's
`fp8`, the LLM API's quant_config.quant_algo)."""

from __future__ import annotations

from kvlint.catalog.arch import Quant

_MODELOPT = "NVIDIA/TensorRT-LLM tensorrt_llm/quantization/mode.py QuantAlgo"
# name (lower case, QuantAlgo or a NIM profile's precision word) -> (method, bits per weight with scales, scheme)
ALGOS = {
    "fp8": ("fp8", 8.0, "FP8 (E4M3) weights, per-tensor scales"),
    "fp8_block_scales": ("fp8", 8.0 + 32 / (128 * 128), "FP8 weights, an fp32 scale per 128x128 block"),
    "nvfp4": ("nvfp4", 4.0 + 8 / 16, "NVFP4 weights, an FP8 scale per 16"),
    "fp4": ("nvfp4", 4.0 + 8 / 16, "NVFP4 weights, an FP8 scale per 16"),
    "w4a16_awq": ("awq", 4.0 + 16 / 128, "int4 weights, an fp16 scale per group of 128 (AWQ)"),
    "int4_awq": ("awq", 4.0 + 16 / 128, "int4 weights, an fp16 scale per group of 128 (AWQ)"),
    "w4a8_awq": (
        "awq",
        4.0 + 16 / 128,
        "int4 weights, an fp16 scale per group of 128 (AWQ, fp8 activations)",
    ),
    "w4a16": ("int4", 4.0 + 16 / 4096, "int4 weight-only, per-channel fp16 scales"),
    "int4_wo": ("int4", 4.0 + 16 / 4096, "int4 weight-only, per-channel fp16 scales"),
    "w8a16": ("int8", 8.0 + 16 / 4096, "int8 weight-only, per-channel fp16 scales"),
    "int8_wo": ("int8", 8.0 + 16 / 4096, "int8 weight-only, per-channel fp16 scales"),
    "w8a8_sq_per_channel": ("int8", 8.0 + 16 / 4096, "int8 SmoothQuant weights, per-channel scales"),
}


# the GPUs whose kernels run them: FP8 GEMMs from Ada/Hopper (sm89), NVFP4 from Blackwell (sm100), AWQ int4
# from Ampere, int8 and int4 weight-only (the same fpA_intB GEMMs) from Turing
MIN_CAPABILITY = {"fp8": 89, "nvfp4": 100, "awq": 80, "int8": 75, "int4": 75}


def quant_of(name: str) -> Quant | None:
    row = ALGOS.get(name.strip().lower())
    if row is None:
        return None
    method, bits, scheme = row
    return Quant(method, bits, f"{scheme} ({_MODELOPT})", min_capability=MIN_CAPABILITY[method])
