"""KAITO `Workspace` (kaito.sh) with its inference ConfigMap, read as KAITO's operator and its vLLM
wrapper read them (kaito-project/kaito@056b828):

- the model is the preset's Hugging Face id (KAITO's preset catalog, kvlint/catalog/kaito.py);
- the GPU nodes are `resource.instanceType` (GPU and GPUs per node from the VM type);
- `inference.config` names a ConfigMap whose `inference_config.yaml` key holds a `vllm:` section; when
  no config is named KAITO uses its default ConfigMap `inference-params-template`
  (api/v1beta1/workspace_validation.go DefaultInferenceConfigTemplate; charts/kaito/workspace/templates/
  inference-params.yaml: `vllm: {cpu-offload-gb: 0}`, no parallelism);
- the wrapper presets/workspace/inference/vllm/inference_api.py appends every `vllm:` key as
  `--key value` after the operator's own flags, so the ConfigMap wins (KaitoConfig, parse_args).

The operator's choices are computed as KAITO computes them when its model catalog holds the preset and its
SKU table the VM (catalog/kaito.py: node estimator, configureParallelism; the ConfigMap's keys still win).
Otherwise the operator chooses at run time: the parallelism (pkg/model/interface.go configureParallelism: data
parallel over the node's GPUs when the weights are under half of one GPU, else tensor parallel = the
node's GPUs, pipeline parallel = nodes), the node count (workspace_controller.go
UpdateWorkspaceTargetNodeCount: its estimator, for the vLLM runtime; resource.count is not read),
--max-model-len auto, and the memory fraction (free memory - 600 MiB, fallback 0.84). When the ConfigMap
fixes the tensor parallelism on a one-GPU VM (data parallel is then 1) or states data-parallel-size, and
the Workspace asks for one node at most, the workload is checked; otherwise KV004 says which of these the
operator decides.
"""

from __future__ import annotations

from kvlint import engines
from kvlint.codes import UNPARSED_SETTING
from kvlint.deployment import Deployment, inferred, stated
from kvlint.extract.pod import container as ct
from kvlint.extract.pod import synthetic
from kvlint.extract.pod.argv import Token
from kvlint.findings import Issue, Severity
from kvlint.load.tree import Mapping, Node, Scalar
from kvlint.record import replace

DEFAULT_CONFIG = "inference-params-template"
CONFIG_KEY = "inference_config.yaml"
SOURCE = "kaito-project/kaito@056b828"
# api/v1beta1/workspace_validation.go N_SERIES_PREFIX / D_SERIES_PREFIX: an Azure VM size KAITO's SKU table
# lacks is still taken by name pattern (on Azure); any other unknown size is "Unsupported instance type"
AZURE_PATTERN = ("Standard_N", "Standard_D")
WRAPPER = f"KAITO's vLLM wrapper inference_api.py appends the ConfigMap's vllm: keys as flags ({SOURCE})"


def workspace(ctx: ct.ObjectContext) -> list[Deployment]:
    """KAITO Workspace: a preset name, the VM size (resource.instanceType), node count, inference ConfigMap."""
    preset = ctx.root.at("inference", "preset", "name")
    if not isinstance(preset, Scalar):
        return []
    from kvlint.catalog import kaito as kaito_catalog

    d = Deployment(ctx.file, ctx.where, ctx.kind, ctx.name, ctx.base_dir)
    d.ignores = dict(ctx.ignores)
    pwhere = preset.where(ctx.file)
    hf = kaito_catalog.hf_id(str(preset.value))
    d.model = (
        inferred(hf, f"KAITO preset {preset.value} ({kaito_catalog.source()})", pwhere)
        if hf is not None
        else stated(str(preset.value), pwhere, "KAITO preset name")
    )
    d.engine = stated("kaito", pwhere)
    itype = ctx.root.at("resource", "instanceType")
    refused = _instance_type_problem(d, itype, ctx.file)
    if refused is not None:
        d.issues.append(refused)
    if isinstance(itype, Scalar) and itype.value:
        ct.apply_labels(d, [("node.kubernetes.io/instance-type", [str(itype.value)], itype.where(ctx.file))])
    count = ctx.root.at("resource", "count")
    nodes = count.value if isinstance(count, Scalar) and isinstance(count.value, int) else None
    if nodes is not None and count is not None:
        d.pods = stated(nodes, count.where(ctx.file), "KAITO resource.count: GPU nodes")
    vllm_cfg, cfg_file, missing = _config(ctx)
    decided = _kaito_decides(d, hf, itype, vllm_cfg) if not missing else None
    why = _operator_decides(ctx, d, vllm_cfg, nodes, hf is not None, decided is not None)
    if missing or why:
        ct.mark_unsupported(d, "kaito", pwhere)
        if missing or why != "parallelism":
            d.issues[-1] = Issue(
                d.issues[-1].code, f"{d.label()}: {missing or why}", pwhere, kind=d.issues[-1].kind
            )
        elif vllm_cfg is None or "tensor-parallel-size" not in vllm_cfg.keys:
            named = ctx.root.at("inference", "config")
            cm = (
                f"inference ConfigMap {named.value}"
                if isinstance(named, Scalar) and named.value
                else f"KAITO's default inference ConfigMap {DEFAULT_CONFIG}"
            )
            code, msg, kind = d.issues[-1].code, d.issues[-1].message, d.issues[-1].kind
            d.issues[-1] = Issue(code, msg + f"; its {cm} fixes no tensor-parallel-size", pwhere, kind=kind)
        return [d]
    _read_config(d, vllm_cfg, cfg_file, decided or [])
    return [d]


