"""A cap on each GPU's memory that a GPU-sharing device plugin ENFORCES: HAMi and Volcano vGPU.

HAMi (Project-HAMi/HAMi@v2.10.0): a container asks for `nvidia.com/gpu: N` physical GPUs and, for each,
`nvidia.com/gpumem` MiB or `nvidia.com/gpumem-percentage` percent of the card (charts/hami/values.yaml:26-28,
the chart's default names: an installation may rename them, and kvlint reads the default names only).
`nvidia.com/gpucores` is a share of the SMs and leaves memory alone. pkg/device/nvidia/device.go:520-600
reads them (limits, else requests): gpumem a plain integer, MiB (the scheduler compares it with the
card's NVML total in MiB, register.go:148); a percentage over 100 is refused by the webhook
(device.go:389-396); 0 in either is "no limit" and the chart's defaultMemory 0 then gives the whole card
(device.go:564-575); gpumem wins over a percentage (device.go:777-783). Without `nvidia.com/gpu` the
webhook adds defaultGPUNum, 1 in the chart (device.go:398-413, templates/scheduler/device-configmap.yaml:25).
The device plugin hands each GPU's cap to the container as CUDA_DEVICE_MEMORY_LIMIT_i
(pkg/device-plugin/nvidiadevice/nvinternal/plugin/server.go:832-836), and HAMi-core (libvgpu.so,
Project-HAMi/HAMi-core@8f3a89c6) enforces it: cuDeviceTotalMem_v2 returns the cap (src/cuda/device.c:90-96),
cuMemGetInfo_v2 reports min(cap, card) as total (src/cuda/memory.c:486-513, built with HOOK_MEMINFO_ENABLE:
build.sh:17), nvmlDeviceGetMemoryInfo the cap (src/nvml/hook.c:318-360), and an allocation beyond it fails
with CUDA_ERROR_OUT_OF_MEMORY (src/allocator/allocator.c:116-117). An engine's memory fraction (vLLM
--gpu-memory-utilization, SGLang --mem-fraction-static, TGI --cuda-memory-fraction) is so a fraction of
the cap. With the annotation `nvidia.com/vgpu-mode: mig` (device.go:53) HAMi hands out a MIG instance
instead and sets no such cap (server.go:832): the smallest profile holding the memory asked for, fewer
slices first (selectMigCandidate, device.go:621-639), among the profiles its chart allows for the card
(templates/scheduler/device-configmap.yaml:35-45); the deployment's GPU becomes that slice, as a MIG
resource makes it (gpu_sharing.py).

Volcano vGPU (Project-HAMi/volcano-vgpu-device-plugin@4fb76ba1): the same request with `volcano.sh/vgpu-number`
(GPUs), `volcano.sh/vgpu-memory` (MiB each) and `volcano.sh/vgpu-memory-percentage`
(deployments/helm/volcano-vgpu-device-plugin/values.yaml:20-23, README.md:239-260), enforced by the same
HAMi-core (README.md:10: "it uses HAMi-core to support hard isolation of GPU card"; .gitmodules:1-3).

Tencent's GPU Manager (tkestack/gpu-manager@8cd842ed): `tencent.com/vcuda-core` counts hundredths of a GPU
and `tencent.com/vcuda-memory` blocks of 256 MiB (README.md:68-76; pkg/types/types.go:26-37,
MemoryBlockSize 268435456). Below 100 cores the pod shares one GPU and must ask for both ("that cores or
memory is zero is not permitted in share mode", pkg/services/allocator/nvidia/allocator.go:414-420);
vcuda-controller then reports the blocks as the device's total to cuDeviceTotalMem and cuMemGetInfo
(tkestack/vcuda-controller@72e0115d src/hijack_call.c:916-962), enabled below 100 cores only
(pkg/services/virtual-manager/manager.go:533-562). 100 or more cores, a multiple of 100
(allocator.go:399-405), are whole GPUs with no cap.

The cap is recorded per GPU (`gpu_limit_bytes`, or `gpu_limit_share` of the card's memory) with a note
naming it; resolve plans the GPU as the cap (capacity/device_limit.py). A share that is not enforced
(KAI Scheduler's annotations) is gpu_fraction.py's.
"""

from __future__ import annotations

from collections.abc import Iterator

