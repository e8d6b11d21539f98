"""Derived model ids: an uncatalogued id resolved to a catalogued base by rules the user can see.

The rules, in the order they apply (docs/models.md repeats them):

1. Quantization suffix. One trailing marker naming a weight format is taken off the name and its
   format replaces the base's: FP8, FP8-dynamic, FP8-static, FP8-block, FP8-KV (FP8 weights and an
   FP8 KV cache), quantized.w8a8 / W8A8 (int8 weights and activations), quantized.w8a16 / W8A16,
   quantized.w4a16 / W4A16 (int4, group 128), AWQ / AWQ-INT4 / AWQ-4bit, GPTQ / GPTQ-Int4 /
   GPTQ-4bit, GPTQ-Int8 / GPTQ-8bit, bnb-4bit (nf4), NVFP4 / FP4, MXFP4, INT4, INT8; BF16 / FP16
   state unquantized 16-bit weights (a BF16 copy of a model published in FP8 is twice its size).
   An MLX conversion (-Nbit under mlx-community, or with an MLX word before it) keeps the base's
   architecture with its weights unpriced (split_mlx: no GPU engine kvlint models loads MLX weights).
2. Organisation. The base must come from the same organisation (RedHatAI and neuralmagic count as
   one), or the id is published by a known republisher (REPUBLISHERS below), or rule 1 matched
   (a quantized copy states its base by name), or the reference has no organisation (a bare name or
   a local path). Anything else — a fine-tune under its author's name — does not match.
3. Variant. Names are compared without the variant words -Instruct, -Chat and -Base (anywhere),
   -it, -pt and -hf (at the end), and the Meta- prefix Meta dropped from its repository names:
   instruction-tuned, chat and base twins share one architecture. A trailing date stamp (-2407,
   -2507, -0528, ...) is part of the name: a dated release is a release of its own, whose config
   can differ from its family's (Qwen3-235B-A22B-Instruct-2507 holds 262,144 positions where
   Qwen3-235B-A22B holds 40,960), so it matches only a catalogued row of that release (its own
   config, or a twin row whose source shows the architecture unchanged). An unmatched dated or
   suffixed release (-Thinking, -Terminus, -Exp, -Reasoning) stays unknown, and the message names
   the family's nearest catalogued config (`nearest`). A trailing -BF16 / -FP16 of a catalogued name is its precision, not
   its architecture (NVIDIA publishes NVIDIA-Nemotron-3-Nano-30B-A3B-BF16 beside -FP8 and -NVFP4),
   so a quantized sibling finds the BF16 release as its base. An underscore between two digits reads as a dot (NVIDIA and OpenGVLab
   spell versions Llama-3_3, InternVL2_5 in some repository names and 3.3, 2.5 in others).
   A base whose name is the same without rule 3 is preferred.

Organisations that publish the same weights under several names count as one for rule 2
(_SAME_ORG): RedHatAI = neuralmagic (renamed); THUDM = zai-org (the Hub organisation was renamed)
= ZhipuAI (its ModelScope organisation); MiniMax (ModelScope) = MiniMaxAI (Hub); meta (the NVIDIA
NIM / NGC spelling, e.g. nvcr.io/nim/meta/llama-3.1-8b-instruct) = meta-llama.

A name that fits bases with different architectures stays unknown, and the message names them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import NamedTuple

from kvlint.catalog import gguf
from kvlint.catalog.arch import Quant

_ALL = frozenset({"attn", "mlp", "experts", "shared"})


class NameQuant(NamedTuple):
    label: str  # what the name states, e.g. "FP8 weights"
    quant: Quant | None
    kv_dtype: str | None = None
    unpriced: str = ""  # why the weights cannot be priced from the name (a GGUF repository), or ""
    gguf: bool = False  # a GGUF file or repository (kvlint.catalog.gguf)
    fix: str = ""  # what to serve instead, when the weights are unpriced for a reason other than GGUF's


FROM_NAME = " (from the name)"  # ends the scheme of a weight format read off the name, not a config


def _q(method: str, bits: float, scheme: str) -> Quant:
    return Quant(method, bits, scheme + FROM_NAME, _ALL, None, None)


_FP8 = NameQuant("FP8 weights", _q("fp8", 8.0, "fp8 weights"))
_INT4_GROUP = 4 + 16 / 128  # int4, one bf16 scale per 128 weights (compressed-tensors w4a16 default)
_INT4_ZEROS = 4 + (16 + 4) / 128  # + a packed 4-bit zero point per group (AWQ, GPTQ)
_AWQ = NameQuant("AWQ int4 weights", _q("awq", _INT4_ZEROS, "int4 weights, group 128, fp16 scales + zeros"))
_GPTQ4 = NameQuant(
    "GPTQ int4 weights", _q("gptq", _INT4_ZEROS, "int4 weights, group 128, fp16 scales + zeros")
)
_GPTQ8 = NameQuant(
    "GPTQ int8 weights", _q("gptq", 8 + 24 / 128, "int8 weights, group 128, fp16 scales + zeros")
)
_W4A16 = NameQuant("int4 weights (w4a16)", _q("compressed-tensors", _INT4_GROUP, "int4 weights, group 128"))
_NVFP4 = NameQuant("NVFP4 weights", _q("nvfp4", 4.5, "NVFP4 weights (fp8 scale per 16)"))

# Longest first: the first marker that ends the name is taken.
_SUFFIXES: tuple[tuple[str, NameQuant], ...] = (
    ("unsloth-bnb-4bit", NameQuant("bitsandbytes nf4 weights", _q("bitsandbytes", 4.5, "bitsandbytes nf4"))),
    (
        "quantized.w8a8",
        NameQuant("int8 weights and activations (w8a8)", _q("compressed-tensors", 8.0, "int8 weights")),
    ),
    ("quantized.w8a16", NameQuant("int8 weights (w8a16)", _q("compressed-tensors", 8.0, "int8 weights"))),
    ("quantized.w4a16", _W4A16),
    ("fp8-dynamic", _FP8),
    ("fp8-static", _FP8),
    ("fp8-block", _FP8),
    ("fp8-kv", NameQuant("FP8 weights and FP8 KV cache", _q("fp8", 8.0, "fp8 weights"), "fp8")),
    ("awq-int4", _AWQ),
    ("awq-4bit", _AWQ),
    ("gptq-int4", _GPTQ4),
    ("gptq-4bit", _GPTQ4),
    ("gptq-int8", _GPTQ8),
    ("gptq-8bit", _GPTQ8),
    ("bnb-4bit", NameQuant("bitsandbytes nf4 weights", _q("bitsandbytes", 4.5, "bitsandbytes nf4"))),
    ("w8a8", NameQuant("int8 weights and activations (w8a8)", _q("compressed-tensors", 8.0, "int8 weights"))),
    ("w8a16", NameQuant("int8 weights (w8a16)", _q("compressed-tensors", 8.0, "int8 weights"))),
    ("w4a16", _W4A16),
    ("nvfp4", _NVFP4),
    ("mxfp4", NameQuant("MXFP4 weights", _q("mxfp4", 4.25, "MXFP4 weights (E8M0 scale per 32)"))),
    ("fp4", _NVFP4),
    ("fp8", _FP8),
    ("awq", _AWQ),
    ("gptq", _GPTQ4),
    ("int4", NameQuant("int4 weights", _q("int4", _INT4_ZEROS, "int4 weights, group 128, scales + zeros"))),
    ("int8", NameQuant("int8 weights", _q("int8", 8.0, "int8 weights"))),
    ("bf16", NameQuant("BF16 weights (unquantized)", None)),
    ("fp16", NameQuant("FP16 weights (unquantized)", None)),
)
_PRECISION_WORDS = frozenset({"bf16", "fp16"})  # a release's precision, not its architecture (rule 3)

# Organisations that republish other organisations' models under the original name.
REPUBLISHERS = frozenset(
    {
        "redhatai",
        "neuralmagic",
        "nm-testing",
        "hugging-quants",
        "unsloth",
        "thebloke",
        "casperhansen",
        "nvidia",
        "amd",
        "nousresearch",
        "techxgenus",
        "modelcloud",
        "intel",
        "solidrust",
        "qeeeon",
        "cortecs",
        "stelterlab",
        "quanttrio",
        "ista-daslab",
        "kaitchup",
        "modelscope",
    }
)
# Organisations that are one publisher under two names.
_SAME_ORG = {
    "redhatai": "neuralmagic",
    "zai-org": "thudm",
    "zhipuai": "thudm",
    "minimax": "minimaxai",
    "meta": "meta-llama",
}

_END_WORDS = frozenset({"it", "pt", "hf"})
_ANY_WORDS = frozenset({"instruct", "chat", "base"})
# words after a family's name that name a release of its own (its config can differ: DeepSeek-V3.2-Exp
# introduced sparse attention, Qwen3-*-Thinking-2507 a longer context)
_RELEASE_WORDS = frozenset({"thinking", "terminus", "exp", "reasoning"})
_DATE = re.compile(r"^(?:2[3-6](?:0[1-9]|1[0-2])|0[1-9][0-3][0-9]|1[0-2][0-3][0-9])$")


def split_gguf(name: str) -> tuple[str, NameQuant] | None:
    """A GGUF file or repository name (kvlint/catalog/gguf.py): the base's name and the weight format,
    priced only when the name states the ggml type."""
    found = gguf.split(name)
    if found is None:
        return None
    core, ggml_type, what = found
    if ggml_type is None:
        why = (
            f"a {what}: the quant type is chosen by the file, and the name does not state it, so the "
            "weights are not priced"
        )
        return core, NameQuant(f"GGUF weights ({what}, quant type not stated)", None, unpriced=why, gguf=True)
    quant, why = gguf.quant(ggml_type)
    label = f"GGUF {ggml_type.upper()} weights ({what})"
    return core, NameQuant(
        label, quant, unpriced=f"a {what} of type {ggml_type.upper()}: {why}" if why else "", gguf=True
    )


def split_quant(name: str) -> tuple[str, NameQuant | None]:
    """The name without a trailing quantization marker (or GGUF suffix), and what the marker states."""
    as_gguf = split_gguf(name)
    if as_gguf is not None:
        return as_gguf
    low = name.lower()
    for marker, stated in _SUFFIXES:
        if low.endswith(marker) and len(low) > len(marker) and low[-len(marker) - 1] in "-_.":
            return name[: -len(marker) - 1], stated
    return name, None


# An MLX conversion (mlx-lm's `mlx_lm.convert -q`): the base's name, an optional MLX word, then N-bit. mlx-lm stores
# each quantized weight packed in uint32 with a scale and a bias per group (ml-explore/mlx@29a620ca
# python/mlx/nn/layers/quantized.py QuantizedLinear: weight, scales, biases; group_size 64 by default).
_MLX_NAME = re.compile(r"^(?P<base>.+?)(?:[-_]mlx)?[-_](?P<bits>[2-8])bit$", re.IGNORECASE)
# the MLX community's organisation: every repository is an mlx-lm conversion
MLX_ORGS = frozenset({"mlx-community"})
# Why no engine kvlint models serves one: vLLM has no MLX quantization method (vllm-project/vllm@0034007d
# vllm/model_executor/layers/quantization/__init__.py QuantizationMethods); SGLang runs MLX models only on its
# opt-in Apple-silicon backend (sgl-project/sglang@3e95f8d7 python/sglang/srt/hardware_backend/mlx/runtime.py:
# SGLANG_USE_MLX needs a PyTorch MPS and an MLX Metal device); llama.cpp reads its own file format.
_MLX_WHY = (
    "an MLX conversion ({bits}-bit weights packed as mlx-lm stores them, a scale and a bias per group): no GPU "
    "engine kvlint models loads it (vLLM has no MLX quantization method; SGLang runs MLX models only on its "
    "opt-in Apple-silicon backend, SGLANG_USE_MLX=1; llama.cpp reads its own file format), so the weights are "
    "not priced at any precision"
)


def split_mlx(name: str, org: str | None) -> tuple[str, NameQuant] | None:
    """An MLX conversion's name (under mlx-community, or with an MLX word before -Nbit): the base's name and why
    its weights are not priced. A -Nbit name anywhere else (XuanYuan-70B-Chat-8bit) is no MLX conversion."""
    found = _MLX_NAME.match(name)
    if found is None or (org not in MLX_ORGS and "mlx" not in re.split(r"[-_.]", name.lower())):
        return None
    bits = found["bits"]
    return found["base"], NameQuant(
        f"MLX {bits}-bit weights (an MLX conversion)",
        None,
        unpriced=_MLX_WHY.format(bits=bits),
        fix="serve the base checkpoint, or a format the engine loads (FP8, AWQ, GPTQ; a GGUF file for llama.cpp)",
    )


_DIGIT_UNDERSCORE = re.compile(r"(?<=\d)_(?=\d)")


def _plain(name: str) -> str:
    """Lower case, without the Meta- prefix Meta dropped from its repository names; 3_3 reads 3.3."""
    low = _DIGIT_UNDERSCORE.sub(".", name.lower())
    return low[len("meta-") :] if low.startswith("meta-llama-") else low


def _unsized(name: str) -> str:
    """_plain without a trailing -BF16 / -FP16 precision word (the same release in another precision)."""
    low = _plain(name)
    head, _, tail = low.rpartition("-")
    return head if head and tail in _PRECISION_WORDS else low


def _stem_words(name: str) -> list[str]:
    low = _plain(name)
    words = [w for w in low.split("-") if w and w not in _ANY_WORDS]
    if len(words) > 1 and words[-1] in _PRECISION_WORDS:
        words.pop()
    while words and words[-1] in _END_WORDS:
        words.pop()
    return words


def stem(name: str) -> str:
    """The name without variant words (rule 3): what base and instruct twins have in common. A
    trailing date stamp stays: a dated release is not its family's undated one."""
    return "-".join(_stem_words(name))


