"""Argo CD Applications and ApplicationSets (argoproj.io/v1alpha1) that install a Helm chart.

Each of `spec.source` / `spec.sources[]` (an ApplicationSet: those of `spec.template.spec`) with a `helm:`
block gives the chart's values as Argo CD hands them to Helm (argoproj/argo-cd docs user-guide/helm.md):
`helm.values` (a YAML string, read with its positions in this file), then `helm.valuesObject` (it wins
over `values`), then each `helm.parameters` entry as `--set name=value` (`forceString`: `--set-string`).
The values are read as a values.yaml is (extract/charts/release_values.py), so a chart kvlint knows by its
keys (production-stack, llm-d modelservice, the vLLM chart, KubeAI, OPEA, NIM, silogen) is read as that
chart renders it. `helm.releaseName` (else the Application's name) names the workloads.
`helm.valueFiles` live in the chart's repository, not in this file: not read, and said once. A source of plain
manifests or a kustomization (`path:` with no chart and no `helm:`) is linted where those files are.

An ApplicationSet's template is filled by its generators: a value holding `{{ … }}` is a placeholder, left
out of the check and named as such, never taken for the author's value. A source that names an engine (its
chart, repoURL or path: `vllm`, `sglang`, …) but gives nothing kvlint reads is one KV004 saying why.
"""

from __future__ import annotations

import re

from kvlint.bounds import show
from kvlint.codes import UNPARSED_SETTING
from kvlint.deployment import Deployment
from kvlint.extract.charts import release_values as rv
from kvlint.extract.pod import container as ct
from kvlint.extract.pod import embedded
from kvlint.extract.pod import placeholders as ph
from kvlint.extract.pod import synthetic as syn
from kvlint.findings import Issue, Severity
from kvlint.load.tree import Mapping, Node, Scalar

_ACTION = re.compile(r"\{\{.*?\}\}")
MARK = "KVLINT-PLACEHOLDER-"
MAX_PARAMETERS = 1000  # helm.parameters applied (each copies the values along its path); the rest not read


def application(ctx: ct.ObjectContext) -> list[Deployment]:
    spec = ctx.root.map("spec")
    return _sources(ctx, spec, placeholders=False) if spec is not None else []


def application_set(ctx: ct.ObjectContext) -> list[Deployment]:
    spec = ctx.root.at("spec", "template", "spec")
    return _sources(ctx, spec, placeholders=True) if isinstance(spec, Mapping) else []


def _sources(ctx: ct.ObjectContext, spec: Mapping, placeholders: bool) -> list[Deployment]:
    one = spec.map("source")
    many = spec.seq("sources")
    sources = ([one] if one is not None else []) + [
        s for s in (many.items if many is not None else []) if isinstance(s, Mapping)
    ]
    out: list[Deployment] = []
    for src in sources:
        out.extend(_source(ctx, src, placeholders))
    for d in out:
        d.ignores = {**ctx.ignores, **d.ignores}
    return out


def _text(node: Node | None) -> str:
    return str(node.value) if isinstance(node, Scalar) and node.value is not None else ""


def _source(ctx: ct.ObjectContext, src: Mapping, placeholders: bool) -> list[Deployment]:
    helm = src.map("helm")
    chart, repo, where_from = _text(src.get("chart")), _text(src.get("repoURL")), _text(src.get("path"))
    values, issues = _values(ctx, helm) if helm is not None else (None, [])
    held: list[tuple[str, Node]] = []
    if values is not None and placeholders:
        values, held = ph.without(values, _placeholder)
    release = _text(helm.get("releaseName")) if helm is not None else ""
    name = release if release and "{{" not in release else ctx.name  # a generator's placeholder names nothing
    found = rv.read(values, ctx.file, ctx.base_dir, ctx.lines, ctx.kind, name) if values else []
    target = chart or where_from or repo
    files = helm.seq("valueFiles") if helm is not None else None
    listed = [show(_text(f), 60) for f in files.items if _text(f)] if files is not None else []
    if found:
        found[0].issues.extend(issues)
        for d in found:
            if listed:
                d.issues.append(_value_files_note(d, listed, files or src, ctx.file))
            if held:
                d.issues.append(_placeholder_note(d, held, ctx.file))
        return found
    if helm is None and not chart:  # plain manifests or kustomize at `path`: linted where they are, not here
        return []
    engine = rv.engine_named(chart, repo, where_from, name)
    if engine is None:
        return []
    d = Deployment(ctx.file, src.where(ctx.file), ctx.kind, name, ctx.base_dir)
    d.issues.extend(issues)
    if listed:
        why = f"{_chart(target)} is installed with values from {', '.join(listed)}, files in the chart's repository that this file only names"
    elif values:
        why = f"the values given to {_chart(target)} are in a layout kvlint does not read"
    else:
        why = f"{_chart(target)} is installed with its own default values, which are not in this file"
    if held:
        why += f" ({len(held)} value(s) are ApplicationSet placeholders)"
    return [ct.not_checked(d, src.where(ctx.file), f"an Argo CD source naming {engine}", why)]


