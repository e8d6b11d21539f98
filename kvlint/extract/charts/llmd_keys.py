"""Keys of `llm-d-modelservice` values the chart does not read (issue 12 item 4).

Source: llm-d-incubation/llm-d-modelservice@3051935e charts/llm-d-modelservice/values.schema.json and
templates/*.yaml (_helpers.tpl modelPod / container / resources). The key set of each section is the schema's
`properties` plus what the templates read from it (`.Values.decode.tolerations`, `.pdSpec.extraConfig`,
`.container.modelCommand`, ...). Where the schema sets `additionalProperties: false` (modelArtifacts,
parallelism, accelerator, routing, tracing) an unknown key fails `helm install` (schema validation); elsewhere
(the top level, decode / prefill, containers[]) Helm accepts it and renders nothing from it.
"""

from __future__ import annotations

from kvlint.extract.charts.chart_layouts import keys_not_read
from kvlint.findings import Issue
from kvlint.load.tree import Mapping
from kvlint.record import replace

SOURCE = (
    "llm-d-incubation/llm-d-modelservice@3051935e charts/llm-d-modelservice/values.schema.json and templates"
)
NAME = "llm-d-modelservice chart"
TOP = frozenset(
    [
        "accelerator",
        "common",
        "decode",
        "enabled",
        "extraObjects",
        "fullnameOverride",
        "global",
        "modelArtifacts",
        "multinode",
        "prefill",
        "requester",
        "routing",
        "serviceAccountOverride",
        "tracing",
        "nameOverride",
        "schedulerName",
    ]
)
ARTIFACTS = frozenset(["authSecretName", "labels", "mountPath", "name", "readOnly", "size", "uri"])
ROLE = frozenset(
    [
        "accelerator",  # per-role override of accelerator.dra (_helpers-dra.tpl draEnabled)
        "acceleratorTypes",
        "autoscaling",
        "containers",
        "create",
        "initContainers",
        "monitoring",
        "nodeSelector",
        "parallelism",
        "replicas",
        "resourceClaims",
        "volumes",
        "annotations",
        "enableServiceLinks",
        "hostIPC",
        "hostPID",
        "podAnnotations",
        "strategy",
        "subGroupExclusiveTopology",
        "subGroupPolicy",
        "terminationGracePeriodSeconds",
        "tolerations",
        "extraConfig",
        "imagePullSecrets",
        "podSecurityContext",
        "priorityClassName",
        "schedulerName",
    ]
)
PARALLELISM = frozenset(["data", "dataLocal", "tensor", "workers"])
CONTAINER = frozenset(
    [
        "args",
        "command",
        "env",
        "extraConfig",
        "image",
        "imagePullPolicy",
        "livenessProbe",
        "modelCommand",
        "mountModelVolume",
        "name",
        "ports",
        "readinessProbe",
        "resources",
        "securityContext",
        "startupProbe",
        "stdin",
        "tty",
        "volumeMounts",
        "workingDir",
    ]
)
ACCELERATOR = frozenset(["dra", "env", "resourceClaimTemplates", "resources", "type"])
# sections whose schema forbids other keys: helm install fails on them
STRICT = {"modelArtifacts": ARTIFACTS, "accelerator": ACCELERATOR}

