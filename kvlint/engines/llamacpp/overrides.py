"""--override-tensor (-ot), --cpu-moe and --n-cpu-moe: tensors llama-server keeps in another buffer than the one
-ngl gives their layer; most often a MoE model's routed experts kept on the CPU (`-ot ".ffn_.*_exps.=CPU"`).

What llama.cpp does (ggml-org/llama.cpp, pull request #11397 "llama : add option to override model tensor
buffers"; the source as ollama/ollama@v0.15.5 vendors it, llama.cpp ec98e2002):
- `-ot` takes `PATTERN=BUFFER,PATTERN=BUFFER,...` and may be given again; each item is appended in order
  (common/arg.cpp parse_tensor_buffer_overrides: an item without `=` is "invalid value", a buffer no device
  offers is "unknown buffer type", and llama-server exits). The buffers are the devices' own: `CPU`, `CUDA0`...
- `--cpu-moe` appends `\\.ffn_(up|down|gate)_(ch|)exps` = CPU, `--n-cpu-moe N` the same for `blk.0` .. `blk.N-1`
  (llama/llama.cpp/common/common.h:824-831 LLM_FFN_EXPS_REGEX, llm_ffn_exps_block_regex): the routed experts.
- Each tensor's name (`blk.12.ffn_up_exps.weight`) is matched with std::regex_search against the patterns in
  order, and the first that matches decides its buffer (src/llama-model.cpp:2569-2586).
- Any override turns the pipeline of several GPUs off (src/llama-context.cpp:295-300 `!has_tensor_overrides()`).

kvlint never hands a pattern to Python's `re` (a backtracking engine: `(a+)+$` on a long name is exponential);
it compiles it with RE2, which runs in linear time (kvlint.extract.pod.cel.linear_pattern), and a pattern RE2
does not take (a look-ahead, a back-reference, more than MAX_PATTERN characters) is named as not checked. Names are
kvlint's per layer: attn_q/k/v/output, ffn_gate/up/down, ffn_{gate,up,down}_exps, ffn_{gate,up,down}_shexp,
output; a group's bytes are split between its tensors by their parameter counts (MLA's attention tensors, whose
split kvlint does not price, are moved only all together).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from kvlint.catalog.arch import ModelArch
from kvlint.codes import NOT_CHECKABLE
from kvlint.deployment import Value
from kvlint.engines.base import SettingRefused
from kvlint.engines.filling import Filling
from kvlint.extract.pod.cel import linear_pattern
from kvlint.findings import Issue, Severity

ATTN, MLP, ROUTED, SHARED = range(4)  # the groups of layers.groups_by_layer
MAX_PATTERN = 200  # characters of one pattern kvlint evaluates
MAX_RULES = 256  # items of -ot kvlint evaluates
CPU = "CPU"


class Moved(NamedTuple):
    """What the overrides keep on the CPU: per layer and group, the share of the group's bytes and the share of
    its largest tensor moved; and whether the output layer is."""

    layers: tuple[tuple[tuple[float, float], ...], ...]
    output: bool


def _names(arch: ModelArch, i: int) -> list[tuple[int, str, float | None]]:
    """(group, tensor name, its share of the group's bytes; None when kvlint does not price the split)."""
    lp = arch.layer_params[i]
    h, d = arch.hidden_size, arch.head_dim
    k = v = h * arch.kv_heads * d
    o = arch.query_heads * d * h
    out: list[tuple[int, str, float | None]] = []
    if arch.mla or lp.attn < k + v + o:
        mla = ("attn_q_a", "attn_q_b", "attn_kv_a_mqa", "attn_kv_b", "attn_output")
        out += [(ATTN, name, None) for name in mla]
    else:
        q = lp.attn - k - v - o
        out += [
            (ATTN, n, size / lp.attn)
            for n, size in (("attn_q", q), ("attn_k", k), ("attn_v", v), ("attn_output", o))
        ]
    ffn = ("gate", "up", "down") if arch.gated_mlp else ("up", "down")
    for group, suffix, params in (
        (MLP, "", lp.mlp),
        (ROUTED, "_exps", lp.experts - lp.shared),
        (SHARED, "_shexp", lp.shared),
    ):
        if params:
            out += [(group, f"ffn_{part}{suffix}", 1 / len(ffn)) for part in ffn]
    return [(g, f"blk.{i}.{name}.weight", share) for g, name, share in out]


def rules(f: Filling, n_gpus: int) -> list[tuple[Any, bool | None, str]]:
    """The overrides in force, in order: (a search function, whether the buffer is the CPU (None: a buffer kvlint
    does not place), the item as written). Items kvlint cannot evaluate are named once and left out."""
    said = f.options.get("override_tensor")
    if said is None:
        return []
    items = str(said.value).split(",")
    if len(items) > MAX_RULES:
        _not_checked(f, said, f"{len(items)} items, where kvlint evaluates at most {MAX_RULES}")
        return []
    out: list[tuple[Any, bool | None, str]] = []
    for item in items:
        pattern, eq, buffer = item.partition("=")  # the first '=' (arg.cpp `override.find('=')`)
        if not eq:
            raise SettingRefused(
                f"llama.cpp: --override-tensor item {item!r} is not PATTERN=BUFFER: llama-server exits"
                ' (common/arg.cpp parse_tensor_buffer_overrides "invalid value")',
                said.where or f.d.where,
            )
        cpu = _is_cpu(f, said, item, buffer, n_gpus)
        search = linear_pattern(pattern) if len(pattern) <= MAX_PATTERN else None
        if search is None and cpu is not None:  # (an unplaced buffer is named already)
            what = f"its pattern, which kvlint does not evaluate (RE2, linear-time, at most {MAX_PATTERN} characters)"
            _not_checked(f, said, f"item {item!r}: {what}")
        if search is None:
            continue
        out.append((search.search, cpu, item))
    return out


def _is_cpu(f: Filling, said: Value, item: str, buffer: str, n_gpus: int) -> bool | None:
    """True for the CPU, False for the one GPU's own buffer, None for a buffer kvlint does not place."""
    if buffer == CPU:
        return True
    if n_gpus == 1 and buffer in ("CUDA0", "ROCm0", "Vulkan0"):
        return False
    _not_checked(
        f,
        said,
        f"item {item!r}: the buffer {buffer!r}, which kvlint does not place (it plans the CPU"
        " and one GPU's own; a buffer no device offers is 'unknown buffer type' and llama-server exits)",
    )
    return None


def _not_checked(f: Filling, said: Value, what: str) -> None:
    issue = Issue(
        NOT_CHECKABLE,
        f"{f.d.label()}: --override-tensor {what}: the tensors it names are planned where -ngl puts their layer,"
        " not checked",
        said.where or f.d.where,
        severity=Severity.WARNING,
    )
    if issue not in f.said:
        f.said.append(issue)


def _exps_layers(f: Filling, layers: int) -> int:
    """The first layers whose routed experts --cpu-moe (all) or --n-cpu-moe N keep on the CPU."""
    if f.options.get("cpu_moe") is not None and f.options["cpu_moe"].value is True:
        return layers
    n = f.options.get("n_cpu_moe")
    return min(layers, int(n.value)) if n is not None and isinstance(n.value, int) and n.value > 0 else 0


def _buffer(found: list[tuple[Any, bool | None, str]], name: str, otherwise: bool | None) -> bool | None:
    """The first item whose pattern the name matches decides (src/llama-model.cpp:2571-2584)."""
    return next((cpu for search, cpu, _ in found if search(name)), otherwise)


def _layer(arch: ModelArch, i: int, found: list[Any], exps: int) -> tuple[tuple[float, float], ...]:
    """Per group of layer i, (the share of its bytes, the share of its largest tensor) kept on the CPU."""
    shares = [[0.0, 0.0] for _ in range(4)]
    whole: dict[int, list[bool]] = {}
    for group, name, share in _names(arch, i):
        on_cpu = _buffer(found, name, True if group == ROUTED and i < exps else None) is True
        if share is None:  # a split kvlint does not price: moved only whole
            whole.setdefault(group, []).append(on_cpu)
        elif on_cpu:
            shares[group] = [shares[group][0] + share, max(shares[group][1], share)]
    for group, cpu in whole.items():
        if all(cpu):
            shares[group] = [1.0, 1.0 / len(cpu)]
    return tuple((a, b) for a, b in shares)


def moved(f: Filling, arch: ModelArch, n_gpus: int) -> Moved | None:
    """What the overrides keep on the CPU (None: no override is given). kvlint reads -ot's items before
    --cpu-moe's and --n-cpu-moe's (llama.cpp takes them in command-line order): the two differ only when an -ot
    item sends routed experts to a GPU."""
    exps = _exps_layers(f, arch.layers)
    if f.options.get("override_tensor") is None and not exps:
        return None
    found = rules(f, n_gpus)
    out_name = "output.weight" if arch.lm_head_params else "token_embd.weight"  # tied: token_embd duplicated
    return Moved(
        tuple(_layer(arch, i, found, exps) for i in range(arch.layers)),
        _buffer(found, out_name, None) is True,
    )


__all__ = ["Moved", "moved"]
