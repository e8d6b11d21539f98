"""What KubeAI reads of a Model, and what users write that it does not.

Sources (substratusai/kubeai@2f32ef49, read in place):
- api/k8s/v1/model_types.go `ModelSpec` (= charts/kubeai/templates/crds/kubeai.org_models.yaml): the fields a
  Model's spec has. The CRD is structural and does not preserve unknown fields, so kubectl's default strict
  field validation rejects any other key and, with validation off, the API server drops it.
  `engine` is an enum (OLlama, VLLM, FasterWhisper, Infinity).
- charts/models/templates/models.yaml: the keys of a `catalog.<name>` entry the models chart renders into a
  Model; it renders no image, replicas, envFrom, autoscalingDisabled, loadBalancing or priorityClassName.
- internal/modelcontroller/model_controller.go getModelConfig: `resourceProfile` must be `<name>:<count>`
  (strings.Split on ":" must give two parts, the count an integer), else the controller fails with
  "invalid resource profile" and creates no pod; an empty or left-out profile fails the same way; a name
  outside the installation's resourceProfiles fails with "resource profile not found".
- charts/kubeai/values.yaml `resourceProfiles` and its overlays values-gke.yaml, values-eks.yaml,
  values-nvidia-k8s-device-plugin.yaml, values-amd-gpu-device-plugin.yaml: the profile names a KubeAI
  install has unless its own values add more.
"""

from __future__ import annotations

from difflib import get_close_matches

from kvlint.codes import UNPARSED_SETTING
from kvlint.extract.charts.chart_layouts import keys_not_read
from kvlint.findings import Issue, Location, Severity
from kvlint.load.tree import Mapping
from kvlint.record import replace

COMMIT = "substratusai/kubeai@2f32ef49"
CRD_SOURCE = f"{COMMIT} api/k8s/v1/model_types.go ModelSpec"
CHART_SOURCE = f"{COMMIT} charts/models/templates/models.yaml"
CONTROLLER_SOURCE = f"{COMMIT} internal/modelcontroller/model_controller.go getModelConfig"
PROFILES_SOURCE = (
    f"{COMMIT} charts/kubeai/values.yaml resourceProfiles (+ values-gke/eks/device-plugin overlays)"
)

SPEC_KEYS = frozenset(
    [
        "url",
        "adapters",
        "features",
        "engine",
        "resourceProfile",
        "cacheProfile",
        "image",
        "args",
        "env",
        "envFrom",
        "replicas",
        "minReplicas",
        "maxReplicas",
        "autoscalingDisabled",
        "targetRequests",
        "scaleDownDelaySeconds",
        "owner",
        "loadBalancing",
        "files",
        "priorityClassName",
    ]
)
CATALOG_KEYS = frozenset(
    [
        "enabled",
        "labels",
        "features",
        "owner",
        "url",
        "adapters",
        "engine",
        "args",
        "env",
        "minReplicas",
        "maxReplicas",
        "targetRequests",
        "scaleDownDelaySeconds",
        "resourceProfile",
        "cacheProfile",
        "files",
    ]
)
OBJECT_KEYS = frozenset(["apiVersion", "kind", "metadata", "spec", "status"])
ENGINES = ("OLlama", "VLLM", "FasterWhisper", "Infinity")
PROFILES = frozenset(
    [
        "cpu",
        "nvidia-gpu-t4",
        "nvidia-gpu-l4",
        "nvidia-gpu-l40s",
        "nvidia-gpu-h100",
        "nvidia-gpu-gh200",
        "nvidia-gpu-a100-80gb",
        "nvidia-gpu-a100-40gb",
        "nvidia-gpu-a16",
        "nvidia-gpu-rtx4070-8gb",
        "nvidia-gpu-rtx4090-24gb",
        "amd-gpu-mi300x",
        "google-tpu-v5e-1x1",
        "google-tpu-v5e-2x2",
        "google-tpu-v5e-2x4",
    ]
)
_PROFILE = "resourceProfile (<profile>:<count>, e.g. nvidia-gpu-l4:1: KubeAI sets GPUs and nodes from it)"
_ARGS = "args (the engine's command-line flags, e.g. --max-model-len=8192)"
PLACES = {
    "model": "url (hf://<org>/<model>)",
    "modelURL": "url (hf://<org>/<model>)",
    "modelName": "url (hf://<org>/<model>)",
    "uri": "url",
    "gpu": _PROFILE,
    "gpus": _PROFILE,
    "numGPUs": _PROFILE,
    "nvidia.com/gpu": _PROFILE,
    "resources": _PROFILE,
    "accelerator": _PROFILE,
    "nodeSelector": _PROFILE,
    "tolerations": _PROFILE,
    "affinity": _PROFILE,
    "extraArgs": _ARGS,
    "engineArgs": _ARGS,
    "vllmArgs": _ARGS,
    "arguments": _ARGS,
    "command": _ARGS,
    "maxModelLen": "args (as --max-model-len=<value>)",
    "tensorParallelSize": "args (as --tensor-parallel-size=<value>)",
    "gpuMemoryUtilization": "args (as --gpu-memory-utilization=<value>)",
    "maxNumSeqs": "args (as --max-num-seqs=<value>)",
    "environment": "env",
    "replicaCount": "replicas",
}
# the models chart renders these CRD fields nowhere: a Model resource of one's own is where they go
CATALOG_PLACES = {
    **PLACES,
    "replicas": "minReplicas / maxReplicas (the models chart renders no replicas)",
    "replicaCount": "minReplicas / maxReplicas",
    **{
        key: f"a Model resource of your own, as spec.{key} (the models chart does not render it)"
        for key in ("image", "envFrom", "autoscalingDisabled", "loadBalancing", "priorityClassName")
    },
}


