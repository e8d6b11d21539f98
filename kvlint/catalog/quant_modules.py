"""Which modules a quantization config leaves in 16-bit, and which it quantizes with which scheme.

A checkpoint's quantization_config names modules by pattern: compressed-tensors `ignore` and each config
group's `targets` (`re:` regular expressions, class names such as `Linear`, or module names), and
`modules_to_not_convert` (bitsandbytes, AWQ, GPTQ, FP8, fbgemm) and ModelOpt's `exclude_modules` (fnmatch
globs such as `model.layers.0*`) by name or prefix. kvlint prices weights by module group — attention,
dense MLP, routed experts, shared experts — per layer, so each pattern is read as the groups (and the
layer, when it names one) it reaches:
- `self_attn`, `attention`, q/k/v/o projections: attention; `shared_expert`: shared experts;
  `experts`: routed experts; `mlp` / `feed_forward` followed by gate/up/down projections: the dense MLP;
  a bare `mlp` / `feed_forward` prefix or a whole layer (`layers.0*`): every group of that module;
- `lm_head`, embeddings, norms, routers (`mlp.gate`, `router`, `gate` alone), vision towers and projectors:
  parts kvlint prices at 16 bits already, so naming them changes nothing;
- anything else cannot be placed: kept as stated (`unplaced`), so the weights are said to be open upward.
Sources: compressed-tensors' `re:` prefix and class-name targets (vllm-project/vllm
vllm/model_executor/layers/quantization/compressed_tensors/utils.py `find_matched_target`,
`should_ignore_layer`); vLLM AWQ/GPTQ `is_layer_skipped` (prefix / substring of module names); ModelOpt
`exclude_modules` fnmatch (vllm modelopt.py `is_layer_excluded`).
"""

from __future__ import annotations

import re
from typing import NamedTuple

ATTN, MLP, EXPERTS, SHARED = "attn", "mlp", "experts", "shared"
ALL_GROUPS = frozenset({ATTN, MLP, EXPERTS, SHARED})

_LAYER = re.compile(r"layers?(?:\\?\.|_)(\d+)(?=$|[.*\\_\[(])")
_KEPT_WORDS = (
    "lm_head",
    "embed",
    "wte",
    "norm",
    "vision",
    "visual",
    "mm_projector",
    "multi_modal_projector",
    "audio",
    "router",
    "e_score_correction_bias",
    "patch_",
)
_ATTN_WORDS = (
    "self_attn",
    "attention",
    ".attn",
    "attn.",
    "q_proj",
    "k_proj",
    "v_proj",
    "o_proj",
    "qkv",
    "kv_a_",
    "kv_b_",
    "q_a_",
    "q_b_",
)
_MLP_PROJ = re.compile(r"(?:mlp|feed_forward|ffn)(?:\\?\.|_)\(?(?:gate|up|down|gate_up|fc|w[123])")
_MODULE_END = re.compile(r"(?:mlp|feed_forward|ffn|block_sparse_moe|moe)(?:\\?\.?\*|\.\*|\*|$|\.?\$)")
_ROUTER_END = re.compile(r"(?:mlp|block_sparse_moe|moe)\\?\.gate(?:\$|$)|^gate$")


# the attention projections kvlint prices as one attention group: a module name ending in another part of the
# attention block (a DSA indexer's `indexers_proj`, a norm) names something kvlint does not price apart
_ATTN_PARTS = frozenset(
    {
        "self_attn",
        "attn",
        "attention",
        "q_proj",
        "k_proj",
        "v_proj",
        "o_proj",
        "qkv_proj",
        "q_a_proj",
        "q_b_proj",
        "kv_a_proj_with_mqa",
        "kv_b_proj",
        "query_key_value",
        "dense",
        "wqkv",
        "wo",
    }
)
_PLAIN = re.compile(r"^[\w.]+$")


class Reach(NamedTuple):
    groups: frozenset[str]  # the groups the pattern names (empty: only parts priced at 16 bits anyway)
    layer: int | None  # the one layer it names, or None for every layer


def reach(pattern: str) -> Reach | None:
    """The groups and layer a module pattern reaches; None when kvlint cannot place it."""
    p = str(pattern).lower()
    p = p[3:] if p.startswith("re:") else p
    m = _LAYER.search(p)
    layer = int(m.group(1)) if m else None
    if _ROUTER_END.search(p) or any(w in p for w in _KEPT_WORDS):
        return Reach(frozenset(), layer)
    if "shared_expert" in p:
        return Reach(frozenset({SHARED}), layer)
    if "expert" in p:
        return Reach(frozenset({EXPERTS}), layer)
    if any(w in p for w in _ATTN_WORDS):
        if _PLAIN.match(p) and p.rsplit(".", 1)[-1] not in _ATTN_PARTS:
            return None  # one part of the attention block (an indexer, a norm): not a whole group
        return Reach(frozenset({ATTN}), layer)
    if _MLP_PROJ.search(p):
        return Reach(frozenset({MLP}), layer)
    if _MODULE_END.search(p):
        return Reach(frozenset({MLP, EXPERTS, SHARED}), layer)
    if m and p[m.end() :] in ("", "*", ".*", "\\..*", "\\.*"):
        return Reach(ALL_GROUPS, layer)  # a whole layer
    return None


class Skips(NamedTuple):
    everywhere: frozenset[str]  # groups left unquantized in every layer
    by_layer: frozenset[tuple[str, int]]  # (group, layer) left unquantized in that layer only
    unplaced: tuple[str, ...]  # patterns kvlint cannot place


def skips(patterns: list[str]) -> Skips:
    everywhere: set[str] = set()
    by_layer: set[tuple[str, int]] = set()
    unplaced: list[str] = []
    for pattern in patterns:
        found = reach(pattern)
        if found is None:
            unplaced.append(str(pattern))
        elif found.layer is None:
            everywhere |= found.groups
        else:
            by_layer |= {(g, found.layer) for g in found.groups}
    by_layer = {(g, i) for g, i in by_layer if g not in everywhere}
    return Skips(frozenset(everywhere), frozenset(by_layer), tuple(unplaced))


def targeted(targets: list[str]) -> frozenset[str] | None:
    """The groups a compressed-tensors config group's targets reach (None: one cannot be placed).
    `Linear` (any nn.Linear subclass) reaches every group."""
    out: set[str] = set()
    for target in targets:
        name = str(target)
        if name.lower() in ("linear", "fusedmoe", "re:.*"):
            return ALL_GROUPS
        found = reach(name)
        if found is None or found.layer is not None:
            return None
        out |= found.groups
    return frozenset(out)
