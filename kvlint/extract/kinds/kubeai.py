"""KubeAI: the Model CRD and the models chart's `catalog.<name>` entries share one shape
(url, engine, args, env, resourceProfile)."""

from __future__ import annotations

from kvlint import engines
from kvlint.catalog import gpus as gpu_catalog
from kvlint.codes import NOT_CHECKABLE, UNPARSED_SETTING
from kvlint.deployment import Deployment, inferred, stated
from kvlint.extract.charts import kubeai_keys as keys
from kvlint.extract.pod import adapters, gpu_selectors
from kvlint.extract.pod import container as ct
from kvlint.extract.pod.argv import EnvVar, scalar_tokens
from kvlint.extract.pod.engine_args import Launch, find_launch
from kvlint.findings import Issue, IssueKind, Location, Severity
from kvlint.load.tree import Mapping, Scalar


def kubeai_model(ctx: ct.ObjectContext) -> list[Deployment]:
    spec = ctx.root.map("spec")
    if spec is None or not str(ctx.root.value("apiVersion") or "").startswith("kubeai.org/"):
        return [d for d in [kubeai_spec(ctx, spec)] if d is not None] if spec is not None else []
    d = kubeai_spec(ctx, spec)
    if d is not None:
        d.issues.extend(keys.unread_model_keys(ctx.root, spec, ctx.file))
    return [d] if d is not None else []


def kubeai_spec(ctx: ct.ObjectContext, spec: Mapping, name: str | None = None) -> Deployment | None:
    """A Model's spec, or (`name` given) a models-chart `catalog.<name>` entry of the same shape."""
    engine_node = spec.scalar("engine")
    written = str(engine_node.value) if engine_node is not None and engine_node.value is not None else ""
    engine = written.lower()
    d = Deployment(
        ctx.file,
        ctx.where if name is None else spec.where(ctx.file),
        ctx.kind,
        name or ctx.name,
        ctx.base_dir,
    )
    d.ignores = dict(ctx.ignores)
    url = spec.scalar("url")
    where = (engine_node or spec).where(ctx.file)
    read = _engine(d, ctx, spec, engine, url, where)
    if not read:
        return None
    if url is not None and url.value and read is not URL_READ:
        _model_url(d, url, ctx.file)
    adapters.record(
        d,
        adapters.kubeai_adapters(spec, ctx.file),
        "KubeAI adds --enable-lora when a Model lists adapters" if engines.known(d.engine_name) else "",
    )
    d.issues.extend(keys.engine_value(written, where, d.label()))
    if name is not None:
        d.issues.extend(keys.unread_catalog_keys(spec, ctx.file, name))
    profile = spec.scalar("resourceProfile")
    if profile is not None and profile.value:
        _profile(d, profile, ctx.file)
    elif d.accelerator == "gpu" and "unsupported" not in d.extra:
        d.issues.append(keys.missing_profile(d.label(), (spec.keys.get("engine") or spec).where(ctx.file)))
        d.unreadable.extend(("gpu", "gpus_per_pod"))  # no pod at all: no GPU to check
    return d


def _engine(
    d: Deployment, ctx: ct.ObjectContext, spec: Mapping, engine: str, url: Scalar | None, where: Location
) -> bool | str:
    """The engine and, for one kvlint reads as KubeAI runs it, its args (vLLM) or its image's server with the
    Model's url (Ollama: URL_READ); False when the entry serves nothing kvlint checks. The engine packages
    say which KubeAI engine word is theirs."""
    if engine == "" and url is None:
        return False
    word = engine or UNSTATED_ENGINE
    served = engines.called("kubeai", word)
    if served is not None and "kubeai" not in served.unread_in:
        d.engine = stated(served.name, where, f"KubeAI engine {word.upper()}")
        launch = _server_image(word)
        if launch is not None and launch.engine == served.name:  # read as KubeAI's image runs it
            if url is not None and url.value:
                _model_url(d, url, ctx.file)
            ct.read_engine(d, launch, _env(spec, ctx.file))
            return URL_READ
        args = spec.seq("args")
        if args is not None:
            served.read_options(
                d, scalar_tokens(args, ctx.file), _env(spec, ctx.file), positional_model=False
            )
    elif engine in _NOT_TEXT_GENERATION:
        d.engine = stated(engine, where, "KubeAI engine")
        d.issues.append(
            Issue(
                NOT_CHECKABLE,
                f"{d.label()}: {_NOT_TEXT_GENERATION[engine]}",
                where,
                kind=IssueKind.ENGINE_NOT_MODELLED,
            )
        )
        d.extra["unsupported"] = stated(engine, where)
    elif served is not None:
        d.engine = stated(engine, where)
        ct.mark_unsupported(d, engine, where, served.unread_in["kubeai"])
    else:
        d.engine = stated(engine, where)
        ct.mark_unsupported(d, "other", where)
    return True


# A catalog entry of the models chart with a url and no `engine` is read as KubeAI's VLLM engine.
UNSTATED_ENGINE = "vllm"


# KubeAI's engines that serve no text-generation model (kubeai.org_models.yaml `engine` enum; the
# features they serve: charts/models/values.yaml `features: [SpeechToText]` / `[TextEmbedding]`)
_NOT_TEXT_GENERATION = {
    "fasterwhisper": "KubeAI engine FasterWhisper serves speech-to-text models (CTranslate2 Whisper), not a "
    "text-generation KV cache: not checked",
    "infinity": "KubeAI engine Infinity serves embedding and reranking models, which keep no KV cache: not checked",
}


