"""kvlint's command line. Heavy modules are imported inside the commands, so `--help` and
`--version` stay cheap (see benchmarks/speed.py)."""

from __future__ import annotations

import sys

import click

from kvlint import __version__, engines
from kvlint.report import FORMATS


def _echo(text: str, err: bool = False) -> None:
    """Print a command's output; a closed, full or broken stream is a message and exit 2 (F26)."""
    from kvlint.emit import OUTPUT_FAILED, say, write
    from kvlint.report.safe import json_text, runner_lines

    inert = json_text(text) if text.lstrip().startswith(("{", "[")) else runner_lines(text)  # F: no ::, ##[
    failed = write(inert, sys.stderr if err else sys.stdout, "the output")
    if failed:
        say(f"kvlint: {failed}")
        sys.exit(OUTPUT_FAILED)


class DefaultGroup(click.Group):
    """`kvlint PATHS…` means `kvlint check PATHS…`."""

    def parse_args(self, ctx, args):
        if not args or (args[0] not in self.commands and args[0] not in ("--help", "-h", "--version")):
            args = ["check", *args]
        return super().parse_args(ctx, args)


@click.group(cls=DefaultGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="kvlint")
def main() -> None:
    """Lint LLM serving deployments for GPU memory and KV-cache capacity.

    kvlint PATHS… is short for kvlint check PATHS…; exit 0 clean, 1 findings at or above
    --fail-on, 2 usage, configuration or read errors.
    """


@main.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default=None,
    help="Report format (default: text, or github under GitHub Actions).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, writable=True),
    help="Write the report to FILE instead of stdout.",
)
@click.option("--gpu", help="GPU to assume where a workload does not say (e.g. H100, L4).")
@click.option(
    "--engine",
    type=click.Choice(list(engines.names())),
    help="Engine to assume where a workload does not say.",
)
@click.option("--engine-version", help="Engine version to assume where no image tag says (e.g. 0.10.1).")
@click.option("--select", help="Comma-separated rule codes or names to run (default: all).")
@click.option("--extend-select", help="Rules to add to the selection.")
@click.option("--ignore", help="Comma-separated rule codes or names to skip.")
@click.option(
    "--fail-on",
    type=click.Choice(["error", "warning", "info"]),
    help="Lowest severity that makes the exit code 1 (default: error).",
)
@click.option(
    "--strict", is_flag=True, default=None, help="Report what could not be checked (KV002-KV005) as errors."
)
@click.option(
    "--no-inline-suppressions",
    is_flag=True,
    help="Ignore `# kvlint: disable` comments and kvlint.io/ignore annotations.",
)
@click.option(
    "--show-suppressed",
    is_flag=True,
    help="List the findings inline suppressions hid, and by what (the count is always reported).",
)
@click.option(
    "--show-infos",
    is_flag=True,
    help="List every info in the text report (by default they are counted by reason in one block).",
)
@click.option("--exclude", multiple=True, help="Glob (gitignore style) of paths to skip; repeatable.")
@click.option("--no-gitignore", is_flag=True, help="Do not skip files that .gitignore lists.")
@click.option("--stdin-filename", help="Path to report for input read from stdin (-).")
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),
    help="Configuration file (default: discovered upward from the current directory).",
)
@click.option("--isolated", is_flag=True, help="Ignore every configuration file.")
@click.option(
    "--hub",
    is_flag=True,
    default=None,
    help="Fetch models no local source knows from the Hugging Face Hub (needs kvlint-serving[hub]); cached.",
)
@click.option(
    "--color/--no-color",
    default=None,
    help="Colour the text report (default: on a terminal, honouring NO_COLOR and FORCE_COLOR).",
)
@click.option(
    "--max-file-size",
    type=click.IntRange(min=1),
    help="Skip files larger than this many bytes (default 8 MiB), with a KV001 finding.",
)
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=0),
    default=1,
    show_default=True,
    help="Worker processes for large runs (0: one per CPU); output is identical either way.",
)
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings are reported.")
@click.option("--fix", is_flag=True, help="Apply safe fixes in place, then report what is left.")
@click.option(
    "--unsafe-fixes",
    is_flag=True,
    help="Also apply fixes that change what the deployment does (implies --fix).",
)
@click.option(
    "--diff",
    is_flag=True,
    help="Print the fixes as a unified diff and change nothing (exit 1 when there are any).",
)
@click.option("--show-fixes", is_flag=True, help="List every fix applied (on stderr).")
def check(paths, fmt, output, **opts) -> None:
    """Lint files and directories (recursive: *.yaml, *.yml, *.json); `-` reads stdin."""
    from kvlint.app import run_check

    code = run_check(paths, fmt, output, opts)
    sys.exit(code)


