"""docker compose files whose services run vLLM, SGLang or TGI (or another engine, said as KV004).

A service maps onto a container: `entrypoint` is the command, `command` the arguments (each a list or
one shell-split string), `environment` (a mapping or `NAME=value` items) the env. GPUs come from
`deploy.resources.reservations.devices` or the service's `gpus:` (`count`, or the length of `device_ids`;
`count: all` and `gpus: all` mean every GPU of the host, which the file does not say), or `runtime: nvidia`
with NVIDIA_VISIBLE_DEVICES. `shm_size` and `ipc: host` give /dev/shm;
without either Docker mounts a 64 MiB /dev/shm (Docker run reference, --shm-size default).
Every value is interpolated first, as compose does: with the `.env` beside the file, a default where none
sets the variable, an unknown variable left a placeholder (compose_vars.py); the engine's environment is the
service's `env_file` files (read when beside the file), then its `environment` (compose-spec
05-services.md "environment": it wins over env_file).
"""

from __future__ import annotations

import re

from kvlint.bounds import show
from kvlint.codes import UNPARSED_SETTING
from kvlint.deployment import Deployment, default, stated
from kvlint.extract.charts import release_values as rv
from kvlint.extract.kinds import compose_vars as cv
from kvlint.extract.pod import container as ct
from kvlint.extract.pod import synthetic as syn
from kvlint.extract.pod.argv import EnvVar
from kvlint.findings import Issue, Severity
from kvlint.load.nearby import Nearby
from kvlint.load.tree import Mapping, Node, Scalar, Sequence
from kvlint.record import record, replace

DOCKER_SHM_DEFAULT = "64Mi"
_DIGITS = re.compile(r"[0-9]+")
_PLACEHOLDER = re.compile(r"\$\(([_a-zA-Z][_a-zA-Z0-9]*)\)")


def is_compose(root: Mapping) -> bool:
    services = root.map("services")
    return (
        services is not None
        and "apiVersion" not in root
        and bool(services.values)
        and all(isinstance(v, Mapping) for _, v in services.items())
        and any(("image" in v or "build" in v) for _, v in services.items() if isinstance(v, Mapping))
    )


def extract(
    root: Mapping, path: str, base_dir: str, lines: list[str], nearby: Nearby | None = None
) -> list[Deployment]:
    services = root.map("services")
    if services is None:
        return []
    project = _Project(nearby)
    out: list[Deployment] = []
    for name, svc in services.items():
        if isinstance(svc, Mapping):
            d = _service(root, name, services.keys[name], svc, path, base_dir, lines, project)
            if d is not None:
                out.append(d)
    return out


@record
class _Project:
    """The variables of the compose project as kvlint reads them: the `.env` beside the file, read on the
    first variable a value uses (a file that uses none reads nothing beside it)."""

    nearby: Nearby | None
    env: cv.EnvFile | None = None
    unread: str = ""  # why the .env was not read ("absent", ...; "" when read)

    def lookup(self, name: str) -> str | None:
        if self.env is None:
            self.env, self.unread = cv.EnvFile(), "not looked for"
            if self.nearby is not None:
                data, _shown, self.unread = self.nearby.file_beside(".env")
                if data is not None:
                    self.env = cv.parse_env_file(data.decode("utf-8", "replace"))
        return self.env.values.get(name)


@record
class _Filled:
    svc: Mapping  # the service with every value interpolated
    unknown: dict[str, Node]  # variables left placeholders, each at its first place
    required: set[str]


def _fill(node: Node, project: _Project, into: _Filled | None) -> Node:
    """A copy of `node` with every string value interpolated, positions kept (keys are not: compose-spec)."""
    return syn.rebuilt(node, lambda scalar: _filled(scalar, project, into))


def _filled(node: Scalar, project: _Project, into: _Filled | None) -> Scalar:
    if not isinstance(node.value, str) or "$" not in node.value:
        return node
    done = cv.interpolate(node.value, project.lookup)
    if into is not None:
        for name in done.unknown:
            into.unknown.setdefault(name, node)
        into.required.update(done.required)
    if done.text == node.value:
        return node
    value: object = int(done.text) if not node.quoted and _DIGITS.fullmatch(done.text) else done.text
    out = Scalar(value, done.text, node.tag, node.quoted, (node.line, node.col, node.end_line, node.end_col))
    out.file = node.file
    return out


