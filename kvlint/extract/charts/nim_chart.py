"""NVIDIA NIM `nim-llm` Helm chart values: what the chart reads, its GPU default, and keys it ignores.

Source: NVIDIA/nim-deploy@bd18a4ed helm/nim-llm (chart 1.1.2, the last version kept in that repository; commit
0a470bb then removed the local chart in favour of the NGC-published one), values.yaml and templates/*.yaml
read in place:
- the container gets `resources` as written (deployment.yaml / multi_node_deployment.yaml `toYaml
  .Values.resources`); values.yaml sets `resources.limits.nvidia.com/gpu: 1`, and Helm merges a user's values
  over the chart's, so a values file that leaves the GPU out still gets 1 GPU (the chart's default);
- `model.numGpus` is rendered only in the legacy command (`model.legacyCompat: true` -> `--num_gpus`): it
  does not request GPUs;
- node placement: `nodeSelector`, `affinity`, `tolerations` as written;
- top-level and `model.*` keys: values.yaml plus every `.Values.<key>` the templates read. Helm renders
  nothing from any other key (the chart's values.schema.json does not forbid extra keys);
- the image: deployment.yaml `"{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}"`,
  values.yaml `image.repository: nvcr.io/nim/meta/llama3-8b-instruct`, `image.tag: ""`, Chart.yaml appVersion
  "1.0.3": a values file that leaves either out gets the chart's, named as its default.
Values in this layout beside a Chart.yaml naming another chart are that chart's own (NVIDIA/nim-deploy's
ngc-cache chart copies these keys for a Job that runs download-to-cache): not read as nim-llm values.
"""

from __future__ import annotations

from kvlint.codes import UNPARSED_SETTING
from kvlint.deployment import Deployment, default, stated
from kvlint.extract.charts.chart_layouts import keys_not_read
from kvlint.extract.pod import container as ct
from kvlint.extract.pod import pods
from kvlint.extract.pod.argv import read_env
from kvlint.findings import Issue, Severity
from kvlint.load import load_bytes
from kvlint.load.nearby import Nearby
from kvlint.load.tree import Mapping, Scalar

SOURCE = "NVIDIA/nim-deploy@bd18a4ed helm/nim-llm (chart 1.1.2) values.yaml and templates"
NAME = "NIM nim-llm chart"
CHART = "nim-llm"  # Chart.yaml name
DEFAULT_GPUS = 1
DEFAULT_REPOSITORY = "nvcr.io/nim/meta/llama3-8b-instruct"  # values.yaml image.repository
DEFAULT_TAG = "1.0.3"  # Chart.yaml appVersion, what `image.tag | default .Chart.AppVersion` gives for tag ""
TOP = frozenset(
    [
        "affinity",
        "autoscaling",
        "containerSecurityContext",
        "customArgs",
        "customCommand",
        "env",
        "extraVolumeMounts",
        "extraVolumes",
        "fullnameOverride",
        "global",
        "healthPort",
        "hostPath",
        "image",
        "imagePullSecrets",
        "ingress",
        "initContainers",
        "livenessProbe",
        "metrics",
        "model",
        "multiNode",
        "nameOverride",
        "nfs",
        "nodeSelector",
        "persistence",
        "podAnnotations",
        "podSecurityContext",
        "readinessProbe",
        "replicaCount",
        "resources",
        "service",
        "serviceAccount",
        "startupProbe",
        "statefulSet",
        "tolerations",
    ]
)
MODEL = frozenset(
    [
        "nimCache",
        "name",
        "ngcAPISecret",
        "ngcAPIKey",
        "openaiPort",
        "labels",
        "jsonLogging",
        "logLevel",
        "legacyCompat",
        "numGpus",
        "subPath",
        "modelStorePath",
        "customizationSource",
        "dataStoreURL",
        "nemo",
        "nemoPort",
        "nemo_port",
        "numWorkers",
        "openai",
        "openai_host",
        "openai_port",
        "tritonModelName",
        "tritonURL",
        "trtModelName",
    ]
)
TOP_PLACES = {
    "fullname": "fullnameOverride",
    "name": "nameOverride",
    "probes": "startupProbe / livenessProbe / readinessProbe",
    "securityContext": "podSecurityContext (pod) or containerSecurityContext (container)",
    "replicas": "replicaCount",
    "args": "customArgs",
    "command": "customCommand",
    "numGpus": "resources.limits (nvidia.com/gpu)",
    "gpus": "resources.limits (nvidia.com/gpu)",
    "environment": "env",
}
MODEL_PLACES = {
    "gpus": "resources.limits (nvidia.com/gpu; model.numGpus does not request GPUs either)",
    "env": "env (top level)",
    "resources": "resources (top level)",
    "image": "image.repository (top level)",
    "ngcApiKey": "ngcAPIKey",
    "ngcApiSecret": "ngcAPISecret",
}


