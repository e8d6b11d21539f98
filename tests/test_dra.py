"""DRA claims (resource.k8s.io) and shared GPUs: what the pod gets, read from the claim beside it."""

from __future__ import annotations

from conftest import FIXTURES

from kvlint.catalog import dra_devices
from kvlint.extract.pod.cel import Selector
from kvlint.run.lint import read_and_lint
from kvlint.run.settings import Settings

POD = """apiVersion: apps/v1
kind: Deployment
metadata: {{name: m}}
spec:
  replicas: {replicas}
  template:
    spec:
      resourceClaims:
        - name: gpu
          {ref}: {claim}
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.1
          args: ["--model", "{model}", "--max-model-len", "8192", "--max-num-seqs", "8"{args}]
          resources:
            claims: [{{name: gpu}}]
"""

V1 = """apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {{name: {name}}}
spec:
  spec:
    devices:
      requests:
        - name: gpu
          exactly:
            deviceClassName: {cls}
            count: {count}
            selectors:
              - cel:
                  expression: >-
                    {cel}
"""

V1BETA1 = """apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata: {{name: {name}}}
spec:
  devices:
    requests:
      - name: gpu
        deviceClassName: {cls}
        count: {count}
        selectors:
          - cel:
              expression: >-
                {cel}
"""


def pod(claim="c", ref="resourceClaimTemplateName", model="Qwen/Qwen2.5-7B-Instruct", replicas=1, args=""):
    return POD.format(claim=claim, ref=ref, model=model, replicas=replicas, args=args)


def run(tmp_path, files: dict[str, str], main: str = "deploy.yaml"):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    result = read_and_lint(str(tmp_path / main), Settings(), main)
    assert not isinstance(result, str), result
    return result


def nvidia(cel: str):
    return [s.id for s, f in dra_devices.devices("nvidia", "gpu") if Selector(cel).admits(f) is not False]


def test_selector_terms_against_the_catalogue():
    unnamed = {s.id for s, f in dra_devices.devices("nvidia", "gpu") if "productName" not in f}
    h100 = nvidia('device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100 80GB HBM3"')
    assert set(h100) - unnamed == {"h100-sxm"}  # a card whose NVML name is unknown stays admitted
    # the NVML total of an H100 SXM is 81559 MiB: below 80 Gi (81920 MiB), so `>= 80Gi` leaves it out
    big = nvidia('device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("80Gi")) >= 0')
    assert "h100-sxm" not in big and "h200" in big and "b200" in big and "l4" not in big
    hopper = nvidia("device.attributes['gpu.nvidia.com'].architecture == 'Hopper'")
    assert set(hopper) >= {"h100-sxm", "h100-pcie", "h200", "gh200"} and "a100-80gb-sxm" not in hopper
    ada = nvidia('device.attributes["gpu.nvidia.com"].architecture == "Ada Lovelace"')
    assert "l4" in ada and "l40s" in ada and "h100-sxm" not in ada
    either = nvidia(
        'device.attributes["gpu.nvidia.com"].productName.matches("L40S|A10G") || '
        '(device.capacity["gpu.nvidia.com"].memory.isLessThan(quantity("16Gi")))'
    )
    # the last three are under 16 Gi
    assert set(either) - unnamed == {"l40s", "a10g", "t4", "rtx-4070-super", "rtx-a4000"}
    s = Selector('device.attributes["gpu.nvidia.com"].cudaComputeCapability.isGreaterThan(version("9.0.0"))')
    assert s.unread and s.admits({"productName": "x"}) is None  # not read: admits, and is named


def test_single_type_claim_in_the_same_file_becomes_the_gpu(tmp_path):
    cel = 'device.attributes["gpu.nvidia.com"].productName == "NVIDIA L4"'
    r = run(
        tmp_path,
        {"deploy.yaml": V1.format(name="c", cls="gpu.nvidia.com", count=2, cel=cel) + "---\n" + pod()},
    )
    (d,) = r.deployments
    assert d.gpu.id == "l4" and d.deployment.gpus.value == 2 and "DRA claim 'c'" in d.deployment.gpu.note


def test_v1beta1_claim_in_a_sibling_file_and_a_missing_claim(tmp_path):
    cel = 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("140Gi")) >= 0'
    claim = V1BETA1.format(name="big", cls="gpu.nvidia.com", count=1, cel=cel)
    r = run(tmp_path, {"claims.yaml": claim, "deploy.yaml": pod("big", "resourceClaimName")})
    (d,) = r.deployments
    cands = d.deployment.gpu_candidates.value
    assert "h200" in cands and "b200" in cands and "h100-sxm" not in cands
    (info,) = [f for f in r.findings if f.rule == "KV002"]
    assert "admits" in info.message and "fits on" in info.message and info.severity.name == "INFO"
    r = run(tmp_path, {"deploy.yaml": pod("nowhere")})
    (f,) = [f for f in r.findings if f.rule == "KV002" and "nowhere" in f.message]
    assert "not in this file or its directory" in f.message and f.where.line == 10


