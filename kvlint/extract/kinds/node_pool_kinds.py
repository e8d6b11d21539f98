"""Readers of the Kubernetes-style node-pool definitions: each takes one object and gives its pools.

- Karpenter NodePool (karpenter.sh/v1, v1beta1) and Provisioner (v1alpha5): requirements on
  karpenter.k8s.aws/instance-family, -instance-type, -instance-gpu-name, -instance-gpu-count and
  node.kubernetes.io/instance-type (karpenter.k8s.aws/instance-category alone: no GPU unless an
  accelerated category); template labels and taints; spec.limits["nvidia.com/gpu"]
  (karpenter.sh docs "NodePools"). EC2NodeClass holds the AMI and subnets, not the GPU: not a pool.
- eksctl ClusterConfig nodeGroups / managedNodeGroups: instanceType, instanceTypes,
  instancesDistribution.instanceTypes, labels, taints, maxSize (eksctl.io "Config file schema").
- GKE Config Connector ContainerNodePool: nodeConfig.machineType, nodeConfig.guestAccelerator,
  nodeConfig.labels / taint, autoscaling.maxNodeCount (cloud.google.com/config-connector docs).
- OpenShift MachineSet (machine.openshift.io): providerSpec.value instanceType (AWS), vmSize
  (Azure), machineType + gpus (GCP); template spec.metadata.labels and spec.taints; replicas or the
  MachineAutoscaler (not read). Cluster API MachineDeployment / MachineSet: infrastructureRef to an
  AWSMachineTemplate (instanceType), GCPMachineTemplate (instanceType), AzureMachineTemplate
  (vmSize), and the autoscaler's max-size annotation (cluster-api docs "Autoscaling").
- Azure Service Operator ManagedClustersAgentPool: vmSize, nodeLabels, nodeTaints, maxCount.
- GKE ComputeClass (cloud.google.com/v1): the nodes GKE creates for it from `spec.priorities`, each
  rule a `machineType` and / or `gpu: {type, count}` (a `machineFamily` alone: its GPUs unknown when
  the family is accelerator-optimized, none otherwise; `tpu` rules carry no GPU kvlint models). Its
  nodes are labelled and tainted `cloud.google.com/compute-class=NAME:NoSchedule`, and GKE gives a pod
  that selects the class the matching toleration (GKE docs "About custom ComputeClasses": "Request a
  ComputeClass in a workload", "Manually created node pools").
"""

from __future__ import annotations

from collections.abc import Callable

from kvlint.extract.kinds.node_pools import (
    AWS_ACCELERATED,
    COMPUTE_CLASS,
    GCP_ACCELERATED,
    Pool,
    add_gpu,
    add_types,
    family_types,
    gke_pool,
    label_map,
    number,
    strings,
    taint_list,
    text,
)
from kvlint.findings import Location
from kvlint.load.tree import Mapping, Sequence

# objects one pool definition refers to by name (Cluster API templates): kind -> {name: object}
Known = dict[str, dict[str, Mapping]]
PoolReader = Callable[[Mapping, str, Known], list[Pool]]

_KARPENTER_TYPE_KEYS = (
    "node.kubernetes.io/instance-type",
    "karpenter.k8s.aws/instance-type",
    "eks.amazonaws.com/instance-type",
)
_PROVIDERS = ("karpenter.k8s.aws", "eks.amazonaws.com")  # Karpenter's AWS provider; EKS Auto Mode


def karpenter(root: Mapping, path: str, _known: Known) -> list[Pool]:
    name = text(root.at("metadata", "name")) or "default"
    nodepool = root.value("kind") == "NodePool"
    spec = root.at("spec", "template", "spec") if nodepool else root.get("spec")
    spec = spec if isinstance(spec, Mapping) else Mapping((0, 0, 0, 0))
    meta = root.at("spec", "template", "metadata", "labels") if nodepool else spec.get("labels")
    pool = Pool(name, f"Karpenter {root.value('kind')}", root.where(path), labels=label_map(meta))
    pool.labels["karpenter.sh/nodepool" if nodepool else "karpenter.sh/provisioner-name"] = name
    pool.taints = taint_list(spec.get("taints"))
    allowed, gpu_counts = _karpenter_requirements(spec)
    pool.allowed = allowed
    types = _karpenter_types(allowed)
    if types:
        add_types(pool, types)
    for gpu_name in (g for p in _PROVIDERS for g in allowed.get(f"{p}/instance-gpu-name", ())):
        if not pool.gpus:
            add_gpu(pool, gpu_name, max(gpu_counts) if gpu_counts else 0)
    if not types and not pool.gpus:
        _categories(pool, [c for p in _PROVIDERS for c in allowed.get(f"{p}/instance-category", ())])
    if gpu_counts and pool.gpus:
        pool.gpus = tuple((g, n) for g, n in pool.gpus if not n or n in gpu_counts or max(gpu_counts) < n)
    limits = root.at("spec", "limits") if nodepool else spec.get("limits")
    if isinstance(limits, Mapping):
        pool.max_gpus = number(limits.get("nvidia.com/gpu"))
    return [pool]


