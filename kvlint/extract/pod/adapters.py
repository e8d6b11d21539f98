"""LoRA adapters a workload serves on its base model: named, so the report says what each id is.

An adapter is not a model of its own: the engine runs the base model and applies the adapter's
low-rank weights per request. kvlint resolves the workload by its base and lists the adapters
(`d.extra["lora_adapters"]`: (name, reference) pairs) and whether LoRA is enabled
(`d.extra["enable_lora"]`), which the vLLM plan names as memory it does not price.

Where adapters are written:
- vLLM `--lora-modules name=path ...` or `--lora-modules '{"name": ..., "path": ..., "base_model_name": ...}'`
  (vllm-project/vllm vllm/entrypoints/openai/cli_args.py LoRAParserAction: nargs='+', each item
  `name=path` or a JSON object);
- KubeAI `spec.adapters[]` with `name` and `url` (substratusai/kubeai@2f32ef49 api/k8s/v1/model_types.go
  Adapter); the controller then starts vLLM with `--enable-lora`
  (internal/modelcontroller/engine_vllm.go: `if m.Spec.Adapters != nil { args = append(args, "--enable-lora") }`);
- KServe LLMInferenceService `spec.model.lora.adapters[]` (uri, name), `maxRank` (-> --max-lora-rank) and
  `maxAdapters` (-> --max-loras); the controller adds `--enable-lora` and sets the other two only when stated
  (kserve/kserve@aaac4e29 pkg/apis/serving/v1alpha2/llm_inference_service_types.go LoRASpec;
  pkg/controller/v1alpha2/llmisvc/workload_lora.go addLoRAVLLMArgs);
- SGLang `--lora-paths PATH | NAME=PATH | {"lora_name": ..., "lora_path": ...} ...` (it turns LoRA on by itself)
  (docs.sglang.io/advanced_features/lora.html "Arguments for LoRA Serving");
- the Gateway API Inference Extension's `lora-syncer` sidecar: it reads `vLLMLoRAConfig.ensureExist.models[]`
  (`id`, `source`) from a ConfigMap mounted into the pod and loads each into the vLLM beside it
  (kubernetes-sigs/gateway-api-inference-extension@f2a6f44e tools/dynamic-lora-sidecar/sidecar/sidecar.py
  `ensure_exist_adapters`, `load_adapter` -> /v1/load_lora_adapter; the corpus' GKE and production-stack
  samples mount it as `config-volume`);
- Ray Serve LLM `lora_config.dynamic_lora_loading_path`: a storage prefix adapters are loaded from on demand
  (ray-project/ray python/ray/llm/_internal/serve/configs/server_models.py LoraConfig); vLLM's own LoRA
  settings stay in `engine_kwargs` (enable_lora, max_loras), which Ray passes to vLLM unchanged
  (ray-project/ray@4486b652 .../llm/vllm/vllm_models.py `get_initialization_kwargs` returns engine_kwargs).
"""

from __future__ import annotations

from kvlint.bounds import FIELDS
from kvlint.deployment import Deployment, stated
from kvlint.extract.pod.argv import Token
from kvlint.extract.pod.bounded import crd_int
from kvlint.fileio import json_value
from kvlint.findings import Location
from kvlint.load.nearby import Nearby
from kvlint.load.tree import Mapping, Scalar, Sequence

_HF_PREFIXES = ("hf://", "huggingface://")
# LoRASpec.MaxRank / MaxAdapters: *int32 with +kubebuilder:validation:Minimum=1
# (kserve/kserve@aaac4e29 pkg/apis/serving/v1alpha2/llm_inference_service_types.go)
_INT32_MIN_1 = "KServe's LoRASpec takes an integer of at least 1 (llm_inference_service_types.go)"


def _ref(text: str) -> str:
    for prefix in _HF_PREFIXES:
        if text.startswith(prefix):
            return text[len(prefix) :]
    return text


def _module(text: str, bare_path: bool = False) -> tuple[str, str] | None:
    """One adapter item: `name=path`, a JSON object with name and path (vLLM `name`/`path`, SGLang
    `lora_name`/`lora_path`), or (SGLang, `bare_path`) a path alone."""
    text = text.strip()
    if text.startswith("{"):
        try:
            obj = json_value(text)
        except ValueError:
            return None
        if not isinstance(obj, dict):
            return None
        name, path = obj.get("name", obj.get("lora_name")), obj.get("path", obj.get("lora_path"))
        return (name, _ref(path)) if isinstance(name, str) and isinstance(path, str) else None
    name, sep, path = text.partition("=")
    if sep and name and path:
        return name, _ref(path)
    return ("", _ref(text)) if bare_path and text and not sep else None


