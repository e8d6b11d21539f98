"""Kubernetes and Helm inputs (filled in by the Kubernetes extractors)."""

from __future__ import annotations

from kvlint.deployment import Deployment
from kvlint.findings import Issue
from kvlint.load.tree import Mapping


def extract(root: Mapping, path: str, base_dir: str) -> tuple[list[Deployment], list[Issue]]:
    return [], []
