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
# llama.cpp file types that are mixes named after their main type (llama_ftype names)
_MIX_OF = {"iq2_m": "iq2_s", "iq3_xs": "iq3_s", "iq3_m": "iq3_s"}
_SIZE_LETTER = re.compile(r"^(q[2-6]_k)_(?:xs|s|m|l|xl)$")
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
    main = _MIX_OF.get(t) or (m.group(1) if (m := _SIZE_LETTER.match(t)) else t)
    if main not in _BLOCKS:
        return None, f"GGUF type {ggml_type.upper()} is not in kvlint's table of ggml types ({SOURCE})"
    bits = bits_of(main)
    scheme = (
        f"GGUF {ggml_type.upper()}: {main.upper()} blocks, {bits:g} bits per weight ({SOURCE}); each tensor "
        f"role at the type llama.cpp's quantizer gives it ({ROLES_SOURCE})"
    )
    return Quant("gguf", bits, scheme, ggml_file_type=f"{t}:{main}"), ""
