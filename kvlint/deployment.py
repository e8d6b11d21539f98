"""The typed deployment every extractor produces: each fact remembers where it came from.

A fact is a `Value`: the value, how kvlint knows it ("stated" in the file, an engine "default",
or "inferred" from a node label, an image tag, another field), where it sits and a short note
naming the default or the inference. Dataclasses rather than pydantic models: this type is built
on every lint of every manifest and must not cost pydantic's import time in a pre-commit hook;
user-written input (the native spec, the config) is validated with pydantic where it is read.
"""

from __future__ import annotations

from typing import Any, Generic, Literal, TypeVar

from kvlint.findings import Issue, Location
from kvlint.record import FrozenRecordError, field, fields, record

T = TypeVar("T")
Origin = Literal["stated", "default", "inferred"]


@record(frozen=True)
class Value(Generic[T]):
    value: T
    origin: Origin = "stated"
    where: Location | None = None
    note: str = ""

    def describe(self) -> str:
        """How the value was arrived at, for messages: 'stated', 'vLLM default', 'from the node label'."""
        if self.origin == "stated":
            return "stated"
        return self.note or self.origin


def stated(value: T, where: Location | None, note: str = "") -> Value[T]:
    return Value(value, "stated", where, note)


def default(value: T, note: str, where: Location | None = None) -> Value[T]:
    return Value(value, "default", where, note)


def inferred(value: T, note: str, where: Location | None = None) -> Value[T]:
    return Value(value, "inferred", where, note)


class FrozenDict(dict):
    """A dict that refuses every write: a frozen deployment's `extra` and its other tables."""

    def _refuse(self, *_args: Any, **_kwargs: Any) -> Any:
        raise FrozenRecordError("the deployment is frozen after extract: its tables are read only")

    __setitem__ = __delitem__ = __ior__ = _refuse  # type: ignore[assignment]
    pop = popitem = setdefault = update = clear = _refuse  # type: ignore[assignment]

    def __reduce__(self) -> Any:
        return (FrozenDict, (dict(self),))  # pickles (worker processes) without calling __setitem__


_TABLES = ("extra", "architecture", "budget", "suffixes", "ignores")
_LISTS = ("memory_quantities", "issues", "unreadable")


# The engine a deployment that names none is accounted for as (kvlint.engines.DEFAULT; the registry there
# lists the engines kvlint models).
DEFAULT_ENGINE = "vllm"


