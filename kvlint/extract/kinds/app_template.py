"""Values of bjw-s's `app-template` chart (bjw-s-labs/helm-charts charts/other/app-template, on the `common`
library chart; the layout of app-template 2.x to 4.x): every pod its controllers render, read as the
Kubernetes pod it becomes. As the library's templates render it (charts/library/common/templates @common-4.1.1):

- `controllers.<id>` is one workload (`enabled` defaults to true; `type` deployment, statefulset, daemonset,
  cronjob or job, deployment when left out; `replicas`), and `controllers.<id>.containers.<name>` its
  containers (each `enabled` by default: lib/controller/_enabled_containers.tpl).
- A container's image is `image.repository:image.tag`, both required (lib/container/_validate.tpl);
  `command` and `args` are a list or one string (fields/_command.tpl, _args.tpl); `env` is a list of
  Kubernetes env entries or a map of name to a value, or to a map holding `value`, `valueFrom` or a
  `secretKeyRef`-style source (fields/_env.tpl); `resources` and `securityContext` are copied as written
  (lib/container/_spec.tpl).
- Pod options (nodeSelector, tolerations, affinity, runtimeClassName, hostIPC, ...) come from
  `defaultPodOptions`, replaced by the controller's own `pod.<option>`, or merged into it when
  `defaultPodOptionsStrategy` is `merge` (lib/pod/_getOption.tpl).
- `persistence.<id>` items (each enabled by default) are mounted at `globalMounts[].path`, the
  `advancedMounts.<controller>.<container>[].path` entries, or `/<id>` when neither is set
  (fields/_volumeMounts.tpl); an `emptyDir` item with `medium: Memory` mounted at /dev/shm is the
  container's shared memory.
"""

from __future__ import annotations

from kvlint.deployment import Deployment
from kvlint.extract.charts import release_values as rv
from kvlint.extract.kinds import kubernetes
from kvlint.extract.pod import synthetic as syn
from kvlint.load.tree import Mapping, Node, Scalar, Sequence

SOURCE = "bjw-s-labs/helm-charts charts/library/common @common-4.1.1"
KINDS = {"deployment": "Deployment", "statefulset": "StatefulSet", "daemonset": "DaemonSet"}
POD_OPTIONS = (
    "nodeSelector",
    "tolerations",
    "affinity",
    "runtimeClassName",
    "hostIPC",
    "securityContext",
    "schedulerName",
    "priorityClassName",
)
ENV_SOURCES = ("secretKeyRef", "configMapKeyRef", "fieldRef", "resourceFieldRef")


def is_app_template(root: Mapping) -> bool:
    """Values whose `controllers` hold a container with an `image` map naming a repository."""
    controllers = root.map("controllers")
    if controllers is None:
        return False
    for _, controller in controllers.items():
        containers = controller.map("containers") if isinstance(controller, Mapping) else None
        for _, c in containers.items() if containers is not None else ():
            image = c.map("image") if isinstance(c, Mapping) else None
            if image is not None and "repository" in image:
                return True
    return False


def extract(root: Mapping, path: str, base_dir: str, lines: list[str]) -> list[Deployment]:
    controllers = root.map("controllers")
    assert controllers is not None
    out: list[Deployment] = []
    for name, controller in controllers.items():
        if not isinstance(controller, Mapping) or controller.value("enabled") is False:
            continue
        kind = KINDS.get(str(controller.value("type") or "deployment").lower())
        if kind is None:
            continue  # a cronjob or job serves no model
        obj = _workload(root, str(name), controller, kind)
        if obj is None:
            continue
        for d in kubernetes.extract(obj, path, base_dir, lines):
            # the chart's values, not an object of the file (as a values.yaml is named)
            rv.rename(d, "values", d.name)
            out.append(d)
    return out


def _workload(root: Mapping, name: str, controller: Mapping, kind: str) -> Mapping | None:
    """The object the controller renders, as a Kubernetes workload at the controller's position."""
    containers = controller.map("containers")
    if containers is None:
        return None
    mounts = _shm_volume(root, name)
    rendered = [
        _container(str(cname), c, mounts.get(str(cname)) or mounts.get(""))
        for cname, c in containers.items()
        if isinstance(c, Mapping) and c.value("enabled") is not False
    ]
    pod: dict[str, Node | dict | None] = {k: _pod_option(root, controller, k) for k in POD_OPTIONS}
    pod["containers"] = syn.sequence(containers, [c for c in rendered if c is not None])
    if any(mounts.values()):
        pod["volumes"] = syn.sequence(
            controller,
            [
                syn.mapping(controller, {"name": syn.scalar(controller, "dshm"), "emptyDir": m})
                for m in {id(v): v for v in mounts.values() if v}.values()
            ],
        )
    spec: dict[str, Node | dict | None] = {"replicas": controller.get("replicas"), "template": {"spec": pod}}
    return syn.mapping(
        controller,
        {
            "apiVersion": syn.scalar(controller, "apps/v1"),
            "kind": syn.scalar(controller, kind),
            "metadata": {"name": syn.scalar(controller, name)},
            "spec": spec,
        },
    )