def test_mig_through_dra_and_a_product_name_no_card_has(tmp_path):
    cel = "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"
    r = run(
        tmp_path,
        {"deploy.yaml": V1.format(name="c", cls="mig.nvidia.com", count=1, cel=cel) + "---\n" + pod()},
    )
    (d,) = r.deployments
    assert set(d.deployment.gpu_candidates.value) == {
        "a100-40gb-sxm:1g.10gb",
        "a100-40gb-pcie:1g.10gb",
        "a100-80gb-sxm:1g.10gb",
        "a100-80gb-pcie:1g.10gb",
        "h100-sxm:1g.10gb",
        "h100-pcie:1g.10gb",
    }
    assert any(f.rule == "KV101" for f in r.findings)  # 7B bf16 weights in a 10 GB slice
    cel = 'device.attributes["gpu.nvidia.com"].productName == "A100"'  # the driver publishes the NVML name
    r = run(
        tmp_path,
        {"deploy.yaml": V1.format(name="c", cls="gpu.nvidia.com", count=1, cel=cel) + "---\n" + pod()},
    )
    (f,) = [f for f in r.findings if f.rule == "KV002" and "no GPU kvlint knows" in f.message]
    assert "Pending" in f.message


def test_amd_class_by_gfx_version(tmp_path):
    cel = 'device.attributes["gpu.amd.com"].targetGfxVersion == "gfx942"'
    r = run(
        tmp_path, {"deploy.yaml": V1.format(name="c", cls="gpu.amd.com", count=1, cel=cel) + "---\n" + pod()}
    )
    (d,) = r.deployments
    assert set(d.deployment.gpu_candidates.value) == {"mi300x", "mi325x"}  # both CDNA3
    cel = 'device.attributes["gpu.amd.com"].targetGfxVersion == "gfx950"'
    r = run(
        tmp_path, {"deploy.yaml": V1.format(name="c", cls="gpu.amd.com", count=1, cel=cel) + "---\n" + pod()}
    )
    (d,) = r.deployments
    assert d.gpu is not None and d.gpu.id == "mi355x" and "marketed only" in d.gpu.engine_bytes_source


def test_dra_fixtures():
    good = read_and_lint(str(FIXTURES / "dra" / "good-cel-memory.yaml"), Settings(), "good")
    assert [(f.rule, f.severity.name) for f in good.findings] == [("KV002", "INFO")]
    assert "fits on NVIDIA L40" in good.findings[0].message and "does not fit" not in good.findings[0].message
    bad = read_and_lint(str(FIXTURES / "dra" / "bad-cel-memory.yaml"), Settings(), "bad")
    rules = sorted((f.rule, f.severity.name) for f in bad.findings)
    assert rules == [("KV002", "INFO"), ("KV101", "ERROR")]
    assert "on every GPU the claim admits" in [f for f in bad.findings if f.rule == "KV101"][0].message


SHARING = """apiVersion: v1
kind: ConfigMap
metadata: {{name: time-slicing-config}}
data:
  any: |-
    version: v1
    sharing:
      timeSlicing:
        resources:
          - name: nvidia.com/gpu
            replicas: {n}
"""

SHARED = """apiVersion: apps/v1
kind: Deployment
metadata: {{name: s}}
spec:
  replicas: {replicas}
  template:
    spec:
      nodeSelector: {{nvidia.com/gpu.product: NVIDIA-A10G-SHARED}}
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.1
          args: ["--model", "Qwen/Qwen2.5-1.5B-Instruct", "--max-model-len", "4096", "--gpu-memory-utilization", "{u}"]
          resources:
            limits: {{nvidia.com/gpu.shared: 1}}
"""


def test_time_sliced_replicas_bound_the_pods_per_card(tmp_path):
    r = run(tmp_path, {"cm.yaml": SHARING.format(n=4), "deploy.yaml": SHARED.format(replicas=3, u=0.4)})
    (f,) = [f for f in r.findings if f.rule == "KV208"]
    assert "0.4 (s) + 0.4 (s) + 0.4 (s) = 1.20" in f.message and "shares each card 4 ways" in f.message
    assert f.where.line == 12
    r = run(tmp_path, {"cm.yaml": SHARING.format(n=2), "deploy.yaml": SHARED.format(replicas=3, u=0.4)})
    assert not [f for f in r.findings if f.rule == "KV208"]  # two per card: 0.8


def test_time_sliced_pair_fixtures():
    bad = read_and_lint(str(FIXTURES / "KV208" / "bad-time-sliced-pair.yaml"), Settings(), "bad")
    assert {f.rule for f in bad.findings} == {"KV208"} and len(bad.findings) == 2


def test_an_unseen_claim_beside_a_gpu_resource_is_no_warning(tmp_path):
    text = pod("efa-nic").replace(
        "claims: [{name: gpu}]", "claims: [{name: gpu}]\n            limits: {nvidia.com/gpu: 1}"
    )
    r = run(tmp_path, {"deploy.yaml": text})
    assert not [f for f in r.findings if "efa-nic" in f.message]  # a NIC claim, most likely
    assert r.deployments[0].deployment.gpus.value == 1


def test_pods_naming_one_resource_claim_share_its_gpu(tmp_path):
    cel = 'device.attributes["gpu.nvidia.com"].productName == "NVIDIA L4"'
    claim = V1BETA1.format(name="one-l4", cls="gpu.nvidia.com", count=1, cel=cel)
    deploy = pod("one-l4", "resourceClaimName", replicas=2, args=', "--gpu-memory-utilization", "0.6"')
    r = run(tmp_path, {"deploy.yaml": claim + "---\n" + deploy})
    (f,) = [f for f in r.findings if f.rule == "KV208"]
    assert "0.6 (m) + 0.6 (m) = 1.20" in f.message and "ResourceClaim 'one-l4'" in f.message
    deploy = pod("one-l4", "resourceClaimName", replicas=2, args=', "--gpu-memory-utilization", "0.45"')
    r = run(tmp_path, {"deploy.yaml": claim + "---\n" + deploy})
    assert not [f for f in r.findings if f.rule == "KV208"]
