"""The compute buffer llama.cpp's scheduler reserves for one ubatch (`llama_context: CUDA0 compute buffer size`),
and the memory outside its buffers: both kvlint's estimates, said so in the plan (plan.py has the rest).

On several GPUs with every layer offloaded llama.cpp runs the layer split as a pipeline, and its scheduler then
keeps copies of each GPU's inputs (`stage_bytes`; from the llama.cpp Ollama vendors: ollama/ollama@v0.15.5,
llama.cpp ec98e2002, and ollama/ollama@v0.5.7, llama.cpp 46e3556e, of the b4462 era, the same code):
- on when there is more than one device, n_gpu_layers > n_layer, --split-mode layer and the KV cache is
  offloaded (llama/llama.cpp/src/llama-context.cpp:295-300 at v0.15.5, which also turns it off for
  --override-tensor; llama/llama.cpp:12548-12553 at v0.5.7), and every device has async compute and events
  (CUDA has both): "pipeline parallelism enabled (n_copies=4)";
- then `n_copies = GGML_SCHED_MAX_COPIES`, 4 (ml/backend/ggml/ggml/src/ggml-backend.cpp:698-699, :1701);
- a graph input (the positions, the KQ mask) belongs to the CPU backend (:847-851), and every tensor a GPU's
  split reads from another backend is duplicated n_copies times in that GPU's buffer (:1296-1313), each copy
  flagged as an output so ggml-alloc never reuses it, and all allocated first, as leafs (:1389-1418).
The KQ masks (F32, built on the CPU) are graph inputs every layer reads, so they live from the graph's start to
its last layer, beside the FFN as well as the attention scores: one over the cells a slot spans and, for a model
with sliding-window layers, a second over the SWA cache's cells (llama-graph.cpp:1822-1852); with flash
attention each is cast to F16 once (:1629) and the F32 input freed after its cast (ggml-alloc.c:805-825).
So a GPU's split inputs - the hidden state from the CPU's token embedding or the GPU before, the positions,
and the KQ mask (F32 from the CPU; with flash attention the later GPUs read the F16 copy the first GPU casts,
llama-graph.cpp:1626-1629) - stay in its buffer four times over, beside the graph's largest phase.
"""

from __future__ import annotations

from kvlint.capacity.plan import EngineSettings
from kvlint.catalog.arch import CHUNKED, SLIDING, ModelArch
from kvlint.engines.llamacpp import layers as L
from kvlint.engines.llamacpp.ollama_runner import OWN as OWN_ENGINE
from kvlint.units import GIB

# hidden-size F32 rows per token beside a phase's largest tensor (kvlint's fit on the calibration logs,
# benchmarks/calibration/llamacpp_startup_logs.yaml): one beside the logits (l-001), four beside the attention
# scores and their mask (l-009, l-010, and l-005 of benchmarks/calibration/ollama_startup_logs.yaml), three
# beside the FFN's gate and up (l-015, whose first GPU holds no output layer: its FFN phase binds)
ROWS_BESIDE_LOGITS, ROWS_BESIDE_SCORES, ROWS_BESIDE_FFN = 1, 4, 3
# CUDA context and cuBLAS workspace outside llama.cpp's buffers (kvlint assumption)
CONTEXT_BYTES = int(0.5 * GIB)
# with --override-tensor the GPU runs the ops of the tensors kept on the CPU and copies each in for its op
# (plan.py OFFLOAD_BATCH): a split input, freed after use without the pipeline (ggml-backend.cpp:1224-1231
# starts a split at each such weight "so the memory of the previously offloaded weights can be reused")
FFN_COPY = "FFN, with the largest CPU-kept tensor copied in"
N_COPIES = 4  # GGML_SCHED_MAX_COPIES (ggml-backend.cpp:698-699 at ollama v0.15.5), llama.cpp's default build


def _n_kv(s: EngineSettings) -> int:
    """The cells a slot's attention (and its mask) spans: its own stream of n_ctx_seq cells since PR #14363,
    all n_ctx before (kv_streams)."""
    own_stream = s.extra["kv_streams"] and not s.extra["unified"]
    return int(s.extra["n_ctx_seq"]) if own_stream else int(s.extra["n_ctx"])


def _mask_cells(arch: ModelArch, s: EngineSettings) -> int:
    """The cells of the KQ masks every layer reads: one over the cells a slot spans (_n_kv), and for a model with
    sliding-window layers a second over the SWA cache's (llama-graph.cpp:1822-1852 build_attn_inp_kv_iswa at
    ollama v0.15.5: `self_kq_mask_swa` of `get_swa()->get_n_kv()` cells; the whole -c with --swa-full)."""
    n_kv = _n_kv(s)
    if not any(kind in (SLIDING, CHUNKED) for kind in arch.layer_kinds):
        return n_kv
    if s.extra["swa_full"]:
        return 2 * n_kv
    own_stream = s.extra["kv_streams"] and not s.extra["unified"]
    at = int(s.extra["n_ctx_seq"]) if own_stream else n_kv
    swa = L.window_cells(
        arch, at, not own_stream, s.max_num_seqs, int(s.extra["n_ubatch"]), int(s.extra["pad"])
    )
    return n_kv + min(n_kv, swa)


