"""docker compose files whose services run vLLM, SGLang or TGI (or another engine, said as KV004).

A service maps onto a container: `entrypoint` is the command, `command` the arguments (each a list or
one shell-split string), `environment` (a mapping or `NAME=value` items) the env. GPUs come from
`deploy.resources.reservations.devices` or the service's `gpus:` (`count`, or the length of `device_ids`;
`count: all` and `gpus: all` mean every GPU of the host, which the file does not say), or `runtime: nvidia`
with NVIDIA_VISIBLE_DEVICES. `shm_size` and `ipc: host` give /dev/shm;
without either Docker mounts a 64 MiB /dev/shm (Docker run reference, --shm-size default).
`${VAR}` in the file is filled by compose from the shell or a .env file kvlint does not read;
`${VAR:-default}` takes its default.
"""

from __future__ import annotations

import re

from kvlint.codes import UNPARSED_SETTING
from kvlint.deployment import Deployment, default, stated
from kvlint.extract.pod import container as ct
from kvlint.extract.pod import synthetic as syn
from kvlint.extract.pod.argv import EnvVar
from kvlint.findings import Issue, Severity
from kvlint.load.tree import Mapping, Node, Scalar, Sequence
from kvlint.record import replace

DOCKER_SHM_DEFAULT = "64Mi"
_DEFAULTED = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*):?-([^}]*)\}")
_PLAIN = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def is_compose(root: Mapping) -> bool:
    services = root.map("services")
    return (
        services is not None
        and "apiVersion" not in root
        and bool(services.values)
        and all(isinstance(v, Mapping) for _, v in services.items())
        and any(("image" in v or "build" in v) for _, v in services.items() if isinstance(v, Mapping))
    )


def extract(root: Mapping, path: str, base_dir: str, lines: list[str]) -> list[Deployment]:
    services = root.map("services")
    out: list[Deployment] = []
    for name, svc in services.items() if services is not None else ():
        if isinstance(svc, Mapping):
            d = _service(root, name, services.keys[name], svc, path, base_dir, lines)  # type: ignore[union-attr]
            if d is not None:
                out.append(d)
    return out


def _interpolate(text: str) -> str:
    """Compose's own interpolation: `${VAR:-default}` is the default; `${VAR}` comes from the shell or
    a .env file kvlint does not read, kept as `$(VAR)` so the argument reader reports it unset."""
    return _PLAIN.sub(lambda m: f"$({m.group(1)})", _DEFAULTED.sub(lambda m: m.group(2), text))


def _defaults(node: Node | None) -> Node | None:
    if isinstance(node, Scalar) and isinstance(node.value, str) and "${" in node.value:
        text = _interpolate(node.value)
        return Scalar(text, text, node.tag, node.quoted, (node.line, node.col, node.end_line, node.end_col))
    if isinstance(node, Sequence):
        return syn.sequence(node, [_defaults(n) or n for n in node.items])
    return node


def _env(svc: Mapping, path: str) -> dict[str, EnvVar]:
    env: dict[str, EnvVar] = {}
    box = svc.get("environment")
    if isinstance(box, Mapping):
        for key, node in box.items():
            if isinstance(node, Scalar):
                text = None if node.value is None else _interpolate(str(node.value))
                env[key] = EnvVar(None if text is None or "$(" in text else text, node.where(path))
    elif isinstance(box, Sequence):
        for item in box.items:
            if isinstance(item, Scalar) and isinstance(item.value, str) and "=" in item.value:
                key, _, value = item.value.partition("=")
                text = _interpolate(value)
                env[key] = EnvVar(None if "$(" in text else text, item.where(path))
    return env


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
        return syn.scalar(dev, 1), None  # compose: a GPU device request without count or ids is one GPU
    runtime = svc.scalar("runtime")
    if runtime is not None and runtime.value == "nvidia":
        return _nvidia_runtime(svc, runtime, path)
    return None, None


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


def _all_gpus(node: Scalar, said: str, path: str) -> Issue:
    return Issue(
        UNPARSED_SETTING,
        f"{said} reserves every GPU of the host; the file does not say how many that is",
        node.where(path),
        fix="write the count (count: N) or the ids (device_ids: [...])",
    )


def _service(
    root: Mapping, name: str, key: Scalar, svc: Mapping, path: str, base_dir: str, lines: list[str]
) -> Deployment | None:
    image = _defaults(svc.get("image"))
    count, problem = _gpus(svc, path)
    limits = {"nvidia.com/gpu": count} if count is not None else {}
    mem = svc.at("deploy", "resources", "limits", "memory") or svc.get("mem_limit")
    if isinstance(mem, Scalar):
        limits["memory"] = mem
    container = syn.mapping(
        svc,
        {
            "image": image,
            "command": _defaults(svc.get("entrypoint")),
            "args": _defaults(svc.get("command")),
            "resources": {"limits": limits} if limits else None,
        },
    )
    ctx = ct.ObjectContext(path, lines, base_dir, root, "compose", name, {})
    if (
        container.get("command") is None
        and container.get("args") is None
        and (count is None or svc.value("tty") is True or svc.value("stdin_open") is True)
    ):
        return None  # the image's own program on no reserved GPU, or an interactive shell: no server to read
    d = ct.build(ctx, syn.mapping(svc, {}), container, _env(svc, path))
    if d is None:
        if count is None and problem is None:
            return None
        from kvlint.extract.pod.argv import container_commands

        if not container_commands(container, path, lines, {}) and not isinstance(image, Scalar):
            return None
        d = Deployment(path, key.where(path), "compose", name, base_dir)
        where = (image or svc).where(path)
        d.engine = stated("other", where, "a GPU service whose program kvlint does not know")
        ct.mark_unsupported(d, "other", where)
    d.where = key.where(path)
    if problem is not None:
        d.issues.append(problem)
        d.unreadable.append("gpus_per_pod")
    _shm(d, svc, path)
    ct.finish(d)
    return d


def _shm(d: Deployment, svc: Mapping, path: str) -> None:
    size = svc.scalar("shm_size")
    ipc = svc.scalar("ipc")
    d.has_shm = True
    if ipc is not None and ipc.value == "host":
        d.shm_size = stated("", ipc.where(path), "ipc: host shares the host's /dev/shm")
    elif size is not None and size.value is not None:
        d.shm_size = stated(str(size.value), size.where(path), "shm_size")
        d.memory_quantities.append(("shm_size", str(size.value), size.where(path)))
    else:  # Docker's own 64 MiB /dev/shm: KV207 says what that means for a multi-GPU engine
        d.has_shm = False
        d.shm_size = default(
            DOCKER_SHM_DEFAULT, "Docker's default /dev/shm of 64 MiB (no shm_size, no ipc: host)"
        )
