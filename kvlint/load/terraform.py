"""Kubernetes objects a Terraform file carries, as kvlint's YAML trees located in the .tf file.

Terraform is parsed with python-hcl2 (heredocs given back as quoted strings, so an expression that
holds one parses again); the objects are those of
- `kubectl_manifest` `yaml_body` (gavinbunney/kubectl and alekc/kubectl providers): a YAML string
  or heredoc, or `yamlencode({...})` of an HCL object;
- `kubernetes_manifest` `manifest` (hashicorp/kubernetes): an HCL object, or `yamldecode(<<EOT ...)`
  of a YAML string;
- hashicorp/kubernetes' own workload resources (`kubernetes_deployment_v1` ...: terraform_blocks.py)
  and `helm_release` values (`values = [<<EOT ...]`, yamlencode, `set` blocks: one values document);
- the values of aws-ia/terraform-aws-eks-data-addons' `karpenter_resources_helm_config` (a module
  input: `{ <name> = { values = [<<EOT ... EOT] } }`), rendered as that chart renders its NodePool
  (helm-charts/karpenter-resources/templates/node-pool.yaml @06c7fe93: labels NodePool and
  NodeGroupType = .Values.name, then each map of nodePool.labels; nodePool.taints, .requirements,
  .limits).
`var.x` / `local.x` are filled where the module states them (a variable's default, a tfvars value, a
local: terraform_names.py). Any other interpolation
(`${module.eks.cluster_name}`) inside a YAML string is kept as its text (a placeholder: no value
kvlint can read); a whole-line one is left out of the YAML. A
`yamldecode(file(...))` or `templatefile(...)` names a file read on its own, not here. A YAML string
is located at its lines in the .tf file; an object built from HCL at its resource's line.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

from kvlint.codes import NOT_CHECKABLE
from kvlint.findings import Issue, Location, Severity
from kvlint.load import terraform_blocks as blocks
from kvlint.load import terraform_files as tf_files
from kvlint.load import terraform_names as tf_names
from kvlint.load.compose import compose
from kvlint.load.terraform_trees import from_plain, from_yaml
from kvlint.load.tree import Mapping, mark_file, to_plain

OBJECTS_MAX = 200  # objects read from one file
UNSTATED_MAX = 10  # unstated references said per file
# what a .tf file must name to carry an object kvlint reads (the rest are not parsed)
MARKERS = ("kubernetes_", "kubectl_manifest", "helm_release", "karpenter_resources_helm_config")
_MERGE = re.compile(r"^\$\{merge\((.*)\)\}$", re.S)
_CALL = re.compile(r"^\$\{(yamlencode|yamldecode|jsonencode)\((.*)\)\}$", re.S)


@lru_cache(maxsize=8)
def _parse(source: str) -> dict[str, Any] | None:
    """The file's HCL as python-hcl2 gives it (cached: the loader and the pool walk may both ask);
    callers read it and never change it."""
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
        merged = _MERGE.match(v)
        return _merge_literals(merged.group(1)) if merged is not None else _unquote(v)
    return v


def _merge_literals(args: str) -> dict[str, Any] | str:
    """merge(...)'s literal objects, in order: the keys it surely sets (a conditional or a variable
    argument may add more; a label selector's stated keys stay its keys)."""
    parsed = _hcl_object(f"[{args}]")
    objects = [a for a in parsed if isinstance(a, dict)] if isinstance(parsed, list) else []
    if not objects:
        return f"${{merge({args})}}"
    out: dict[str, Any] = {}
    for o in objects:
        out.update(o)
    return out


def _hcl_object(expr: str) -> Any:
    """The value of an HCL expression's text (an object inside a function call)."""
    tree = _parse("v = " + expr)
    return _plain(tree.get("v")) if tree is not None else None


class _File:
    """One .tf file's lines (to locate what it carries) and the names its module states."""

    def __init__(self, source: str, path: str, known: dict[str, Any], real_path: str | None = None) -> None:
        self.lines = source.splitlines()
        self.path = path
        self.known = known
        self.real_path = real_path
        self.issues: list[Issue] = []  # templates not read, placeholders they leave

    def render(self, expr: str, at: int) -> tuple[str, str] | None:
        """(text, file as shown) of a `templatefile(...)` / template `file(...)` call (terraform_files.py);
        None when it names none or is not read (then an info says why, at line `at`)."""
        call = tf_files.call_of(expr)
        if call is None:
            return None
        fn, quoted, args = call
        variables = tf_names.fill(_hcl_object(args), self.known) if args else {}
        text, shown, left = tf_files.rendered(
            fn, _unquote(quoted), variables, self.real_path, self.path, self.known
        )
        where = Location(self.path, at + 1, 1)
        if text is None:
            if shown:
                self.issues.append(
                    _info(
                        f"Terraform {fn}({_unquote(quoted)}) {shown}: what it renders is not checked", where
                    )
                )
            return None
        if left:
            said = ", ".join(f"${{{n[:40]}}}" for n in left[:4]) + (" …" if len(left) > 4 else "")
            self.issues.append(
                _info(
                    f"Terraform {fn}({_unquote(quoted)}): {said} {'is' if len(left) == 1 else 'are'} not given a "
                    "literal value by its vars: placeholders, read as written, the settings that use them are not checked",
                    where,
                )
            )
        return text, shown

    def find(self, pattern: str, after: int = 0) -> int:
        """The 0-based line of the first match at or after `after` (`after` when none)."""
        rx = re.compile(pattern)
        return next((i for i in range(after, len(self.lines)) if rx.search(self.lines[i])), after)


