"""KServe `InferenceService` (serving.kserve.io v1beta1) on a `ServingRuntime` / `ClusterServingRuntime`.

What KServe does (kserve/kserve pkg/controller/v1beta1/inferenceservice/utils/utils.go and
components/predictor.go; pkg/apis/serving/v1beta1/predictor_model.go):
- the runtime is `predictor.model.runtime` by name (a namespace ServingRuntime first, then a
  ClusterServingRuntime), or else the first enabled runtime whose `supportedModelFormats` lists the
  model format (and version) with `autoSelect: true`, highest `priority` first, namespaced runtimes
  before cluster ones; a multi-node predictor (`workerSpec`) takes only a multi-node runtime;
- the runtime's `kserve-container` and `predictor.model` merge as a strategic merge patch with the
  predictor winning (env by name, volumeMounts by mountPath, resources key by key), except `args`,
  which are the runtime's followed by the predictor's; `{{.Name}}`-style placeholders take the
  InferenceService's metadata;
- the runtime's pod fields (nodeSelector, affinity, tolerations, volumes, imagePullSecrets,
  schedulerName, resourceClaims) merge the same way under the predictor's.
A multi-node predictor (`workerSpec`) is sized as KServe sizes its Ray cluster (extract/kinds/kserve_multinode.py).
A runtime in this file or in a YAML file beside it is merged (one named by `runtime:` also from a folder beside
this file's, load/nearby.py named_beside), a value it states located at its own file's
line (a workload-level KV004 stays at this file's reference to the runtime); KServe's stock Hugging Face runtime
stands in, named as a default, when the format is `huggingface` and no runtime is found; any other
runtime not found is said (KV004), and what only it could state (its args, env, /dev/shm) is left
unknown rather than assumed empty.
"""

from __future__ import annotations

import re

from kvlint import engines
from kvlint.codes import NOT_CHECKABLE
from kvlint.deployment import Deployment, default, stated
from kvlint.extract.kinds import kserve_find as find
from kvlint.extract.kinds import kserve_multinode as multinode
from kvlint.extract.pod import container as ct
from kvlint.extract.pod import pods, synthetic
from kvlint.extract.pod.argv import FileLines, Token, scalar_tokens, scalar_where
from kvlint.extract.pod.workloads import pod_workloads
from kvlint.findings import Issue, IssueKind
from kvlint.load.nearby import Found
from kvlint.load.tree import Mapping, Node, Scalar, Sequence
from kvlint.record import replace

CONTAINER = "kserve-container"  # constants.InferenceServiceContainerName
SOURCE = "kserve/kserve pkg/controller/v1beta1/inferenceservice/utils/utils.go"
POD_FIELDS = (
    "nodeSelector",
    "affinity",
    "tolerations",
    "volumes",
    "imagePullSecrets",
    "schedulerName",
    "resourceClaims",
)
STOCK_HF = "kserve-huggingfaceserver"
STOCK_SOURCE = "KServe's stock ClusterServingRuntime kserve-huggingfaceserver (kserve/kserve config/runtimes)"
# what the stock runtime states that kvlint reads: the server, its args, a memory-backed /dev/shm
STOCK_HF_SPEC = {
    "containers": [
        {
            "name": CONTAINER,
            "image": "kserve/huggingfaceserver",
            "args": ["--model_name={{.Name}}"],
            "volumeMounts": [{"name": "devshm", "mountPath": "/dev/shm"}],
        }
    ],
    "volumes": [{"name": "devshm", "emptyDir": {"medium": "Memory"}}],
}
_PLACEHOLDER = re.compile(r"\{\{-?\s*\.(Name|Namespace)\s*-?\}\}")


