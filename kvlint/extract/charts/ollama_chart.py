"""The ollama Helm chart's values (otwld/ollama-helm): one Ollama server that pulls the models it lists at start.

Source: otwld/ollama-helm@eadf03e (chart 1.77.0) templates/deployment.yaml and values.yaml, read in place, and
the chart before 0.68.0 (tag ollama-0.67.0, templates/_helpers.tpl `ollama.modelList`):
- the models: `ollama.models.pull` and `ollama.models.run` (from 0.68.0; `run` also loads them at start),
  `ollama.models` as a list and `ollama.defaultModel` before it. The postStart hook runs `ollama pull <model>`
  for each, a name without a tag being `<name>:latest` (deployment.yaml `printf "%s:latest"`). Ollama serves
  them from one server and loads each when a request names it, so kvlint plans each model as that server
  holding it. `ollama.models.create` entries build a model at start from a Modelfile written in the values
  (`template`): its `FROM` model with its `PARAMETER num_ctx`, which Ollama applies over the default context
  (ollama/ollama@v0.15.5 server/routes.go:110-125 modelOptions: the defaults, then the model's Modelfile
  options, then a request's); one read from a ConfigMap (`configMapRef`) is said and not planned;
- the GPU: with `ollama.gpu.enabled`, limits `nvidia.com/gpu` (`ollama.gpu.nvidiaResource`, default
  nvidia.com/gpu) or `amd.com/gpu` for `type: amd`, `ollama.gpu.number | default 1`, merged over `resources`;
  `mig.enabled` requests MIG slices instead and `draEnabled` a DRA claim (neither read: said). Without it the
  pod requests no GPU (Ollama then runs on the CPU);
- the image: `image.repository:image.tag`, the tag defaulting to the chart's appVersion (`-rocm` for AMD),
  which a values file does not name: the release is then unknown;
- the container's env: `OLLAMA_HOST` and `extraEnv` as written (OLLAMA_NUM_PARALLEL, OLLAMA_CONTEXT_LENGTH,
  OLLAMA_KV_CACHE_TYPE, OLLAMA_FLASH_ATTENTION are Ollama's); `nodeSelector` and `affinity` as written.
"""

from __future__ import annotations

import re

from kvlint.codes import NOT_CHECKABLE
from kvlint.deployment import Deployment, default, inferred, stated
from kvlint.extract.pod import container as ct
from kvlint.extract.pod import pods
from kvlint.extract.pod.argv import EnvVar, env_entries
from kvlint.extract.pod.engine_args import find_launch
from kvlint.findings import Issue, Location
from kvlint.load.tree import Mapping, Node, Scalar, Sequence

SOURCE = "otwld/ollama-helm@eadf03e templates/deployment.yaml, values.yaml"
REPOSITORY = "ollama/ollama"  # values.yaml image.repository
NVIDIA = "nvidia.com/gpu"  # values.yaml ollama.gpu.nvidiaResource
DEFAULT_GPUS = 1  # deployment.yaml `.Values.ollama.gpu.number | default 1`


def is_ollama_chart(root: Mapping) -> bool:
    """Values of the ollama chart that name models: `ollama.models` (a list, or a map with pull/run)."""
    box = root.map("ollama")
    if box is None or not (box.map("gpu") is not None or "models" in box or "port" in box):
        return False
    models = box.get("models")
    create = models.seq("create") if isinstance(models, Mapping) else None
    built = any(isinstance(e, Mapping) and "template" in e for e in (create.items if create else ()))
    return bool(_models(box)) or built


def _models(box: Mapping) -> list[Scalar]:
    """The models the postStart hook pulls, in its order, each once (`uniq`)."""
    node = box.get("models")
    lists: list[Sequence] = []
    if isinstance(node, Sequence):
        lists.append(node)
    elif isinstance(node, Mapping):
        lists.extend(s for s in (node.seq("pull"), node.seq("run")) if s is not None)
    out: list[Scalar] = []
    seen: set[str] = set()
    singles = [box.scalar("defaultModel")] if isinstance(node, Sequence) or node is None else []
    items = [i for s in lists for i in s.items] + [s for s in singles if s is not None]
    for item in items:
        if not isinstance(item, Scalar) or item.value in (None, ""):
            continue
        name = _tagged(str(item.value).strip())
        if name not in seen:
            seen.add(name)
            out.append(item)
    return out