def _instance_type_problem(d: Deployment, itype: Node | None, file: str) -> Issue | None:
    """A VM size KAITO's webhook refuses with node auto-provisioning (its default): not a string, or not in
    its SKU tables and not an Azure N/D-series name (api/v1beta1/workspace_validation.go validateCreate)."""
    from kvlint.catalog import kaito as kaito_catalog

    if itype is None or (isinstance(itype, Scalar) and itype.value in (None, "")):
        return None
    where = itype.where(file)
    if not isinstance(itype, Scalar) or not isinstance(itype.value, str):
        shown = repr(itype.value) if isinstance(itype, Scalar) else "(a list or map)"
        return Issue(
            UNPARSED_SETTING,
            f"{d.label()}: resource.instanceType {shown} is not a VM size name: the field is a string and "
            "the API server rejects the Workspace",
            where,
            severity=Severity.WARNING,
        )
    name = itype.value
    if kaito_catalog.sku(name) is not None or name.startswith(AZURE_PATTERN):
        return None
    return Issue(
        UNPARSED_SETTING,
        f"{d.label()}: resource.instanceType {name} is not in KAITO's SKU tables and is no Azure N/D-series "
        "size: with node auto-provisioning (KAITO's default) the webhook refuses the Workspace "
        f"('Unsupported instance type', {SOURCE} api/v1beta1/workspace_validation.go); only BYO nodes skip the check",
        where,
        fix="use a VM size KAITO lists (the message's 'Supported SKUs'), or bring your own nodes",
        severity=Severity.WARNING,
    )


def inference_set(ctx: ct.ObjectContext) -> list[Deployment]:
    """KAITO InferenceSet: `spec.replicas` Workspaces made from `spec.template` (its `resource` and
    `inference` are a Workspace's; kaito-project/kaito api/v1alpha1 InferenceSetSpec), each read as one."""
    template = ctx.root.at("spec", "template")
    if not isinstance(template, Mapping):
        return []
    parts: dict[str, Node | dict | None] = {k: ctx.root.get(k) for k in ("apiVersion", "kind", "metadata")}
    parts |= {k: template.get(k) for k in ("resource", "inference")}
    root = synthetic.mapping(ctx.root, parts)
    found = workspace(replace(ctx, root=root))
    replicas = ctx.root.at("spec", "replicas")
    for d in found:
        if isinstance(replicas, Scalar) and isinstance(replicas.value, int):
            d.extra["replicas"] = stated(
                replicas.value, replicas.where(ctx.file), "InferenceSet replicas (Workspaces)"
            )
    return found


def _config(ctx: ct.ObjectContext) -> tuple[Mapping | None, str, str]:
    """The `vllm:` section of the Workspace's inference ConfigMap (this file's documents, then YAML files
    beside it) and the file it is in, or (None, why it could not be read, ""). KAITO's default ConfigMap fixes no parallelism."""
    node = ctx.root.at("inference", "config")
    name = str(node.value) if isinstance(node, Scalar) and node.value else ""
    if not name:
        return None, "", ""
    hit = next(iter(ctx.nearby.named(("ConfigMap",), name)), None) if ctx.nearby is not None else None
    if hit is None:
        return (
            None,
            "",
            (
                f"its inference ConfigMap {name} (inference.config) is not in this file or a YAML file beside it: "
                "the vLLM settings it passes (tensor-parallel-size, max-model-len, gpu-memory-utilization, …) "
                "could not be checked"
            ),
        )
    text = hit.root.at("data", CONFIG_KEY)
    if not isinstance(text, Scalar) or not isinstance(text.value, str):
        return (
            None,
            "",
            f"ConfigMap {name} has no data.{CONFIG_KEY} (KAITO rejects it): its vLLM settings are unknown",
        )
    from kvlint.extract.kinds.ray import serve_config

    lines = ctx.lines if hit.same_file else _lines(ctx, hit.file)
    root, _issues = serve_config(text, hit.file, lines)
    vllm = root.map("vllm") if root is not None else None
    if root is None or (root.get("vllm") is not None and vllm is None):
        return None, "", f"ConfigMap {name}: {CONFIG_KEY} is not a YAML mapping with a vllm: mapping"
    return vllm, hit.file, ""