def isvc(ctx: ct.ObjectContext) -> list[Deployment]:
    predictor = ctx.root.at("spec", "predictor")
    if not isinstance(predictor, Mapping):
        return []
    found = pod_workloads(ctx)
    if found:
        return found
    model = predictor.map("model")
    if model is None:
        return []
    anchor = model.scalar("runtime") or model.map("modelFormat") or model
    runtime, how = find.runtime(ctx, predictor, model)
    stock = runtime is None and _stock_hf(model)
    spec = _runtime_spec(runtime, anchor, stock)
    if spec is None:
        return _without_runtime(ctx, predictor, model, anchor)
    if runtime is not None and not runtime.same_file and ctx.nearby is not None:
        ctx = replace(ctx, lines=FileLines(ctx.lines, {runtime.file: ctx.nearby.lines_of(runtime.file)}))
    rc = next((c for c in pods.containers(spec) if c.value("name") == CONTAINER), None)
    if rc is None:
        return _without_runtime(ctx, predictor, model, anchor, f"{how} has no {CONTAINER} container")
    merged = _placeholders(_container(rc, model), ctx)
    pod = _pod(spec, predictor, merged)
    multi, refused = multinode.read(predictor, spec, ctx.file, ctx.name, multinode.storage_uri(model))
    d = ct.build(ctx, pod, merged, multi.env if multi else None, storage=_storage(model, ctx.file))
    if d is None:
        return _other_runtime(ctx, pod, merged, how)
    if multi is not None:
        multinode.apply(d, multi, merged, ctx.file)
    d.issues.extend([refused] if refused is not None else [])
    _own_file(d, ctx, anchor)
    storage = _storage(model, ctx.file)
    if storage is not None and d.model is not None and str(d.model.value).rstrip("/") == "/mnt/models":
        d.model = stated(
            storage.text, storage.where, storage.note
        )  # the engine reads what storageUri put there
    d.extra["runtime"] = stated(how if not stock else STOCK_SOURCE, anchor.where(ctx.file))
    if stock:
        _stock_defaults(d, model)
    return [d]


def _own_file(d: Deployment, ctx: ct.ObjectContext, anchor: Node) -> None:
    """A workload-level KV004 from the runtime's file is said here, at the reference, naming the runtime's line."""
    for i, issue in enumerate(d.issues):
        if issue.code == NOT_CHECKABLE and issue.where.file != ctx.file:
            w = issue.where
            d.issues[i] = Issue(
                issue.code,
                f"{issue.message} (runtime {w.file}:{w.line})",
                anchor.where(ctx.file),
                issue.details,
                issue.fix,
                issue.severity,
                kind=issue.kind,
            )


def _stock_hf(model: Mapping) -> bool:
    runtime = model.value("runtime")
    fmt = model.at("modelFormat", "name")
    return runtime == STOCK_HF or (runtime is None and isinstance(fmt, Scalar) and fmt.value == "huggingface")


def _runtime_spec(runtime: Found | None, anchor: Node, stock: bool) -> Mapping | None:
    if runtime is not None:
        spec = runtime.root.map("spec")
        if spec is None:
            return None
        # a runtime in another file: its values are located at that file's own lines
        return spec if runtime.same_file else synthetic.in_file(spec, runtime.file)  # type: ignore[return-value]
    if stock:
        return synthetic.from_data(STOCK_HF_SPEC, anchor)  # type: ignore[return-value]
    return None


# --- the merge ----------------------------------------------------------------------------------


def _container(runtime: Mapping, model: Mapping) -> Mapping:
    merged = synthetic.strategic_merge(runtime, model)
    assert isinstance(merged, Mapping)
    r_args, m_args = runtime.get("args"), model.get("args")
    if isinstance(r_args, Sequence) and isinstance(m_args, Sequence):  # concatenated, not replaced
        merged.values["args"] = synthetic.sequence(m_args, [*r_args.items, *m_args.items])
    return merged


def _pod(spec: Mapping, predictor: Mapping, container: Mapping) -> Mapping:
    base = synthetic.mapping(spec, {k: spec.get(k) for k in POD_FIELDS})
    pod = synthetic.strategic_merge(
        base, synthetic.mapping(predictor, {k: predictor.get(k) for k in POD_FIELDS})
    )
    assert isinstance(pod, Mapping)
    pod.values["containers"] = synthetic.sequence(container, [container])
    pod.keys["containers"] = synthetic.scalar(container, "containers")
    return pod


