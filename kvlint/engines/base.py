"""What every engine kvlint models answers: the `Engine` protocol, and the typed answers rules ask for.

An engine lives in one package, `kvlint/engines/<name>/`, whose `ENGINE` implements `Engine`; the
registry (`kvlint/engines/__init__.py`) loads a package the first time a run meets its engine. Extract,
capacity, resolve, rules and report ask these questions instead of comparing engine names, so an engine's
behaviour is said once, in its package.

This module sits below extract and capacity (both call it), so it names their types only in words:
`Launch`, `Token` and `EnvVar` are kvlint.extract's, `EngineSettings` and `Plan` kvlint.capacity.plan's,
`ModelArch` and `GpuSpec` kvlint.catalog's.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Protocol

from kvlint.deployment import Deployment, InForce, Value
from kvlint.engines.memory_entry import MemoryOption
from kvlint.findings import Location
from kvlint.record import record

# How an engine's words begin when its start-up warm-up cannot fit (TGI's `Plan.warmup_fails`, which
# KV102 reports as its message).
WARMUP_FAILS = "the warm-up does not fit"


class SettingRefused(ValueError):
    """A setting the engine refuses for this model, found while filling its defaults; `where` is the
    setting's location (resolve reports it there as a KV005)."""

    def __init__(self, message: str, where: Location | None = None) -> None:
        super().__init__(message)
        self.where = where


class NotPlanned(ValueError):
    """The engine cannot say what it runs on this GPU (NIM: no published profile the GPU admits): resolve
    reports the message as the workload's KV004 at `where`; an empty message says nothing (the GPU is not
    stated, and kvlint/run/fleet.py tries the usual cards, each settling its own answer)."""

    def __init__(self, message: str = "", where: Location | None = None) -> None:
        super().__init__(message)
        self.where = where


class Startup(Enum):
    """What the engine does when one sequence of its configured maximum length cannot fit the KV pool."""

    REFUSES = "refuses"  # it does not start (vLLM's check at start-up; TGI's router on a stated max total)
    CAPS = "caps"  # it starts, and a request that long is never scheduled (rejected or left waiting)
    QUEUES = "queues"  # it starts and admits the request, which waits for the pool
    SHRINKS = "shrinks"  # it starts with a smaller maximum length (`LongSequence.shrinks_to`)


@record(frozen=True)
class LongSequence:
    """The engine's answer to "one sequence does not fit": what it does, and the engine's own words (''
    when it says nothing a user could search for). `shrinks_to`: the length it starts with (SHRINKS); an
    engine whose answer depends on its pool puts it on the plan (`Plan.startup`), which KV102 reads first."""

    startup: Startup
    says: str = ""
    shrinks_to: int | None = None


@record(frozen=True)
class Refusal:
    """The engine refuses to start as configured: its words, the fix, and the values that make it refuse."""

    says: str
    fix: str
    at: tuple[Value | None, ...] = ()
    severity: Any = (
        None  # the finding's severity where it is not the rule's (a refusal kvlint is not sure of)
    )


class KvHeadSharding(Enum):
    """How the engine spreads KV heads over tensor-parallel ranks."""

    REPLICATED = (
        "replicated"  # TP above the KV-head count replicates each head (TP must divide or be a multiple)
    )
    SHARDED = "sharded"  # split without replication: the KV-head count must divide by TP


class BatchCheck(Enum):
    """Start-up checks on batch limits an engine makes (KV205 reports the ones its engine makes)."""

    SCHEDULER_TOKENS = (
        "scheduler tokens"  # vLLM: max_num_batched_tokens >= max_num_seqs, and >= the context unchunked
    )
    ROUTER_LIMITS = (
        "router limits"  # TGI's launcher and router: input < total <= batch total, prefill >= input
    )


