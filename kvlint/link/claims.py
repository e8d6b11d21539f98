"""GPUs handed out by Dynamic Resource Allocation (resource.k8s.io v1beta1 / v1beta2 / v1).

A container uses claims its pod lists (extract/pod/dra.py records the references). The claim
(ResourceClaim: `spec.devices.requests`; template: `spec.spec.devices.requests`) asks per request
for devices of a `deviceClassName`: v1beta2 and v1 put the fields under `exactly:` or give
alternatives under `firstAvailable:`, v1beta1 writes them flat. `allocationMode: ExactCount` (the default) takes `count` (default 1), `All` every matching
device of a node. CEL `selectors` (and those of a DeviceClass found beside) narrow the devices:
extract/pod/cel.py evaluates them against the catalogued cards (catalog/dra_devices.py).

The claims are looked for in the file and in the other YAML files of its directory (link/beside.py
reads them, load/nearby.py); a claim found in neither is a KV002 warning that says so. One admitted
type becomes the deployment's GPU; several become its candidates, and every capacity rule runs on
each (kvlint/run/fleet.py), as for a fleet.
"""

from __future__ import annotations

from typing import Any

from kvlint.catalog import dra_devices
from kvlint.codes import NOT_CHECKABLE, UNKNOWN_GPU
from kvlint.deployment import Deployment, inferred, stated
from kvlint.extract.pod.dra import ClaimRef
from kvlint.extract.pod.gpu_sharing import NOT_MODELLED, why_not_modelled
from kvlint.findings import Issue, IssueKind, Location, Severity
from kvlint.load.tree import Mapping, Scalar, Sequence
from kvlint.record import field, record, replace

KINDS = ("ResourceClaim", "ResourceClaimTemplate", "DeviceClass")
GPU_CLASSES = {
    "gpu.nvidia.com": ("nvidia", "gpu"),
    "mig.nvidia.com": ("nvidia", "mig"),
    "gpu.amd.com": ("amd", "gpu"),
}
OTHER_ACCELERATORS = {"gaudi.intel.com": "gaudi", "tpu.google.com": "tpu", "neuron.amazonaws.com": "neuron"}


@record
class Known:
    """DRA objects of the file and its directory, by (kind, name): (object, file)."""

    objects: dict[tuple[str, str], tuple[Mapping, str]] = field(default_factory=dict)

    def add(self, root: Mapping, path: str) -> None:
        kind, name = root.value("kind"), root.at("metadata", "name")
        if kind in KINDS and isinstance(name, Scalar) and name.value is not None:
            self.objects.setdefault((str(kind), str(name.value)), (root, path))


def is_dra(root: Mapping) -> bool:
    api = root.value("apiVersion")
    return isinstance(api, str) and api.startswith("resource.k8s.io/") and root.value("kind") in KINDS


@record
class Request:
    """One device request (or one alternative of firstAvailable)."""

    name: str
    device_class: str
    mode: str  # ExactCount | All
    count: int
    selectors: list[str]
    where: Location


def _requests(claim: Mapping, path: str) -> list[list[Request]]:
    """Each request of a claim as its alternatives (one, unless firstAvailable lists several)."""
    spec = claim.at("spec", "spec") if claim.value("kind") == "ResourceClaimTemplate" else claim.map("spec")
    reqs = spec.at("devices", "requests") if isinstance(spec, Mapping) else None
    out: list[list[Request]] = []
    for req in reqs.items if isinstance(reqs, Sequence) else ():
        if not isinstance(req, Mapping):
            continue
        name = str(req.value("name") or "")
        alternatives = req.seq("firstAvailable")
        if alternatives is not None:
            out.append(
                [
                    _one(f"{name}/{a.value('name')}", a, path)
                    for a in alternatives.items
                    if isinstance(a, Mapping)
                ]
            )
        else:
            out.append([_one(name, req.map("exactly") or req, path)])
    return out


def _one(name: str, node: Mapping, path: str) -> Request:
    count = node.value("count")
    sels = [
        str(s.at("cel", "expression").value)  # type: ignore[union-attr]
        for s in node.seq("selectors") or ()
        if isinstance(s, Mapping) and isinstance(s.at("cel", "expression"), Scalar)
    ]
    cls = node.scalar("deviceClassName")
    return Request(
        name,
        str(cls.value) if cls is not None else "",
        str(node.value("allocationMode") or "ExactCount"),
        count if isinstance(count, int) and not isinstance(count, bool) and count > 0 else 1,
        sels,
        (cls or node).where(path),
    )