def _kaito_decides(d: Deployment, hf: str | None, itype, vllm: Mapping | None) -> list[Token] | None:
    """The operator's own parallelism flags and node count, computed as KAITO computes them from its model
    catalog (modelFileSize, attention shape) and SKU table (pkg/workspace/estimator/nodesestimator
    EstimateNodeCount; pkg/model/interface.go configureParallelism); None when either lacks the preset or VM.
    The ConfigMap's vllm: keys come after these flags and win (a stated tensor-parallel-size replaces the
    operator's; its data parallelism stays)."""
    from kvlint.catalog import kaito as kc

    facts = kc.model_facts(hf) if hf else None
    node = kc.sku(str(itype.value)) if isinstance(itype, Scalar) and itype.value else None
    if facts is None or node is None:
        return None
    mml = vllm.scalar("max-model-len") if vllm is not None else None
    context = mml.value if mml is not None and isinstance(mml.value, int) else kc.DEFAULT_CONTEXT
    nodes = kc.estimate_nodes(facts, node, context)
    if nodes is None:
        return None
    gpus, where = int(node["gpus"]), d.where
    src = f"KAITO's operator ({SOURCE}, from its model catalog's modelFileSize {facts['file_size']} and SKU table)"
    d.pods = inferred(nodes, f"{src}: node estimator, context {context}", where)
    if nodes == 1 and kc.fits_half_gpu(facts, node):
        flags = {"--data-parallel-size": gpus, "--tensor-parallel-size": 1}
    else:
        flags = {"--tensor-parallel-size": gpus} | ({"--pipeline-parallel-size": nodes} if nodes > 1 else {})
    return [t for k, v in flags.items() for t in (Token(k, where, src), Token(str(v), where, src))]


def _operator_decides(
    ctx: ct.ObjectContext, d: Deployment, vllm: Mapping | None, nodes: int | None, hf: bool, decided: bool
) -> str:
    """What the operator decides at run time that changes the verdict ("parallelism": the general note)."""
    runtime = ctx.root.at("metadata", "annotations", "kaito.sh/runtime")
    if isinstance(runtime, Scalar) and str(runtime.value).lower() == "transformers":
        return "kaito.sh/runtime: transformers runs KAITO's Hugging Face transformers server; not modelled"
    if decided and d.gpus_per_pod is not None:
        return ""  # the operator's choice is computed as KAITO computes it
    keys = set(vllm.keys) if vllm is not None else set()
    if vllm is None or "tensor-parallel-size" not in keys or not hf or d.gpus_per_pod is None:
        return "parallelism"
    if nodes is not None and nodes > 1:
        return (
            f"resource.count {nodes}: KAITO's estimator picks the node count for the vLLM runtime and sets "
            f"pipeline-parallel-size to it ({SOURCE} UpdateWorkspaceTargetNodeCount, configureParallelism); "
            "the GPUs of one replica are decided at run time; not modelled"
        )
    pp = vllm.scalar("pipeline-parallel-size")
    if pp is not None and str(pp.value) not in ("1", "None"):
        return (
            "pipeline-parallel-size above 1 spans nodes KAITO's estimator sets up at run time; not modelled"
        )
    if d.gpus_per_pod.value > 1 and "data-parallel-size" not in keys:
        return (
            f"the ConfigMap fixes tensor-parallel-size but not data-parallel-size: on a {d.gpus_per_pod.value}-GPU "
            "node KAITO adds data-parallel-size = the node's GPUs when the preset's weights are under half of one "
            f"GPU ({SOURCE} pkg/model/interface.go configureParallelism), a size kvlint does not know; not modelled"
        )
    return ""


def _read_config(d: Deployment, vllm: Mapping | None, path: str, decided: list[Token]) -> None:
    from kvlint.extract.kinds.ray import engine_kwargs_tokens

    d.engine = inferred("vllm", f"KAITO's preset runtime is vLLM; {WRAPPER}", d.engine.where)  # type: ignore[union-attr]
    model = d.model
    # the operator's own flag comes first; the ConfigMap's keys follow it and win (preset_inferences.go)
    operator = [Token("--max-model-len", d.where, "KAITO default"), Token("auto", d.where, "KAITO default")]
    mine = engine_kwargs_tokens(vllm, path) if vllm is not None else []
    engines.get("vllm").read_options(d, operator + decided + mine, {}, positional_model=False, strict=False)
    if d.model is None:
        d.model = model
    if d.pods is None:
        d.pods = inferred(
            1,
            "one node assumed: KAITO's estimator picks the node count at run time (status.TargetNodeCount); "
            "with more nodes it adds pipeline-parallel-size",
            d.where,
        )
    if d.gpu_memory_utilization is None:
        d.gpu_memory_utilization = inferred(
            0.95,
            "KAITO default: inference_api.py takes (free GPU memory - 600 MiB) / total at start, capped at "
            "0.95 (an idle GPU reaches the cap; 0.84 when it cannot measure)",
            d.where,
        )


def _lines(ctx: ct.ObjectContext, shown: str) -> list[str]:
    return ctx.nearby.lines_of(shown) if ctx.nearby is not None else []