def _categories(pool: Pool, categories: list[str]) -> None:
    """Instance categories alone (karpenter.k8s.aws/instance-category In [c, m, r]): a category of the
    accelerated families may carry a GPU kvlint cannot name; the others carry none."""
    for c in categories:
        if c in AWS_ACCELERATED:
            pool.unknown_types = (*pool.unknown_types, f"instance-category {c}")
        pool.instance_types = (*pool.instance_types, f"instance-category {c}")


def _karpenter_requirements(spec: Mapping) -> tuple[dict[str, tuple[str, ...]], list[int]]:
    """The values each `In` requirement allows, and the GPU counts per node the requirements admit."""
    allowed: dict[str, tuple[str, ...]] = {}
    gpu_counts: list[int] = []
    for req in spec.seq("requirements") or ():
        if not isinstance(req, Mapping):
            continue
        key, op, values = text(req.get("key")) or "", text(req.get("operator")), strings(req.get("values"))
        if op == "In":
            allowed[key] = tuple(values)
        if key.endswith("/instance-gpu-count") and op in ("In", "Gt"):
            gpu_counts.extend(int(v) + (1 if op == "Gt" else 0) for v in values if v.isdigit())
    return allowed, gpu_counts


def _karpenter_types(allowed: dict[str, tuple[str, ...]]) -> list[str]:
    """Instance types the requirements name, else those of the families (and sizes) they allow."""
    types = [t for k in _KARPENTER_TYPE_KEYS for t in allowed.get(k, ())]
    if types:
        return types
    families = [f for p in _PROVIDERS for f in allowed.get(f"{p}/instance-family", ())]
    sizes = {s for p in _PROVIDERS for s in allowed.get(f"{p}/instance-size", ())}
    out: list[str] = []
    for fam in families:
        known = [t for t in family_types(fam) if not sizes or t.split(".", 1)[1] in sizes]
        # a family the catalog lists no type of: its types by the sizes allowed (m5.xlarge ...), or the
        # family's name alone (add_types tells a family with no accelerator from one it does not know)
        out.extend(known or [f"{fam}.{s}" for s in sorted(sizes)] or [fam])
    return out


def eksctl(root: Mapping, path: str, _known: Known) -> list[Pool]:
    out: list[Pool] = []
    for key, kind, label in (
        ("nodeGroups", "eksctl node group", "alpha.eksctl.io/nodegroup-name"),
        ("managedNodeGroups", "eksctl managed node group", "eks.amazonaws.com/nodegroup"),
    ):
        for group in root.seq(key) or ():
            if not isinstance(group, Mapping):
                continue
            name = text(group.get("name")) or key
            pool = Pool(name, kind, group.where(path), labels=label_map(group.get("labels")))
            pool.labels[label] = name
            pool.taints = taint_list(group.get("taints"))
            types = strings(group.get("instanceType")) + strings(group.get("instanceTypes"))
            types += strings(group.at("instancesDistribution", "instanceTypes"))
            add_types(pool, types)
            pool.max_nodes = number(group.get("maxSize")) or number(group.get("desiredCapacity"))
            out.append(pool)
    return out


def container_node_pool(root: Mapping, path: str, _known: Known) -> list[Pool]:
    name = text(root.at("metadata", "name")) or "default-pool"
    config = root.at("spec", "nodeConfig")
    config = config if isinstance(config, Mapping) else Mapping((0, 0, 0, 0))
    accels = [
        (text(a.get("type")) or "", number(a.get("count")) or 1)
        for a in config.seq("guestAccelerator") or ()
        if isinstance(a, Mapping)
    ]
    pool = gke_pool(name, "GKE ContainerNodePool", root.where(path), text(config.get("machineType")), accels)
    pool.labels.update(label_map(config.get("labels")))
    pool.taints = (*pool.taints, *taint_list(config.get("taint")))
    pool.max_nodes = number(root.at("spec", "autoscaling", "maxNodeCount")) or number(
        root.at("spec", "nodeCount")
    )
    return [pool]


