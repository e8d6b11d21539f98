"""GGUF repositories and files by name: the base model they were converted from, and the weight type
when the name states it.

A GGUF conversion keeps its base's architecture (so its KV per token), but a GGUF *repository*
(`TheBloke/Llama-2-7B-GGUF`, `bartowski/...-GGUF`) holds one file per quantization type; which one
is served is chosen by the file, so a repository id alone does not price the weights. A file name
(`llama-2-7b.Q8_0.gguf`), a repository named after one type (`...-Q4_K_M-GGUF`) or a `repo:TYPE` tag
states it, and the weights are then priced at that type's storage size.

Bits per weight of each ggml type: the block structs of ggml-org/llama.cpp@01243c58
ggml/src/ggml-common.h (bytes per block x 8 / weights per block; e.g. block_q4_K 144 bytes per 256
weights = 4.5, block_q8_0 34 bytes per 32 = 8.5). A llama.cpp file type with a size letter
(Q4_K_M, Q3_K_L, IQ3_M ...) is a mix: most tensors of the named type, some (attn_v, ffn_down,
output) raised to a larger one; kvlint prices each tensor role at its type (kvlint.catalog.gguf_roles).
"""

from __future__ import annotations

import re

from kvlint.catalog.arch import Quant

SOURCE = "ggml-org/llama.cpp@01243c58 ggml/src/ggml-common.h block sizes"
# where each tensor role's type comes from (kvlint.catalog.gguf_roles)
ROLES_SOURCE = "ggml-org/llama.cpp@007dbbf3 src/llama-quant.cpp llama_tensor_get_type_impl"

# ggml type -> (bytes per block, weights per block)
_BLOCKS: dict[str, tuple[int, int]] = {
    "q4_0": (18, 32),
    "q4_1": (20, 32),
    "q5_0": (22, 32),
    "q5_1": (24, 32),
    "q8_0": (34, 32),
    "q2_k": (84, 256),
    "q3_k": (110, 256),
    "q4_k": (144, 256),
    "q5_k": (176, 256),
    "q6_k": (210, 256),
    "iq1_s": (50, 256),
    "iq1_m": (56, 256),
    "iq2_xxs": (66, 256),
    "iq2_xs": (74, 256),
    "iq2_s": (82, 256),
    "iq3_xxs": (98, 256),
    "iq3_s": (110, 256),
    "iq4_nl": (18, 32),
    "iq4_xs": (136, 256),
    "tq1_0": (54, 256),
    "tq2_0": (66, 256),
    "mxfp4": (17, 32),
}
# llama.cpp's file types -> the default ggml type of each (ggml-org/llama.cpp@007dbbf3
# src/llama-quant.cpp llama_ftype_get_default_type; the names llama-quantize accepts, with its aliases
# Q3_K/Q4_K/Q5_K for the _M mixes: tools/quantize/quantize.cpp QUANT_OPTIONS). "mxfp4" is how files of
# MXFP4_MOE are named. A name outside this table (Q4_K_L, Q3_K_XL, UD-Q4_K_XL: a quantizer's own recipe of
# per-tensor overrides) states no layout kvlint can price.
FTYPES: dict[str, str] = {
    **{t: t for t in ("q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q6_k", "tq1_0", "tq2_0", "iq2_xxs", "iq2_xs")},
    **{t: t for t in ("iq3_xxs", "iq1_s", "iq1_m", "iq4_nl", "iq4_xs", "iq3_s")},
    "mxfp4": "mxfp4",
    "mxfp4_moe": "mxfp4",
    "q2_k": "q2_k",
    "q2_k_s": "q2_k",
    "iq3_xs": "iq3_s",
    "iq3_m": "iq3_s",
    "iq2_s": "iq2_xs",
    "iq2_m": "iq2_s",
    **dict.fromkeys(("q3_k_s", "q3_k_m", "q3_k_l"), "q3_k"),
    **dict.fromkeys(("q4_k_s", "q4_k_m"), "q4_k"),
    **dict.fromkeys(("q5_k_s", "q5_k_m"), "q5_k"),
}
_RECIPE = re.compile(r"^i?q[1-8]_k?_?(?:xxs|xs|s|m|l|xl|xxl)$|^q[1-8]_k_\w+$")  # a size letter on a type
_ALIASES = {"q3_k": "q3_k_m", "q4_k": "q4_k_m", "q5_k": "q5_k_m", "mxfp4_moe": "mxfp4"}
_UNQUANTIZED = {"f16": 16, "bf16": 16, "f32": 32}

_TYPE = re.compile(r"(?:^|[-_.])(?P<type>i?q[1-8](?:_[a-z0-9]+)*|tq[12]_0|mxfp4|bf16|f16|f32)$")
_SHARD = re.compile(r"-\d{5}-of-\d{5}$")


def split(name: str) -> tuple[str, str | None, str] | None:
    """(the base model's name, the ggml type the name states or None, what was recognised) for a GGUF
    file or repository name; None when the name is not GGUF."""
    low = name.lower()
    tag = None
    if ":" in low:  # repo:TYPE (llama.cpp -hf, Ollama hf.co/...)
        low, _, tag = low.partition(":")
        name = name[: len(low)]
    if low.endswith(".gguf"):
        core, what = _SHARD.sub("", name[: -len(".gguf")]), "GGUF file"
    elif low.endswith(("-gguf", "_gguf")):
        core, what = name[: -len("-gguf")], "GGUF repository"
    else:
        return None
    m = _TYPE.search(core.lower())
    stated = tag or (m["type"] if m else None)
    if m:
        core = core[: m.start()]
    return core, stated, what


def block_of(ggml_type: str) -> int:
    """Weights per block of a ggml type (1 for an unquantized one)."""
    return _BLOCKS[ggml_type][1] if ggml_type in _BLOCKS else 1


def bits_of(ggml_type: str) -> float:
    """Bits per weight of a ggml type, its block's scales included."""
    if ggml_type in _UNQUANTIZED:
        return float(_UNQUANTIZED[ggml_type])
    size, per = _BLOCKS[ggml_type]
    return size * 8 / per


def quant(ggml_type: str) -> tuple[Quant | None, str]:
    """The weight format of a stated ggml type (None: 16-bit), and '' — or (None, why) when the type
    is not one kvlint can price."""
    t = ggml_type.lower()
    if t in _UNQUANTIZED:
        width = _UNQUANTIZED[t]
        return (None, "") if width == 16 else (Quant("gguf", 32.0, "GGUF F32 weights"), "")
    t = _ALIASES.get(t, t)
    main = FTYPES.get(t)
    if main is None:
        if _RECIPE.match(t):
            return None, (
                f"GGUF type {ggml_type.upper()} is not one of llama.cpp's file types (llama-quantize's "
                "QUANT_OPTIONS): a quantizer's own recipe, whose per-tensor types only the file states"
            )
        return None, f"GGUF type {ggml_type.upper()} is not in kvlint's table of ggml types ({SOURCE})"
    bits = bits_of(main)
    scheme = (
        f"GGUF {ggml_type.upper()}: {main.upper()} blocks, {bits:g} bits per weight ({SOURCE}); each tensor "
        f"role at the type llama.cpp's quantizer gives it ({ROLES_SOURCE})"
    )
    return Quant("gguf", bits, scheme, ggml_file_type=f"{t}:{main}"), ""