def _env(svc: Mapping, path: str, project: _Project, notes: list[str]) -> dict[str, EnvVar]:
    """The container's environment: each `env_file` (in order), then `environment`, which wins."""
    env: dict[str, EnvVar] = {}
    for entry in _env_files(svc):
        _env_file(entry, path, project, env, notes)
    box = svc.get("environment")
    if isinstance(box, Mapping):
        for key, node in box.items():
            if isinstance(node, Scalar):  # `NAME:` with no value: the shell's (unknown)
                text = (
                    None
                    if node.value is None
                    else str(node.text if isinstance(node.value, bool) else node.value)
                )
                env[key] = EnvVar(None if text is None or "$(" in text else text, node.where(path))
    elif isinstance(box, Sequence):
        for item in box.items:
            if isinstance(item, Scalar) and isinstance(item.value, str):
                key, eq, value = item.value.partition("=")
                env[key] = EnvVar(value if eq and "$(" not in value else None, item.where(path))
    return env


def _env_files(svc: Mapping) -> list[tuple[str, bool, Node]]:
    """(path, required, node) of each `env_file` entry: a string, or a list of strings and
    {path, required} mappings (compose-spec 05-services.md "env_file"; `required` defaults to true)."""
    box = svc.get("env_file")
    items = [box] if isinstance(box, Scalar) else box.items if isinstance(box, Sequence) else []
    out: list[tuple[str, bool, Node]] = []
    for item in items[:16]:
        if isinstance(item, Scalar) and item.value is not None:
            out.append((str(item.value), True, item))
        elif isinstance(item, Mapping) and isinstance(item.value("path"), str):
            out.append((str(item.value("path")), item.value("required") is not False, item))
    return out


def _env_file(
    entry: tuple[str, bool, Node], path: str, project: _Project, env: dict[str, EnvVar], notes: list[str]
) -> None:
    rel, required, node = entry
    if project.nearby is None:
        return
    data, shown, why = project.nearby.file_beside(rel)
    if data is None:
        if why != "absent" or required:
            notes.append(f"env_file {shown} not read ({why}): the variables it sets are unknown")
        return
    read = cv.parse_env_file(data.decode("utf-8", "replace"), project.lookup)
    where = node.where(path)
    for key, value in read.values.items():
        env[key] = EnvVar(value, where)
    for key in read.unknown:
        env[key] = EnvVar(None, where)


def _device_requests(svc: Mapping) -> list[Node]:
    """GPU device requests: `deploy.resources.reservations.devices` that ask for the gpu capability (or name
    none), then the service's own `gpus:` (compose-spec spec.md "gpus": `all`, or a list of device requests
    with `count` / `device_ids`, the gpu capability implied)."""
    out: list[Node] = []
    devices = svc.at("deploy", "resources", "reservations", "devices")
    for dev in devices.items if isinstance(devices, Sequence) else ():
        if not isinstance(dev, Mapping):
            continue
        caps = dev.get("capabilities")
        cap_words = (
            [str(c.value) for c in caps.items if isinstance(c, Scalar)] if isinstance(caps, Sequence) else []
        )
        if not cap_words or "gpu" in cap_words:
            out.append(dev)
    gpus = svc.get("gpus")
    if isinstance(gpus, Scalar) and gpus.value is not None:
        out.append(gpus)
    elif isinstance(gpus, Sequence):
        out.extend(g for g in gpus.items if isinstance(g, Mapping))
    return out


def _gpus(svc: Mapping, path: str) -> tuple[Scalar | None, Issue | None]:
    """The GPU count a service reserves, as a scalar located where the file says it."""
    for dev in _device_requests(svc):
        if isinstance(dev, Scalar):  # `gpus: all`
            if str(dev.value).lower() == "all":
                return None, _all_gpus(dev, "gpus: all", path)
            continue
        assert isinstance(dev, Mapping)
        ids = dev.seq("device_ids")
        if ids is not None:
            return syn.scalar(ids, len(ids.items)), None
        count = dev.scalar("count")
        if count is not None and isinstance(count.value, int):
            return count, None
        if count is not None and str(count.value).lower() == "all":
            return None, _all_gpus(count, "count: all", path)
        unset = tuple(_PLACEHOLDER.findall(str(count.value))) if count is not None else ()
        if unset:  # `count: ${GPUS}` no file sets: compose's placeholder (_placeholders says it)
            return None, Issue(UNPARSED_SETTING, "GPU count unknown", count.where(path), unset=unset)  # type: ignore[union-attr]
        # neither count nor device_ids: compose reads the request as `count: all` (compose-spec/compose-go@140512fb
        # transform/devices.go deviceRequestDefaults; docs.docker.com/compose/gpu-support: "If count is set to
        # all or not specified, all GPUs available on the host are used by default")
        return None, _all_gpus(dev, "a GPU device request with no count or device_ids", path)
    runtime = svc.scalar("runtime")
    if runtime is not None and runtime.value == "nvidia":
        return _nvidia_runtime(svc, runtime, path)
    return None, None


