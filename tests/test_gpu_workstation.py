"""Workstation and consumer cards in the GPU catalog: found by their own names only, with the memory
the engine sees below the nvidia-smi total (the driver's reservation)."""

from __future__ import annotations

import pytest

from kvlint.catalog import gpus


@pytest.mark.parametrize(
    ("name", "gid"),
    [
        ("NVIDIA RTX 4000 Ada Generation", "rtx-4000-ada"),  # the nvidia-smi name
        ("NVIDIA-RTX-4000-Ada-Generation", "rtx-4000-ada"),  # GFD's product label
        ("RTX 4000 Ada", "rtx-4000-ada"),
        ("RTX 4060 Ti 16GB", "rtx-4060-ti-16gb"),
        ("4090", "rtx-4090"),
    ],
)
def test_named_cards_are_found(name, gid):
    spec = gpus.lookup(name)
    assert spec is not None and spec.id == gid


@pytest.mark.parametrize(
    "name",
    [
        "NVIDIA RTX 4000 Ada Generation Laptop GPU",  # a laptop part with less memory
        "RTX 4000",  # Quadro RTX 4000 (Turing, 8 GB), not the Ada card
        "NVIDIA GeForce RTX 4060 Ti",  # the 8 GB and 16 GB cards share this name and GFD label
        "RTX 4060 Ti 8GB",
        "4090D",  # the China-market RTX 4090 D
        "NVIDIA GeForce RTX 4090 D",
        "RTX 4090 Laptop GPU",
    ],
)
def test_other_cards_with_close_names_are_not_taken_for_them(name):
    assert gpus.lookup(name) is None


@pytest.mark.parametrize("gid", ["rtx-4000-ada", "rtx-4060-ti-16gb"])
def test_engine_memory_is_below_the_smi_total_and_sourced(gid):
    spec = gpus.by_id(gid)
    assert spec is not None and spec.engine_bytes is not None
    smi = spec.smi_total_mib * 2**20
    assert 0.95 * smi < spec.engine_bytes < smi  # the driver keeps a few hundred MiB
    assert "deviceQuery" in spec.engine_bytes_source