from kvlint.catalog import gpus as catalog
from kvlint.catalog import mig
from kvlint.codes import UNKNOWN_GPU, UNPARSED_SETTING
from kvlint.deployment import Deployment, inferred, stated
from kvlint.findings import Issue, Location, Severity
from kvlint.load.tree import Mapping, Node, Scalar
from kvlint.record import record

HAMI = "Project-HAMi/HAMi@v2.10.0 pkg/device/nvidia/device.go:520-600"
VOLCANO = "Project-HAMi/volcano-vgpu-device-plugin@4fb76ba1 README.md:239-260"
VCUDA = "tkestack/gpu-manager@8cd842ed pkg/services/allocator/nvidia/allocator.go:399-420"
VCUDA_CORE, VCUDA_MEMORY, VCUDA_BLOCK = "tencent.com/vcuda-core", "tencent.com/vcuda-memory", 256 * 2**20
SECTIONS = ("limits", "requests")  # limits win, as the plugins read them


@record(frozen=True)
class Plugin:
    name: str
    count: str  # the resource that counts the pod's GPUs
    memory: str  # MiB of each GPU
    percentage: str  # percent of each GPU's memory
    source: str
    default_count: int | None = None  # GPUs the plugin's webhook adds when the count is not asked for
    mig_mode: str = ""  # the pod annotation that asks for a MIG instance instead of a capped card


PLUGINS = (
    Plugin(
        "HAMi",
        "nvidia.com/gpu",
        "nvidia.com/gpumem",
        "nvidia.com/gpumem-percentage",
        HAMI,
        default_count=1,
        mig_mode="nvidia.com/vgpu-mode",
    ),
    Plugin(
        "Volcano vGPU",
        "volcano.sh/vgpu-number",
        "volcano.sh/vgpu-memory",
        "volcano.sh/vgpu-memory-percentage",
        VOLCANO,
        mig_mode="volcano.sh/vgpu-mode",
    ),
)
_ANNOTATIONS = (("spec", "template", "metadata", "annotations"), ("metadata", "annotations"))
# the MIG profiles HAMi's chart allows per card, by the card names it lists
# (Project-HAMi/HAMi@v2.10.0 charts/hami/templates/scheduler/device-configmap.yaml:35-45)
MIG_SOURCE = "Project-HAMi/HAMi@v2.10.0 device-configmap.yaml:35-45, pkg/device/nvidia/device.go:621-639"
MIG_ALLOWLIST = (
    (("A30",), ("1g.6gb", "2g.12gb", "4g.24gb")),
    (("A100-SXM4-40GB", "A100-40GB-PCIe", "A100-PCIE-40GB"), ("1g.5gb", "2g.10gb", "3g.20gb", "7g.40gb")),
    (("A100-SXM4-80GB", "A100-80GB-PCIe", "A100-PCIE-80GB"), ("1g.10gb", "2g.20gb", "3g.40gb", "7g.79gb")),
    (("H100-PCIE-80GB", "H100-SXM5-80GB"), ("1g.10gb", "2g.20gb", "3g.40gb", "7g.80gb")),
    (("H100-PCIE-94GB", "H100-SXM5-94GB"), ("1g.12gb", "2g.24gb", "3g.47gb", "7g.94gb")),
)


def read(d: Deployment, root: Mapping, container: Mapping, path: str) -> None:
    """The cap a HAMi / Volcano vGPU / Tencent vcuda memory resource puts on each of the pod's GPUs, if any."""
    if d.gpus_per_pod is None and asked(container, VCUDA_CORE) is not None:
        _vcuda(d, container, path)
        return
    for plugin in PLUGINS:
        if _not_a_quantity(d, container, (plugin.memory, plugin.percentage), plugin, path):
            return
        memory, percentage = asked(container, plugin.memory), asked(container, plugin.percentage)
        if memory is None and percentage is None:
            continue
        if memory is not None and percentage is not None and _whole(memory) == 0:
            memory = None  # gpumem 0 is unset: the percentage applies (device.go:777-783)
        if _mig_mode(root, plugin):
            _mig_slice(d, plugin, memory or percentage, memory is None, path)  # type: ignore[arg-type]
            return
        if memory is not None and _cap(d, plugin, plugin.memory, memory, path):
            _count(d, plugin, memory.where(path))
        elif percentage is not None and _cap(d, plugin, plugin.percentage, percentage, path):
            _count(d, plugin, percentage.where(path))
        return


