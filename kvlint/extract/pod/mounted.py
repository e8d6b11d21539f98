"""The text of a file a container reads, when a ConfigMap this file (or one beside it) defines is mounted
there: an engine's options file (`trtllm-serve --extra_llm_api_options /etc/x/config.yaml`).

Kubernetes projects a ConfigMap volume's keys as files under the mount path (`items` renames them; a
`subPath` mount is one key at the mount path itself), kubernetes.io/docs/concepts/storage/volumes#configmap.
"""

from __future__ import annotations

import posixpath

from kvlint.findings import Location
from kvlint.load.nearby import Nearby
from kvlint.load.tree import Mapping, Scalar
from kvlint.record import record


@record(frozen=True)
class MountedFile:
    text: str | None  # None: the volume is mounted there but its ConfigMap is not in reach (`why` says so)
    where: Location | None  # the ConfigMap key that holds the text
    why: str = ""


def _key(mount: Mapping, volume: Mapping, path: str) -> str | None:
    """The ConfigMap key a path under this mount reads, or None when the path is not under it."""
    at = posixpath.normpath(str(mount.value("mountPath") or "/"))
    target = posixpath.normpath(path)
    sub = mount.value("subPath")
    if sub:
        return str(sub) if target == at else None
    if not target.startswith(at.rstrip("/") + "/"):
        return None
    rel = target[len(at.rstrip("/")) + 1 :]
    items = volume.at("configMap", "items")
    for item in getattr(items, "items", ()) or ():
        if isinstance(item, Mapping) and posixpath.normpath(str(item.value("path") or "")) == rel:
            return str(item.value("key") or "")
    return rel


def text_at(nearby: Nearby | None, pod: Mapping, container: Mapping, path: str) -> MountedFile | None:
    """The ConfigMap text at `path` in this container; None when no ConfigMap volume is mounted there."""
    volumes = {v.value("name"): v for v in pod.seq("volumes") or () if isinstance(v, Mapping)}
    for mount in container.seq("volumeMounts") or ():
        volume = volumes.get(mount.value("name")) if isinstance(mount, Mapping) else None
        name = volume.at("configMap", "name") if isinstance(volume, Mapping) else None
        if not isinstance(name, Scalar) or not name.value:
            continue
        key = _key(mount, volume, path)  # type: ignore[arg-type]
        if key is None:
            continue
        found = (
            next(iter(nearby.named(("ConfigMap",), str(name.value))), None) if nearby is not None else None
        )
        data = found.root.map("data") if found is not None else None
        text = data.scalar(key) if data is not None else None
        if found is None or text is None or not isinstance(text.value, str):
            why = (
                f"ConfigMap {name.value} is not in this file or beside it"
                if found is None
                else f"ConfigMap {name.value} has no data key {key!r}"
            )
            return MountedFile(None, None, why)
        return MountedFile(text.value, text.where(found.file))
    return None
