"""What workloads refer to by name and other documents define: DRA claims and device classes, and
the GPU device plugin's time-slicing / MPS replicas, from the file and the YAML files of its
directory (load/nearby.py finds them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvlint.link import sharing
from kvlint.load.nearby import Nearby
from kvlint.record import field, record

if TYPE_CHECKING:  # the DRA claim reader loads only when a workload names a claim
    from kvlint.link.claims import Known


@record
class Beside:
    dra: Known | None = None  # read only when a workload names a claim
    sharing: list[sharing.Replicas] = field(default_factory=list)

    @classmethod
    def of(cls, nearby: Nearby, claims: bool) -> Beside:
        out = cls()
        if not claims:
            for found in nearby.objects(("ConfigMap",)):
                out.sharing.extend(sharing.replicas(found.root, found.file))
            return out
        from kvlint.link import claims as dra

        out.dra = dra.Known()
        for found in nearby.objects((*dra.KINDS, "ConfigMap")):
            if dra.is_dra(found.root):
                out.dra.add(found.root, found.file)
            else:
                out.sharing.extend(sharing.replicas(found.root, found.file))
        return out