def attach(d: Deployment, known: Known) -> Deployment:
    """The deployment with the claims its container uses read: GPU type (or candidates) and count. A new
    record: `d`, as extracted, is not written."""
    refs = d.dra_refs
    if refs is None:
        return d
    extra = dict(d.extra)
    shared = d.gpu_shared
    issues = list(d.issues)
    accelerator = d.accelerator
    total, candidates, notes = 0, None, []
    for ref in refs.value:
        found = known.objects.get((ref.kind, ref.target))
        if found is None and (d.gpus_per_pod is not None or accelerator != "gpu"):
            continue  # the pod has its devices from resources: an unseen claim may be a NIC (EFA, RDMA)
        if found is None:
            issues.append(
                Issue(
                    UNKNOWN_GPU,
                    f"{ref.kind} {ref.target!r} (claim {ref.name!r}) is not in this file or its directory: "
                    "kvlint cannot tell which GPUs, or how many, it hands out",
                    ref.where,
                    fix=f"keep the {ref.kind} beside the workload, or name the GPU with --gpu",
                    severity=Severity.WARNING,
                )
            )
            continue
        claim, claim_path = found
        if ref.kind == "ResourceClaim":  # one claim object: every pod that names it gets the same devices
            shared = stated(
                f"claim:{ref.target}",
                ref.where,
                f"ResourceClaim {ref.target!r}, shared by every pod that names it",
            )
        for alternatives in _requests(claim, claim_path):
            if ref.request and not any(a.name.split("/")[0] == ref.request for a in alternatives):
                continue
            got, accelerator = _request_gpus(alternatives, known, ref, issues, accelerator)
            if got is None:
                continue
            ids, count, note = got
            total += count
            candidates = ids if candidates is None else [i for i in candidates if i in ids]
            notes.append(note)
    said = any(i.code == NOT_CHECKABLE for i in issues)  # e.g. by extract/container.finish
    why = why_not_modelled(d, accelerator) if accelerator in NOT_MODELLED else ""
    if why and "unsupported" not in extra and not said:
        issues.append(
            Issue(
                NOT_CHECKABLE,
                f"{d.label()}: {why}",
                refs.where or d.where,
                kind=IssueKind.ACCELERATOR_NOT_MODELLED,
            )
        )
    placed = {} if candidates is None else _place(d, candidates, total, "; ".join(notes), refs.where)
    return replace(
        d, extra=extra, gpu_shared=shared, issues=issues, accelerator=accelerator, dra_refs=None, **placed
    ).freeze()


def _request_gpus(
    alternatives: list[Request], known: Known, ref: ClaimRef, issues: list[Issue], accelerator: str
) -> tuple[tuple[list[str], int, str] | None, str]:
    """((admitted GPU ids, count, note) of one request, or None when it asks for no GPU; the accelerator
    its device class names), saying in `issues` what kvlint cannot tell."""
    ids: list[str] = []
    counts: set[int] = set()
    parts: list[str] = []
    for req in alternatives:
        cls_sels, vendor_kind = _device_class(req.device_class, known)
        if vendor_kind is None:
            if req.device_class in OTHER_ACCELERATORS:
                accelerator = OTHER_ACCELERATORS[req.device_class]
            elif cls_sels is None and "gpu" in req.device_class:
                issues.append(
                    Issue(
                        UNKNOWN_GPU,
                        f"device class {req.device_class!r} (claim {ref.target!r}) is not a GPU class kvlint "
                        "knows and no DeviceClass of that name is in this file or its directory",
                        req.where,
                        fix="keep the DeviceClass beside the claim, or use gpu.nvidia.com / mig.nvidia.com / gpu.amd.com",
                        severity=Severity.WARNING,
                    )
                )
            continue
        admitted, unread = _admitted(vendor_kind, [*(cls_sels or []), *req.selectors])
        if req.mode == "All":
            issues.append(
                Issue(
                    NOT_CHECKABLE,
                    f"claim {ref.target!r} request {req.name!r}: allocationMode All takes every matching "
                    "device of the node; kvlint counts the GPUs by the engine's parallelism",
                    req.where,
                    severity=Severity.INFO,
                )
            )
        else:
            counts.add(req.count)
        ids.extend(i for i in admitted if i not in ids)
        what = f"{req.device_class}" + (f" where {' && '.join(req.selectors)}" if req.selectors else "")
        if unread:
            what += f" (not read: {'; '.join(unread)})"
        parts.append(what)
        if not admitted:
            issues.append(
                Issue(
                    UNKNOWN_GPU,
                    f"no GPU kvlint knows matches claim {ref.target!r} request {req.name!r} ({what}): "
                    "if none of the cluster's matches either, the pod stays Pending",
                    req.where,
                    fix="check the selector against the ResourceSlices (kubectl get resourceslices -o yaml)",
                    severity=Severity.WARNING,
                )
            )
    if not parts:
        return None, accelerator
    count = min(counts) if counts else 0
    return (ids, count, f"DRA claim {ref.target!r}: " + " or ".join(parts)), accelerator