def _placeholders(container: Mapping, ctx: ct.ObjectContext) -> Mapping:
    """`{{.Name}}` / `{{.Namespace}}` in command, args and env values, as KServe fills them."""
    namespace = ctx.root.at("metadata", "namespace")
    meta = {"Name": ctx.name, "Namespace": str(namespace.value) if isinstance(namespace, Scalar) else ""}

    def fill(node: Node) -> Node:
        if isinstance(node, Scalar) and isinstance(node.value, str) and "{{" in node.value:
            text = _PLACEHOLDER.sub(lambda m: meta[m.group(1)], node.value)
            out = Scalar(
                text, text, node.tag, node.quoted, (node.line, node.col, node.end_line, node.end_col)
            )
            out.file = node.file
            return out
        return node

    out = synthetic.strategic_merge(container, None)
    assert isinstance(out, Mapping)
    for key in ("command", "args"):
        seq = container.get(key)
        if isinstance(seq, Sequence):
            out.values[key] = synthetic.sequence(seq, [fill(n) for n in seq.items])
    return out


def _storage(model: Mapping, path: str) -> Token | None:
    """The model a storageUri puts at /mnt/models: the Hub id of an `hf://` one, else the location itself."""
    uri = model.scalar("storageUri")
    if uri is None or not uri.value or "://" not in str(uri.value):
        return None
    text = str(uri.value)
    if text.startswith("hf://"):
        return Token(text[5:], scalar_where(uri, path), "storageUri (downloaded to /mnt/models)")
    # pvc://, oci://, s3://, gs://: the files at /mnt/models are whatever that location holds
    return Token(text, scalar_where(uri, path), "storageUri (mounted or downloaded at /mnt/models)")


# --- the workload -------------------------------------------------------------------------------


def _stock_defaults(d: Deployment, model: Mapping) -> None:
    """What the stock runtime stated is a default of KServe's, not the author's."""
    if d.has_shm and not _own_shm(model):
        d.shm_size = default(
            "", f"memory-backed /dev/shm from {STOCK_SOURCE}", d.shm_size.where if d.shm_size else None
        )


def _own_shm(model: Mapping) -> bool:
    return any(
        isinstance(m, Mapping) and str(m.value("mountPath") or "").rstrip("/") == "/dev/shm"
        for m in model.seq("volumeMounts") or ()
    )


def _other_runtime(ctx: ct.ObjectContext, pod: Mapping, container: Mapping, how: str) -> list[Deployment]:
    """The runtime runs no engine kvlint knows: a GPU predictor is still said (KV004), never passed."""
    gpus = [r for r in pods.device_resources(container, ctx.file) if pods.is_gpu(r.name)]
    if not gpus:
        return []
    image = container.scalar("image")
    d = Deployment(ctx.file, ctx.where, ctx.kind, ctx.name, ctx.base_dir)
    d.ignores = dict(ctx.ignores)
    where = gpus[0].where
    shown = f" ({image.value})" if image is not None and image.value else ""
    d.engine = stated("other", where, how)
    d.issues.append(
        Issue(
            NOT_CHECKABLE,
            f"{d.label()}: {how}{shown} runs no LLM engine kvlint models (vLLM, SGLang, TGI)",
            where,
        )
    )
    d.extra["unsupported"] = stated("other", where)
    ct.add_container_facts(d, ctx, pod, container)
    return [d]


