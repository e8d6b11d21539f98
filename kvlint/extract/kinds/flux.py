"""Flux HelmRelease (helm.toolkit.fluxcd.io v2, v2beta1, v2beta2): the values the helm-controller gives the chart.

As the helm-controller composes them (fluxcd/helm-controller docs/spec/v2/helmreleases.md "Values
references"; internal/chartutil/values.go ChartValuesFromReferences): each `spec.valuesFrom[]` in order —
a ConfigMap's `data` or a Secret's `stringData` key `valuesKey` (default `values.yaml`) parsed as YAML and
merged, or with `targetPath` set as one `--set`-style value at that path — then `spec.values` over them.
The ConfigMaps and Secrets are looked for in this file and the YAML files beside it (load/nearby.py: regular
files of this directory, links out of it never followed, each size-capped); their values keep their own
file's lines. A reference found in neither place (a kustomize configMapGenerator, another directory, a
Secret kept encrypted) is said once, with what it leaves unchecked.

`spec.chart.spec.valuesFiles` are files of the chart's source, merged first: named once, not read.
The chart is named by `spec.chart.spec.chart` (with `sourceRef`) or `spec.chartRef`; the values are read as a
values.yaml is (extract/charts/release_values.py), so a chart kvlint knows by its keys is read as it renders.
A release whose chart or name names an engine but gives nothing kvlint reads is one KV004 saying why.
"""

from __future__ import annotations

from kvlint.bounds import show
from kvlint.deployment import Deployment
from kvlint.extract.charts import release_values as rv
from kvlint.extract.pod import container as ct
from kvlint.extract.pod import embedded
from kvlint.extract.pod import synthetic as syn
from kvlint.extract.pod.argv import FileLines
from kvlint.findings import Issue
from kvlint.load.tree import Mapping, Node, Scalar, Sequence
from kvlint.record import replace

VALUES_KEY = "values.yaml"  # valuesFrom[].valuesKey when left out (helmreleases.md)
KINDS = ("ConfigMap", "Secret")
MAX_REFS = 100  # valuesFrom references read (a longer list is read up to this many)


def _text(node: Node | None) -> str:
    return str(node.value) if isinstance(node, Scalar) and node.value is not None else ""


def helm_release(ctx: ct.ObjectContext) -> list[Deployment]:
    spec = ctx.root.map("spec")
    if spec is None:
        return []
    chart_spec = spec.at("chart", "spec")
    chart = _text(chart_spec.get("chart")) if isinstance(chart_spec, Mapping) else ""
    source = _text(spec.at("chart", "spec", "sourceRef", "name"))
    chart_ref = _text(spec.at("chartRef", "name"))
    values: Node | None = None
    issues: list[Issue] = []
    missing: list[str] = []
    files: dict[str, list[str]] = {}
    refs = spec.seq("valuesFrom")
    for ref in refs.items[:MAX_REFS] if refs is not None else ():
        if isinstance(ref, Mapping):
            values = _from_ref(ctx, ref, values, issues, missing, files)
    own = spec.get("values")
    if isinstance(own, Mapping):
        values = rv.merge(values, own)
    if files:
        ctx = replace(ctx, lines=FileLines(ctx.lines, files))
    name = _text(spec.get("releaseName")) or ctx.name
    found = (
        rv.read(values, ctx.file, ctx.base_dir, ctx.lines, ctx.kind, name)
        if isinstance(values, Mapping)
        else []
    )
    target = chart or chart_ref or source
    if found:
        found[0].issues.extend(issues)
        if missing:
            found[0].issues.append(_missing_note(found[0], missing, refs or spec, ctx.file))
        files_of_chart = spec.at("chart", "spec", "valuesFiles")
        if isinstance(files_of_chart, Sequence) and files_of_chart.items:
            listed = ", ".join(show(_text(f), 60) for f in files_of_chart.items if _text(f))
            found[0].issues.append(
                rv.elsewhere(
                    f"{found[0].label()}: chart.spec.valuesFiles ({listed}) are files of the chart's source, "
                    "merged under these values: what they set is not checked",
                    files_of_chart.where(ctx.file),
                )
            )
        for d in found:
            d.ignores = {**ctx.ignores, **d.ignores}
        return found
    engine = rv.engine_named(chart, source, chart_ref, name)
    if engine is None:
        return []
    d = Deployment(ctx.file, ctx.where, ctx.kind, name, ctx.base_dir)
    d.ignores = dict(ctx.ignores)
    d.issues.extend(issues)
    if missing:
        why = f"{_chart(target)} takes its values from {', '.join(missing)}, found neither in this file nor beside it"
    elif values is not None:
        why = f"the values given to {_chart(target)} are in a layout kvlint does not read"
    else:
        why = f"{_chart(target)} is installed with its own default values, which are not in this file"
    return [ct.not_checked(d, ctx.where, f"a Flux HelmRelease naming {engine}", why)]


def _from_ref(
    ctx: ct.ObjectContext,
    ref: Mapping,
    values: Node | None,
    issues: list[Issue],
    missing: list[str],
    files: dict[str, list[str]],
) -> Node | None:
    """`values` with one valuesFrom reference merged in (or `missing` told what could not be read)."""
    kind, name = _text(ref.get("kind")), _text(ref.get("name"))
    key = _text(ref.get("valuesKey")) or VALUES_KEY
    shown = f"{kind}/{show(name, 60)} `{show(key, 60)}`"
    hits = ctx.nearby.named((kind,), name) if ctx.nearby is not None and kind in KINDS else []
    hit = hits[0] if hits else None
    box = None
    if (
        hit is not None
    ):  # a Secret's `data` is base64 (often encrypted with SOPS): only stringData is read as text
        box = hit.root.map("data") if kind == "ConfigMap" else hit.root.map("stringData")
    node = box.scalar(key) if box is not None else None
    if hit is None or node is None or not isinstance(node.value, str):
        missing.append(shown)
        return values
    lines = ctx.lines
    if not hit.same_file and ctx.nearby is not None:
        lines = files.setdefault(hit.file, ctx.nearby.lines_of(hit.file))
    target = _text(ref.get("targetPath"))
    if target:
        steps = rv.path_steps(target)
        if steps is None:
            missing.append(f"{shown} (targetPath {show(target, 60)})")
            return values
        leaf = node if hit.same_file else syn.in_file(node, hit.file)
        typed = syn.scalar(leaf, rv.set_value(node.value.strip()), node.value)
        return rv.put(values, steps, typed, leaf)
    parsed, problems = embedded.parse(node, hit.file if not hit.same_file else ctx.file, lines, shown)
    issues.extend(problems)
    if parsed is None:
        return values
    return rv.merge(values, parsed if hit.same_file else syn.in_file(parsed, hit.file))


def _missing_note(d: Deployment, missing: list[str], at: Node, path: str) -> Issue:
    return rv.elsewhere(
        f"{d.label()}: valuesFrom {', '.join(missing)} found neither in this file nor beside it: what "
        "it sets is not checked",
        at.where(path),
    )


def _chart(target: str) -> str:
    return f"the chart `{show(target, 80)}`" if target else "the chart"