def _container(name: str, c: Mapping, shm: Mapping | None) -> Mapping | None:
    image = c.map("image")
    repo = image.scalar("repository") if image is not None else None
    tag = image.scalar("tag") if image is not None else None
    if repo is None or tag is None or not repo.value or tag.value is None or tag.value == "":
        return None  # the chart refuses to render it ("No image tag specified for container")
    values: dict[str, Node | dict | None] = {
        "name": syn.scalar(c, name),
        "image": syn.scalar(repo, f"{repo.value}:{tag.text if tag.text is not None else tag.value}"),
        "command": _words(c.get("command")),
        "args": _words(c.get("args")),
        "env": _env(c.get("env")),
        "resources": c.get("resources"),
        "securityContext": c.get("securityContext"),
    }
    if shm is not None:
        mount = syn.mapping(c, {"name": syn.scalar(c, "dshm"), "mountPath": syn.scalar(c, "/dev/shm")})
        values["volumeMounts"] = syn.sequence(c, [mount])
    return syn.mapping(c, values)


def _words(node: Node | None) -> Node | None:
    """`command` / `args`: one string is a list of that one word."""
    if isinstance(node, Scalar) and isinstance(node.value, str) and node.value:
        return syn.sequence(node, [node])
    return node if isinstance(node, Sequence) else None


def _env(node: Node | None) -> Node | None:
    """The env map as the list of entries the template writes (a list is taken as written)."""
    if isinstance(node, Sequence):
        return node
    if not isinstance(node, Mapping):
        return None
    items: list[Node] = []
    for key, value in node.items():
        name = syn.scalar(node.keys[key], key)
        if isinstance(value, Mapping):
            if "value" in value:
                items.append(syn.mapping(value, {"name": name, "value": value.get("value")}))
            else:
                source = value.get("valueFrom") or syn.mapping(value, {k: value.get(k) for k in ENV_SOURCES})
                items.append(syn.mapping(value, {"name": name, "valueFrom": source}))
        elif isinstance(value, Scalar):
            text = value.text if value.text is not None and not isinstance(value.value, str) else value.value
            items.append(syn.mapping(value, {"name": name, "value": syn.scalar(value, text, value.text)}))
    return syn.sequence(node, items)


def _pod_option(root: Mapping, controller: Mapping, option: str) -> Node | None:
    """The option as lib/pod/_getOption.tpl gives it: the controller's own over defaultPodOptions (merged
    into them for a map under `defaultPodOptionsStrategy: merge`)."""
    default = root.at("defaultPodOptions", option)
    own = controller.at("pod", option)
    if own is None:
        return default
    if (
        isinstance(own, Mapping)
        and isinstance(default, Mapping)
        and root.value("defaultPodOptionsStrategy") == "merge"
    ):
        return syn.mapping(own, dict(syn.merged(default, own).items()))
    return own


def _shm_volume(root: Mapping, controller: str) -> dict[str, Mapping | None]:
    """The memory-backed emptyDir mounted at /dev/shm, by container ('' for every container of the pod)."""
    out: dict[str, Mapping | None] = {}
    persistence = root.map("persistence")
    for ident, item in persistence.items() if persistence is not None else ():
        if (
            not isinstance(item, Mapping)
            or item.value("enabled") is False
            or item.value("type") != "emptyDir"
        ):
            continue
        if str(item.value("medium") or "") != "Memory":
            continue
        size = item.get("sizeLimit")
        volume = syn.mapping(item, {"medium": item.get("medium"), "sizeLimit": size})
        glob, advanced = item.seq("globalMounts"), item.at("advancedMounts", controller)
        if glob is None and advanced is None:
            if f"/{ident}" == "/dev/shm":
                out[""] = volume
            continue
        if glob is not None and any(_path(m) == "/dev/shm" for m in glob.items):
            out[""] = volume
        for cname, mounts in advanced.items() if isinstance(advanced, Mapping) else ():
            if isinstance(mounts, Sequence) and any(_path(m) == "/dev/shm" for m in mounts.items):
                out[str(cname)] = volume
    return out


def _path(mount: Node) -> str:
    return str(mount.value("path") or "") if isinstance(mount, Mapping) else ""
