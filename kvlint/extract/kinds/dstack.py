"""dstack run configurations (`.dstack.yml`, `*.dstack.yml`): services, tasks and dev environments.

dstack runs `commands` in one shell, joined with `&&` (`/bin/sh -i -c`, /bin/bash without `image`:
dstackai/dstack src/dstack/_internal/server/services/jobs/configurators/base.py:247-282, 576-582
@0.21.2), or, with `entrypoint`, the entrypoint with the commands as its arguments; with neither, the
image's own; a dev environment runs its `init` commands (configurations.py:735,
configurators/dev.py). `env` is a mapping or `NAME=value` / `NAME` items (a bare name comes from the environment
at `dstack apply`, src/dstack/_internal/core/models/envs.py:9-40). The runner sets DSTACK_GPUS_PER_NODE,
DSTACK_NODES_NUM, DSTACK_GPUS_NUM (all nodes' GPUs) and DSTACK_NODE_RANK for the commands
(runner/internal/runner/executor/executor.go:472-502). `resources.gpu` is read by dstack_gpu.py; a request
several GPU types satisfy is checked on each, as a fleet is; the count is the least the request can be
given. Without `resources.shm_size` the container has Docker's 64 MiB /dev/shm
(runner/internal/shim/models.go:96, docker.go:768-810). `replicas` as a list is replica groups, each
with its own `commands`, `resources` and `image` over the service's (configurations.py:986-1133). `nodes` (a task's) is the nodes of one replica; `replicas` repeats
the whole replica, so the plan of one is the plan of each.
"""

from __future__ import annotations

import shlex

from kvlint import engines
from kvlint.codes import NOT_CHECKABLE, UNKNOWN_GPU, UNPARSED_SETTING
from kvlint.deployment import Deployment, default, inferred, stated
from kvlint.extract.kinds import dstack_gpu
from kvlint.extract.pod import container as ct
from kvlint.extract.pod import synthetic as syn
from kvlint.extract.pod.argv import EnvVar, Token, _split_commands, _split_script, container_commands
from kvlint.extract.pod.engine_args import find_launch
from kvlint.extract.pod.gpu_sharing import NOT_MODELLED
from kvlint.findings import Issue, IssueKind, Location, Severity
from kvlint.load.tree import Mapping, Node, Scalar, Sequence

TYPES = ("service", "task", "dev-environment")
DOCKER_SHM_DEFAULT = "64Mi"


def is_dstack(root: Mapping) -> bool:
    """`type: service | task | dev-environment` with what a run configuration has (a GitHub workflow,
    a compose file or a chart's values have no top-level `type` of these)."""
    return (
        "apiVersion" not in root
        and root.value("type") in TYPES
        and any(k in root for k in ("commands", "image", "python", "entrypoint", "resources", "ide"))
    )


def extract(root: Mapping, path: str, base_dir: str, lines: list[str]) -> list[Deployment]:
    groups = root.get("replicas")
    if isinstance(groups, Sequence):  # replica groups: each its own commands, resources, image
        out = []
        for i, group in enumerate(groups.items):
            if isinstance(group, Mapping):
                view = syn.mapping(root, {**syn.merged(root, group), "name": root.get("name")})
                d = _run(view, path, base_dir, lines, f"/{group.value('name') or i}")
                out += [d] if d is not None else []
        return out
    d = _run(root, path, base_dir, lines)
    return [d] if d is not None else []


def _env(root: Mapping, path: str) -> dict[str, EnvVar]:
    env: dict[str, EnvVar] = {}
    box = root.get("env")
    if isinstance(box, Mapping):
        for key, node in box.items():
            if isinstance(node, Scalar):
                env[key] = EnvVar(None if node.value is None else str(node.value), node.where(path))
    elif isinstance(box, Sequence):
        for item in box.items:
            if isinstance(item, Scalar) and isinstance(item.value, str):
                key, eq, value = item.value.partition("=")
                env[key] = EnvVar(value if eq else None, item.where(path))  # `NAME`: set at dstack apply
    return env


def _commands(root: Mapping, path: str, lines: list[str], env: dict[str, EnvVar]) -> list[list[Token]]:
    seq = root.get("commands") or (root.get("init") if root.value("type") == "dev-environment" else None)
    items: list[Node] = [n for n in seq.items if isinstance(n, Scalar)] if isinstance(seq, Sequence) else []
    entry = root.scalar("entrypoint")
    if entry is not None and entry.value:
        try:
            split = shlex.split(str(entry.value))
        except ValueError:  # an unclosed quote: dstack's own shlex.split refuses it too (base.py:261)
            split = str(entry.value).split()
        words: list[Node] = [syn.scalar(entry, w) for w in split]
        container = syn.mapping(
            root, {"command": syn.sequence(entry, words), "args": syn.sequence(root, items)}
        )
        return container_commands(container, path, lines, env)
    tokens: list[Token] = []
    for node in items:
        if isinstance(node, Scalar) and node.value is not None:
            tokens += [*_split_script(node, path, lines, env), Token(";", None)]
    return _split_commands(tokens)