def _tagged(name: str) -> str:
    """`llama2` -> `llama2:latest`, as the chart's postStart hook names it."""
    return name if ":" in name.rsplit("/", 1)[-1] else f"{name}:latest"


def ollama_values(ctx: ct.ObjectContext, root: Mapping) -> list[Deployment]:
    box = root.map("ollama")
    assert box is not None
    out: list[Deployment] = []
    for i, node in enumerate(_models(box)):
        out.append(_model(ctx, root, box, node, i == 0))
    for entry, base, num_ctx in _created(ctx, box):
        d = _model(ctx, root, box, base, not out, name=entry)
        if num_ctx is not None:
            d.max_context = stated(num_ctx[0], num_ctx[1], "PARAMETER num_ctx in the Modelfile")
        out.append(d)
    return out


_INSTRUCTION = re.compile(r"^\s*(FROM|PARAMETER\s+num_ctx)\s+(\S+)\s*$", re.IGNORECASE)


def _created(ctx: ct.ObjectContext, box: Mapping) -> list[tuple[str, Scalar, tuple[int, Location] | None]]:
    """`ollama.models.create` entries with a `template`: (name, the FROM line as the model, num_ctx)."""
    models = box.get("models")
    create = models.seq("create") if isinstance(models, Mapping) else None
    out: list[tuple[str, Scalar, tuple[int, Location] | None]] = []
    for entry in create.items if create is not None else ():
        name = entry.scalar("name") if isinstance(entry, Mapping) else None
        template = entry.scalar("template") if isinstance(entry, Mapping) else None
        if name is None or not name.value or template is None or not isinstance(template.value, str):
            continue
        base, num_ctx = _modelfile(ctx, template)
        if base is not None:
            out.append((str(name.value), base, num_ctx))
    return out


def _modelfile(ctx: ct.ObjectContext, template: Scalar) -> tuple[Scalar | None, tuple[int, Location] | None]:
    """The FROM and PARAMETER num_ctx lines of a Modelfile written as a block scalar, located in the file."""
    base: Scalar | None = None
    num_ctx: tuple[int, Location] | None = None
    first = template.line + 1 if template.end_line > template.line else template.line
    for i in range(first, min(template.end_line + 1, len(ctx.lines))):
        m = _INSTRUCTION.match(ctx.lines[i])
        if m is None:
            continue
        at = Location(ctx.file, i + 1, m.start(2) + 1, i + 1, m.end(2) + 1)
        if m.group(1).upper() == "FROM" and base is None:
            base = Scalar(m.group(2), m.group(2), "", False, (i, m.start(2), i, m.end(2)))
        elif m.group(1).upper() != "FROM" and m.group(2).isdigit():
            num_ctx = (int(m.group(2)), at)
    return base, num_ctx


def _model(
    ctx: ct.ObjectContext, root: Mapping, box: Mapping, node: Scalar, first: bool, name: str = ""
) -> Deployment:
    path = ctx.file
    model = _tagged(str(node.value).strip())
    name = name or model
    where = node.where(path)
    d = Deployment(path, where, "values", name, ctx.base_dir)
    image = _image(d, root, box, path)
    launch = find_launch([], image)
    env = _env(root, path)
    if launch is not None:
        d.engine = stated(launch.engine, where, "ollama Helm chart values")
        version = ct.image_version(image, launch.engine) if d.image and d.image.origin == "stated" else None
        if version and d.image is not None:
            d.engine_version = inferred(version, f"from the image tag {image}", d.image.where)
        d.model = stated(model, where, "an Ollama library tag, pulled at start (not a Hugging Face id)")
        ct.read_engine(d, launch, env)
    _gpus(d, root, box, path)
    ct.apply_labels(d, pods.node_labels(root, path))
    if first:
        d.issues.extend(_not_read(box, path))
    return d


def _image(d: Deployment, root: Mapping, box: Mapping, path: str) -> str:
    repo, tag = root.at("image", "repository"), root.at("image", "tag")
    repo_text = str(repo.value).strip() if isinstance(repo, Scalar) and repo.value else REPOSITORY
    tag_text = str(tag.value).strip() if isinstance(tag, Scalar) and tag.value not in (None, "") else ""
    if tag_text and isinstance(tag, Scalar):
        shown = f"{repo_text}:{tag_text}"
        d.image = stated(shown, tag.where(path))
        return shown
    where = (repo if isinstance(repo, Scalar) else box).where(path)
    d.image = default(
        repo_text,
        f"image.tag defaults to the chart's appVersion, which these values do not name ({SOURCE})",
        where,
    )
    return repo_text