class Engine(Protocol):
    """One serving engine, as kvlint models it."""

    name: str  # as a deployment carries it (`vllm`), the registry's key
    display: str  # as messages print it (`vLLM`)
    # the Deployment field holding its KV-cache memory share (vLLM gpu_memory_utilization); None for an
    # engine that takes no share (llama.cpp allocates what -c asks)
    fraction_field: str | None
    kv_heads: KvHeadSharding  # as the newest release kvlint read does it (kv_head_sharding: by release)
    kv_split_says: str  # the engine's words when it refuses a KV-head split (SHARDED), '' if none known
    batch_checks: frozenset[BatchCheck]
    no_kv_memory_says: str  # the engine's words when no memory is left for the KV cache ('' if none known)
    script_word: str  # a word that, in a shell command or a Python import path, names the engine
    image_words: tuple[str, ...]  # words of an image name that name the engine's images
    native_fields: dict[str, Any]  # kvlint's own field -> where the engine keeps it (engines/native.py)
    # input kind -> the words (lower case) that input names the engine by: KubeAI's `engine: VLLM`,
    # llmaz's backendName, llm-d's container name (`kvlint.engines.called` / `named_in` answer)
    goes_by: dict[str, tuple[str, ...]]
    # input kind -> why kvlint does not read the engine as that input runs it (its KV004); none: it does
    unread_in: dict[str, str]
    ray_places_workers: bool  # under a Ray cluster its TP x PP workers are Ray actors spread over the pods
    models_expert_placement: bool  # kvlint models how it places MoE experts over TP x DP (fleet's guess)
    names_fp8_weights_fix: bool  # online fp8 weight quantization is a fix kvlint can offer for it
    refuses_context_beyond_model: bool  # it refuses a max context above the model's derived maximum (KV204)
    rope_cache_at_load: bool  # it builds the [max_position, rotary_dim] cos/sin cache on every GPU at load
    runs_on_cpu_without_gpu: (
        bool  # a pod that requests no GPU runs it on the host CPU (llama.cpp's CPU backend)
    )
    # its GPUs of one pod talk through /dev/shm (NCCL, worker processes): KV207 asks for a memory-backed one
    gpus_share_memory: bool
    # its plan covers Google TPU chips (catalog/tpus.py) as well as GPUs: a TPU workload is planned, not a KV004
    plans_on_tpu: bool
    # its parallel sizes follow the GPUs it sees when the file leaves them out (TGI shards over them all,
    # llama.cpp splits its layers over them, NIM picks its profile by them): a GPU count kvlint cannot read
    # (compose `count: all`) leaves its plan unknown. False: they default to one GPU whatever the pod has
    sizes_from_gpu_count: bool

    # recognising the engine in a launch
    def entry_point(self, at: Any) -> Any:
        """The Launch the engine's own program at this command-line token starts (`extract.pod.engine_args._At`),
        or None."""

    def wrapper_entry(self, at: Any) -> Any:
        """The Launch a wrapper script that passes the engine's options on starts (tried after every
        engine's own entry points), or None."""

    def image_command(self, first: list[Any], image: str, repository: str) -> Any:
        """The Launch an engine image's arguments start before any other reading of the image (`serve MODEL
        …` on a vLLM image), or None; `repository` is the image without its tag, lower-cased."""

    def image_entrypoint(self, first: list[Any], image: str, repository: str) -> Any:
        """The Launch an image with only options on its command line starts (its ENTRYPOINT), or None."""

    def start_script(self, image: str, repository: str) -> Any:
        """The Launch of a start script inside the engine's image (no options on the command line), or None."""

    def variant(self, launch: Any, image: str) -> Any:
        """The launch, or a variant of the engine kvlint does not model (vLLM-Omni) it turns out to be."""

    def image_version(self, image: str) -> str | None:
        """The release an image tag names (`vllm/vllm-openai:v0.10.0` -> "0.10.0"), None when it names none."""

    # reading its options
    def read(self, d: Deployment, launch: Any, env: dict[str, Any], storage: Any = None) -> None:
        """The launch's options (and environment) onto the deployment."""

    def read_options(
        self,
        d: Deployment,
        tokens: list[Any],
        env: dict[str, Any],
        positional_model: bool = True,
        strict: bool = True,
        unknown: tuple[str, str] | None = None,
        argv: bool = True,
    ) -> None:
        """The engine's command-line options, as another input kind hands them over (a chart's args, a
        KubeAI Model's args, a Ray Serve engine_kwargs)."""

    def option_files(self, d: Deployment) -> tuple[str, ...]:
        """Paths of option files the launch names that the engine reads at start-up (TensorRT-LLM's LLM-API
        YAML); extract hands each one's text to `read_option_file` when a mounted ConfigMap holds it."""

    def read_option_file(self, d: Deployment, path: str, found: Any) -> None:
        """The options file at `path`: `found` is extract.pod.mounted.MountedFile (its text, or why it is out of
        reach) or None when nothing is mounted there."""

    def option_folders(self, d: Deployment) -> tuple[str, ...]:
        """Paths of folders the launch names whose files the engine reads at start-up (Triton's model
        repository); extract hands each to `read_option_folder` as an extract.pod.folder.Folder."""

    def read_option_folder(self, d: Deployment, path: str, folder: Any) -> None:
        """The folder at `path`: `folder` (extract.pod.folder.Folder) reads what of it is in reach (files of
        ConfigMaps mounted under it, the folder of the linted tree it maps to) and holds the container's
        commands (a script that fills its files)."""

    def options(self) -> Any:
        """The engine's option table (extract.pod.engine_args.options.OptionTable)."""

    def mapping(self) -> dict[str, tuple[str, str]]:
        """Option -> (Deployment field or `extra` key, kind)."""

    def flag_for(self, field: str) -> str:
        """The option that sets a Deployment field (the first listed where several do); `field` itself
        when none does."""

    def knob_for(self, field: str, s: Any) -> str | None:
        """The option (or variable) that sets a Deployment field for the engine as it runs under the
        EngineSettings `s`, as a fix names it; None when what runs reads none (a NIM TensorRT-LLM profile
        takes no vLLM option). Most engines: `flag_for(field)`."""

    def memory_options(self) -> dict[str, MemoryOption]:
        """Option (or environment variable) -> what kvlint does with it (data/memory_options.json)."""

    # its defaults and memory plan
    def settings(self, d: Deployment, arch: Any, gpu: Any, version_text: str | None) -> Any:
        """The EngineSettings in force: the deployment's values, the release's defaults for the rest."""

    def plan(self, arch: Any, gpu: Any, s: Any) -> Any:
        """The Plan: the KV pool the engine allocates on one GPU, and what it is made of."""

    def request_units(self, arch: Any, gpu: Any, s: Any, tokens: int) -> int:
        """What one request of `tokens` tokens takes of the pool, in the plan's unit of allocation
        (Plan.request_units for a request of that length rather than of max_model_len)."""

    def release(self, version_text: str | None) -> tuple[int, ...] | None:
        """The release a version text names, as numbers to compare; None when unreadable."""

    # behaviour rules ask about
    def long_sequence(self, version_text: str | None, max_context: Value | None) -> LongSequence:
        """What the engine does when one sequence of `max_context` tokens cannot fit its KV pool."""

    def indexer_keys(self, arch: Any, plan: Any) -> bool:
        """The plan's KV cache also holds a sparse-attention indexer's keys (DeepSeek DSA)."""

    def parallelism_refusal(self, d: Deployment, in_force: InForce) -> Refusal | None:
        """A parallel layout the engine refuses at start-up before it counts GPUs (TGI --sharded with one
        shard), with the settings in force (`in_force`: stated, or the engine's defaults)."""

    def kv_head_sharding(self, version_text: str | None) -> KvHeadSharding:
        """How the release spreads KV heads over tensor-parallel ranks (LMDeploy's TurboMind replicates them
        from v0.7.0 and refused a TP above their count before); `kv_heads` for an engine that never changed."""

    def runs_at_tp(self, d: Deployment, gpu: Any, gpus: int, tp: int) -> bool:
        """Whether the engine would start at tensor-parallel size `tp` on `gpus` devices of catalog type
        `gpu`, all else as the file states it: what a fix may offer as another TP (the heads' split is
        capacity/whatif.valid_tp's). NIM: a profile of that TP is published and left by the variables the
        file sets (NIM_TAGS_SELECTOR may pin tp); True for an engine that takes any TP."""

    def replica_dp(self, d: Deployment, dp: int) -> int:
        """The data-parallel factor of a replica's GPU count (SGLang's DP attention: 1, it splits TP)."""

    def online_quant(self, name: str) -> Any:
        """The weight quantization (catalog.arch.Quant) the engine applies at load for a --quantization name
        it reads its own way (TGI's plain `bitsandbytes` is 8-bit); None: kvlint's table says it."""

    def backend_kv(self, d: Deployment, arch: Any) -> str | None:
        """The KV cache a backend kvlint does not plan puts on the GPUs, in words (TGI's llama.cpp); None."""

    def alternatives(self, d: Deployment, arch: Any, gpu: Any, s: Any) -> tuple[tuple[str, str, Any], ...]:
        """Other runs one setting selects, for a fix to offer when this one does not fit: each as the fix's
        summary names it, the fix's message, and the EngineSettings of that run (NIM: the other profiles the
        image's release publishes for these GPUs, by NIM_MODEL_PROFILE); () for most engines."""

    def context_fix(self, arch: Any, gpu: Any, s: Any, plan: Any) -> int | None:
        """The max_context KV102's fix writes where one sequence of the context does not fit: the largest length
        that does, in the engine's own unit (llama.cpp: the cells of every slot, `-c`); None: no such fix."""

    def smaller_kv(self, version_text: str | None) -> tuple[str, str] | None:
        """The KV cache dtype of about half the bytes the release offers as a fix, as the plan takes it and as
        the engine's option is written (("fp8", "fp8"); LMDeploy before v0.14: ("int8", "8")); None: none."""


__all__ = [
    "WARMUP_FAILS",
    "BatchCheck",
    "Engine",
    "KvHeadSharding",
    "LongSequence",
    "NotPlanned",
    "Refusal",
    "SettingRefused",
    "Startup",
]
