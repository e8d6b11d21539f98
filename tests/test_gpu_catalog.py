"""Today's cards and the instance types that carry them: names, memory as the engine sees it (or
the marketed figure, said so), and the source of each."""

from __future__ import annotations

import pytest

from kvlint.catalog import gpus

GIB = 1 << 30


@pytest.mark.parametrize(
    ("name", "gpu_id"),
    [
        ("H20", "h20"),
        ("NVIDIA-H20", "h20"),
        ("H200 NVL", "h200-nvl"),
        ("NVIDIA-H200-NVL", "h200-nvl"),
        ("H800", "h800"),
        ("NVIDIA H800 80GB HBM3", "h800"),
        ("NVIDIA-A800-SXM4-80GB", "a800-80gb-sxm"),
        ("NVIDIA-RTX-PRO-6000-Blackwell-Workstation-Edition", "rtx-pro-6000-blackwell-workstation"),
        ("MI355X", "mi355x"),
        ("MI325X", "mi325x"),
        ("MI210", "mi210"),
        ("NVIDIA B300 SXM6 AC", "b300"),
        ("NVIDIA GeForce RTX 4070 SUPER", "rtx-4070-super"),  # 12 GB, not the 8 GB laptop part below
        ("RTX 4070 8GB", "rtx-4070-8gb"),
    ],
)
def test_new_cards_by_name_and_label(name, gpu_id):
    spec = gpus.lookup(name)
    assert spec is not None and spec.id == gpu_id


def test_memory_figures_say_how_they_are_known():
    h20 = gpus.by_id("h20")
    assert h20.engine_bytes == 97285 * 2**20 and "total_memory=97285MB" in h20.engine_bytes_source
    for gid, gib_ in (("mi355x", 288), ("mi325x", 256), ("mi210", 64)):
        spec = gpus.by_id(gid)
        assert spec.engine_bytes == gib_ * GIB and spec.engine_bytes_source.startswith("marketed only"), gid
    nvl = gpus.by_id("h200-nvl")
    assert nvl.smi_total_mib == 143771 and "no torch total_memory" in nvl.engine_bytes_source
    # the engine never sees more than nvidia-smi's total
    for spec in (gpus.by_id(i) for i in ("h20", "h200-nvl", "h800", "a800-80gb-sxm")):
        assert spec.smi_total_mib is None or spec.engine_bytes <= spec.smi_total_mib * 2**20, spec.id


@pytest.mark.parametrize(
    ("instance", "gpu_id", "count"),
    [
        ("p6-b300.48xlarge", "b300", 8),
        ("p6e-gb200.36xlarge", "gb200", 4),
        ("g7e.12xlarge", "rtx-pro-6000-blackwell-server", 2),
        ("p5en.48xlarge", "h200", 8),
        ("g6e.xlarge", "l40s", 1),
        ("a4x-highgpu-4g", "gb200", 4),
        ("g4-standard-96", "rtx-pro-6000-blackwell-server", 2),
        ("a3-megagpu-8g", "h100-sxm", 8),
        ("a3-ultragpu-8g", "h200", 8),
        ("Standard_ND96isr_MI300X_v5", "mi300x", 8),
        ("Standard_ND128isr_NDR_GB200_v6", "gb200", 4),
        ("Standard_ND96isr_H200_v5", "h200", 8),
        ("BM.GPU.H200.8", "h200", 8),
        ("BM.GPU.MI300X.8", "mi300x", 8),
        ("BM.GPU.L40S.4", "l40s", 4),
        ("BM.GPU.A100-v2.8", "a100-80gb-sxm", 8),
        ("BM.GPU4.8", "a100-40gb-sxm", 8),
    ],
)
def test_instance_types_of_today(instance, gpu_id, count):
    spec, n, source = gpus.instance(instance)
    assert (spec.id, n) == (gpu_id, count) and source


def test_every_card_and_instance_has_a_source():
    data = gpus._data()
    for entry in data["gpus"]:
        assert entry.get("sources") and entry.get("engine_bytes_source") is not None, entry["id"]
    for item in data["instances"]:
        assert item.get("source") and gpus.by_id(item["gpu"]) is not None, item["type"]


def test_smi_total_and_engine_total_are_read_in_the_same_ecc_mode():
    """The engine sees the nvidia-smi total less the driver's reservation: 0-3 % on every card with
    both figures. Enabling ECC on a GDDR card takes another ~6 % (A40 / RTX A6000: 49140 MiB ECC off,
    46068 MiB ECC on), so a gap above 4 % means the two figures come from cards in different ECC
    modes (the A40 entry carried an ECC-off smi total beside an ECC-on deviceQuery: 7.6 %)."""
    checked = 0
    for entry in gpus._data()["gpus"]:
        smi, engine = entry.get("smi_total_mib"), entry.get("engine_bytes")
        if not smi or not engine:
            continue
        gap = (smi * 2**20 - engine) / (smi * 2**20)
        assert 0 <= gap < 0.04, (entry["id"], f"{gap:.1%}")
        checked += 1
    assert checked >= 30
    a40 = gpus.by_id("a40")
    assert a40.smi_total_mib == 46068 and a40.engine_bytes == 47608692736
