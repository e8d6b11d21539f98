"""Plan: the per-GPU memory breakdown and what it means in tokens and sequences.

Engines fill a Plan from `EngineSettings` (every value resolved, defaults applied and named by
the resolve step), a ModelArch and a GpuSpec. Pure arithmetic: no I/O, integer bytes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kvlint.record import field, record

if TYPE_CHECKING:
    from kvlint.deployment import InForce, Value


@record(frozen=True)
class EngineSettings:
    engine: str  # vllm | sglang | tgi
    version: str | None
    generation: str  # vLLM "V0" / "V1"; SGLang/TGI: "-"
    tp: int
    pp: int
    dp: int
    max_model_len: int
    max_num_seqs: int
    max_batched_tokens: int
    dtype: str | None
    quantization: str | None
    kv_cache_dtype: str
    utilization: float
    block_size: int
    enforce_eager: bool
    hybrid_kv_cache_manager: bool
    chunked_prefill: bool
    kv_cache_memory_bytes: int | None = None
    subtract_cuda_graphs: bool = False
    expert_parallel: bool = False  # vLLM --enable-expert-parallel: MoE layers hold whole experts per rank
    utilization_default: str = ""  # ' (vLLM default)' when the deployment left the fraction to the engine
    extra: dict = field(default_factory=dict)
    # the settings in force with their origins (stated, or the engine's default), as `settings()` filled
    # them beside the deployment (kvlint/engines/filling.py); resolve keeps them in `Resolved.in_force`
    in_force: InForce | None = field(default=None, compare=False)
    # what the engine settles for its plan that no option states, a record its package defines
    # (engines/sglang/plan.py `Release`, engines/tgi/defaults.py `Settled`); None: settings made by hand
    own: Any = None


@record(frozen=True)
class Term:
    label: str  # "weights", "activation peak", ...
    bytes: int
    note: str  # where the figure comes from


@record
class Plan:
    engine: str
    generation: str
    gpu_total: int  # memory the engine sees per GPU
    utilization: float
    budget: int  # what the engine may use per GPU (total x utilization, or SGLang/TGI equivalent)
    terms: list[Term]  # subtracted from the budget, in order
    kv_pool: int  # per GPU; negative when the budget is overdrawn
    kv_per_token: int  # per GPU, every attention layer on the tightest stage at full length
    page_bytes: int  # one block of one layer
    block_size: int
    layers_per_block: int  # layer slots of every KV-cache group together (hybrid groups x group size)
    num_blocks: int
    kv_tokens: int  # what the engine logs as its KV cache size in tokens
    max_model_len: int
    max_num_seqs: int
    request_bytes: int  # KV one request of max_model_len needs
    max_concurrency: float  # requests of max_model_len the pool holds at once
    max_len_that_fits: int  # largest max_model_len one request can have
    context_at_max_seqs: int  # longest equal context for max_num_seqs sequences
    weights_per_gpu: int
    weights_total: int
    weights_source: str
    stage: int = 0  # the pipeline stage that binds
    load_budget: int = 0  # what the weights must fit in (0: the same as budget)
    stage_pools: list[int] = field(default_factory=list)  # KV pool of every pipeline stage
    stage_compute: list[int] = field(default_factory=list)  # compute buffer of every stage (llama.cpp's GPUs)
    notes: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)  # the arithmetic, ready to print

    # the pool and one max_model_len request in the engine's unit of allocation (vLLM: KV blocks, the
    # null block left out; SGLang and TGI: token slots): what the course API (capacity/course.py)
    # counts concurrency and fit in
    pool_units: int = 0
    request_units: int = 0
    # vLLM's KV-cache groups: how many share the blocks, and the layer slots one block id holds (a page per
    # layer of a group); 0 where the engine has no such groups
    kv_groups: int = 0
    group_slots: int = 0
    # hybrid models whose state the engine keeps in a pool of per-request slots apart from the KV pool
    # (SGLang's mamba pool): the slots, the running requests they allow, and the state layers; 0 where the
    # engine has none. kv_tokens then counts the attention layers' tokens, all of which one request may use
    state_slots: int = 0
    state_cap: int = 0
    state_layers: int = 0

    # typed verdicts a rule reads (never by matching a note's text): the engine's start-up warm-up does not
    # fit, in its words ('' when it does; TGI), and the KV cache also holds a sparse-attention indexer's
    # keys (DeepSeek DSA; vLLM)
    warmup_fails: str = ""
    indexer_keys: bool = False
    # what the engine does when one request of max_model_len does not fit the pool, when the plan settles
    # it (a kvlint.engines.base.LongSequence: LMDeploy's backend, and the length it shrinks to); None:
    # the engine's `long_sequence` answers
    startup: Any = None

    @property
    def weights_limit(self) -> int:
        """The memory the weights must fit in: vLLM and SGLang load under their cap; TGI loads into the
        whole fraction and applies its 0.9 wiggle room only to the KV cache."""
        return self.load_budget or self.budget

    def term(self, label: str) -> int:
        return sum(t.bytes for t in self.terms if t.label == label)


def default_label(value: Value | None, engine: str) -> str:
    """' (<engine> default)' for a setting the deployment left to the engine, so the plan's arithmetic
    names the default it used; '' for a stated one."""
    return f" ({engine} default)" if value is not None and value.origin == "default" else ""
