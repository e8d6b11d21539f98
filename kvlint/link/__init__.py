"""The link stage: passes across the documents of a file (and the files beside it), between
extraction and resolve. A workload's DRA claim is attached from the claim objects found beside it;
time-sliced / MPS GPUs shared by several workloads are summed once they are resolved (sharing.py);
a file that gave no workload is searched for GPU containers and engine commands kvlint could not
read, so that it is never silently passed (unread.py); a workload that names no GPU is placed on the
node pools of its repository's cluster definition (pools.py)."""

from __future__ import annotations

from kvlint.codes import INVALID_INPUT, NOT_CHECKABLE, UNPARSED_SETTING
from kvlint.deployment import Deployment
from kvlint.findings import Issue
from kvlint.link.beside import Beside
from kvlint.load import LoadedFile
from kvlint.load.compose import Document
from kvlint.load.nearby import Nearby

READ_OR_SAID = (
    INVALID_INPUT,
    NOT_CHECKABLE,
    UNPARSED_SETTING,
)  # the file already says what it could not read


def read_beside(extracted: list[Deployment], nearby: Nearby) -> tuple[list[Deployment], Beside]:
    """The objects the workloads refer to, read from the file and its directory, and the workloads with
    each DRA claim they name attached (its GPUs, or a KV002 saying the claim was not found): new
    records, the extracted ones are not written."""
    if not extracted:
        return extracted, Beside()
    claims = any(d.dra_refs is not None for d in extracted)  # a container names a DRA claim
    found = Beside.of(nearby, claims)
    if not claims:
        return extracted, found
    from kvlint.link import claims as dra

    known = found.dra if found.dra is not None else dra.Known()
    return [dra.attach(d, known) for d in extracted], found


def never_silent(documents: list[Document], path: str, issues: list[Issue]) -> list[Issue]:
    """For a file that gave no workload: what in it looks like serving kvlint did not read (a GPU
    container, an engine command), unless the file already says what it could not read."""
    if any(i.code in READ_OR_SAID for i in issues):
        return []
    from kvlint.link import unread as net

    return net.issues(documents, path)


def place_on_pools(
    extracted: list[Deployment], real_path: str | None, loaded: LoadedFile
) -> list[Deployment]:
    """The workloads, each that states no GPU given the one the node pools it can land on give: the
    pools the file defines, then those of its repository's cluster definition (pools.py)."""
    if not any(d.gpu is None for d in extracted):
        return extracted
    from kvlint.link import pools

    cluster = pools.pools_for(real_path, loaded.path, loaded.documents)
    if not cluster:
        return extracted
    return [
        pools.attach(d, cluster, pools.admitted(d, real_path, loaded.path, loaded.documents))
        for d in extracted
    ]
