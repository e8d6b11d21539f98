"""What workloads refer to by name and other documents define: DRA claims and device classes, and
the GPU device plugin's time-slicing / MPS replicas, from the file and the YAML files of its
directory (load/nearby.py finds them).

The directory is read only when something needs it: the DRA objects when a workload names a claim,
the device-plugin ConfigMaps only when two or more pods share one card (sharing.overcommits asks), so
a one-file run on a workload that names nothing beside it reads no other file."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvlint.link import sharing
from kvlint.load.nearby import Nearby
from kvlint.record import record

if TYPE_CHECKING:  # the DRA claim reader loads only when a workload names a claim
    from kvlint.link.claims import Known


@record
class Beside:
    dra: Known | None = None  # read only when a workload names a claim
    nearby: Nearby | None = None  # where the sharing configs are read from, on first ask
    found_sharing: list[sharing.Replicas] | None = None  # None: not read yet

    @classmethod
    def of(cls, nearby: Nearby, claims: bool) -> Beside:
        out = cls(nearby=nearby)
        if not claims:
            return out
        from kvlint.link import claims as dra

        out.dra = dra.Known()
        out.found_sharing = []
        for found in nearby.objects((*dra.KINDS, "ConfigMap")):  # one pass over the directory for both
            if dra.is_dra(found.root):
                out.dra.add(found.root, found.file)
            else:
                out.found_sharing.extend(sharing.replicas(found.root, found.file))
        return out

    def sharing(self) -> list[sharing.Replicas]:
        """The device plugin's sharing configs of the file and its directory, read on the first call."""
        if self.found_sharing is None:
            self.found_sharing = []
            for found in self.nearby.objects(("ConfigMap",)) if self.nearby is not None else ():
                self.found_sharing.extend(sharing.replicas(found.root, found.file))
        return self.found_sharing