def family(name: str) -> str:
    """The stem without trailing release words (date stamps, -Thinking, -Terminus, -Exp, -Reasoning):
    only to name the nearest catalogued config of an unmatched release, never to match one."""
    words = _stem_words(name)
    while len(words) > 1 and (_DATE.match(words[-1]) or words[-1] in _RELEASE_WORDS):
        words.pop()
        while len(words) > 1 and words[-1] in _END_WORDS:
            words.pop()
    return "-".join(words)


def _org(ident: str) -> str | None:
    org = ident.split("/", 1)[0].lower() if ident.count("/") == 1 else None
    return _SAME_ORG.get(org, org) if org else None


class Derived(NamedTuple):
    key: str | None  # the base's catalog key (None: no match or ambiguous)
    stated: NameQuant | None  # the weight format the name states
    rules: tuple[str, ...]  # which rules applied, for messages
    candidates: tuple[str, ...] = ()  # when ambiguous: the bases that fit
    nearest: tuple[str, ...] = ()  # no match: the catalog keys of the family of a dated/suffixed release


class NameIndex:
    """Catalog keys grouped by the stem of their name, built once per catalog."""

    def __init__(self, keys: Iterable[tuple[str, str]], identity: Callable[[str], str]) -> None:
        self._by_stem: dict[str, list[str]] = {}
        self._by_family: dict[str, list[str]] = {}
        self._identity = identity
        for key, target in keys:  # (id or alias, lower-case; the catalog key it leads to)
            name = key.rsplit("/", 1)[-1]
            self._by_stem.setdefault(stem(name), []).append(key + "\0" + target)
            self._by_family.setdefault(family(name), []).append(key + "\0" + target)

    def derive(self, ident: str, has_org: bool) -> Derived:
        """Apply the rules to `ident` (org/name, a bare name, or a path's last component)."""
        name = ident.rstrip("/").rsplit("/", 1)[-1]
        org = _org(ident) if has_org else None
        base_name, stated = split_mlx(name, org) or split_quant(name)
        free = org is None or org in REPUBLISHERS or stated is not None
        rules = _republished(ident, name, base_name, stated, org)
        found = _entries_of(self._by_stem.get(stem(base_name), []), free, org)
        if not found:
            near = family(base_name)
            if near == stem(base_name):  # not a dated or suffixed release: nothing nearer to name
                return Derived(None, stated, tuple(rules))
            nearest = _entries_of(self._by_family.get(near, []), free, org)
            return Derived(None, stated, tuple(rules), nearest=tuple(sorted({t for _, t in nearest})))
        by_arch: dict[str, str] = {}
        for _key, target in sorted(
            _closest(found, base_name, rules), key=lambda kt: (_org(kt[0]) != org, kt[0])
        ):
            by_arch.setdefault(self._identity(target), target)
        if len(by_arch) > 1:
            return Derived(None, stated, tuple(rules), tuple(sorted(set(by_arch.values()))))
        target = next(iter(by_arch.values()))
        rules.extend(_spelling(ident, base_name, org, target))
        return Derived(target, stated, tuple(rules))