def _values(ctx: ct.ObjectContext, helm: Mapping) -> tuple[Mapping | None, list[Issue]]:
    """helm.values, then helm.valuesObject over it, then helm.parameters over both."""
    issues: list[Issue] = []
    merged: Node | None = None
    text = helm.scalar("values")
    if text is not None and isinstance(text.value, str) and text.value.strip():
        parsed, problems = _parse(text, ctx)
        issues.extend(problems)
        merged = parsed
    obj = helm.get("valuesObject")
    if isinstance(obj, Mapping):
        merged = rv.merge(merged, obj)
    params = helm.seq("parameters")
    for item in params.items[:MAX_PARAMETERS] if params is not None else ():
        if not isinstance(item, Mapping):
            continue
        merged, problem = _parameter(merged, item, helm, ctx.file)
        if problem is not None:
            issues.append(problem)
    return (merged if isinstance(merged, Mapping) else None), issues


def _parse(text: Scalar, ctx: ct.ObjectContext) -> tuple[Mapping | None, list[Issue]]:
    """helm.values as YAML located in this file; an ApplicationSet's `{{ … }}` kept as a marked string."""
    raw = str(text.value)
    held = _ACTION.findall(raw) if ctx.kind == "ApplicationSet" else []
    if held:
        marked = _ACTION.sub(lambda m: f"{MARK}{held.index(m.group(0))}", raw)
        text = Scalar(
            marked, marked, text.tag, text.quoted, (text.line, text.col, text.end_line, text.end_col)
        )
    return embedded.parse(text, ctx.file, ctx.lines, "helm.values")


def _parameter(
    merged: Node | None, item: Mapping, helm: Mapping, path: str
) -> tuple[Node | None, Issue | None]:
    name, value = item.scalar("name"), item.get("value")
    if name is None or not isinstance(name.value, str):
        return merged, None
    steps = rv.path_steps(name.value)
    if steps is None:
        return merged, Issue(
            UNPARSED_SETTING,
            f"helm.parameters `{show(name.value, 80)}` is not a path kvlint reads (`a.b`, `a[0].b`): not read",
            name.where(path),
            severity=Severity.INFO,
        )
    text = _text(value)
    force = item.value("forceString") is True
    anchor: Node = value if isinstance(value, Scalar) else name
    leaf = syn.scalar(anchor, rv.set_value(text, force), text)
    return rv.put(merged, steps, leaf, helm), None


def _placeholder(node: Node) -> bool:
    return (
        isinstance(node, Scalar)
        and isinstance(node.value, str)
        and ("{{" in node.value or MARK in node.value)
    )


def _value_files_note(d: Deployment, listed: list[str], at: Node, path: str) -> Issue:
    return rv.elsewhere(
        f"{d.label()}: helm.valueFiles ({', '.join(listed)}) are read by Argo CD from the chart's repository, "
        "not from this file: what they set is not checked",
        at.where(path),
    )


def _placeholder_note(d: Deployment, held: list[tuple[str, Node]], path: str) -> Issue:
    shown = ", ".join(f"`{show(k, 60)}`" for k, _node in held[:4]) + (" …" if len(held) > 4 else "")
    return rv.elsewhere(
        f"{d.label()}: {shown} {'is a placeholder' if len(held) == 1 else 'are placeholders'} the ApplicationSet's "
        "generators fill ({{ … }}): left out of the check",
        held[0][1].where(path),
    )


def _chart(target: str) -> str:
    return f"the chart `{show(target, 80)}`" if target else "the chart"