def machine_set(root: Mapping, path: str, known: Known) -> list[Pool]:
    """An OpenShift MachineSet, or a Cluster API MachineDeployment / MachineSet."""
    name = text(root.at("metadata", "name")) or "machineset"
    tmpl = root.at("spec", "template", "spec")
    tmpl = tmpl if isinstance(tmpl, Mapping) else Mapping((0, 0, 0, 0))
    api = str(root.value("apiVersion") or "")
    pool = Pool(
        name,
        f"{'Cluster API' if 'cluster.x-k8s.io' in api else 'OpenShift'} {root.value('kind')}",
        root.where(path),
    )
    pool.labels = label_map(tmpl.at("metadata", "labels"))
    pool.taints = taint_list(tmpl.get("taints"))
    provider = tmpl.at("providerSpec", "value")
    ref = tmpl.get("infrastructureRef")
    if isinstance(ref, Mapping):
        target = known.get(str(ref.value("kind")), {}).get(str(ref.value("name")))
        provider = target.at("spec", "template", "spec") if target is not None else None
    if isinstance(provider, Mapping):
        types = (
            strings(provider.get("instanceType"))
            + strings(provider.get("vmSize"))
            + strings(provider.get("machineType"))
        )
        add_types(pool, types)
        for gpu in provider.seq("gpus") or ():
            if isinstance(gpu, Mapping):
                add_gpu(pool, text(gpu.get("type")) or "", number(gpu.get("count")) or 1)
    annotations = root.at("metadata", "annotations")
    max_size = (
        number(annotations.get("cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"))
        if isinstance(annotations, Mapping)
        else None
    )
    pool.max_nodes = max_size or number(root.at("spec", "replicas"))
    return [pool]


def aso_agent_pool(root: Mapping, path: str, _known: Known) -> list[Pool]:
    spec = root.get("spec")
    spec = spec if isinstance(spec, Mapping) else Mapping((0, 0, 0, 0))
    name = text(spec.get("azureName")) or text(root.at("metadata", "name")) or "agentpool"
    return [agent_pool(name, "AKS agent pool", root.where(path), spec)]


def agent_pool(name: str, kind: str, where: Location, spec: Mapping) -> Pool:
    """An AKS agent pool profile (ARM / ASO field names)."""
    pool = Pool(name, kind, where, labels=label_map(spec.get("nodeLabels")))
    pool.labels.update({"agentpool": name, "kubernetes.azure.com/agentpool": name})
    pool.taints = taint_list(spec.get("nodeTaints"))
    add_types(pool, strings(spec.get("vmSize")))
    pool.max_nodes = number(spec.get("maxCount")) or number(spec.get("count"))
    return pool


def compute_class(root: Mapping, path: str, _known: Known) -> list[Pool]:
    name = text(root.at("metadata", "name")) or "default"
    pool = Pool(name, "GKE ComputeClass", root.where(path), labels={COMPUTE_CLASS: name})
    pool.taints = ((COMPUTE_CLASS, name, "NoSchedule"),)
    priorities = root.at("spec", "priorities")
    for rule in priorities.items if isinstance(priorities, Sequence) else ():
        if not isinstance(rule, Mapping):
            continue
        gpu = rule.get("gpu")
        gpu_type = text(gpu.get("type")) if isinstance(gpu, Mapping) else None
        machine, family = text(rule.get("machineType")), text(rule.get("machineFamily"))
        if machine:
            add_types(pool, [machine])
        if gpu_type and isinstance(gpu, Mapping):
            add_gpu(pool, gpu_type, number(gpu.get("count")) or 1)
        elif family and not machine:
            pool.instance_types = (*pool.instance_types, family)
            if family in GCP_ACCELERATED:
                pool.unknown_types = (*pool.unknown_types, family)
        elif rule.get("tpu") is not None:
            tpu = rule.get("tpu")
            kind = text(tpu.get("type")) if isinstance(tpu, Mapping) else None
            pool.instance_types = (*pool.instance_types, f"tpu {kind or '?'}")
    if pool.gpus:  # GKE taints GPU nodes nvidia.com/gpu=present:NoSchedule (node_pools module docstring)
        pool.taints = (*pool.taints, ("nvidia.com/gpu", "present", "NoSchedule"))
    return [pool]