def _run(root: Mapping, path: str, base_dir: str, lines: list[str], group: str = "") -> Deployment | None:
    image = root.scalar("image")
    image_text = str(image.value) if image is not None and image.value is not None else ""
    gpu_node = root.at("resources", "gpu")
    nodes = _nodes(root, path)
    request, cards, problem = _request(gpu_node, path, bool(image_text))
    count = dstack_gpu.least_count(request, cards) if request is not None else None
    env = {**_builtins(count, nodes, gpu_node, root, path), **_env(root, path)}
    launch = find_launch(_commands(root, path, lines, env), image_text)
    if launch is None:
        return None  # no engine started: a file naming one is said by link/unread.py (KV004)
    name = root.scalar("name")
    label = (str(name.value) if name is not None and name.value is not None else "(root)") + group
    d = Deployment(path, (name or root).where(path), "dstack", label, base_dir)
    where = launch.entry.where if launch.entry is not None and launch.entry.where else root.where(path)
    d.engine = stated(launch.engine, where, launch.how)
    d.args_where = where
    if image is not None and image_text:
        d.image = stated(image_text, image.where(path))
        version = ct.image_version(image_text, launch.engine)
        if version:
            d.engine_version = inferred(version, f"from the image tag {image_text}", image.where(path))
    ct.read_engine(d, launch, env)
    _served_model(d, root, path)
    if problem is not None:
        d.issues.append(problem)
        d.unreadable.append("gpus_per_pod")
    if request is not None and gpu_node is not None and count is not None:
        _gpu(d, request, cards, count, gpu_node, path)
    if nodes is not None and nodes[0] > 1:
        d.pods = stated(nodes[0], nodes[1], "dstack nodes: the nodes of one replica")
    _shm(d, root, path)
    ct.finish(d)
    return d


def _nodes(root: Mapping, path: str) -> tuple[int, Location | None] | None:
    node = root.scalar("nodes")
    if node is None or isinstance(node.value, bool) or not isinstance(node.value, int) or node.value < 1:
        return None
    return node.value, node.where(path)


def _builtins(
    count: int | None,
    nodes: tuple[int, Location | None] | None,
    gpu_node: Node | None,
    root: Mapping,
    path: str,
) -> dict[str, EnvVar]:
    """What dstack's runner sets for the commands (executor.go:488-502); on the node that serves,
    DSTACK_NODE_RANK is 0 (the master node)."""
    where = gpu_node.where(path) if gpu_node is not None else None
    n, node_where = nodes if nodes is not None else (1, None)
    env = {
        "DSTACK_NODES_NUM": EnvVar(str(n), node_where or where),
        "DSTACK_NODE_RANK": EnvVar("0", node_where or where),
    }
    if count is not None:
        env["DSTACK_GPUS_PER_NODE"] = EnvVar(str(count), where)
        env["DSTACK_GPUS_NUM"] = EnvVar(str(count * n), where)
    return env


def _request(
    gpu_node: Node | None, path: str, image_set: bool
) -> tuple[dstack_gpu.GpuRequest | None, list[dstack_gpu.Card], Issue | None]:
    if gpu_node is None:
        return None, [], None
    try:
        request = dstack_gpu.parse(gpu_node)
    except dstack_gpu.GrammarError as exc:
        return (
            None,
            [],
            Issue(
                UNPARSED_SETTING,
                f"resources.gpu: {exc}; dstack refuses the configuration",
                gpu_node.where(path),
                fix="write it as dstack reads it: `H100:2`, `24GB..:1..2`, `A100,H100:8`, or a mapping of name/memory/count",
            ),
        )
    return request, dstack_gpu.admitted(request, image_set), None


def _served_model(d: Deployment, root: Mapping, path: str) -> None:
    """dstack's `model:` is the name the service registers on its OpenAI endpoint; when the engine's own
    model argument could not be read, it is the best word of what is served."""
    if d.model is not None:
        return
    node = root.get("model")
    if isinstance(node, Mapping):
        node = node.get("name")
    if isinstance(node, Scalar) and isinstance(node.value, str) and node.value:
        d.model = inferred(node.value, "dstack `model:` (the name the service registers)", node.where(path))