def _visible(svc: Mapping, count: Scalar | None, problem: Issue | None) -> tuple[Scalar | None, Issue | None]:
    """Every GPU of the host reserved (`count: all`, `gpus: all`, NVIDIA_VISIBLE_DEVICES all: the `problem`
    that says the file gives no number) with CUDA_VISIBLE_DEVICES in the service's environment listing devices
    (`0`, `0,1`, UUIDs): CUDA shows the engine only those (CUDA C++ Programming Guide, "CUDA Environment
    Variables": CUDA_VISIBLE_DEVICES), so their number is the GPUs it has, however many the host holds."""
    if count is not None or problem is None or problem.unset:
        return count, problem
    node = _env_node(svc, "CUDA_VISIBLE_DEVICES")
    text = str(node.value).strip() if node is not None and node.value is not None else ""
    parts = [p.strip() for p in text.split(",")]
    if node is None or not text or "$" in text or not all(parts) or any(p.startswith("-") for p in parts):
        return count, problem
    if any(p.lower() in ("all", "none", "void") for p in parts):
        return count, problem
    return syn.scalar(node, len(parts)), None


def _nvidia_runtime(svc: Mapping, runtime: Scalar, path: str) -> tuple[Scalar | None, Issue | None]:
    """`runtime: nvidia` (nvidia-docker 2) with no device request: NVIDIA_VISIBLE_DEVICES picks the GPUs
    (NVIDIA Container Toolkit docs, docker-specialized "GPU Enumeration": a list of indexes or UUIDs, `all`,
    `none`; `void`, empty or unset behave as runc, but the CUDA base images set it to `all` in the image)."""
    node = _env_node(svc, "NVIDIA_VISIBLE_DEVICES")
    text = str(node.value).strip() if node is not None and node.value is not None else ""
    if text.lower() in ("none", "void") or node is not None and not text:
        return None, None
    if node is None or text.lower() == "all" or "$" in text:
        if node is None:  # what the image sets is not the author's writing: an info
            said = "runtime: nvidia with NVIDIA_VISIBLE_DEVICES left to the image"
            return None, replace(_all_gpus(runtime, said, path), severity=Severity.INFO)
        return None, _all_gpus(node, "runtime: nvidia with NVIDIA_VISIBLE_DEVICES all", path)
    return syn.scalar(node, len([p for p in text.split(",") if p.strip()])), None


def _env_node(svc: Mapping, name: str) -> Scalar | None:
    """The node holding one environment variable's value (`NAME: value`, or the `NAME=value` item)."""
    box = svc.get("environment")
    if isinstance(box, Mapping):
        node = box.get(name)
        return node if isinstance(node, Scalar) else None
    for item in box.items if isinstance(box, Sequence) else ():
        if isinstance(item, Scalar) and isinstance(item.value, str) and item.value.startswith(name + "="):
            return syn.scalar(item, item.value.partition("=")[2])
    return None


def _all_gpus(node: Node, said: str, path: str) -> Issue:
    return Issue(
        UNPARSED_SETTING,
        f"{said} reserves every GPU of the host; the file does not say how many that is",
        node.where(path),
        fix="write the count (count: N) or the ids (device_ids: [...])",
    )


def _service(
    root: Mapping,
    name: str,
    key: Scalar,
    raw: Mapping,
    path: str,
    base_dir: str,
    lines: list[str],
    project: _Project,
) -> Deployment | None:
    filled = _Filled(raw, {}, set())
    svc = _fill(raw, project, filled)
    assert isinstance(svc, Mapping)
    image = svc.get("image")
    count, problem = _visible(svc, *_gpus(svc, path))
    limits = {"nvidia.com/gpu": count} if count is not None else {}
    mem = svc.at("deploy", "resources", "limits", "memory") or svc.get("mem_limit")
    if isinstance(mem, Scalar):
        limits["memory"] = mem
    container = syn.mapping(
        svc,
        {
            "image": image,
            "command": svc.get("entrypoint"),
            "args": svc.get("command"),
            "resources": {"limits": limits} if limits else None,
        },
    )
    ctx = ct.ObjectContext(path, lines, base_dir, root, "compose", name, {})
    if (
        container.get("command") is None
        and container.get("args") is None
        and (count is None and problem is None or svc.value("tty") is True or svc.value("stdin_open") is True)
    ):
        # the image's own program on no reserved GPU, or an interactive shell: no server to read (GPUs reserved
        # in a count kvlint cannot read, `count: all`, are reserved: the image's server is read)
        return None
    notes: list[str] = []
    env = _env(svc, path, project, notes)
    for unknown in filled.unknown:  # compose's variable, not the container's: never read from its env
        env[unknown] = EnvVar(None, filled.unknown[unknown].where(path))
    d = ct.build(ctx, syn.mapping(svc, {}), container, env)
    if d is None:
        if count is None and problem is None:
            return None
        from kvlint.extract.pod.argv import container_commands

        if not container_commands(container, path, lines, {}) and (
            count is None or not isinstance(image, Scalar)
        ):
            return None  # (an image kvlint does not know, on all the host's GPUs, running its own program)
        d = Deployment(path, key.where(path), "compose", name, base_dir)
        where = (image or svc).where(path)
        d.engine = stated("other", where, "a GPU service whose program kvlint does not know")
        ct.mark_unsupported(d, "other", where)
    d.where = key.where(path)
    if problem is not None:
        d.issues.append(problem)
        d.unreadable.append("gpus_per_pod")
    _placeholders(d, filled, project, notes, path)
    _shm(d, svc, root.map("services"), project, path)
    ct.finish(d)
    return d