def asked(container: Mapping, name: str) -> Scalar | None:
    return next((node for node in _written(container, name) if isinstance(node, Scalar)), None)


def _written(container: Mapping, name: str, sections: tuple[str, ...] = SECTIONS) -> Iterator[Node]:
    """The values `name` is given in the resources `sections`, in order."""
    res = container.map("resources")
    for section in sections:
        table = res.map(section) if res is not None else None
        node = table.get(name) if table is not None else None
        if node is not None:
            yield node


def _not_a_quantity(
    d: Deployment, container: Mapping, names: tuple[str, ...], plugin: Plugin, path: str
) -> bool:
    """A memory resource written as a list or a mapping, which is no Kubernetes quantity (the API server
    refuses the pod): said where it is written (KV005), and no cap is read."""
    for section in SECTIONS:
        for name in names:
            node = next(_written(container, name, (section,)), None)
            if node is not None and not isinstance(node, Scalar):
                d.issues.append(
                    Issue(
                        UNPARSED_SETTING,
                        f"{d.label()}: {name} is not a quantity ({plugin.source}); the memory each GPU gives the "
                        "engine is unknown",
                        node.where(path),
                    )
                )
                d.unreadable.append("gpu_limit")
                return True
    return False


def _mig_mode(root: Mapping, plugin: Plugin) -> bool:
    for keys in _ANNOTATIONS:
        ann = root.at(*keys)
        node = ann.scalar(plugin.mig_mode) if isinstance(ann, Mapping) else None
        if node is not None and str(node.value).strip().lower() == "mig":
            return True
    return False


def _readable(d: Deployment, plugin: Plugin, name: str, node: Scalar, path: str) -> int | None:
    """The whole MiB or percent `name` asks for; None, said where it is written (KV005), when it is not one."""
    percent = name == plugin.percentage
    amount = _whole(node)
    if amount is not None and not (percent and amount > 100):
        return amount
    wanted = "a whole percent of the card, 0 to 100" if percent else "a whole number of MiB"
    # HAMi's webhook refuses a percentage over 100 (device.go:389-396); Volcano's plugin is not read on it
    refused = (
        " (HAMi's webhook refuses the pod)" if percent and amount is not None and plugin is PLUGINS[0] else ""
    )
    d.issues.append(
        Issue(
            UNPARSED_SETTING,
            f"{d.label()}: cannot read {name} {node.text!r} as {wanted}{refused} ({plugin.source}); the "
            "memory each GPU gives the engine is unknown",
            node.where(path),
        )
    )
    d.unreadable.append("gpu_limit")
    return None


def _cap(d: Deployment, plugin: Plugin, name: str, node: Scalar, path: str) -> bool:
    """Record the cap `name` states; False (said where it is written) when it sets none."""
    where = node.where(path)
    percent = name == plugin.percentage
    amount = _readable(d, plugin, name, node, path)
    if amount is None:
        return False
    if amount == 0:
        d.issues.append(
            Issue(
                UNPARSED_SETTING,
                f"{d.label()}: {name} 0 sets no cap: {plugin.name} then applies its defaultMemory (0 in its "
                f"chart: the whole card) ({plugin.source}); planned on the whole card",
                where,
                fix=f"give {name} the memory each GPU should have, or leave it out",
                severity=Severity.INFO,
            )
        )
        return False
    if percent:
        note = f"{plugin.name} limits each GPU to {amount}% of its memory ({name})"
        d.gpu_limit_share = stated(amount / 100, where, note)
    else:
        note = f"{plugin.name} limits each GPU to {amount:,} MiB ({name})"
        d.gpu_limit_bytes = stated(amount * 2**20, where, note)
    return True


def _count(d: Deployment, plugin: Plugin, where: Location) -> None:
    """A cap without the GPU count: the webhook adds its default count (HAMi: 1)."""
    if d.gpus_per_pod is not None or "gpus_per_pod" in d.unreadable or plugin.default_count is None:
        return
    note = f"{plugin.count} not asked for: {plugin.name}'s webhook adds defaultGPUNum {plugin.default_count}"
    d.gpus_per_pod = inferred(plugin.default_count, f"{note} ({plugin.source})", where)
    d.gpu_resource = plugin.count