def _gpu(
    d: Deployment,
    request: dstack_gpu.GpuRequest,
    cards: list[dstack_gpu.Card],
    count: int,
    gpu_node: Node,
    path: str,
) -> None:
    where = gpu_node.where(path)
    written = f"resources.gpu {_written(gpu_node)}"
    if request.count[1] == 0:  # `gpu: 0`: no GPU asked for (gpuhunt constraints.py:42)
        d.gpus_per_pod = stated(0, where, f"{written}: no GPU")
        d.issues.append(
            Issue(
                UNPARSED_SETTING,
                f"{d.label()}: {written} asks dstack for no GPU, so {engines.display(d.engine_name)} runs on an instance without one",
                where,
                fix="ask for the GPUs the engine needs, e.g. `gpu: H100:2` or `gpu: 24GB..`",
                severity=Severity.WARNING,
            )
        )
        return
    fixed = request.count[0] is not None and request.count[0] == request.count[1]
    note = (
        written
        if fixed
        else f"{written}: count {dstack_gpu.text(request.count)}, planned at the least, {count}"
    )
    d.gpus_per_pod = stated(count, where, note) if fixed else inferred(count, note, where)
    kinds = {dstack_gpu.accelerator_kind(c.vendor) for c in cards}
    if cards and "gpu" not in kinds:
        kind = sorted(kinds)[0]
        d.accelerator = kind
        if kind not in NOT_MODELLED:
            d.issues.append(
                Issue(
                    NOT_CHECKABLE,
                    f"{d.label()}: runs on {kind} accelerators ({written}); kvlint models the memory of NVIDIA and "
                    "AMD GPUs: not checked",
                    where,
                    kind=IssueKind.ACCELERATOR_NOT_MODELLED,
                )
            )
        return
    ids = list(dict.fromkeys(c.id for c in cards if c.id))
    unknown = list(
        dict.fromkeys(c.name for c in cards if not c.id and dstack_gpu.accelerator_kind(c.vendor) == "gpu")
    )
    if not cards:
        _named_elsewhere(d, request, written, where)
        return
    also = f"; also {', '.join(unknown)}, whose memory kvlint does not know" if unknown else ""
    if len(ids) == 1:
        one = request.names is not None and len(request.names) == 1 and not unknown
        d.gpu = (
            stated(ids[0], where, written)
            if one
            else inferred(ids[0], f"the one GPU {written} admits{also}", where)
        )
    elif ids:
        names = ", ".join(dict.fromkeys(c.name for c in cards if c.id))
        d.gpu_candidates = inferred(tuple(ids), f"dstack {written} ({names}{also})", where)
        d.gpu_candidates_fix = inferred("name one GPU type (e.g. `gpu: H100:2`)", "dstack", where)


def _named_elsewhere(d: Deployment, request: dstack_gpu.GpuRequest, written: str, where: Location) -> None:
    """No card of dstack's catalogue fits: a name kvlint knows by another spelling, else a warning."""
    from kvlint.catalog import gpus

    specs = [gpus.lookup(n) for n in request.names or ()]
    found = [s for s in specs if s is not None]
    if len(found) == 1 and len(specs) == 1:
        d.gpu = inferred(found[0].id, f"{written} (a name dstack's catalogue does not list)", where)
        return
    d.issues.append(
        Issue(
            UNKNOWN_GPU,
            f"{written} admits no GPU of dstack's catalogue (gpuhunt): dstack finds no offer for it",
            where,
            fix="use a name and memory dstack lists (`dstack offer` shows them), e.g. `H100:2` or `24GB..`",
            severity=Severity.WARNING,
        )
    )


def _written(node: Node) -> str:
    if isinstance(node, Scalar):
        return str(node.value)
    if isinstance(node, Mapping):
        return "{" + ", ".join(f"{k}: {_written(v)}" for k, v in node.items()) + "}"
    if isinstance(node, Sequence):
        return "[" + ", ".join(_written(v) for v in node.items) + "]"
    return "?"


def _shm(d: Deployment, root: Mapping, path: str) -> None:
    size = root.at("resources", "shm_size")
    d.has_shm = True
    gib = _size(size)
    if isinstance(size, Scalar) and gib is not None:  # dstack's GB is a GiB (dstack_gpu.memory)
        d.shm_size = stated(
            f"{gib:g}Gi", size.where(path), f"resources.shm_size {size.value} (dstack GB = GiB)"
        )
    else:  # the shim's default: Docker's 64 MiB /dev/shm (KV207 says what that means for several GPUs)
        d.has_shm = False
        d.shm_size = default(
            DOCKER_SHM_DEFAULT, "Docker's default /dev/shm of 64 MiB (no resources.shm_size)"
        )


def _size(node: Node | None) -> float | None:
    if not isinstance(node, Scalar) or node.value is None:
        return None
    try:
        return dstack_gpu.memory(node.value)
    except dstack_gpu.GrammarError:
        return None