@main.command()
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text")
def rules(fmt: str) -> None:
    """List every rule: code, name, default severity, summary."""
    from kvlint.app import list_rules

    _echo(list_rules(fmt))


@main.command()
@click.argument("rule")
def explain(rule: str) -> None:
    """Show a rule's documentation page (by code or name)."""
    from kvlint.app import explain_rule

    text, ok = explain_rule(rule)
    if not ok:
        _echo(text, err=True)
        sys.exit(2)
    _echo(text)


def _positive_count(ctx, param, value):
    """F28: plan inputs are validated: a count is a whole number from 1 to 2**40 (32k, 32K allowed)."""
    if value is None:
        return None
    from kvlint.units import parse_count

    try:
        count = parse_count(value).value
    except ValueError:
        return value  # the planner reports text it cannot read, with the accepted forms
    if not 1 <= count <= 1 << 40:
        raise click.BadParameter(f"must be from 1 to {1 << 40:,}, got {value!r}")
    return value


def _quantization(ctx, param, value):
    """F28: a method kvlint models, either applied at load (fp8, bitsandbytes …) or read from a
    quantized checkpoint (awq, gptq …); anything else was silently ignored."""
    if value is None:
        return None
    from kvlint.capacity.weights import ONLINE_QUANT
    from kvlint.catalog.quant import METHODS

    known = sorted(set(ONLINE_QUANT) | set(METHODS))
    if value.lower() not in known:
        raise click.BadParameter(
            f"{value[:40]!r} is not a quantization method kvlint models ({', '.join(known)})"
        )
    return value.lower()


def _finite(ctx, param, value):
    if value is not None and value != value:  # nan passes FloatRange's comparisons
        raise click.BadParameter("must be a number above 0 and at most 1, got nan")
    return value


@main.command()
@click.argument("model")
@click.option(
    "--gpu",
    "gpu",
    multiple=True,
    help="GPU type (H100, L4, A100-80GB, a MIG slice such as a100-80gb:3g.40gb, …); repeat it to plan on several.",
)
@click.option("--fleet", help="Several GPU types, comma-separated (L4,A100-80GB,H100): a plan on each.")
@click.option(
    "--gpus",
    type=click.IntRange(1, 4096),
    help="GPUs per replica (tensor parallel; default: the fewest that fit).",
)
@click.option(
    "--context",
    callback=_positive_count,
    help="Tokens per sequence (default: the model's maximum). 32k = 32,000; 32K = 32,768.",
)
@click.option(
    "--sequences",
    callback=_positive_count,
    help="Concurrent sequences to plan for (default: the engine's max_num_seqs).",
)
@click.option(
    "--kv-cache-dtype",
    type=click.Choice(["auto", "fp8", "fp8_e4m3", "fp8_e5m2"]),
    default="auto",
    help="auto, fp8, fp8_e4m3, fp8_e5m2.",
)
@click.option("--engine", type=click.Choice(list(engines.names())), default=engines.DEFAULT)
@click.option("--engine-version", help="Engine version (defaults differ by version).")
@click.option(
    "--utilization",
    type=click.FloatRange(0, 1, min_open=True),
    callback=_finite,
    help="gpu_memory_utilization, above 0 and at most 1 (default: the engine's).",
)
@click.option(
    "--quantization", callback=_quantization, help="Weight quantization applied at load (e.g. fp8)."
)
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def plan(model, gpu, fleet, fmt, **opts) -> None:
    """The capacity planner: weights, KV per token, pool, concurrency by context, GPUs needed."""
    from kvlint.app import run_plan

    names = [*gpu, *(n.strip() for n in (fleet or "").split(",") if n.strip())]
    text, code = run_plan(model, list(dict.fromkeys(names)), fmt, opts)
    _echo(text, err=code == 2)
    sys.exit(code)


