"""Nested keys of vLLM production-stack Helm values the chart does not read (issue 12 item 4).

Source: vllm-project/production-stack@a6c01db0 helm/values.schema.json and helm/templates/*.yaml, read in
place. The schema sets no `additionalProperties: false`, so Helm accepts any key and renders nothing from one
its templates do not read:
- `servingEngineSpec`: the schema's properties plus `.Values.servingEngineSpec.env` (deployment-vllm-multi.yaml);
- `modelSpec[].vllmConfig`: deployment-vllm-multi.yaml renders only enableChunkedPrefill, enablePrefixCaching,
  maxModelLen, dtype, tensorParallelSize, maxNumSeqs, gpuMemoryUtilization, maxLoras, runner, convert and
  extraArgs as vLLM flags, and reads v0 / v1 / prometheusMultiprocDir; ray-cluster.yaml (raySpec) also renders
  pipelineParallelSize. Any other vLLM option (maxNumBatchedTokens, kvCacheDtype, quantization, ...) reaches
  vLLM only through extraArgs;
- `modelSpec[].lmcacheConfig`: the schema's properties plus every key the templates read (`hasKey` / `.<key>`).
The operator's VLLMRuntime CRD (operator/api/v1alpha1/vllmruntime_types.go) renders tensorParallelSize,
gpuMemoryUtilization, enableChunkedPrefill from spec.vllmConfig and maxModelLen, dtype, maxNumSeqs from spec.model.
"""

from __future__ import annotations

import re

from kvlint.codes import UNPARSED_SETTING
from kvlint.extract.charts.chart_layouts import keys_not_read
from kvlint.findings import Issue, Severity
from kvlint.load.tree import Mapping
from kvlint.record import replace

SOURCE = "vllm-project/production-stack@a6c01db0 helm/values.schema.json and helm/templates/*.yaml"
NAME = "vLLM production-stack chart"
ENGINE_SPEC = frozenset(
    [
        "configs",
        "containerPort",
        "containerSecurityContext",
        "enableEngine",
        "env",
        "extraPorts",
        "imagePullPolicy",
        "labels",
        "livenessProbe",
        "modelSpec",
        "readinessProbe",
        "runtimeClassName",
        "schedulerName",
        "securityContext",
        "serviceMonitor",
        "servicePort",
        "sidecar",
        "startupProbe",
        "strategy",
        "tolerations",
        "vllmApiKey",
    ]
)
# vllmConfig keys the chart renders as vLLM flags (kvlint reads them as such) and the others it reads
VLLM_FLAGS = frozenset(
    [
        "enableChunkedPrefill",
        "maxModelLen",
        "dtype",
        "tensorParallelSize",
        "maxNumSeqs",
        "gpuMemoryUtilization",
    ]
)
VLLM_CONFIG = VLLM_FLAGS | frozenset(
    [
        "enablePrefixCaching",
        "maxLoras",
        "runner",
        "convert",
        "extraArgs",
        "v0",
        "v1",
        "prometheusMultiprocDir",
        "pipelineParallelSize",  # rendered by ray-cluster.yaml only (checked in vllm_config_issues)
    ]
)
RUNTIME_FLAGS = {
    "vllmConfig": frozenset(["tensorParallelSize", "gpuMemoryUtilization", "enableChunkedPrefill"]),
    "model": frozenset(["maxModelLen", "dtype", "maxNumSeqs"]),
}
LMCACHE = frozenset(
    [
        "cpuOffloadingBufferSize",
        "enabled",
        "logLevel",
        "controllerPort",
        "controllerReplyPort",
        "cudaVisibleDevices",
        "diskOffloadingBufferSize",
        "enableController",
        "enableNixl",
        "enablePD",
        "instanceId",
        "kvRole",
        "nixlBufferDevice",
        "nixlBufferSize",
        "nixlEnableGc",
        "nixlPeerHost",
        "nixlPeerPort",
        "nixlRole",
        "p2pHost",
        "p2pInitPorts",
        "workerHeartbeatTime",
        "workerPort",
        "workerPorts",
    ]
)
ENGINE_SPEC_PLACES = {
    "nodeSelector": "modelSpec[].nodeSelectorTerms",
    "nodeSelectorTerms": "modelSpec[].nodeSelectorTerms",
    "resources": "modelSpec[].requestGPU / requestCPU / requestMemory",
    "requestGPU": "modelSpec[].requestGPU",
    "vllmConfig": "modelSpec[].vllmConfig",
    "lmcacheConfig": "modelSpec[].lmcacheConfig",
    "replicaCount": "modelSpec[].replicaCount",
    "shmSize": "modelSpec[].shmSize",
}
LMCACHE_PLACES = {"enable": "enabled", "cpuOffloadingBufferSizeGB": "cpuOffloadingBufferSize"}


def _flag(key: str) -> str:
    """maxNumBatchedTokens -> --max-num-batched-tokens."""
    return "--" + re.sub(r"(?<!^)(?=[A-Z])", "-", key).lower()


def vllm_config_places(cfg: Mapping) -> dict[str, str]:
    """Where a vLLM option the chart does not render belongs: extraArgs, as its flag."""
    return {key: f"extraArgs (as {_flag(key)})" for key, _ in cfg.items() if key not in VLLM_CONFIG}


def serving_engine_issues(root: Mapping, path: str) -> list[Issue]:
    spec = root.map("servingEngineSpec")
    if spec is None:
        return []
    return keys_not_read(spec, path, NAME, ENGINE_SPEC, ENGINE_SPEC_PLACES, SOURCE, "servingEngineSpec.")