# sections one level down: values.yaml keys plus the `.Values.<section>.<key>` the templates read
NESTED = {
    "service": frozenset(
        [
            "type",
            "openaiPort",
            "annotations",
            "labels",
            "name",
            "grpc_port",
            "http_port",
            "metrics_port",
            "nemo_port",
            "openai_port",
        ]
    ),
    "persistence": frozenset(
        [
            "enabled",
            "existingClaim",
            "storageClass",
            "accessMode",
            "stsPersistentVolumeClaimRetentionPolicy",
            "size",
            "annotations",
        ]
    ),
    "multiNode": frozenset(
        ["clusterStartTimeout", "enabled", "workers", "leaderWorkerSet", "mpiJob", "gpusPerNode", "optimized"]
    ),
    "autoscaling": frozenset(
        ["enabled", "minReplicas", "maxReplicas", "metrics", "scaleDownStabilizationSecs"]
    ),
    "statefulSet": frozenset(["enabled"]),
    "hostPath": frozenset(["enabled", "path"]),
    "nfs": frozenset(["enabled", "server", "path", "readOnly"]),
    "metrics": frozenset(["enabled", "serviceMonitor"]),
    "image": frozenset(["repository", "pullPolicy", "tag"]),
}
NESTED_PLACES = {
    "port": "openaiPort",
    "storageClassName": "storageClass",
    "gpus": "gpusPerNode",
    "name": "repository",
    "targetCPUUtilizationPercentage": "metrics",
    "targetMemoryUtilizationPercentage": "metrics",
}


def is_nim_chart(root: Mapping) -> bool:
    model = root.map("model")
    return model is not None and any(k in model for k in ("ngcAPISecret", "ngcAPIKey", "nimCache"))


def nim_values(ctx: ct.ObjectContext, root: Mapping) -> Deployment:
    path = ctx.file
    d = Deployment(path, root.where(path), "values", "(root)", ctx.base_dir)
    model = root.at("model", "name")
    where = (model or root).where(path)
    d.engine = stated("nim", where, "nim-llm Helm values")
    _image(d, root, path)
    _gpus(d, root, path)
    # the container gets `env` as written (deployment.yaml `toYaml .Values.env`)
    ct.read_engine(d, ct.Launch("nim", [], None, "nim-llm Helm values"), read_env(root, path))
    ct.apply_labels(d, pods.node_labels(root, path))
    d.issues.extend(keys_not_read(root, path, NAME, TOP, TOP_PLACES, SOURCE))
    for section, keys in NESTED.items():
        sub = root.map(section)
        if sub is not None:
            places = {k: v for k, v in NESTED_PLACES.items() if k not in keys}
            d.issues.extend(keys_not_read(sub, path, NAME, keys, places, SOURCE, f"{section}."))
    box = root.map("model")
    if box is not None:
        d.issues.extend(keys_not_read(box, path, NAME, MODEL, MODEL_PLACES, SOURCE, "model."))
        _num_gpus(d, box, path)
    return d


def of_nim_llm(nearby: Nearby | None) -> bool:
    """False when a Chart.yaml beside the values names another chart (they are its own values)."""
    if nearby is None:
        return True
    data, _shown, _why = nearby.file_beside("Chart.yaml")
    if data is None:
        return True
    docs = [doc.root for doc in load_bytes(data, "Chart.yaml", len(data) + 1).documents]
    name = docs[0].value("name") if docs and isinstance(docs[0], Mapping) else None
    return not isinstance(name, str) or name == CHART


def _image(d: Deployment, root: Mapping, path: str) -> None:
    """The container's image, `image.repository:image.tag` (deployment.yaml), the chart's where one is left out."""
    repo, tag = root.at("image", "repository"), root.at("image", "tag")
    repo_text = repo.text.strip() if isinstance(repo, Scalar) and repo.value is not None else ""
    tag_text = tag.text.strip() if isinstance(tag, Scalar) and tag.value is not None else ""
    where = (repo if isinstance(repo, Scalar) and repo_text else root).where(path)
    shown = f"{repo_text or DEFAULT_REPOSITORY}:{tag_text or DEFAULT_TAG}"
    if repo_text and tag_text:
        d.image = stated(shown, where)
        return
    left = " and ".join(k for k, v in (("image.repository", repo_text), ("image.tag", tag_text)) if not v)
    d.image = default(
        shown, f"the {CHART} chart's {left} (values.yaml, Chart.yaml appVersion; {SOURCE})", where
    )


def _gpus(d: Deployment, root: Mapping, path: str) -> None:
    """resources as written; a GPU left out keeps the chart's resources.limits nvidia.com/gpu: 1."""
    gpus = [r for r in pods.device_resources(root, path) if r.name == "nvidia.com/gpu"]
    if gpus and gpus[0].count is not None:
        d.gpus_per_pod = stated(gpus[0].count, gpus[0].where, "resources nvidia.com/gpu")
        d.gpu_resource = "nvidia.com/gpu"
    elif not gpus:
        d.gpu_resource = "nvidia.com/gpu"
        d.gpus_per_pod = default(
            DEFAULT_GPUS,
            f"the nim-llm chart's default resources.limits nvidia.com/gpu: 1 (values.yaml; Helm merges "
            f"these values over it; {SOURCE})",
        )


def _num_gpus(d: Deployment, box: Mapping, path: str) -> None:
    """model.numGpus differing from the GPUs the pod gets, without legacyCompat: it requests nothing."""
    node = box.scalar("numGpus")
    if not isinstance(node, Scalar) or not isinstance(node.value, int) or box.value("legacyCompat") is True:
        return
    if d.gpus_per_pod is None or d.gpus_per_pod.value == node.value:
        return
    origin = "the chart's default" if d.gpus_per_pod.origin == "default" else "resources"
    d.issues.append(
        Issue(
            UNPARSED_SETTING,
            f"model.numGpus {node.value} does not request GPUs: the {NAME} renders it only in the legacy "
            f"command (model.legacyCompat: true -> --num_gpus), and the pod gets {d.gpus_per_pod.value} "
            f"nvidia.com/gpu from {origin} ({SOURCE})",
            node.where(path),
            fix=f"set resources.limits nvidia.com/gpu: {node.value} (and requests)",
            severity=Severity.WARNING,
        )
    )