def _placeholders(d: Deployment, filled: _Filled, project: _Project, notes: list[str], path: str) -> None:
    """Compose's variables no file sets: the settings that use them are not checked, and one info says
    which (a KV005 "the container does not set it" would blame the container for compose's job)."""
    dropped = [i for i in d.issues if i.unset and set(i.unset) <= set(filled.unknown)]
    d.issues = [i for i in d.issues if i not in dropped]
    needed = {n for i in dropped for n in i.unset}
    names = [n for n in filled.unknown if n in needed]  # those a setting kvlint reads uses, in file order
    if not names and not notes:
        return
    where = dropped[0].where if dropped else d.where
    parts = []
    if names:
        said = ", ".join(f"${{{show(n, 40)}}}" for n in names[:4]) + (" …" if len(names) > 4 else "")
        them = "it" if len(names) == 1 else "them"
        env_file = (
            f"the .env beside the file does not set {them}"
            if not project.unread
            else "no .env beside the file"
            if project.unread == "absent"
            else f".env not read: {project.unread}"
        )
        required = "; compose refuses to start without them" if needed & filled.required else ""
        parts.append(
            f"{said} {'has' if len(names) == 1 else 'have'} no value kvlint can read ({env_file}, no default "
            f"in the file{required}): docker compose fills {them} from the shell's environment, which kvlint "
            f"does not read; {'a placeholder' if len(names) == 1 else 'placeholders'}, the settings that use "
            f"{them} are not checked"
        )
    parts.extend(notes)
    d.issues.append(rv.elsewhere(f"{d.label()}: " + "; ".join(parts), where))


def _shm(d: Deployment, svc: Mapping, services: Mapping | None, project: _Project, path: str) -> None:
    """/dev/shm as Docker mounts it (docker/docs engine/containers/run.md "IPC settings (--ipc)"): `host` is
    the host's; `service:NAME` / `container:NAME` join another container's IPC namespace and its /dev/shm
    (a service of this file is read for it); `shareable`, `private` and the default are the container's own,
    `shm_size` or 64 MiB."""
    ipc = svc.scalar("ipc")
    mode = str(ipc.value) if ipc is not None and ipc.value is not None else ""
    d.has_shm = True
    if mode == "host":
        d.shm_size = stated("", ipc.where(path), "ipc: host shares the host's /dev/shm")  # type: ignore[union-attr]
        return
    other = (
        services.get(mode.partition(":")[2]) if mode.startswith("service:") and services is not None else None
    )
    if isinstance(other, Mapping) and other is not svc:
        owner = _fill(other, project, None)
        assert isinstance(owner, Mapping)
        if str(owner.value("ipc") or "") == "host":
            d.shm_size = stated("", ipc.where(path), f"ipc: {mode}, which shares the host's /dev/shm")  # type: ignore[union-attr]
            return
        svc = owner  # its shm_size, or Docker's default
    elif mode.startswith(("service:", "container:")):
        d.has_shm = None  # another container's /dev/shm, which the file does not describe: not judged
        return
    size = svc.scalar("shm_size")
    if size is not None and size.value is not None:
        d.shm_size = stated(str(size.value), size.where(path), "shm_size")
        d.memory_quantities.append(("shm_size", str(size.value), size.where(path)))
    else:  # Docker's own 64 MiB /dev/shm: KV207 says what that means for a multi-GPU engine
        d.has_shm = False
        d.shm_size = default(
            DOCKER_SHM_DEFAULT, "Docker's default /dev/shm of 64 MiB (no shm_size, no ipc: host)"
        )
