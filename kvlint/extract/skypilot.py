"""SkyPilot task / service YAML: `resources.accelerators` and a `run:` script that starts the engine."""

from __future__ import annotations

from kvlint.deployment import Deployment, inferred, stated
from kvlint.extract import container as ct
from kvlint.extract.argv import EnvVar, _split_commands, _split_script
from kvlint.extract.engine_args import find_launch
from kvlint.load.tree import Mapping, Scalar


def is_skypilot(root: Mapping) -> bool:
    return isinstance(root.get("run"), Scalar) and (
        "resources" in root or "service" in root or "envs" in root
    )


def extract(root: Mapping, path: str, base_dir: str, lines: list[str]) -> list[Deployment]:
    run = root.scalar("run")
    env: dict[str, EnvVar] = {}
    envs = root.map("envs")
    for key, node in envs.items() if envs else ():
        if isinstance(node, Scalar) and node.value is not None:
            env[key] = EnvVar(str(node.value), node.where(path))
    commands = _split_commands(_split_script(run, path, lines, env))  # type: ignore[arg-type]
    launch = find_launch(commands, "")
    if launch is None:
        return []
    d = Deployment(path, root.where(path), "skypilot", "(root)", base_dir)
    d.engine = stated(launch.engine, launch.entry.where if launch.entry else run.where(path), launch.how)  # type: ignore[union-attr]
    d.args_where = d.engine.where
    ct.read_engine(d, launch, env)
    acc = root.at("resources", "accelerators")
    where = acc.where(path) if acc is not None else None
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
    if choices:
        from kvlint.catalog import gpus

        known = [(gpus.lookup(n), n, c) for n, c in choices]
        sized = [k for k in known if k[0] is not None and k[0].engine_bytes]
        spec, name, count = min(sized, key=lambda k: k[0].engine_bytes) if sized else known[0]  # type: ignore[arg-type, assignment, return-value, union-attr]
        note = f"SkyPilot accelerators {name}:{count}" + (
            " (smallest of the allowed choices)" if len(choices) > 1 else ""
        )
        d.gpu = (
            inferred(spec.id if spec else name, note, where)
            if len(choices) > 1
            else stated(spec.id if spec else name, where, note)
        )
        d.gpus_per_pod = stated(count, where, note)  # type: ignore[arg-type]
    ct.finish(d)
    return [d]
