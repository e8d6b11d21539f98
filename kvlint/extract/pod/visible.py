"""The GPUs an engine sees when the container's CUDA_VISIBLE_DEVICES narrows the ones the pod reserves.

The NVIDIA device plugin (Kubernetes) and Docker's device request (compose `device_ids`, `count`) give a
container the GPUs it is allocated and nothing else, so inside it they are devices 0 to N-1 whatever their
numbers on the node. CUDA then shows a program only the devices
CUDA_VISIBLE_DEVICES lists, and stops at the first index that is not one of them: "If one of the indices is
invalid, only the devices whose index precedes the invalid index are visible" (CUDA C++ Programming Guide,
"CUDA Environment Variables"; `0,2,-1,1` shows devices 0 and 2). A value copied from a host script
(`CUDA_VISIBLE_DEVICES=2,3` under `nvidia.com/gpu: 2`) therefore hides every GPU the pod pays for, and `0`
under `nvidia.com/gpu: 4` hides three.

Only a list of device numbers is judged. UUIDs (GPU-..., MIG-...) name devices kvlint cannot see, a value
from a variable is not the file's, a repeated index is left alone, and a container that sets
NVIDIA_VISIBLE_DEVICES itself or runs privileged may see other GPUs than the ones allocated to it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvlint.deployment import Deployment, stated
from kvlint.extract.pod.argv import ASSIGN, EnvVar
from kvlint.load.tree import Mapping

if TYPE_CHECKING:
    from kvlint.extract.pod.engine_args import Launch

VARIABLE = "CUDA_VISIBLE_DEVICES"
SEEN = "gpus_seen"  # Deployment.extra: the GPUs per pod the engine sees, where fewer than it reserves
SOURCE = 'CUDA C++ Programming Guide, "CUDA Environment Variables"'
_LEADERS = ("export", "env")  # words before assignments that still set them for the command after


def seen(reserved: int, text: str) -> int | None:
    """How many of the `reserved` devices (0 .. reserved-1) CUDA shows under CUDA_VISIBLE_DEVICES=`text`;
    None where the value is not a plain list of device numbers (or repeats one)."""
    said = text.strip()
    if not said:
        return 0  # set and empty: CUDA shows no device
    parts = [p.strip() for p in said.split(",")]
    if not all(p.lstrip("-").isdigit() for p in parts):
        return None
    numbers = [int(p) for p in parts]
    shown = 0
    for n in numbers:
        if n < 0 or n >= reserved:
            break  # the first invalid index ends the list
        shown += 1
    if len(set(numbers[:shown])) != shown:
        return None
    return shown


def apply(d: Deployment, env: dict[str, EnvVar], container: Mapping) -> None:
    """Record the GPUs per pod the engine sees (`SEEN`) where CUDA_VISIBLE_DEVICES hides some of those the pod
    reserves; gpus_per_pod stays the reserved count, which the scheduler places."""
    var = env.get(VARIABLE)
    got = d.gpus_per_pod
    if var is None or var.value is None or var.where is None or got is None or got.origin != "stated":
        return
    if got.where == var.where:
        return  # the count is read off this variable (compose `count: all`: the host's GPUs, numbered as on it)
    if d.gpu_resource != "nvidia.com/gpu" or "NVIDIA_VISIBLE_DEVICES" in env or _privileged(container):
        return
    reserved = int(got.value)
    shown = seen(reserved, var.value)
    if shown is None or shown == reserved:
        return
    listed = var.value.strip() or '""'
    numbered = "device 0" if reserved == 1 else f"devices 0 to {reserved - 1}"
    d.extra[SEEN] = stated(
        shown,
        var.where,
        f"{VARIABLE}={listed} shows the engine {shown} of the {reserved} GPU{'s' if reserved != 1 else ''}"
        f" reserved ({got.note or d.gpu_resource}), which are {numbered} in the container ({SOURCE})",
    )


def from_script(launch: Launch) -> dict[str, EnvVar]:
    """CUDA_VISIBLE_DEVICES as the start script sets it for the engine: on a line of assignments before it
    (`export CUDA_VISIBLE_DEVICES=0`) or before the engine's own words (`CUDA_VISIBLE_DEVICES=2,3 vllm serve`);
    the last one before the engine wins. {} when the script sets none."""
    found: dict[str, EnvVar] = {}
    prefix = VARIABLE + "="
    for command in launch.script:
        entry = next((i for i, t in enumerate(command) if t is launch.entry), None)
        words = list(command if entry is None else command[:entry])
        while words and words[0].text in _LEADERS:
            words.pop(0)
        said = []
        for t in words:
            if not ASSIGN().match(t.text):
                break
            said.append(t)
        if entry is None and len(said) != len(words):
            continue  # a line that runs something else: its assignments are that program's
        for t in said:
            if t.text.startswith(prefix) and not t.unresolved and t.where is not None:
                found = {VARIABLE: EnvVar(t.text[len(prefix) :], t.where)}
        if entry is not None:
            break
    return found


def _privileged(container: Mapping) -> bool:
    ctx = container.get("securityContext")
    return isinstance(ctx, Mapping) and ctx.value("privileged") is True