def _without_runtime(
    ctx: ct.ObjectContext, predictor: Mapping, model: Mapping, anchor: Node, why: str = ""
) -> list[Deployment]:
    """The runtime is not in this file or beside it: the predictor's own part, and what is missing said."""
    fmt = model.at("modelFormat", "name")
    runtime = model.scalar("runtime")
    text = " ".join(
        str(n.value) for n in (fmt, runtime) if isinstance(n, Scalar) and n.value is not None
    ).lower()
    d = Deployment(ctx.file, ctx.where, ctx.kind, ctx.name, ctx.base_dir)
    d.ignores = dict(ctx.ignores)
    where = anchor.where(ctx.file)
    engine = engines.named_in("kserve runtime", text)
    if engine is not None:
        d.engine = stated(engine.name, where, f"KServe {engine.display} runtime")
        args = model.seq("args")
        tokens = scalar_tokens(args, ctx.file) if args is not None else []
        ct.read_engine(d, ct.Launch(engine.name, tokens, None, "KServe model args"), {})
        storage = _storage(model, ctx.file)
        if storage is not None and d.model is None and "unsupported" not in d.extra:
            d.model = stated(storage.text, storage.where)
    elif "huggingface" in text:
        args = model.seq("args")
        tokens = scalar_tokens(args, ctx.file) if args is not None else []
        d.engine = stated("hfserver", where, "KServe Hugging Face runtime")
        ct.read_engine(
            d, ct.Launch("hfserver", tokens, None, "KServe model args"), {}, _storage(model, ctx.file)
        )
    elif not any(pods.is_gpu(r.name) for r in pods.device_resources(model, ctx.file)):
        return []
    else:
        d.engine = stated("other", where, "KServe runtime")
        ct.mark_unsupported(d, "other", where)
    name = (
        f"runtime {runtime.value}"
        if runtime is not None
        else f"the runtime for model format {fmt.value if isinstance(fmt, Scalar) else '?'}"
    )
    if "unsupported" in d.extra:  # the engine is not modelled: its KV004 already says nothing is checked
        _name_the_runtime(d, name, why)
        ct.add_container_facts(d, ctx, predictor, model)
        d.has_shm = d.has_shm if _own_shm(model) else None
        return [d]
    d.issues.append(
        Issue(
            NOT_CHECKABLE,
            f"{d.label()}: {why or name + ' is not in this file or a YAML file beside it'}: the runtime's part "
            "(its command, args, env, /dev/shm, resources) could not be checked; only the predictor's was read",
            where,
            fix="lint the runtime's file together with this one (same directory), or put both in one file",
        )
    )
    ct.add_container_facts(d, ctx, predictor, model)
    if not _own_shm(model):
        d.has_shm = None  # the runtime usually mounts /dev/shm: unknown, not absent
        d.shm_size = None
    return [d]


def _name_the_runtime(d: Deployment, name: str, why: str) -> None:
    """The engine's KV004 (a NIM runtime named but not found: its image unknown) says which runtime was looked for."""
    said = why or f"{name} is not in this file, a YAML file beside it or (by name) a folder beside this one"
    tail = ": not checked"
    for i, issue in enumerate(d.issues):
        if issue.code == NOT_CHECKABLE:
            head = issue.message.removesuffix(tail)
            d.issues[i] = replace(issue, message=f"{head} ({said}){tail if head != issue.message else ''}")


def runtime(ctx: ct.ObjectContext) -> list[Deployment]:
    """A runtime on its own: a template whose model comes from each InferenceService. One that an
    InferenceService of this file runs on is read as part of it, not again."""
    if _used_here(ctx):
        return []
    found = pod_workloads(ctx)
    for d in found:
        model = str(d.model.value) if d.model is not None else ""
        if d.model is None or model.rstrip("/").startswith("/mnt/models"):
            d.issues = [i for i in d.issues if i.code != NOT_CHECKABLE]  # this says why, once
            d.issues.append(
                Issue(
                    NOT_CHECKABLE,
                    f"{d.label()}: a serving runtime template; the model (storageUri, downloaded to /mnt/models) "
                    "and the GPUs come from each InferenceService that uses it",
                    d.where,
                    kind=IssueKind.DEFINED_ELSEWHERE,
                )
            )
            d.extra["unsupported"] = stated("runtime-template", d.where)
    return found


def _used_here(ctx: ct.ObjectContext) -> bool:
    if ctx.nearby is None:
        return False
    for f in ctx.nearby.here(("InferenceService",)):
        model = f.root.at("spec", "predictor", "model")
        if not isinstance(model, Mapping):
            continue
        sub = ct.ObjectContext(
            ctx.file, ctx.lines, ctx.base_dir, f.root, "InferenceService", "", nearby=ctx.nearby
        )
        predictor = f.root.at("spec", "predictor")
        found, _ = find.runtime(sub, predictor, model)  # type: ignore[arg-type]
        if found is not None and found.root is ctx.root:
            return True
    return False