def _entries_of(entries: list[str], free: bool, org: str | None) -> list[tuple[str, str]]:
    """(key, target) of the index entries the organisation rule (rule 2) lets the reference match."""
    found = []
    for entry in entries:
        key, target = entry.split("\0")
        if free or _org(key) == org:
            found.append((key, target))
    return found


def _republished(
    ident: str, name: str, base_name: str, stated: NameQuant | None, org: str | None
) -> list[str]:
    """The rules a quantized or republished copy's name matched: a quantization suffix or GGUF name,
    a republisher's organisation."""
    rules = []
    if stated is not None:
        rules.append(
            "GGUF name"
            if stated.label.startswith("GGUF")
            else "MLX conversion name"
            if stated.label.startswith("MLX")
            else f"quantization suffix -{name[len(base_name) + 1 :]}"
        )
    if org in REPUBLISHERS:
        rules.append(f"republisher {ident.split('/', 1)[0]}")
    return rules


def _closest(found: list[tuple[str, str]], base_name: str, rules: list[str]) -> list[tuple[str, str]]:
    """The entries whose name is the name itself (or its base released as -BF16/-FP16), else all of
    them as instruct/chat/base variants; the rule used is added to `rules`."""
    exact = [(k, t) for k, t in found if _plain(k.rsplit("/", 1)[-1]) == _plain(base_name)]
    if not exact:
        exact = [(k, t) for k, t in found if _unsized(k.rsplit("/", 1)[-1]) == _unsized(base_name)]
        if exact:
            rules.append("base released as -BF16/-FP16")
    if not exact:
        rules.append("instruct/chat/base variant")
    return exact or found


def _spelling(ident: str, base_name: str, org: str | None, target: str) -> list[str]:
    """How the name is spelt differently from the entry: another organisation name, 3_3 for 3.3."""
    said, base_org = ident.split("/", 1)[0], target.split("/", 1)[0]
    if org is not None and said.lower() != base_org and _org(target) == org:
        return [f"organisation {said} = {base_org}"]
    if _DIGIT_UNDERSCORE.search(base_name) or _DIGIT_UNDERSCORE.search(target):
        if _plain(base_name) != base_name.lower() or _plain(target) != target.lower():
            return ["3_3 read as 3.3"]
    return []