_URI = "modelArtifacts.uri (hf://<org>/<model>)"
TOP_PLACES = {
    "model": _URI,
    "modelName": _URI,
    "modelId": _URI,
    "replicas": "decode.replicas",
    "parallelism": "decode.parallelism",
    "tensorParallelSize": "decode.parallelism.tensor",
    "containers": "decode.containers",
    "resources": "decode.containers[].resources",
    "args": "decode.containers[].args",
    "image": "decode.containers[].image",
    "nodeSelector": "decode.nodeSelector",
    "tolerations": "decode.tolerations",
    "affinity": "decode.extraConfig.affinity",
}
ARTIFACT_PLACES = {
    "model": "uri (hf://<org>/<model>)",
    "id": "uri",
    "url": "uri",
    "modelId": "uri",
    "path": "uri",
}
ROLE_PLACES = {
    "args": "containers[].args",
    "command": "containers[].command",
    "env": "containers[].env",
    "image": "containers[].image",
    "resources": "containers[].resources",
    "modelCommand": "containers[].modelCommand",
    "affinity": "extraConfig.affinity (the chart renders extraConfig into the pod spec)",
    "replicaCount": "replicas",
    "tensor": "parallelism.tensor",
    "tensorParallelSize": "parallelism.tensor",
    "tp": "parallelism.tensor",
    "workers": "parallelism.workers",
    "dataLocal": "parallelism.dataLocal",
}
PARALLELISM_PLACES = {
    "tp": "tensor",
    "tensorParallelSize": "tensor",
    "tensorParallel": "tensor",
    "tensor_parallel": "tensor",
    "dp": "data",
    "dataParallel": "data",
    "dataParallelSize": "data",
    "dpLocal": "dataLocal",
    "dataParallelLocal": "dataLocal",
    "data_local": "dataLocal",
    "pipeline": "a container's args, as --pipeline-parallel-size (the chart has no pipeline key)",
    "pp": "a container's args, as --pipeline-parallel-size (the chart has no pipeline key)",
    "expert": "a container's args, as --enable-expert-parallel (the chart has no expert key)",
}
CONTAINER_PLACES = {
    "arguments": "args",
    "extraArgs": "args",
    "vllmArgs": "args",
    "limits": "resources.limits",
    "requests": "resources.requests",
    "gpus": "resources.limits (or leave it out: the chart requests parallelism.tensor x dataLocal GPUs)",
    "nvidia.com/gpu": "resources.limits",
}


def _strict(issues: list[Issue]) -> list[Issue]:
    """A key where the schema sets additionalProperties false: helm install fails, nothing is ignored."""
    return [
        replace(
            i,
            message=i.message.replace(
                ": Helm ignores it", ": its values.schema.json forbids other keys here, so helm install fails"
            ),
        )
        for i in issues
    ]


def top_issues(root: Mapping, path: str) -> list[Issue]:
    """The top level, modelArtifacts and accelerator."""
    out = keys_not_read(root, path, NAME, TOP, TOP_PLACES, SOURCE)
    for key, keys in STRICT.items():
        box = root.map(key)
        if box is not None:
            places = ARTIFACT_PLACES if key == "modelArtifacts" else {}
            out += _strict(keys_not_read(box, path, NAME, keys, places, SOURCE, f"{key}."))
    return out


def role_issues(root: Mapping, role: str, path: str) -> list[Issue]:
    """decode / prefill: the section, its parallelism and each container."""
    section = root.map(role)
    if section is None:
        return []
    out = keys_not_read(section, path, NAME, ROLE, ROLE_PLACES, SOURCE, f"{role}.")
    par = section.map("parallelism")
    if par is not None:
        out += _strict(
            keys_not_read(par, path, NAME, PARALLELISM, PARALLELISM_PLACES, SOURCE, f"{role}.parallelism.")
        )
    containers = section.seq("containers")
    for i, c in enumerate(containers.items if containers is not None else ()):
        if isinstance(c, Mapping):
            at = f"{role}.containers[{i}]."
            out += keys_not_read(c, path, NAME, CONTAINER, CONTAINER_PLACES, SOURCE, at)
    return out


