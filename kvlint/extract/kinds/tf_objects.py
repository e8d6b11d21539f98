"""Kubernetes objects a Terraform file carries, as kvlint's YAML trees located in the .tf file.

Terraform is parsed with python-hcl2 (heredocs given back as quoted strings, so an expression that
holds one parses again); the objects are those of
- `kubectl_manifest` `yaml_body` (gavinbunney/kubectl and alekc/kubectl providers): a YAML string
  or heredoc, or `yamlencode({...})` of an HCL object;
- `kubernetes_manifest` `manifest` (hashicorp/kubernetes): an HCL object, or `yamldecode(<<EOT ...)`
  of a YAML string;
- the values of aws-ia/terraform-aws-eks-data-addons' `karpenter_resources_helm_config` (a module
  input: `{ <name> = { values = [<<EOT ... EOT] } }`), rendered as that chart renders its NodePool
  (helm-charts/karpenter-resources/templates/node-pool.yaml @06c7fe93: labels NodePool and
  NodeGroupType = .Values.name, then each map of nodePool.labels; nodePool.taints, .requirements,
  .limits).
A Terraform interpolation (`${var.x}`, `${module.eks.cluster_name}`) inside a YAML string is kept as
its text (a placeholder: no value kvlint can read); a whole-line one is left out of the YAML. A
`yamldecode(file(...))` or `templatefile(...)` names a file read on its own, not here. A YAML string
is located at its lines in the .tf file; an object built from HCL at its resource's line.
"""

from __future__ import annotations

import json
import re
from typing import Any

from kvlint.load.compose import compose
from kvlint.load.tree import Mapping, Node, Sequence

OBJECTS_MAX = 200  # objects read from one file
_INTERPOLATION_LINE = re.compile(r"^\s*\$\{.*\}\s*$")
_CALL = re.compile(r"^\$\{(yamlencode|yamldecode|jsonencode)\((.*)\)\}$", re.S)


def _parse(source: str) -> dict[str, Any] | None:
    try:
        import hcl2
        from hcl2.utils import SerializationOptions
    except ImportError:  # the optional dependency is absent: Terraform is not read
        return None
    try:
        return hcl2.loads(source, serialization_options=SerializationOptions(preserve_heredocs=False))
    except Exception:  # noqa: BLE001 - python-hcl2 raises lark's and its own errors: the file is skipped
        return None


def _unquote(s: str) -> str:
    """An HCL quoted string's text (its escapes are JSON's, plus `$${` for a literal `${`)."""
    if len(s) >= 2 and s[0] == s[-1] == '"':
        try:
            return str(json.loads(s)).replace("$${", "${")
        except ValueError:
            return s[1:-1]
    return s


def _plain(v: Any) -> Any:
    """An HCL value as plain data: quoted strings unquoted, keys too; blocks' markers dropped."""
    if isinstance(v, dict):
        return {_unquote(str(k)): _plain(x) for k, x in v.items() if not str(k).startswith("__")}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, str):
        return _unquote(v)
    return v


def _hcl_object(expr: str) -> Any:
    """The value of an HCL expression's text (an object inside a function call)."""
    tree = _parse("v = " + expr)
    return _plain(tree.get("v")) if tree is not None else None


def _relocate(node: Node, line: int, col: int = 0, shift: bool = False) -> None:
    """Place a tree in the .tf file: shifted by `line` lines (a YAML string), or every node at `line`."""
    stack = [node]
    while stack:
        n = stack.pop()
        if shift:
            n.line += line
            n.end_line += line
        else:
            n.line, n.col, n.end_line, n.end_col = line, col, line, col + 1
        if isinstance(n, Mapping):
            stack.extend(n.keys.values())
            stack.extend(n.values.values())
        elif isinstance(n, Sequence):
            stack.extend(n.items)


def from_plain(data: Any, path: str, line: int) -> Mapping | None:
    """A plain object as kvlint's tree, every node at the (0-based) line."""
    if not isinstance(data, dict):
        return None
    docs, issues = compose(json.dumps(data), path)
    if issues or not docs or not isinstance(docs[0].root, Mapping):
        return None
    _relocate(docs[0].root, line)
    return docs[0].root


def from_yaml(text: str, path: str, first_line: int) -> list[Mapping]:
    """The objects of a YAML string whose first line is the .tf file's (0-based) `first_line`."""
    lines = ["" if _INTERPOLATION_LINE.match(x) else x for x in text.split("\n")]
    docs, issues = compose("\n".join(lines), path)
    if issues:
        return []
    out = [d.root for d in docs if isinstance(d.root, Mapping)]
    for root in out:
        _relocate(root, first_line, shift=True)
    return out


class _Lines:
    def __init__(self, source: str) -> None:
        self.lines = source.splitlines()

    def find(self, pattern: str, after: int = 0) -> int:
        """The 0-based line of the first match at or after `after` (`after` when none)."""
        rx = re.compile(pattern)
        return next((i for i in range(after, len(self.lines)) if rx.search(self.lines[i])), after)


