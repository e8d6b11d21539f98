"""KubeAI's own chart values (`helm install kubeai kubeai/kubeai -f values.yaml`): its `resourceProfiles`.

Source: substratusai/kubeai@2f32ef49 charts/kubeai/templates/configmap.yaml renders `.Values.resourceProfiles`
into the system config that internal/config/system.go `ResourceProfile` reads (imageName, requests, limits,
nodeSelector, affinity, tolerations, schedulerName, runtimeClassName); every Model naming the profile gets its
pods placed by that nodeSelector / affinity. A GPU node label no real node carries leaves each such Model's pods
Pending (KV002 warning with the closest real value); a profile key the struct lacks is dropped (KV005).
The file holds no workload: these are file-level findings.
"""

from __future__ import annotations

from kvlint.extract.charts.chart_layouts import keys_not_read
from kvlint.extract.pod import gpu_selectors, pods
from kvlint.findings import Issue
from kvlint.load.tree import Mapping
from kvlint.record import replace

SOURCE = "substratusai/kubeai@2f32ef49 internal/config/system.go ResourceProfile"
PROFILE_KEYS = frozenset(
    [
        "imageName",
        "requests",
        "limits",
        "nodeSelector",
        "affinity",
        "tolerations",
        "schedulerName",
        "runtimeClassName",
    ]
)
PLACES = {"resources": "limits / requests", "image": "imageName", "gpus": "limits (nvidia.com/gpu)"}


def is_kubeai_chart(root: Mapping) -> bool:
    """Values with a `resourceProfiles` mapping of profile mappings (KubeAI's chart and its overlays)."""
    profiles = root.map("resourceProfiles")
    return (
        "apiVersion" not in root
        and profiles is not None
        and len(profiles) > 0
        and all(isinstance(v, Mapping) for _, v in profiles.items())
    )


def issues(root: Mapping, path: str) -> list[Issue]:
    """Findings on the values' resourceProfiles (registry.DOCUMENT_CHECKS runs it on KubeAI chart values)."""
    profiles = root.map("resourceProfiles")
    assert profiles is not None
    out: list[Issue] = []
    for name, profile in profiles.items():
        if not isinstance(profile, Mapping):
            continue
        at = f"resourceProfiles.{name}."
        out += [
            replace(
                i,
                message=i.message.replace("Helm ignores it", "KubeAI ignores it").replace(
                    "the chart reads this setting", "KubeAI reads this setting"
                ),
            )
            for i in keys_not_read(profile, path, "KubeAI system config", PROFILE_KEYS, PLACES, SOURCE, at)
        ]
        out += gpu_selectors.labels_no_node_carries(pods.node_labels(profile, path))
    return out