@record
class Deployment:
    """One model replica's serving configuration, as far as the input states it.

    Extract (and the link stage's passes over the documents beside it) build it; `freeze()` then makes
    every later write raise (`FrozenRecordError`): resolve, rules and reports read it, and what they
    settle lives beside it (`InForce`, kvlint/resolve.py `Resolved`)."""

    file: str
    where: Location  # the workload (or spec document) itself
    kind: str  # input kind: ServingSpec, Deployment, LeaderWorkerSet, InferenceService, values ...
    name: str = ""
    base_dir: str = "."  # directory that relative model paths are resolved against

    engine: Value[str] | None = None
    engine_version: Value[str] | None = None
    model: Value[str] | None = None
    gpu: Value[str] | None = None
    gpus: Value[int] | None = None  # GPUs for one model replica (across an LWS group / Ray cluster)
    gpus_per_pod: Value[int] | None = None
    # the extended resource the pod requests them as, set at extract where the input names it:
    # nvidia.com/gpu, amd.com/gpu, google.com/tpu, a MIG slice (nvidia.com/mig-1g.10gb) or a shared GPU
    # (nvidia.com/gpu.shared); None where no resource is named (a chart's own count key, a node label).
    # Readers ask this, never the count's note (prose).
    gpu_resource: str | None = None
    pods: Value[int] | None = None  # pods that make up one replica (LWS size)
    accelerator: str = "gpu"  # gpu | tpu | neuron | cpu
    tpu_topology: Value[str] | None = None  # cloud.google.com/gke-tpu-topology: the slice the pods land on

    tensor_parallel: Value[int] | None = None
    pipeline_parallel: Value[int] | None = None
    data_parallel: Value[int] | None = None
    expert_parallel: Value[bool] | None = None

    max_context: Value[int] | None = None  # vLLM max_model_len / SGLang context_length / TGI max_total_tokens
    max_sequences: Value[int] | None = None  # vLLM max_num_seqs / SGLang max_running_requests
    max_batched_tokens: Value[int] | None = None
    dtype: Value[str] | None = None
    quantization: Value[str] | None = None
    kv_cache_dtype: Value[str] | None = None
    gpu_memory_utilization: Value[float] | None = None
    block_size: Value[int] | None = None
    enforce_eager: Value[bool] | None = None
    chunked_prefill: Value[bool] | None = None
    hybrid_kv_cache_manager: Value[bool] | None = None
    disable_sliding_window: Value[bool] | None = None
    kv_cache_memory_bytes: Value[int] | None = None
    swap_space: Value[Any] | None = None

    # engine knobs that only one engine has, by their canonical snake_case name
    # (sglang: mem_fraction_static, max_total_tokens, chunked_prefill_size;
    #  tgi: max_input_tokens, max_batch_prefill_tokens, max_batch_total_tokens, cuda_memory_fraction)
    extra: dict[str, Value[Any]] = field(default_factory=dict)

    architecture: dict[str, Value[Any]] = field(default_factory=dict)  # declared model facts / overrides
    budget: dict[str, Value[Any]] = field(default_factory=dict)  # the author's planning figures
    fragmentation: Value[float] | None = None

    # container facts
    shm_size: Value[Any] | None = None  # emptyDir medium Memory sizeLimit ("" when unlimited)
    has_shm: bool | None = None  # None: not a pod (nothing to say)
    memory_limit: Value[str] | None = None
    args_where: Location | None = None  # where engine flags are written (to point "add --x" fixes at)
    args_end: Location | None = (
        None  # the last engine argument (or spec key) written: fixes add flags after it
    )
    image: Value[str] | None = None
    device: Value[str] | None = None  # the device the engine is told to run on (vLLM 0.6 to 0.9 --device cpu)
    # where the pod may be scheduled: (node-label terms, tolerations) of its spec, which link/pools.py
    # matches to node pools; a shared GPU (True: time-sliced or MPS; `claim:NAME`: a ResourceClaim every
    # pod naming it shares) and the pods the workload runs, which link/sharing.py adds up on one card
    placement: Value[tuple[list[tuple[str, list[str]]], list[dict[str, str]]]] | None = None
    gpu_shared: Value[Any] | None = None
    # a share of one GPU's memory the pod asks for (KAI Scheduler gpu-fraction / gpu-memory annotations,
    # extract/pod/gpu_fraction.py): a fraction of the card, or bytes
    gpu_share: Value[float] | None = None
    gpu_share_bytes: Value[int] | None = None
    # a cap on each GPU's memory that a device plugin enforces (HAMi nvidia.com/gpumem, Volcano vGPU;
    # extract/pod/vgpu.py): the engine sees the cap as the card's total. Bytes, or a fraction of the card
    gpu_limit_bytes: Value[int] | None = None
    gpu_limit_share: Value[float] | None = None
    pod_replicas: Value[int] | None = None

    suffixes: dict[str, tuple[str, Location]] = field(default_factory=dict)  # field -> "32k" as written
    memory_quantities: list[tuple[str, str, Location]] = field(default_factory=list)  # (what, "80G", where)
    ignores: dict[str, tuple[str, Location]] = field(default_factory=dict)  # kvlint.io/ignore annotation
    issues: list[Issue] = field(default_factory=list)  # KV002-KV005 material found while extracting
    unreadable: list[str] = field(default_factory=list)  # fields whose stated value could not be read

    # the DRA claims a container names (extract/pod/dra.py; kvlint/link/claims.py reads them), and what the
    # link stage derives from the objects beside: several GPU types a claim or the node pools admit (every
    # capacity rule runs on each, kvlint/run/fleet.py) and how to narrow them, the node pools the workload
    # can land on (extract.kinds.node_pools.Pool), and those of them whose node types carry no GPU
    dra_refs: Value[tuple[Any, ...]] | None = None
    gpu_candidates: Value[tuple[str, ...]] | None = None
    gpu_candidates_fix: Value[str] | None = None
    node_pools: Value[tuple[Any, ...]] | None = None
    pools_without_gpu: Value[str] | None = None

    # --distributed-executor-backend ray in a workload that is no Ray cluster (the value: its kind): KV201
    # says Ray adds no GPUs (extract/pod/container.py)
    ray_without_cluster: Value[str] | None = None
    # a backend the engine starts that kvlint does not plan, in words (TGI's llama.cpp,
    # engines/tgi/backends.py): resolve says so with the KV cache it puts on the GPU
    backend_not_planned: Value[str] | None = None
    frozen: bool = field(default=False, compare=False)  # set by freeze(): no write after extract

    def __setattr__(self, name: str, value: Any) -> None:
        if self.frozen:
            raise FrozenRecordError(f"the deployment is frozen after extract: cannot assign {name!r}")
        object.__setattr__(self, name, value)

    def freeze(self) -> Deployment:
        """No write after this: the fields refuse assignment, the tables and lists every change (also on a
        record `replace()` derived from a frozen one, whose new tables it freezes)."""
        for name in _TABLES:
            table = getattr(self, name)
            if type(table) is not FrozenDict:
                object.__setattr__(self, name, FrozenDict(table))
        for name in _LISTS:
            object.__setattr__(self, name, tuple(getattr(self, name)))
        object.__setattr__(self, "frozen", True)
        return self

    @property
    def engine_name(self) -> str:
        return self.engine.value if self.engine else DEFAULT_ENGINE

    def label(self) -> str:
        return f"{self.kind}/{self.name}" if self.name else self.kind

    def gpus_seen(self) -> Value[int] | None:
        """The GPUs per pod the engine sees: gpus_per_pod (what the pod reserves), or fewer where the
        container's CUDA_VISIBLE_DEVICES hides some (extract/pod/visible.py, extra `gpus_seen`); the
        replica's count where no per-pod count is known."""
        return self.extra.get("gpus_seen") or self.gpus_per_pod or self.gpus