@main.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--to", help="The newest release to walk to (default: the newest kvlint has read).")
@click.option(
    "--engine-version", help="Release to start from where no image tag says (default: the newest read)."
)
@click.option("--gpu", help="GPU to assume where a workload does not say (e.g. H100, L4).")
@click.option(
    "--engine",
    type=click.Choice(list(engines.names())),
    help="Engine to assume where a workload does not say.",
)
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "json"]), default="text")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="Configuration file.")
@click.option("--isolated", is_flag=True, help="Ignore every configuration file.")
def upgrade(paths, to, fmt, **opts) -> None:
    """What each later engine release does to each deployment: the releases where the verdict
    changes or the KV pool moves by more than 5 %, with the release-table rows that changed.

    Exit 1 when a later release turns a passing deployment into an error.
    """
    from kvlint.app import run_upgrade

    sys.exit(run_upgrade(paths, to, fmt, opts))


@main.command("config")
@click.option("--config", "config_path", type=click.Path(dir_okay=False))
@click.option("--isolated", is_flag=True)
def config_cmd(config_path, isolated) -> None:
    """Print the settings in force and where each came from."""
    from kvlint.app import show_config

    text, code = show_config(config_path, isolated)
    _echo(text, err=code == 2)
    sys.exit(code)


@main.command("init")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option(
    "--nodes",
    metavar="FILE",
    help="A `kubectl get nodes -o json` dump to read the fleet from (no cluster access).",
)
@click.option("--force", is_flag=True, help="Replace an existing .kvlint.yaml.")
@click.option("--dry-run", is_flag=True, help="Print the configuration; write nothing.")
def init_cmd(paths, nodes, force, dry_run) -> None:
    """Write .kvlint.yaml with the fleet: the GPUs of the node pools under PATHS (default: .).

    The node pools kvlint reads (Karpenter, eksctl, Cluster API, GKE, OpenShift, ARM, Terraform), or
    the nodes of --nodes FILE; each GPU's comment names the definition it came from. Exit 0 written,
    1 nothing written (the file exists, no GPU found, or FILE unreadable).
    """
    from kvlint.report.safe import plain
    from kvlint.run.init_config import run_init

    out, err, code = run_init(tuple(paths), nodes, force, dry_run)
    if out:
        _echo(out)
    if err:  # messages name input (paths, node names): no control character reaches the terminal
        _echo("".join(plain(line) + "\n" for line in err.splitlines()), err=True)
    sys.exit(code)


@main.group()
def models() -> None:
    """Models kvlint knows: fetch Hub models into the project's catalog (.kvlint/models/)."""


@models.command("pull")
@click.argument("refs", nargs=-1, required=True)
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False),
    help="Where to write (default: $KVLINT_MODELS_DIR or .kvlint/models).",
)
def models_pull(refs, directory) -> None:
    """Fetch ID[@REVISION]'s config and safetensors headers from the Hub (needs kvlint-serving[hub]).

    Honours HF_TOKEN (or the huggingface-cli login token), HF_ENDPOINT and HF_HUB_OFFLINE.
    Every later `kvlint` run resolves the model from the written file, with no network.
    """
    from kvlint.catalog.hub import HubError, pull

    failed = 0
    for ref in refs:
        try:
            path, summary = pull(ref, directory)
        except HubError as exc:
            failed += 1
            click.echo(f"kvlint models pull: {ref}: {exc}\n  fix: {exc.fix}", err=True)
            continue
        click.echo(f"{path}: {summary}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":  # pragma: no cover
    main()
