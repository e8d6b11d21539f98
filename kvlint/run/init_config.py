"""`kvlint init`: write `.kvlint.yaml` with the cluster's fleet, so workloads that name no GPU are
planned on the GPUs the cluster has (run/fleet.py) instead of "GPU type is not stated".

The fleet comes from the node pools the repository defines (the same readers the lint run uses:
link/pools.py repository_pools: Karpenter, eksctl, Cluster API, GKE Config Connector, OpenShift
MachineSets, ARM, Terraform), or from a `kubectl get nodes -o json` dump (run/node_dump.py). The file
is written in the configuration's own `fleet:` format (run/config.py), one GPU per line with a
comment naming the definition it came from, in the current directory (where the configuration is
discovered from).
"""

from __future__ import annotations

import os

from kvlint.catalog import gpus as catalog
from kvlint.catalog.gpus import GpuSpec
from kvlint.run.config import CONFIG_NAMES

TARGET = CONFIG_NAMES[0]


class InitError(Exception):
    """Nothing written: the message says why (exit 1)."""


def pool_fleet(paths: tuple[str, ...]) -> tuple[list[tuple[GpuSpec, str]], list[str]]:
    """([(GPU, 'file:line: pool')], notes) of the node pools under each path (a file: its own pools)."""
    from kvlint.link.pools import repository_pools

    found: list[tuple[GpuSpec, str]] = []
    notes: list[str] = []
    for path in paths:
        if not os.path.exists(path):
            raise InitError(f"{path}: no such file or directory")
        root = path if os.path.isdir(path) else os.path.dirname(path) or "."
        only = None if os.path.isdir(path) else os.path.normpath(os.path.relpath(path, root))
        for pool in repository_pools(os.path.abspath(root)):
            if only is not None and os.path.normpath(pool.where.file) != only:
                continue
            where = f"{os.path.normpath(os.path.join(root, pool.where.file))}:{pool.where.line}"
            label = f"{where}: {pool.kind} {pool.name!r}"
            counts: dict[str, list[int]] = {}
            for gpu_id, count in pool.gpus:
                counts.setdefault(gpu_id, []).append(count)
            for gpu_id, per_node in counts.items():
                spec = catalog.by_id(gpu_id)
                lo, hi = min(per_node), max(per_node)
                if spec is not None:
                    found.append((spec, f"{label}, {lo if lo == hi else f'{lo}-{hi}'} per node"))
            if pool.unknown_types:
                notes.append(f"{label}: GPU of {', '.join(pool.unknown_types)} not known to kvlint")
    return found, notes


def render(found: list[tuple[GpuSpec, str]], origin: str) -> str:
    """The configuration text: `fleet:` with each GPU type once, its first definition in a comment."""
    by_id: dict[str, list[str]] = {}
    names: dict[str, str] = {}
    for spec, where in found:
        by_id.setdefault(spec.id, []).append(where)
        names[spec.id] = spec.name
    lines = [
        f"# Written by `kvlint init` ({origin}).",
        "# fleet: the cluster's GPU types; a workload that names no GPU is checked on each",
        "# (docs/configuration.md). Edit freely: kvlint init does not overwrite it without --force.",
        "fleet:",
    ]
    for gid, wheres in by_id.items():
        more = f" (and {len(wheres) - 1} more)" if len(wheres) > 1 else ""
        lines.append(f"  - {gid}  # {names[gid]}: {_comment(wheres[0])}{more}")
    return "\n".join(lines) + "\n"


def _comment(text: str) -> str:
    """A YAML comment stays one printable line (names come from the linted files: no line break, no
    control character that would make the written file unreadable or colour a terminal)."""
    return " ".join("".join(c if c.isprintable() else " " for c in text).split())


def run_init(
    paths: tuple[str, ...], nodes: str | None, force: bool, dry_run: bool = False
) -> tuple[str, str, int]:
    """(stdout, stderr, exit code); the command line neutralises each stderr line (report/safe.py)."""
    from kvlint.run.node_dump import DumpError, read_nodes

    target = TARGET
    if os.path.lexists(target) and not force and not dry_run:
        return "", f"kvlint init: {target} exists; not overwritten (pass --force to replace it)\n", 1
    try:
        if nodes is not None:
            found, notes = read_nodes(nodes)
            origin = f"nodes of {os.path.basename(nodes)}, kubectl get nodes -o json"
        else:
            found, notes = pool_fleet(paths or (".",))
            origin = "node pools under " + ", ".join(paths or (".",))
    except (DumpError, InitError) as exc:
        return "", f"kvlint init: {exc}\n", 1
    err = "".join(f"kvlint init: note: {n}\n" for n in notes)
    usable = [(s, w) for s, w in found if s.engine_bytes]
    if not usable:
        where = (
            "in the node list"
            if nodes is not None
            else "in any node pool under " + ", ".join(paths or (".",))
        )
        err += (
            f"kvlint init: no GPU kvlint knows {where}; nothing written "
            "(pass --nodes FILE with `kubectl get nodes -o json`, or set fleet: by hand)\n"
        )
        return "", err, 1
    text = render(usable, _comment(origin))
    if dry_run:
        return text, err, 0
    try:
        with open(target, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
    except OSError as exc:
        return "", err + f"kvlint init: {target}: cannot write: {exc.strerror or exc}\n", 1
    kinds = len({s.id for s, _ in usable})
    return f"wrote {target}: fleet of {kinds} GPU type{'s' if kinds != 1 else ''}\n{text}", err, 0
