"""OpenShift Templates (template.openshift.io/v1 `kind: Template`, and the older `v1` Template): each of
`objects[]` is read as its own document (a KServe ServingRuntime / InferenceService, a Deployment, …),
the template's objects standing for the file's documents when one looks another up (an InferenceService's
runtime), the files beside it still looked at.

Parameters are filled as `oc process` fills them (openshift/openshift-docs
openshift_images/using-templates.adoc "Writing templates": `${NAME}` is replaced by the parameter's value in
a string, `${{NAME}}` by the value as a YAML value, a number or a boolean): a parameter with a `value` is
that value; one without (`required`, `generate: expression`, or left for `oc process -p`) is a placeholder,
left out of what is read and named once, never taken for the author's setting. `{{.Name}}` and the other
placeholders the KServe controller fills in a runtime are read by the KServe reader as KServe fills them.
"""

from __future__ import annotations

import re

from kvlint.bounds import show
from kvlint.deployment import Deployment
from kvlint.extract.charts import release_values as rv
from kvlint.extract.pod import container as ct
from kvlint.extract.pod import placeholders as ph
from kvlint.extract.pod import synthetic as syn
from kvlint.findings import Issue
from kvlint.load.compose import Document
from kvlint.load.nearby import Nearby
from kvlint.load.tree import Mapping, Node, Scalar

_PARAM = re.compile(r"\$\{\{([A-Za-z0-9_]+)\}\}|\$\{([A-Za-z0-9_]+)\}")
MAX_OBJECTS = 1000  # objects of one Template read (a larger one is read up to this many)


def extract(ctx: ct.ObjectContext) -> list[Deployment]:
    from kvlint.extract import registry

    objects = ctx.root.seq("objects")
    if objects is None:
        return []
    values = _parameters(ctx.root)
    filled: list[Mapping] = []
    held: ph.Held = []
    for obj in objects.items[:MAX_OBJECTS]:
        if not isinstance(obj, Mapping):
            continue
        done = _fill(obj, values)
        if isinstance(done, Mapping):
            done, more = ph.without(done, _unfilled)
            held.extend(more)
            filled.append(done)
    nearby = ctx.nearby
    documents = [Document(i, obj) for i, obj in enumerate(filled)]
    inner = (
        Nearby(nearby.display, nearby.real_path, documents=documents, max_bytes=nearby.max_bytes)
        if nearby is not None
        else Nearby(ctx.file, None, documents=documents)
    )
    out: list[Deployment] = []
    for obj in filled:
        if isinstance(obj.value("apiVersion"), str) and isinstance(obj.value("kind"), str):
            out.extend(registry.extract_object(obj, ctx.file, ctx.base_dir, ctx.lines, inner))
    for d in out:
        d.ignores = {**ctx.ignores, **d.ignores}
    if out and held:
        out[0].issues.append(_held_note(ctx, held))
    return out


def _parameters(root: Mapping) -> dict[str, str]:
    """Each parameter's `value`, when it has one."""
    out: dict[str, str] = {}
    params = root.seq("parameters")
    for p in params.items if params is not None else ():
        if isinstance(p, Mapping):
            name, value = p.scalar("name"), p.scalar("value")
            if name is not None and value is not None and value.value is not None:
                out[str(name.value)] = str(value.value) if not isinstance(value.value, bool) else value.text
    return out


def _fill(node: Node, values: dict[str, str]) -> Node:
    """A copy of `node` with each `${NAME}` that has a value replaced, positions kept."""
    return syn.rebuilt(node, lambda scalar: _filled(scalar, values))


def _filled(node: Scalar, values: dict[str, str]) -> Scalar:
    if not isinstance(node.value, str) or "${" not in node.value:
        return node
    whole = _PARAM.fullmatch(node.value)
    if whole is not None and whole.group(1) in values:  # ${{NAME}}: the value as a YAML value
        text = values[str(whole.group(1))]
        return syn.scalar(node, rv.set_value(text), text)
    text = _PARAM.sub(lambda m: values.get(m.group(1) or m.group(2), m.group(0)), node.value)
    if text == node.value:
        return node
    out = Scalar(text, text, node.tag, node.quoted, (node.line, node.col, node.end_line, node.end_col))
    out.file = node.file
    return out


def _unfilled(node: Node) -> bool:
    return isinstance(node, Scalar) and isinstance(node.value, str) and _PARAM.search(node.value) is not None


def _held_note(ctx: ct.ObjectContext, held: ph.Held) -> Issue:
    names = sorted(
        {m.group(1) or m.group(2) for _k, n in held for m in _PARAM.finditer(str(getattr(n, "value", "")))}
    )
    shown = ", ".join(f"${{{show(n, 40)}}}" for n in names[:4]) + (" …" if len(names) > 4 else "")
    return rv.elsewhere(
        f"{'Template/' + ctx.name if ctx.name else 'Template'}: {shown} {'has' if len(names) == 1 else 'have'} no value in the template's parameters "
        "(`oc process -p` or a generator fills them): the settings that use them are left out of the check",
        held[0][1].where(ctx.file),
    )