def filled_mismatch(c: Mapping, resource: str | None, gpus: int, path: str) -> list[Issue]:
    """The chart fills whichever of resources.limits / requests leaves the accelerator out with
    parallelism.dataLocal x tensor (_helpers.tpl `resources`, `numGpuPerWorker`); when the other side
    states a different count, Kubernetes rejects the pod (an extended resource's request must equal its limit)."""
    from kvlint.codes import UNPARSED_SETTING
    from kvlint.findings import Severity
    from kvlint.load.tree import Scalar

    res = c.map("resources")
    if resource is None or res is None or gpus < 1:
        return []
    out: list[Issue] = []
    for written, filled in (("limits", "requests"), ("requests", "limits")):
        box, other = res.map(written), res.map(filled)
        node = box.get(resource) if box is not None else None
        if not isinstance(node, Scalar) or (other is not None and resource in other):
            continue
        try:
            count = int(str(node.value))
        except ValueError:
            continue
        if count != gpus:
            out.append(
                Issue(
                    UNPARSED_SETTING,
                    f"resources.{written} asks for {count} {resource} but leaves resources.{filled} out: the "
                    f"{NAME} fills {filled} with parallelism.dataLocal x tensor = {gpus} ({SOURCE}, _helpers.tpl "
                    "`resources`), and Kubernetes rejects a pod whose request and limit of an extended "
                    "resource differ",
                    node.where(path),
                    fix=f"set resources.{filled} {resource}: {count} too, or make parallelism match {count} GPUs",
                    severity=Severity.WARNING,
                )
            )
    return out


URI_SCHEMES = ("hf", "pvc", "pvc+hf", "oci")


def uri_issues(root: Mapping, command_kind: str, path: str) -> list[Issue]:
    """modelArtifacts.uri as _helpers.tpl argsByProtocol reads it (`regexSplit "://"`): with modelCommand
    vllmServe / imageDefault, a scheme other than hf / pvc / pvc+hf renders no model argument, and oci://
    makes the chart fail ("arguments for oci:// not implemented")."""
    from kvlint.codes import UNPARSED_SETTING
    from kvlint.findings import Severity
    from kvlint.load.tree import Scalar

    uri = root.at("modelArtifacts", "uri")
    if command_kind not in ("vllmServe", "imageDefault") or not isinstance(uri, Scalar) or uri.value is None:
        return []
    scheme = str(uri.value).replace('"', "").partition("://")[0]
    if scheme in ("hf", "pvc", "pvc+hf"):
        return []
    if scheme == "oci":
        what = 'the chart fails to render (argsByProtocol: "arguments for oci:// not implemented")'
    else:
        what = (
            "it has no scheme the chart knows (hf://, pvc://, pvc+hf://, oci://), so argsByProtocol renders no "
            "model argument and vLLM starts its own default model"
        )
    return [
        Issue(
            UNPARSED_SETTING,
            f"modelArtifacts.uri `{uri.value}` with modelCommand {command_kind}: {what} ({SOURCE})",
            uri.where(path),
            fix="write the model as hf://<org>/<model> (or pvc://<claim>/<path>)",
            severity=Severity.WARNING,
        )
    ]


MODEL_COMMANDS = ("vllmServe", "imageDefault", "custom")


def command_issues(c: Mapping, path: str) -> list[Issue]:
    """_helpers.tpl `command`: modelCommand must be vllmServe, imageDefault or custom (the default), and
    custom needs the container's own `command`; otherwise the chart fails to render."""
    from kvlint.codes import UNPARSED_SETTING
    from kvlint.findings import Severity

    node = c.scalar("modelCommand")
    kind = str(node.value) if node is not None and node.value is not None else "custom"
    if kind not in MODEL_COMMANDS:
        message = (
            f"modelCommand `{kind}` is not one the {NAME} takes (vllmServe, imageDefault, custom): "
            f'helm install fails (".container.modelCommand is not as expected", {SOURCE})'
        )
        where = node.where(path) if node is not None else c.where(path)
        fix = "use modelCommand: vllmServe (the chart writes `vllm serve <model>` and the parallelism flags)"
    elif kind == "custom" and not c.get("command"):
        message = (
            f"modelCommand is {'custom' if node is not None else 'left out (custom by default)'} and the container "
            f"has no `command`: helm install fails ('a `command` is required', {SOURCE})"
        )
        where = node.where(path) if node is not None else (c.keys.get("name") or c).where(path)
        fix = "set modelCommand: vllmServe, or give the container its command"
    else:
        return []
    return [Issue(UNPARSED_SETTING, message, where, fix=fix, severity=Severity.WARNING)]