def unread_model_keys(root: Mapping, spec: Mapping, path: str) -> list[Issue]:
    """Keys of a Model object and its spec the CRD does not have."""
    out = keys_not_read(
        root,
        path,
        "KubeAI Model CRD",
        OBJECT_KEYS,
        {k: f"spec.{k}" for k in SPEC_KEYS} | {k: f"spec.{v}" for k, v in PLACES.items()},
        CRD_SOURCE,
    )
    out += keys_not_read(spec, path, "KubeAI Model CRD", SPEC_KEYS, PLACES, CRD_SOURCE, "spec.")
    return [_crd_wording(i) for i in out]


def _crd_wording(issue: Issue) -> Issue:
    """A CRD is not Helm: kubectl rejects the field (strict validation), or the API server drops it."""
    text = issue.message.replace(
        ": Helm ignores it",
        ": kubectl apply rejects it (strict field validation) and with validation off the API server drops it",
    ).replace("the chart reads this setting", "KubeAI reads this setting")
    return replace(issue, message=text)


def unread_catalog_keys(entry: Mapping, path: str, label: str) -> list[Issue]:
    """Keys of a models-chart `catalog.<name>` entry its template does not render into the Model."""
    return keys_not_read(
        entry, path, "KubeAI models chart", CATALOG_KEYS, CATALOG_PLACES, CHART_SOURCE, f"{label}."
    )


def engine_value(engine: str, where: Location, label: str) -> list[Issue]:
    """`engine` is a CRD enum: `vllm` in lower case is rejected by the API server."""
    if not engine or engine in ENGINES:
        return []
    close = [e for e in ENGINES if e.lower() == engine.lower()]
    return [
        Issue(
            UNPARSED_SETTING,
            f"{label}: engine `{engine}` is not one of the Model CRD's values {', '.join(ENGINES)} ({CRD_SOURCE}): "
            "the API server rejects the Model",
            where,
            fix=f"write `engine: {close[0]}`" if close else f"use one of {', '.join(ENGINES)}",
            severity=Severity.WARNING,
        )
    ]


def profile_problem(text: str) -> tuple[str, str] | None:
    """(what is wrong, the fix) for a resourceProfile the controller cannot use, else None."""
    name, sep, count = text.partition(":")
    if not sep or ":" in count:
        example = f"{name or 'nvidia-gpu-l4'}:1"
        return (
            f"resourceProfile `{text}` is not `<profile>:<count>`: KubeAI's controller fails with "
            f'"invalid resource profile" and creates no pod ({CONTROLLER_SOURCE})',
            f"write `resourceProfile: {example}` (the GPU count per pod after the colon)",
        )
    if not count.strip().lstrip("+-").isdigit():
        return (
            f"resourceProfile `{text}`: the count `{count}` is not an integer: KubeAI's controller fails "
            f'("invalid multiple in resource profile") and creates no pod ({CONTROLLER_SOURCE})',
            f"write `resourceProfile: {name}:1` (the GPU count per pod after the colon)",
        )
    if name not in PROFILES:
        close = get_close_matches(name, sorted(PROFILES), n=1, cutoff=0.6)
        return (
            f"resourceProfile `{name}` is not one of KubeAI's resourceProfiles ({PROFILES_SOURCE}): unless "
            f'your KubeAI install\'s values add it, the controller fails with "resource profile not found" '
            "and creates no pod" + (f" (closest: {close[0]})" if close else ""),
            f"write `resourceProfile: {close[0]}:{count}`"
            if close
            else "use a profile your KubeAI install defines",
        )
    return None


def missing_profile(label: str, where: Location) -> Issue:
    return Issue(
        UNPARSED_SETTING,
        f"{label}: `resourceProfile` is left out: KubeAI has no default profile; its controller fails with "
        f'"invalid resource profile" and the Model gets no pod, GPU or CPU ({CONTROLLER_SOURCE})',
        where,
        fix="add `resourceProfile: <profile>:<count>`, e.g. nvidia-gpu-l4:1",
        severity=Severity.WARNING,
    )