def _device_class(name: str, known: Known) -> tuple[list[str] | None, tuple[str, str] | None]:
    """(the class's own CEL selectors, (vendor, gpu|mig)); a DeviceClass beside the claim wins."""
    found = known.objects.get(("DeviceClass", name))
    if found is not None:
        root = found[0]
        sels = (
            [
                str(s.at("cel", "expression").value)  # type: ignore[union-attr]
                for s in root.at("spec", "selectors").items  # type: ignore[union-attr]
                if isinstance(s, Mapping) and isinstance(s.at("cel", "expression"), Scalar)
            ]
            if isinstance(root.at("spec", "selectors"), Sequence)
            else []
        )
        text = " ".join(sels)
        for driver, vk in GPU_CLASSES.items():
            if driver.split(".", 1)[1] in text and (vk[1] == "mig") == ("mig" in text):
                return sels, vk
        return sels, None
    return ([], GPU_CLASSES[name]) if name in GPU_CLASSES else (None, None)


def _admitted(vendor_kind: tuple[str, str], selectors: list[str]) -> tuple[list[str], list[str]]:
    """The cards every selector certainly admits. A card whose published fact kvlint lacks (an NVML
    name) is not a match on that fact; when a term could not be read, every card it may admit is."""
    from kvlint.extract.pod.cel import Selector  # CEL is parsed only where a claim states selectors

    parsed = [Selector(s) for s in selectors]
    unread = [u for p in parsed for u in p.unread]
    sure: list[str] = []
    maybe: list[str] = []
    for spec, facts in dra_devices.devices(*vendor_kind):
        verdicts = [p.admits(facts) for p in parsed]
        if all(v is True for v in verdicts):
            sure.append(spec.id)
        elif all(v is not False for v in verdicts):
            maybe.append(spec.id)
    if unread:  # a term not read admits every device: certainty is only about what was read
        return sure + maybe, unread
    return sure, unread


def _place(
    d: Deployment, candidates: list[str], count: int, note: str, where: Location | None
) -> dict[str, Any]:
    """The GPU fields the claims give: the GPU, or the candidates when there are several."""
    out: dict[str, Any] = {}
    if d.gpu is not None:  # a node label named the card too: keep the candidates on that card
        # (the DRA catalog names devices by GPU id; the label's card is looked up to compare ids)
        from kvlint.catalog import gpus as catalog

        card = catalog.lookup(str(d.gpu.value))
        if card is not None:
            same = [c for c in candidates if c == card.id or c.split(":")[0] == card.id]
            candidates = same or candidates
    if count and d.gpus_per_pod is None:
        out["gpus_per_pod"] = stated(count, where, "DRA claim")
        pods = int(d.pods.value) if d.pods is not None else 1
        if d.gpus is None:  # extract's finish() ran before the claims were known
            how = f"{count} per pod (DRA claim) x {pods} pods" if pods > 1 else "DRA claim"
            out["gpus"] = stated(count, where, how) if pods == 1 else inferred(count * pods, how, where)
    if len(candidates) == 1:
        out["gpu"] = inferred(candidates[0], note, where)
    elif candidates:
        out["gpu"] = None
        out["gpu_candidates"] = inferred(tuple(candidates), note, where)
    return out