# The image KubeAI runs for an engine whose server reads the Model itself, by the key KubeAI's chart files it
# under (substratusai/kubeai charts/kubeai/values.yaml modelServers.OLlama.images.default): Ollama's server
# pulls the Model's `url` tag at start. vLLM's image takes the Model's args, read as options instead.
SERVER_IMAGES = {"OLlama": "ollama/ollama:latest"}
URL_READ = "url read"  # _engine read the Model's url as its engine's server does


def _server_image(word: str) -> Launch | None:
    """The engine launch of the image KubeAI runs for this engine word, when it is in SERVER_IMAGES."""
    image = next((img for key, img in SERVER_IMAGES.items() if key.lower() == word), None)
    return find_launch([], image) if image is not None else None


def _env(spec: Mapping, file: str) -> dict[str, EnvVar]:
    env: dict[str, EnvVar] = {}
    envmap = spec.map("env")
    for k, v in envmap.items() if envmap else ():
        if isinstance(v, Scalar):
            env[k] = EnvVar(str(v.value), v.where(file))
    return env


def _model_url(d: Deployment, url: Scalar, file: str) -> None:
    """`url`: hf:// and huggingface:// name a Hub id; ollama://, s3://, gs://, oss://, pvc:// do not."""
    text = str(url.value)
    for prefix in ("hf://", "huggingface://", "ollama://"):
        if text.startswith(prefix):
            text = text[len(prefix) :]
    if str(url.value).startswith(("ollama://", "s3://", "gs://", "oss://", "pvc://")):
        d.model = stated(text, url.where(file), "not a Hugging Face id")
    else:
        d.model = stated(text, url.where(file))


def _profile(d: Deployment, profile: Scalar, file: str) -> None:
    """resourceProfile: `cpu…` and `google-tpu…` are not GPUs; otherwise the GPU and count it names.
    A profile the controller cannot use (kubeai_keys.profile_problem) is a KV005 and no GPU is assumed."""
    text = str(profile.value)
    where = profile.where(file)
    problem = keys.profile_problem(text)
    if problem is not None:
        message, fix = problem
        d.issues.append(
            Issue(UNPARSED_SETTING, f"{d.label()}: {message}", where, fix=fix, severity=Severity.WARNING)
        )
    if text.startswith("google-tpu"):
        _tpu_profile(d, text, where)
        return
    if text.startswith("cpu"):
        d.accelerator = "cpu"
        if d.accelerator == "cpu" and "unsupported" not in d.extra:  # one KV004 per workload
            d.issues.append(
                Issue(
                    NOT_CHECKABLE,
                    f"{d.label()}: runs on CPUs; kvlint models GPU memory",
                    where,
                    kind=IssueKind.ACCELERATOR_NOT_MODELLED,
                )
            )
            d.extra["unsupported"] = stated("cpu", where)
        return
    gpu, count, note = gpu_selectors.kubeai_profile(text)
    if gpu is not None or problem is None:
        d.gpu = inferred(gpu.id if gpu else text.partition(":")[0], note, where)
    if problem is not None:  # the controller creates no pod: no GPU count to assume, and nothing to plan
        d.unreadable.extend(("gpus_per_pod", "pods") if gpu is not None else ("gpu", "gpus_per_pod", "pods"))
    elif count is not None:
        d.gpus_per_pod = inferred(count, note, where)


# KubeAI's TPU resource profiles (substratusai/kubeai charts/kubeai/values-gke.yaml resourceProfiles
# google-tpu-v5e-1x1 / -2x2 / -2x4: nodeSelector cloud.google.com/gke-tpu-accelerator tpu-v5-lite-podslice,
# limits google.com/tpu 1 per unit) and the image its chart runs vLLM from on them
# (charts/kubeai/values.yaml modelServers.VLLM.images.google-tpu).
TPU_PROFILE_CHIPS = {"google-tpu-v5e": "tpu-v5e"}
TPU_VLLM_IMAGE = "substratusai/vllm:v0.6.4.post1-tpu"


def _tpu_profile(d: Deployment, text: str, where: Location) -> None:
    """A KubeAI TPU profile: the chip and its count, and the KV004 for the image KubeAI runs there (vLLM
    0.6.4's torch_xla TPU worker, before the tpu-inference worker kvlint models)."""
    d.accelerator = "tpu"
    name, _, count = text.partition(":")
    chip = next((c for prefix, c in TPU_PROFILE_CHIPS.items() if name.startswith(prefix)), None)
    spec = gpu_catalog.by_id(chip) if chip else None
    note = f"KubeAI resourceProfile {text}"
    if spec is not None:
        d.gpu = inferred(spec.id, note, where)
        if count.isdigit():
            d.gpus_per_pod = inferred(int(count), note, where)
    if "unsupported" in d.extra:
        return
    on = spec.name if spec is not None else "Google TPUs"
    d.issues.append(
        Issue(
            NOT_CHECKABLE,
            f"{d.label()}: runs on {on} ({note}), where KubeAI's chart serves from {TPU_VLLM_IMAGE}: vLLM 0.6.4's "
            "torch_xla TPU worker, whose XLA profile run kvlint does not model (it plans vLLM on TPU as the "
            "tpu-inference worker of vllm/vllm-tpu runs)",
            where,
            kind=IssueKind.ACCELERATOR_NOT_MODELLED,
        )
    )
    d.extra["unsupported"] = stated("vllm-tpu-torch-xla", where)