def _string_objects(value: str, f: _File, at: int, attr: str) -> list[Mapping]:
    """The objects of an attribute's string value: YAML text, or yamlencode / yamldecode of one."""
    call = _CALL.match(value)
    if call is not None:
        fn, arg = call.groups()
        if fn in ("yamlencode", "jsonencode"):
            root = from_plain(tf_names.fill(_hcl_object(arg), f.known), f.path, at)
            return [root] if root is not None else []
        arg = arg.strip()
        if not arg.startswith('"'):  # yamldecode(templatefile(...)): the template, filled, in its own file
            got = f.render(arg, at)
            return mark_file(from_yaml(got[0], got[1], 0), got[1]) if got is not None else []
        value = _unquote(arg)
    elif value.startswith("${") and value.endswith("}"):  # `yaml_body = templatefile(...)`, a variable
        got = f.render(value[2:-1], at)
        return mark_file(from_yaml(got[0], got[1], 0), got[1]) if got is not None else []
    start = f.find(rf"^\s*{re.escape(attr)}\b", at)
    heredoc = start < len(f.lines) and "<<" in f.lines[start]  # `yaml_body = <<-EOT`
    return from_yaml(tf_names.fill_text(value, f.known), f.path, start + 1 if heredoc else start)


def objects(source: str, path: str, real_path: str | None = None) -> list[Mapping]:
    """Every Kubernetes object (and Helm values document) the file's resources and the data-addons
    module carry ([] when the file does not parse), at most OBJECTS_MAX; `var.x` / `local.x` filled
    with what the module beside `real_path` states (`known`)."""
    return _objects(source, path, real_path)[0]


def _objects(source: str, path: str, real_path: str | None) -> tuple[list[Mapping], list[Issue]]:
    tree = _parse(source)
    if tree is None:
        return [], []
    f = _File(source, path, known(source, real_path), real_path)
    out: list[Mapping] = []
    for block in tree.get("resource", []):
        for rtype, named in block.items():
            rtype = _unquote(rtype)
            for name, body in named.items() if isinstance(named, dict) else ():
                name = _unquote(name)
                at = f.find(rf'resource\s+"?{re.escape(rtype)}"?\s+"?{re.escape(name)}"?')
                out.extend(_resource(rtype, body, f, at))
    for block in tree.get("module", []):
        for mname, body in block.items():
            at = f.find(rf'module\s+"?{re.escape(_unquote(mname))}"?')
            configs = body.get("karpenter_resources_helm_config") if isinstance(body, dict) else None
            for key, config in configs.items() if isinstance(configs, dict) else ():
                out.extend(_karpenter_resources(_unquote(key), config, f, at))
    return out[:OBJECTS_MAX], f.issues


def carried(source: str, path: str, real_path: str | None) -> tuple[list[Mapping], list[Issue]]:
    """The objects of a .tf file being linted, its module's names filled in (`objects`), and one
    KV004 info per workload value that stays a Terraform reference the module does not state."""
    if not any(m in source for m in MARKERS):
        return [], []
    if _parse(source) is None:
        try:
            import hcl2  # noqa: F401
        except ImportError:
            why, fix = "python-hcl2 is not installed", "pip install 'kvlint-serving[terraform]'"
        else:
            why, fix = "it does not parse as HCL (python-hcl2)", "check it with `terraform validate`"
        text = f"Terraform file not read: {why}; the Kubernetes objects and Helm values it may carry are not checked"
        return [], [Issue(NOT_CHECKABLE, text, Location(path, 1, 1), fix=fix)]
    roots, issues = _objects(source, path, real_path)
    return roots, issues + _unstated(roots, path)


_UNSTATED = re.compile(r"\$\{\s*((?:var|local)\.[A-Za-z_][A-Za-z0-9_-]*)\s*\}")