def _vcuda(d: Deployment, container: Mapping, path: str) -> None:
    """Tencent vcuda: whole GPUs at 100 cores and more, else one GPU capped at the memory blocks asked."""
    core = asked(container, VCUDA_CORE)
    memory = asked(container, VCUDA_MEMORY)
    assert core is not None
    cores, blocks = _whole(core), _whole(memory) if memory is not None else 0
    where = core.where(path)
    if cores is not None and cores >= 100 and cores % 100 == 0:
        note = f"{VCUDA_CORE} {cores}: {cores // 100} whole GPUs, no memory cap ({VCUDA})"
        d.gpus_per_pod, d.gpu_resource = stated(cores // 100, where, note), VCUDA_CORE
        return
    if cores is None or cores == 0 or cores > 100 or not blocks:
        node, wanted = (
            (memory, "whole 256 MiB blocks") if cores and cores < 100 else (core, "0-99 or a multiple of 100")
        )
        shown = node.text if node is not None else "not asked for"
        d.issues.append(
            Issue(
                UNPARSED_SETTING,
                f"{d.label()}: cannot read {VCUDA_CORE} {core.text!r} with {VCUDA_MEMORY} {shown!r}: GPU Manager "
                f"wants {wanted} and refuses the pod otherwise ({VCUDA}); the GPU is unknown",
                (node or core).where(path),
            )
        )
        d.unreadable.append("gpus_per_pod")
        return
    note = f"Tencent vcuda limits the GPU to {blocks * VCUDA_BLOCK // 2**20:,} MiB ({VCUDA_MEMORY} {blocks})"
    d.gpus_per_pod = inferred(1, f"{VCUDA_CORE} {cores}: a share of one GPU ({VCUDA})", where)
    d.gpu_resource = VCUDA_CORE
    d.gpu_limit_bytes = stated(
        blocks * VCUDA_BLOCK, memory.where(path) if memory is not None else where, note
    )


def _whole(node: Scalar | None) -> int | None:
    text = str(node.value).strip() if node is not None else ""
    return int(text) if text.isdigit() else None


def _mig_slice(d: Deployment, plugin: Plugin, node: Scalar, percent: bool, path: str) -> None:
    """HAMi dynamic MIG: the smallest allowed profile of the card holding the memory asked for."""
    where = node.where(path)
    amount = _readable(d, plugin, plugin.percentage if percent else plugin.memory, node, path)
    card = catalog.lookup(str(d.gpu.value)) if d.gpu is not None else None
    if not amount:
        return  # unreadable (said), or no memory asked for (HAMi then gives the whole card): the card's plan
    if card is None or not card.smi_total_mib:
        d.issues.append(
            Issue(
                UNKNOWN_GPU,
                f"{d.label()}: {plugin.name} dynamic MIG gives the smallest MIG profile of the card that holds "
                f"{node.text} {'%' if percent else 'MiB'} ({plugin.mig_mode}: mig; {MIG_SOURCE}); the card is "
                "not stated, so neither is the slice",
                where,
                fix="name the card with a node label (nvidia.com/gpu.product)",
                severity=Severity.INFO,
            )
        )
        d.gpu = inferred(f"{plugin.name} MIG slice", "dynamic MIG on an unstated card", where)
        return
    asked_mib = card.smi_total_mib * amount // 100 if percent else amount
    allowed = next((p for names, p in MIG_ALLOWLIST if any(_is(card.id, n) for n in names)), ())
    sizes = sorted(
        (found[0] // 2**20, prof[0], prof)
        for prof in allowed
        if (found := mig.slice_memory(card.id, prof)) is not None
    )
    pick = next((prof for mib, _slices, prof in sizes if mib >= asked_mib), None)
    spec = catalog.slice_spec(card.id, pick) if pick is not None else None
    if spec is None or pick is None:
        return  # no allowed profile kvlint knows holds it: the plan stays the card's
    how = f"{plugin.name} dynamic MIG: the smallest allowed profile of {card.name} holding {asked_mib:,} MiB"
    d.extra["mig_profile"] = stated(pick, where, f"{how} ({MIG_SOURCE})")
    d.gpu = inferred(spec.id, f"{how} ({MIG_SOURCE})", where)


def _is(card_id: str, name: str) -> bool:
    found = catalog.lookup(name)
    return found is not None and found.id == card_id