@record
class Settings:
    """The settings an engine runs with that the file may leave out: what its `settings()` fills with the
    engine's default for the release (kvlint/engines/filling.py `Filling`, while it fills them) and what
    resolve carries as in force (`InForce`). `options`: the engine's own options, by the engine's name."""

    tensor_parallel: Value[int] | None = None
    pipeline_parallel: Value[int] | None = None
    max_context: Value[int] | None = None
    max_sequences: Value[int] | None = None
    max_batched_tokens: Value[int] | None = None
    gpu_memory_utilization: Value[float] | None = None
    block_size: Value[int] | None = None
    kv_cache_dtype: Value[str] | None = None
    prefill_chunking: Value[bool] | None = (
        None  # whether the server chunks prefills (TGI v2.4+), note: why not
    )
    options: dict[str, Value[Any]] = field(default_factory=dict)


# The settings the file states too (Deployment fields), which the engine fills when the file leaves them out.
FILLED = tuple(name for name in fields(Settings) if name in fields(Deployment))


# kvlint.record makes a subclass frozen over a mutable base (its own __setattr__ refuses every field);
# dataclasses, whose rules mypy applies to records, do not
@record(frozen=True)
class InForce(Settings):  # type: ignore[misc]
    """What resolve settles that the file may leave out: the engine and its release, the GPU as named
    (stated, or the configuration's default), and each setting the engine runs with: stated, or the
    engine's default for its release (origin "default", the note naming it). `max_context` is the plan's
    when the engine caps it. `options`: the engine's own options in force (the file's, kvlint's fields
    carried onto them, the defaults it fills), by the engine's name. `said`: what putting kvlint's fields
    in force found (a field the engine has no setting for). Carried beside the deployment
    (kvlint/resolve.py), never written onto it."""

    engine: Value[str] | None = None
    engine_version: Value[str] | None = None
    gpu: Value[str] | None = None
    said: tuple[Issue, ...] = ()
    # the memory fractions of the pods that may share one card, summed, when they reach 1 (link/sharing.py)
    gpu_sharing: Value[float] | None = None

    @classmethod
    def stated(cls, d: Deployment) -> InForce:
        """The deployment's own values, before resolve settles the rest."""
        filled = {name: getattr(d, name) for name in FILLED}
        return cls(
            engine=d.engine, engine_version=d.engine_version, gpu=d.gpu, options=dict(d.extra), **filled
        )

    @property
    def engine_name(self) -> str:
        return self.engine.value if self.engine else DEFAULT_ENGINE