def _string_objects(value: str, path: str, lines: _Lines, at: int, attr: str) -> list[Mapping]:
    """The objects of an attribute's string value: YAML text, or yamlencode / yamldecode of one."""
    call = _CALL.match(value)
    if call is not None:
        fn, arg = call.groups()
        if fn in ("yamlencode", "jsonencode"):
            root = from_plain(_hcl_object(arg), path, at)
            return [root] if root is not None else []
        arg = arg.strip()
        if not arg.startswith('"'):
            return []  # yamldecode(file(...)): that file is linted on its own
        value = _unquote(arg)
    elif value.startswith("${") and value.endswith("}"):
        return []  # templatefile(...), a variable: nothing written here
    start = lines.find(rf"^\s*{re.escape(attr)}\b", at)
    heredoc = start < len(lines.lines) and "<<" in lines.lines[start]  # `yaml_body = <<-EOT`
    first = start + 1 if heredoc else start
    return from_yaml(value, path, first)


def objects(source: str, path: str) -> list[Mapping]:
    """Every Kubernetes object the file's resources and the data-addons module carry ([] when the
    file does not parse), at most OBJECTS_MAX."""
    tree = _parse(source)
    if tree is None:
        return []
    lines = _Lines(source)
    out: list[Mapping] = []
    for block in tree.get("resource", []):
        for rtype, named in block.items():
            rtype = _unquote(rtype)
            for name, body in named.items() if isinstance(named, dict) else ():
                name = _unquote(name)
                at = lines.find(rf'resource\s+"?{re.escape(rtype)}"?\s+"?{re.escape(name)}"?')
                out.extend(_resource(rtype, body, path, lines, at))
    for block in tree.get("module", []):
        for mname, body in block.items():
            at = lines.find(rf'module\s+"?{re.escape(_unquote(mname))}"?')
            configs = body.get("karpenter_resources_helm_config") if isinstance(body, dict) else None
            for key, config in configs.items() if isinstance(configs, dict) else ():
                out.extend(_karpenter_resources(_unquote(key), config, path, lines, at))
    return out[:OBJECTS_MAX]


def _resource(rtype: str, body: Any, path: str, lines: _Lines, at: int) -> list[Mapping]:
    body = body[0] if isinstance(body, list) and body else body
    if not isinstance(body, dict):
        return []
    if rtype == "kubectl_manifest" and isinstance(body.get("yaml_body"), str):
        return _string_objects(_unquote(body["yaml_body"]), path, lines, at, "yaml_body")
    if rtype == "kubernetes_manifest":
        manifest = body.get("manifest")
        if isinstance(manifest, str):
            return _string_objects(_unquote(manifest), path, lines, at, "manifest")
        root = from_plain(_plain(manifest), path, at)
        return [root] if root is not None else []
    return []


def _karpenter_resources(key: str, config: Any, path: str, lines: _Lines, at: int) -> list[Mapping]:
    """The NodePool the karpenter-resources chart renders from one entry's values (module docstring)."""
    values = config.get("values") if isinstance(config, dict) else None
    out: list[Mapping] = []
    for text in values if isinstance(values, list) else ():
        if not isinstance(text, str):
            continue
        start = lines.find(rf'^\s*"?{re.escape(key)}"?\s*=', at)
        for root in from_yaml(_unquote(text), path, lines.find(r"<<-?\s*[A-Za-z_]+\s*$", start) + 1):
            pool = root.map("nodePool")
            if pool is None:
                continue
            name = str(root.value("name") or key)
            out.append(_chart_node_pool(root, pool, name))
    return out


def _chart_node_pool(values: Mapping, pool: Mapping, name: str) -> Mapping:
    """karpenter-resources' NodePool, built as a tree whose parts are the values' own nodes."""
    at = (values.line, values.col, values.line, values.col + 1)
    rendered = from_plain(
        {
            "apiVersion": "karpenter.sh/v1",
            "kind": "NodePool",
            "metadata": {"name": name},
            "spec": {
                "template": {"metadata": {"labels": {"NodePool": name, "NodeGroupType": name}}, "spec": {}}
            },
        },
        "",
        values.line,
    )
    assert rendered is not None
    rendered.line, rendered.col, rendered.end_line, rendered.end_col = at
    spec = rendered.at("spec", "template", "spec")
    labels = rendered.at("spec", "template", "metadata", "labels")
    assert isinstance(spec, Mapping) and isinstance(labels, Mapping)
    for item in pool.seq("labels") or ():
        if isinstance(item, Mapping):
            labels.keys.update(item.keys)
            labels.values.update(item.values)
    for key in ("taints", "requirements"):
        if key in pool.values:
            spec.keys[key], spec.values[key] = pool.keys[key], pool.values[key]
    top = rendered.map("spec")
    if top is not None and "limits" in pool.values:
        top.keys["limits"], top.values["limits"] = pool.keys["limits"], pool.values["limits"]
    return rendered