def _containers(data: Any) -> list[Any]:
    """The containers of an object's pod templates: what the workload runs (not its name or namespace)."""
    out: list[Any] = []
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for k, v in node.items():
                (out if k in ("containers", "initContainers") else stack).append(v)
        elif isinstance(node, list):
            stack.extend(node)
    return out


def _info(message: str, where: Location) -> Issue:
    return Issue(NOT_CHECKABLE, message, where, severity=Severity.INFO)


def _unstated(roots: list[Mapping], path: str) -> list[Issue]:
    """`${var.x}` / `${local.x}` left in what a workload runs (its containers), or in a values document."""
    out: list[Issue] = []
    seen: set[str] = set()
    for root in roots:
        plain = to_plain(root)
        text = json.dumps(_containers(plain) if root.value("kind") else plain)
        for ref in _UNSTATED.findall(text):
            if ref not in seen and len(seen) < UNSTATED_MAX:
                seen.add(ref)
                out.append(
                    Issue(
                        NOT_CHECKABLE,
                        f"Terraform value {ref} is not stated in its module (no default, no literal "
                        f"local): its text `${{{ref}}}` is read as written, a placeholder",
                        root.where(path),
                        fix=f"state {ref} in the module (a variable's default, a literal local), "
                        "or lint the manifests Terraform renders",
                    )
                )
    return out


def known(source: str, real_path: str | None) -> dict[str, Any]:
    """What `var.x` / `local.x` are for one .tf file: its module's defaults, the file's own names, then
    the module's tfvars, locals settled (terraform_names.py: the one resolver of every .tf reader)."""
    tree = _parse(source) if ("var." in source or "local." in source) else None
    if tree is None:
        return {}
    defaults, assigned = tf_names.module_names(real_path, _parse, _plain) if real_path else ({}, {})
    files = tf_files.reader(real_path) if real_path else None
    return tf_names.settle({**defaults, **tf_names.names(tree, _plain), **assigned}, files)


def _resource(rtype: str, body: Any, f: _File, at: int) -> list[Mapping]:
    body = body[0] if isinstance(body, list) and body else body
    if not isinstance(body, dict):
        return []
    if rtype == "kubectl_manifest" and isinstance(body.get("yaml_body"), str):
        return _string_objects(_unquote(body["yaml_body"]), f, at, "yaml_body")
    if rtype == "kubernetes_manifest":
        manifest = body.get("manifest")
        if isinstance(manifest, str):
            return _string_objects(_unquote(manifest), f, at, "manifest")
        return _located(tf_names.fill(_plain(manifest), f.known), f, at)
    if rtype == "helm_release":
        return _helm_release(body, f, at)
    return _located(tf_names.fill(blocks.workload(rtype, body, _plain), f.known), f, at)


def _located(data: Any, f: _File, at: int) -> list[Mapping]:
    root = from_plain(data, f.path, at) if data is not None else None
    return [root] if root is not None else []


def _helm_release(body: dict[str, Any], f: _File, at: int) -> list[Mapping]:
    """The values a helm_release installs its chart with: one YAML string alone keeps its lines."""
    entries = body.get("values") or []
    if len(entries) == 1 and not body.get("set") and not body.get("set_string"):
        text = _unquote(entries[0]) if isinstance(entries[0], str) else ""
        if not text.startswith("${"):
            start = f.find(r"^\s*values\b", at)
            return from_yaml(
                tf_names.fill_text(text, f.known), f.path, f.find(r"<<-?\s*[A-Za-z_]+\s*$", start) + 1
            )

    def documents(entry: Any) -> list[Any]:
        text = _unquote(entry) if isinstance(entry, str) else ""
        call = _CALL.match(text)
        if call is not None and call.group(1) == "yamlencode":
            return [tf_names.fill(_hcl_object(call.group(2)), f.known)]
        if text.startswith("${") and text.endswith("}"):  # templatefile(...), a template's file(...)
            got = f.render(text[2:-1], at)
            text = got[0] if got is not None else ""
        docs, issues = compose(tf_names.fill_text(text, f.known), f.path)
        return [] if issues else [to_plain(d.root) for d in docs]

    return _located(blocks.helm_values(body, _plain, documents), f, at)


def _karpenter_resources(key: str, config: Any, f: _File, at: int) -> list[Mapping]:
    """The NodePool the karpenter-resources chart renders from one entry's values (module docstring)."""
    values = config.get("values") if isinstance(config, dict) else None
    out: list[Mapping] = []
    for text in values if isinstance(values, list) else ():
        if not isinstance(text, str):
            continue
        start = f.find(rf'^\s*"?{re.escape(key)}"?\s*=', at)
        text = tf_names.fill_text(_unquote(text), f.known)
        for root in from_yaml(text, f.path, f.find(r"<<-?\s*[A-Za-z_]+\s*$", start) + 1):
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