def vllm_lora_modules(
    tokens: list[Token], flag: str = "--lora-modules", bare_path: bool = False
) -> list[tuple[str, str, Location | None]]:
    """(name, reference, where) of every adapter `flag` names (its items run to the next option);
    SGLang's `--lora-paths` takes the same items and a bare path (`bare_path`)."""
    out: list[tuple[str, str, Location | None]] = []
    taking = False
    for tok in tokens:
        text = tok.text
        if text.startswith(flag + "="):
            taking = True
            text = text[len(flag) + 1 :]
        elif text == flag:
            taking = True
            continue
        elif text.startswith("-"):
            taking = False
            continue
        if taking:
            found = _module(text, bare_path)
            if found is None:
                taking = False  # a positional after the list (vLLM's own parser reads it the same way)
                continue
            out.append((found[0], found[1], tok.where))
    return out


def record(d: Deployment, found: list[tuple[str, str, Location | None]], enables: str = "") -> None:
    """Name the adapters on the deployment; `enables`: why serving them turns LoRA on, when it does."""
    if not found:
        return
    where = found[0][2]
    pairs = [(name, ref) for name, ref, _ in found]
    d.extra["lora_adapters"] = stated(pairs, where, "LoRA adapters served on the base model")
    if enables and "enable_lora" not in d.extra:
        d.extra["enable_lora"] = stated(True, where, enables)


def _listed(
    seq: object, ref_key: str, name_key: str, file: str, at: Location | None = None
) -> list[tuple[str, str, Location | None]]:
    """(name, reference, where) of each mapping item of `seq` that states `ref_key` (its `name_key` may be
    left out); `at` places them all at one location (items parsed from a string value)."""
    out: list[tuple[str, str, Location | None]] = []
    for item in seq.items if isinstance(seq, Sequence) else ():
        ref = item.scalar(ref_key) if isinstance(item, Mapping) else None
        if ref is None or not ref.value:
            continue
        name = item.scalar(name_key) if isinstance(item, Mapping) else None
        label = str(name.value) if name is not None and name.value else ""
        out.append((label, _ref(str(ref.value)), at if at is not None else ref.where(file)))
    return out


def kubeai_adapters(spec: Mapping, file: str) -> list[tuple[str, str, Location | None]]:
    """KubeAI `spec.adapters[]`: each item's name and url."""
    return _listed(spec.seq("adapters"), "url", "name", file)


def ray_lora_config(cfg: Mapping, file: str) -> list[tuple[str, str, Location | None]]:
    """Ray Serve LLM `lora_config`: the prefix its adapters are loaded from (each request names one)."""
    node = cfg.at("lora_config", "dynamic_lora_loading_path")
    if isinstance(node, Scalar) and node.value:
        return [("", f"{node.value} (adapters loaded on demand)", node.where(file))]
    return []


def kserve_lora(d: Deployment, spec: Mapping, file: str) -> None:
    """KServe LLMInferenceService `spec.model.lora`: its adapters, and maxRank / maxAdapters as vLLM's flags."""
    lora = spec.at("model", "lora")
    if not isinstance(lora, Mapping):
        return
    found = _listed(lora.seq("adapters"), "uri", "name", file)
    for key, target in (("maxRank", "max_lora_rank"), ("maxAdapters", "max_loras")):
        node = lora.get(key)
        value, bad = crd_int(node, file, f"spec.model.lora.{key}", 1, int(FIELDS[target].hi), _INT32_MIN_1)
        if bad is not None:  # the API server refuses it: no figure, and no default named in its place
            d.issues.append(bad)
            d.unreadable.append(target)
        elif value is not None and node is not None:
            d.extra[target] = stated(value, node.where(file), f"spec.model.lora.{key}")
    record(d, found, "KServe's controller adds --enable-lora for spec.model.lora adapters")


SYNCER_IMAGE = "lora-syncer"


def lora_syncer(nearby: Nearby | None, pod: Mapping) -> list[tuple[str, str, Location | None]]:
    """Adapters a `lora-syncer` sidecar of the pod loads: `ensureExist.models` of the ConfigMaps the pod
    mounts, when they are documents of this file or beside it."""
    containers = [c for key in ("containers", "initContainers") for c in (pod.seq(key) or ())]
    images = [c.scalar("image") for c in containers if isinstance(c, Mapping)]
    if nearby is None or not any(i is not None and SYNCER_IMAGE in str(i.value) for i in images):
        return []
    out: list[tuple[str, str, Location | None]] = []
    for volume in pod.seq("volumes") or ():
        name = volume.at("configMap", "name") if isinstance(volume, Mapping) else None
        if not isinstance(name, Scalar) or not name.value:
            continue
        for found in nearby.named(("ConfigMap",), str(name.value)):
            data = found.root.map("data")
            for _key, text in data.items() if data is not None else ():
                if isinstance(text, Scalar) and isinstance(text.value, str):
                    out.extend(_syncer_models(text, found.file))
    return out


def _syncer_models(text: Scalar, file: str) -> list[tuple[str, str, Location | None]]:
    from kvlint.load.compose import compose

    docs, problems = compose(str(text.value), file)
    root = docs[0].root if docs and not problems else None
    models = root.at("vLLMLoRAConfig", "ensureExist", "models") if isinstance(root, Mapping) else None
    return _listed(models, "source", "id", file, text.where(file))