def _env(root: Mapping, path: str) -> dict[str, EnvVar]:
    """`extraEnv` as the container's env (deployment.yaml `toYaml .Values.extraEnv`)."""
    return env_entries(root.seq("extraEnv"), path)


def _gpus(d: Deployment, root: Mapping, box: Mapping, path: str) -> None:
    """`resources` as written, with the chart's GPU limit merged under it: a limit the values write for the
    same resource wins (deployment.yaml `merge $limits $gpuLimit`, the first dict taking precedence)."""
    written = {r.name: r for r in pods.device_resources(root, path) if pods.is_gpu(r.name)}
    gpu = box.map("gpu")
    enabled = gpu.scalar("enabled") if gpu is not None else None
    on = gpu is not None and isinstance(enabled, Scalar) and enabled.value is True
    if on and gpu is not None and _claim(gpu) is not None:
        d.unreadable.append("gpus_per_pod")  # said once by _not_read
        return
    resource = _resource(gpu) if on and gpu is not None else None
    res = written.get(resource) if resource else next(iter(written.values()), None)
    if res is not None and res.count is not None:
        d.gpus_per_pod, d.gpu_resource = stated(res.count, res.where, res.name), res.name
        return
    if resource is None or gpu is None or enabled is None:
        return  # no GPU requested: Ollama runs on the CPU (container.finish says so)
    number = gpu.scalar("number")
    if isinstance(number, Scalar) and isinstance(number.value, int) and number.value > 0:
        d.gpus_per_pod, d.gpu_resource = stated(number.value, number.where(path), resource), resource
    else:
        d.gpus_per_pod = default(
            DEFAULT_GPUS, f"{resource} `ollama.gpu.number | default 1` ({SOURCE})", enabled.where(path)
        )
        d.gpu_resource = resource


def _resource(gpu: Mapping) -> str:
    return "amd.com/gpu" if gpu.value("type") == "amd" else str(gpu.value("nvidiaResource") or NVIDIA)


def _claim(gpu: Mapping) -> tuple[str, str, Node] | None:
    """A DRA claim, MIG slices or another NVIDIA resource instead of whole GPUs, in the order deployment.yaml
    tries them (draEnabled, then mig.enabled, then nvidiaResource): (the values key, what the pod requests, the
    node that says so), or None for whole GPUs."""
    dra = gpu.scalar("draEnabled")
    if dra is not None and dra.value is True:
        return "ollama.gpu.draEnabled", "a DRA ResourceClaim", dra
    mig = gpu.map("mig")
    if mig is not None and mig.value("enabled") is True:
        return "ollama.gpu.mig", "MIG slices", mig
    if _resource(gpu) not in (NVIDIA, "amd.com/gpu"):
        return "ollama.gpu.nvidiaResource", _resource(gpu), gpu.get("nvidiaResource") or gpu
    return None


def _not_read(box: Mapping, path: str) -> list[Issue]:
    """What the values set that kvlint does not plan, said once at the first model."""
    out: list[Issue] = []
    models = box.get("models")
    create = models.seq("create") if isinstance(models, Mapping) else None
    unread = [
        e
        for e in (create.items if create is not None else ())
        if isinstance(e, Mapping) and "template" not in e
    ]
    if unread:
        out.append(
            Issue(
                NOT_CHECKABLE,
                "ollama.models.create: a model built at start from a Modelfile in a ConfigMap (configMapRef) is "
                f"not read from these values ({SOURCE}): not checked",
                unread[0].where(path),
            )
        )
    gpu = box.map("gpu")
    claim = _claim(gpu) if gpu is not None and gpu.value("enabled") is True else None
    if claim is not None:
        key, what, node = claim
        out.append(_unread_gpu(key, what, node.where(path)))
    return out


def _unread_gpu(key: str, what: str, where: Location) -> Issue:
    return Issue(
        NOT_CHECKABLE,
        f"{key}: the pod requests {what} instead of whole GPUs, which kvlint does not read from these values "
        f"({SOURCE}): the GPU is not checked",
        where,
    )
