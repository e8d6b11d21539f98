"""SkyPilot task / service YAML: `resources.accelerators` and a `run:` script that starts the engine."""

from __future__ import annotations

from kvlint.deployment import Deployment, inferred, stated
from kvlint.extract.pod import container as ct
from kvlint.extract.pod.argv import EnvVar, _split_commands, _split_script
from kvlint.extract.pod.engine_args import find_launch
from kvlint.findings import Location
from kvlint.load.tree import Mapping, Node, Scalar


def is_skypilot(root: Mapping) -> bool:
    return isinstance(root.get("run"), Scalar) and (
        "resources" in root or "service" in root or "envs" in root
    )


def extract(root: Mapping, path: str, base_dir: str, lines: list[str]) -> list[Deployment]:
    run = root.scalar("run")
    acc = root.at("resources", "accelerators")
    where = acc.where(path) if acc is not None else None
    choices = _accelerator_choices(acc)
    nodes = root.scalar("num_nodes")
    env = {**_builtins(choices, where, nodes, path), **_envs(root, path)}
    commands = _split_commands(_split_script(run, path, lines, env))  # type: ignore[arg-type]
    launch = find_launch(commands, "")
    if launch is None:
        return []
    d = Deployment(path, root.where(path), "skypilot", "(root)", base_dir)
    d.engine = stated(launch.engine, launch.entry.where if launch.entry else run.where(path), launch.how)  # type: ignore[union-attr]
    d.args_where = d.engine.where
    ct.read_engine(d, launch, env)
    if choices:
        _gpu(d, choices, where)
    count = _count(nodes) if nodes is not None else None
    if nodes is not None and count is not None and count != 1:
        d.pods = stated(count, nodes.where(path), "SkyPilot num_nodes: the nodes of one replica")
    ct.finish(d)
    return [d]


def _count(node: Scalar) -> int | None:
    value = node.value
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _builtins(
    choices: list[tuple[str, int]], where: Location | None, nodes: Scalar | None, path: str
) -> dict[str, EnvVar]:
    """The variables SkyPilot sets for `run` (docs.skypilot.co running-jobs/environment-variables:
    SKYPILOT_NUM_GPUS_PER_NODE from resources.accelerators, SKYPILOT_NUM_NODES from num_nodes
    (default 1), SKYPILOT_NODE_RANK 0 on the head node, which is the one that serves). With several
    accelerator choices the count is the one kvlint plans for (the smallest card's), as the
    variable follows the choice SkyPilot makes. SKYPILOT_NODE_IPS is known only at run time."""
    env: dict[str, EnvVar] = {}
    if choices:
        env["SKYPILOT_NUM_GPUS_PER_NODE"] = EnvVar(str(_pick(choices)[1]), where)
    count = _count(nodes) if nodes is not None else None
    node_where = nodes.where(path) if nodes is not None else None
    env["SKYPILOT_NUM_NODES"] = EnvVar(str(count or 1), node_where or where)
    env["SKYPILOT_NODE_RANK"] = EnvVar("0", node_where or where)
    return env


def _envs(root: Mapping, path: str) -> dict[str, EnvVar]:
    env: dict[str, EnvVar] = {}
    envs = root.map("envs")
    for key, node in envs.items() if envs else ():
        if isinstance(node, Scalar) and node.value is not None:
            env[key] = EnvVar(str(node.value), node.where(path))
    return env


def _accelerator_choices(acc: Node | None) -> list[tuple[str, int]]:
    """`resources.accelerators`: `H100:2`, or a mapping of allowed choices `{L4: 1, A100:1: ...}`."""
    choices: list[tuple[str, int]] = []
    if isinstance(acc, Scalar) and acc.value:
        name, _, count = str(acc.value).partition(":")
        choices.append((name, int(count) if count.isdigit() else 1))
    elif isinstance(acc, Mapping):
        for name, node in acc.items():
            base, _, count = name.partition(":")  # `{H100:1}` reads as the key "H100:1"
            n = (
                node.value
                if isinstance(node, Scalar) and isinstance(node.value, int)
                else (int(count) if count.isdigit() else 1)
            )
            choices.append((base, n))
    return choices


def _pick(choices: list[tuple[str, int]]) -> tuple[str, int]:
    """The choice kvlint plans for: the one stated, or the smallest card among the allowed ones (which
    takes the cards' memory from the GPU catalog: SkyPilot provisions any one of them, so only the
    smallest is sure to fit)."""
    from kvlint.catalog import gpus

    known = [(gpus.lookup(n), n, c) for n, c in choices]
    sized = [(spec.engine_bytes, n, c) for spec, n, c in known if spec is not None and spec.engine_bytes]
    if sized:
        _size, name, count = min(sized)
        return name, count
    return choices[0]


def _gpu(d: Deployment, choices: list[tuple[str, int]], where: Location | None) -> None:
    """The GPU as the file names it (resolve looks the name up) and the count: the one stated, or the
    smallest of the allowed choices (inferred)."""
    name, count = _pick(choices)
    note = f"SkyPilot accelerators {name}:{count}" + (
        " (smallest of the allowed choices)" if len(choices) > 1 else ""
    )
    d.gpu = inferred(name, note, where) if len(choices) > 1 else stated(name, where, note)
    counts = {c for _n, c in choices}
    d.gpus_per_pod = (  # several counts allowed: which one SkyPilot gets is kvlint's assumption
        inferred(count, note, where) if len(counts) > 1 else stated(count, where, note)  # type: ignore[arg-type]
    )
