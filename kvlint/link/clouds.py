"""Which cloud a node pool and a workload's folder belong to, so a repository that keeps several clusters
(one folder per cloud: `aws/eks/...`, `google-cloud/gke/...`, `azure/aks/...`) does not give a workload
of one cloud's folder the node pools of another's (link/pools.py pools_for).

A pool's cloud is read from what defines it: its kind (Karpenter and eksctl run on AWS, `aws_eks_*`
Terraform resources and terraform-aws-eks; GKE ComputeClass, `google_container_*` and
terraform-google-kubernetes-engine; `azurerm_*` and AKS agent pools), else from the folders its file
is under. A workload's cloud is read from the folders its file is under only. A word names a cloud
when it is one of the clouds' or their Kubernetes services' own names (WORDS). A folder path naming
two clouds, or none, names no cloud: nothing is left out then.
"""

from __future__ import annotations

import re

WORDS = {
    "aws": "aws",
    "eks": "aws",
    "amazon": "aws",
    "gcp": "gcp",
    "gke": "gcp",
    "google": "gcp",
    "azure": "azure",
    "aks": "azure",
    "oci": "oracle",
    "oke": "oracle",
    "oracle": "oracle",
}
# pool kinds (extract/kinds/node_pool*.py Pool.kind) by the cloud they run on
KINDS = (
    (re.compile(r"Karpenter|eksctl|aws[_-]eks|\bEKS\b"), "aws"),
    (re.compile(r"google|GKE|\bgke\b"), "gcp"),
    (re.compile(r"azurerm|\bAKS\b|agent pool|containerservice", re.IGNORECASE), "azure"),
)


def of_path(rel: str) -> str | None:
    """The one cloud the folders of a repository-relative path name, else None."""
    folders = rel.replace("\\", "/").split("/")[:-1]
    named = {WORDS[w] for part in folders for w in re.split(r"[^a-z0-9]+", part.lower()) if w in WORDS}
    return named.pop() if len(named) == 1 else None


def of_pool(kind: str, rel: str) -> str | None:
    for pattern, cloud in KINDS:
        if pattern.search(kind):
            return cloud
    return of_path(rel)


def same_cloud(workload_rel: str, pool_kind: str, pool_rel: str) -> bool:
    """False only when both the workload's folders and the pool name a cloud, and not the same one."""
    mine = of_path(workload_rel)
    if mine is None:
        return True
    theirs = of_pool(pool_kind, pool_rel)
    return theirs is None or theirs == mine
