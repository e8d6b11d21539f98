"""The DRA resource claims a container uses (Dynamic Resource Allocation, resource.k8s.io).

A pod lists claims under `spec.resourceClaims` (`resourceClaimName` or `resourceClaimTemplateName`;
before Kubernetes 1.31 under `source:`), and a container uses some of them in `resources.claims`
(`name`, optionally one `request`). Extract records the references on the deployment; the claims
themselves are other documents, read and attached by the link stage (link/claims.py).
"""

from __future__ import annotations

from kvlint.deployment import Deployment, stated
from kvlint.findings import Location
from kvlint.load.tree import Mapping, Scalar, Sequence
from kvlint.record import record


@record
class ClaimRef:
    """One claim a container uses: the pod's entry, what it points at, which request."""

    name: str
    kind: str  # ResourceClaim | ResourceClaimTemplate
    target: str
    request: str  # "" = every request of the claim
    where: Location


def read_refs(d: Deployment, root: Mapping, pod: Mapping, container: Mapping, path: str) -> None:
    """The claims this container uses, kept on the deployment until the file's claims are known."""
    entries: dict[str, Mapping] = {}
    for entry in pod.seq("resourceClaims") or ():
        if isinstance(entry, Mapping) and isinstance(entry.value("name"), str):
            entries[entry.value("name")] = entry
    refs: list[ClaimRef] = []
    uses = container.at("resources", "claims")
    for use in uses.items if isinstance(uses, Sequence) else ():
        if not isinstance(use, Mapping) or not isinstance(use.value("name"), str):
            continue
        found = entries.get(use.value("name"))
        if found is None:
            continue
        src: Mapping = found.map("source") or found  # Kubernetes <= 1.30 nested the reference under source:
        for key, kind in (
            ("resourceClaimName", "ResourceClaim"),
            ("resourceClaimTemplateName", "ResourceClaimTemplate"),
        ):
            node = src.scalar(key)
            if node is not None and node.value is not None:
                req = use.value("request")
                refs.append(
                    ClaimRef(str(use.value("name")), kind, str(node.value), str(req or ""), node.where(path))
                )
    if refs:
        d.dra_refs = stated(tuple(refs), refs[0].where, "DRA resource claims")
        replicas = root.at("spec", "replicas")
        if isinstance(replicas, Scalar) and isinstance(replicas.value, int) and replicas.value > 0:
            if d.pod_replicas is None:
                d.pod_replicas = stated(replicas.value, replicas.where(path), "spec.replicas")
