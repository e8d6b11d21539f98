"""Kustomize's `helmCharts:` (a kustomization.yaml, `kind: Kustomization` or none): each chart inflated with
the values kustomize hands to `helm template` (kubernetes-sigs/kustomize api/types/helmchartargs.go @0153090:
`valuesFile` instead of the chart's own values.yaml, `valuesInline` treated by `valuesMerge` — `override`,
the default: inline over the file; `merge`: the file over inline; `replace`: inline alone — then each of
`additionalValuesFiles` as a later `-f`). The values are read as a values.yaml is (extract/charts/
release_values.py), so a chart kvlint knows by its keys is read as that chart renders it, and the release
is named `releaseName` (else the chart's name).

The values files are local paths beside the kustomization, read as the files beside a manifest are
(load/nearby.py file_beside: inside its directory, regular files, capped); one not read is said once. A chart
that names an engine (its name or repo: `vllm-stack`, `sglang`) whose values kvlint cannot read is a KV004.
"""

from __future__ import annotations

from kvlint.bounds import show
from kvlint.deployment import Deployment
from kvlint.extract.charts import release_values as rv
from kvlint.extract.pod import container as ct
from kvlint.load.compose import compose
from kvlint.load.nearby import Nearby
from kvlint.load.tree import Mapping, Node, Scalar, Sequence, mark_file

VALUES_FILE_BYTES = 4 * 1024 * 1024  # a values file: the size cap of a linted file's order
CHARTS_MAX = 64  # helmCharts entries read


def is_kustomization(root: Mapping) -> bool:
    """A kustomization without apiVersion/kind that inflates charts."""
    charts = root.seq("helmCharts")
    return charts is not None and any(isinstance(c, Mapping) and "name" in c for c in charts.items)


def kustomization(ctx: ct.ObjectContext) -> list[Deployment]:
    return _charts(ctx.root, ctx.file, ctx.base_dir, ctx.lines, ctx.nearby, ctx.kind)


def extract(
    root: Mapping, path: str, base_dir: str, lines: list[str], nearby: Nearby | None = None
) -> list[Deployment]:
    return _charts(root, path, base_dir, lines, nearby, "Kustomization")


def _charts(
    root: Mapping, path: str, base_dir: str, lines: list[str], nearby: Nearby | None, kind: str
) -> list[Deployment]:
    charts = root.seq("helmCharts")
    out: list[Deployment] = []
    for chart in charts.items[:CHARTS_MAX] if charts is not None else ():
        if isinstance(chart, Mapping):
            out.extend(_chart(chart, path, base_dir, lines, nearby, kind))
    return out


def _text(node: Node | None) -> str:
    return str(node.value) if isinstance(node, Scalar) and node.value is not None else ""


def _chart(
    chart: Mapping, path: str, base_dir: str, lines: list[str], nearby: Nearby | None, kind: str
) -> list[Deployment]:
    name, repo = _text(chart.get("name")), _text(chart.get("repo"))
    release = _text(chart.get("releaseName")) or name
    unread: list[str] = []
    base = _file(_text(chart.get("valuesFile")), nearby, path, unread)
    inline = chart.get("valuesInline")
    inline = inline if isinstance(inline, Mapping) else None
    mode = _text(chart.get("valuesMerge")) or "override"
    values = (
        inline if mode == "replace" else rv.merge(inline, base) if mode == "merge" else rv.merge(base, inline)
    )
    extra = chart.get("additionalValuesFiles")
    for item in extra.items if isinstance(extra, Sequence) else ():
        values = rv.merge(values, _file(_text(item), nearby, path, unread))
    found = rv.read(values, path, base_dir, lines, kind, release) if isinstance(values, Mapping) else []
    note = (
        f"values file{'s' if len(unread) > 1 else ''} {', '.join(unread)} of chart {show(name, 60)} not read"
        if unread
        else ""
    )
    if found:
        if note:
            found[0].issues.append(
                rv.elsewhere(f"{found[0].label()}: {note}: the rest is checked", chart.where(path))
            )
        return found
    engine = rv.engine_named(name, repo)
    if engine is None:
        return []
    d = Deployment(path, chart.where(path), kind, release, base_dir)
    why = (
        f"{note}"
        if note
        else f"the values given to chart {show(name, 60)} are in a layout kvlint does not read"
        if values is not None
        else f"chart {show(name, 60)} is inflated with its own default values, which are not in this file"
    )
    return [ct.not_checked(d, chart.where(path), f"a kustomize helmCharts entry naming {engine}", why)]


def _file(rel: str, nearby: Nearby | None, path: str, unread: list[str]) -> Mapping | None:
    """One values file beside the kustomization, its nodes placed in that file; None (and said) when not read."""
    if not rel:
        return None
    if nearby is None:
        unread.append(f"{show(rel, 60)} (no directory to read it from)")
        return None
    data, shown, why = nearby.file_beside(rel, VALUES_FILE_BYTES)
    if data is None:
        unread.append(f"{show(shown, 60)} ({why})")
        return None
    docs, issues = compose(data.decode("utf-8", "replace"), shown)
    root = docs[0].root if docs and not issues else None
    if not isinstance(root, Mapping):
        unread.append(f"{show(shown, 60)} (not a YAML mapping kvlint reads)")
        return None
    mark_file([root], shown)
    return root