def nested_issues(entry: Mapping, path: str, label: str) -> list[Issue]:
    """vllmConfig and lmcacheConfig keys of one modelSpec entry."""
    out: list[Issue] = []
    cfg = entry.map("vllmConfig")
    if cfg is not None:
        at = f"{label}.vllmConfig."
        out += keys_not_read(cfg, path, NAME, VLLM_CONFIG, vllm_config_places(cfg), SOURCE, at)
        ray = entry.map("raySpec")
        if "pipelineParallelSize" in cfg.keys and not (ray is not None and ray.value("enabled") is True):
            out.append(
                Issue(
                    UNPARSED_SETTING,
                    f"the {NAME} renders `{at}pipelineParallelSize` only for a raySpec entry (ray-cluster.yaml; "
                    f"{SOURCE}): without raySpec.enabled Helm ignores it; the chart reads this setting from "
                    f"`{at}extraArgs` (as --pipeline-parallel-size)",
                    cfg.keys["pipelineParallelSize"].where(path),
                    fix="enable raySpec, or pass --pipeline-parallel-size in vllmConfig.extraArgs",
                    severity=Severity.WARNING,
                )
            )
    lm = entry.map("lmcacheConfig")
    if lm is not None:
        out += keys_not_read(lm, path, NAME, LMCACHE, LMCACHE_PLACES, SOURCE, f"{label}.lmcacheConfig.")
    return out


def rendered(entry: Mapping, box_name: str, runtime: bool) -> frozenset[str]:
    """The keys of `box_name` the chart (or the operator, for a VLLMRuntime) renders as vLLM flags."""
    if runtime:
        return RUNTIME_FLAGS.get(box_name, frozenset())
    ray = entry.map("raySpec")
    with_ray = ray is not None and ray.value("enabled") is True
    return VLLM_FLAGS | ({"pipelineParallelSize"} if with_ray else frozenset())


# --- the operator's VLLMRuntime CRD ------------------------------------------------------------------
# vllm-project/production-stack@a6c01db0 operator/api/v1alpha1/vllmruntime_types.go and common.go: the fields
# of each struct. The CRD does not preserve unknown fields: kubectl's strict field validation rejects any
# other key, and with validation off the API server drops it.
RUNTIME_SOURCE = "vllm-project/production-stack@a6c01db0 operator/api/v1alpha1/vllmruntime_types.go"
RUNTIME_FIELDS: dict[tuple[str, ...], frozenset[str]] = {
    (): frozenset(
        ["model", "vllmConfig", "lmCacheConfig", "storageConfig", "deploymentConfig", "autoscalingConfig"]
    ),
    ("model",): frozenset(
        [
            "modelURL",
            "hfTokenSecret",
            "enableLoRA",
            "enableTool",
            "toolCallParser",
            "maxModelLen",
            "dtype",
            "maxNumSeqs",
            "chatTemplate",
        ]
    ),
    ("vllmConfig",): frozenset(
        [
            "enableChunkedPrefill",
            "enablePrefixCaching",
            "tensorParallelSize",
            "gpuMemoryUtilization",
            "maxLoras",
            "extraArgs",
            "v1",
            "port",
            "env",
        ]
    ),
    ("lmCacheConfig",): frozenset(
        ["enabled", "cpuOffloadingBufferSize", "diskOffloadingBufferSize", "remoteUrl", "remoteSerde"]
    ),
    ("storageConfig",): frozenset(
        ["enabled", "storageClassName", "size", "accessMode", "mountPath", "volumeName"]
    ),
    ("deploymentConfig",): frozenset(
        [
            "replicas",
            "nodeSelectorTerms",
            "toleration",
            "deploymentStrategy",
            "runtimeClass",
            "shmSize",
            "resources",
            "image",
            "podAnnotations",
            "sidecarConfig",
        ]
    ),
    ("deploymentConfig", "resources"): frozenset(["cpu", "memory", "gpu", "gpuType"]),
    ("deploymentConfig", "image"): frozenset(["registry", "name", "pullPolicy", "pullSecretName"]),
}
RUNTIME_PLACES = {  # renames within the same struct
    "tolerations": "toleration (the CRD's field is singular)",
    "nodeSelector": "nodeSelectorTerms",
    "runtimeClassName": "runtimeClass",
    "nvidia.com/gpu": "gpu",
    "gpus": "gpu",
    "repository": "name (registry + name)",
}


def _moved(key: str, here: tuple[str, ...]) -> str | None:
    """A field of another struct written in this one: where it belongs, said in full."""
    for sub, keys in RUNTIME_FIELDS.items():
        if len(sub) == 1 and sub != here and key in keys:
            return f"a field of spec.{sub[0]}: spec.{sub[0]}.{key}"
    return None


def runtime_issues(spec: Mapping, path: str) -> list[Issue]:
    """Fields of a VLLMRuntime spec the CRD does not have."""
    out: list[Issue] = []
    for where, fields in RUNTIME_FIELDS.items():
        box = spec.at(*where) if where else spec
        if not isinstance(box, Mapping):
            continue
        at = "spec." + "".join(f"{w}." for w in where)
        places = dict(RUNTIME_PLACES)
        for key, _ in box.items():
            moved = None if key in fields else _moved(key, where)
            if moved is not None and not where:  # at the top of spec: the struct's key, relative to spec
                moved = moved.split(": spec.", 1)[1]
            if moved is not None:
                places[key] = moved
        found = keys_not_read(box, path, "VLLMRuntime CRD", fields, places, RUNTIME_SOURCE, at)
        out += [
            replace(
                i,
                message=i.message.replace(
                    ": Helm ignores it",
                    ": kubectl apply rejects it (strict field validation) and with validation off the API "
                    "server drops it",
                ).replace("the chart reads this setting", "the operator reads this setting"),
            )
            for i in found
        ]
    return out