def _phases(arch: ModelArch, s: EngineSettings, output_on_gpu: bool, masks: int) -> dict[str, int]:
    """Each phase's bytes for one ubatch in F32, with `masks` copies of the KQ masks beside the attention scores
    and the FFN: every layer reads them, so they live from the graph's start to its last layer (F32, or with
    flash attention the F16 casts, llama-graph.cpp:1629, the F32 input freed once cast: ggml-alloc.c:805-825)."""
    ub = int(s.extra["n_ubatch"])
    n_kv = _n_kv(s)
    row = arch.hidden_size * ub * 4
    n_ff = max(arch.intermediate_size, arch.moe_intermediate_size * max(1, arch.experts_per_token))
    copy = int(s.extra.get("weight_copy") or 0)
    mask = masks * _mask_cells(arch, s) * ub * (2 if s.extra["flash_attn"] else 4)
    return {
        "logits": arch.vocab_size * ub * 4 + ROWS_BESIDE_LOGITS * row if output_on_gpu else 0,
        "attention scores": 0
        if s.extra["flash_attn"]
        else arch.query_heads * n_kv * ub * 4 + mask + ROWS_BESIDE_SCORES * row,
        FFN_COPY if copy else "FFN": 2 * n_ff * ub * 4 + ROWS_BESIDE_FFN * row + copy + mask,
    }


def compute_bytes(arch: ModelArch, s: EngineSettings, output_on_gpu: bool) -> tuple[int, str]:
    """The largest of the graph's phases for one ubatch, in F32: the output logits (n_vocab per token, when the
    output layer is on the GPU); without flash attention, KQ for every head and its mask over the cells a slot
    attends to (_n_kv); the FFN's gate and up. Each with the hidden-size rows that live beside it."""
    phases = _phases(arch, s, output_on_gpu, masks=1)
    what = max(phases, key=lambda k: phases[k])
    ub = int(s.extra["n_ubatch"])
    return phases[what], f"kvlint's estimate: one ubatch of {ub} tokens, its largest phase the {what} (F32)"


def pipelined(arch: ModelArch, s: EngineSettings) -> bool:
    """Whether llama.cpp runs the layer split as a pipeline (the module's docstring): llama-server, and the
    llama.cpp runner Ollama keeps for the architectures its own engine does not run (a public Ollama log of
    deepseek-r1:671b on eight MI250X dies prints "pipeline parallelism enabled (n_copies=4)"); Ollama's own
    engine makes its scheduler without it (ml/backend/ggml/ggml.go:383-391 at v0.15.5, `parallel` false).
    Which runner a model gets: ollama_runner.py. --override-tensor turns it off."""
    return (
        int(s.extra.get("n_devices") or 1) > 1
        and int(s.extra["ngl"]) > arch.layers
        and bool(s.extra.get("layer_split"))
        and bool(s.extra["kv_offload"])
        and s.extra.get("ollama_runner") != OWN_ENGINE
        and s.extra.get("moved") is None  # any --override-tensor turns it off (llama-context.cpp:300)
    )


def split_inputs(arch: ModelArch, s: EngineSettings, first: bool, layers: bool) -> int:
    """One copy of what a GPU's split reads from another backend: the hidden state (F32, a row per token),
    the positions (I32) and, for a GPU with layers, the KQ masks (_mask_cells: F32 from the CPU on the
    first GPU and without flash attention; else the first GPU's F16 casts)."""
    ub = int(s.extra["n_ubatch"])
    mask = _mask_cells(arch, s) * ub * (4 if first or not s.extra["flash_attn"] else 2) if layers else 0
    return arch.hidden_size * ub * 4 + ub * 4 + mask


def stage_bytes(arch: ModelArch, s: EngineSettings, output_on_gpu: bool, first: bool, layers: bool) -> int:
    """One GPU's compute buffer in the pipeline: N_COPIES of its split inputs (the mask among them, so the
    scores phase counts none of its own) beside its largest phase; with flash attention the first GPU also
    keeps the F16 masks it casts for every layer."""
    phases = _phases(arch, s, output_on_gpu, masks=0)
    largest = max(phases.values()) if layers else phases["logits"]
    cast = (
        _mask_cells(arch, s) * int(s.extra["n_ubatch"]) * 2
        if first and layers and s.extra["flash_attn"]
        else 0
    )
    return largest + N_COPIES * split_inputs(arch, s, first, layers) + cast
