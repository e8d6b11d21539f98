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
`var.x` / `local.x` are filled where the module states them (a variable's default, a literal local, in
this file or another .tf file of its folder: terraform_blocks.fill). Any other interpolation
(`${module.eks.cluster_name}`) inside a YAML string is kept as its text (a placeholder: no value
kvlint can read); a whole-line one is left out of the YAML. A
`yamldecode(file(...))` or `templatefile(...)` names a file read on its own, not here. A YAML string
is located at its lines in the .tf file; an object built from HCL at its resource's line.
"""

from __future__ import annotations

import json
import os
import re
from functools import lru_cache
from typing import Any

from kvlint.codes import NOT_CHECKABLE
from kvlint.fileio import read_regular
from kvlint.findings import Issue, Location
from kvlint.load import terraform_blocks as blocks
from kvlint.load.compose import compose
from kvlint.load.tree import Mapping, Node, Sequence, to_plain

OBJECTS_MAX = 200  # objects read from one file
UNSTATED_MAX = 10  # unstated references said per file
MODULE_FILES_MAX = 64  # .tf files beside one whose variables and locals are read
MODULE_FILE_BYTES = 1 << 20
# what a .tf file must name to carry an object kvlint reads (the rest are not parsed)
MARKERS = ("kubernetes_", "kubectl_manifest", "helm_release", "karpenter_resources_helm_config")
_INTERPOLATION_LINE = re.compile(r"^\s*\$\{.*\}\s*$")
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


class _File:
    """One .tf file's lines (to locate what it carries) and the names its module states."""

    def __init__(self, source: str, path: str, known: dict[str, Any]) -> None:
        self.lines = source.splitlines()
        self.path = path
        self.known = known

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
            root = from_plain(blocks.fill(_hcl_object(arg), f.known), f.path, at)
            return [root] if root is not None else []
        arg = arg.strip()
        if not arg.startswith('"'):
            return []  # yamldecode(file(...)): that file is linted on its own
        value = _unquote(arg)
    elif value.startswith("${") and value.endswith("}"):
        return []  # templatefile(...), a variable: nothing written here
    start = f.find(rf"^\s*{re.escape(attr)}\b", at)
    heredoc = start < len(f.lines) and "<<" in f.lines[start]  # `yaml_body = <<-EOT`
    return from_yaml(blocks.fill_text(value, f.known), f.path, start + 1 if heredoc else start)


def objects(source: str, path: str, module: dict[str, Any] | None = None) -> list[Mapping]:
    """Every Kubernetes object (and Helm values document) the file's resources and the data-addons
    module carry ([] when the file does not parse), at most OBJECTS_MAX. `module`: the variable
    defaults and locals the module's other files state (`names`)."""
    tree = _parse(source)
    if tree is None:
        return []
    f = _File(source, path, {**(module or {}), **blocks.names(tree, _plain)})
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
    return out[:OBJECTS_MAX]


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
    roots = objects(source, path, module_names(real_path) if real_path else None)
    return roots, _unstated(roots, path)


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


def module_names(real_path: str) -> dict[str, Any]:
    """What the other .tf files of the file's folder (its module) state: bounded, no symlinks."""
    folder = os.path.dirname(os.path.abspath(real_path))
    out: dict[str, Any] = {}
    try:
        entries = sorted((e for e in os.scandir(folder) if e.name.endswith(".tf")), key=lambda e: e.name)[
            :MODULE_FILES_MAX
        ]
    except OSError:
        return out
    for entry in entries:
        if entry.path == os.path.abspath(real_path) or not entry.is_file(follow_symlinks=False):
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        out.update(_file_names(entry.path, st.st_mtime_ns, st.st_size))
    return out


@lru_cache(maxsize=256)
def _file_names(path: str, _mtime: int, size: int) -> dict[str, Any]:
    if size > MODULE_FILE_BYTES:
        return {}
    try:
        data = read_regular(path, MODULE_FILE_BYTES)
    except (OSError, ValueError):
        return {}
    return names(data.decode("utf-8", "replace"))


def names(source: str) -> dict[str, Any]:
    """The variable defaults and literal locals one .tf file states (terraform_blocks.names)."""
    tree = _parse(source) if ("variable" in source or "locals" in source) else None
    return blocks.names(tree, _plain) if tree is not None else {}


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
        return _located(blocks.fill(_plain(manifest), f.known), f, at)
    if rtype == "helm_release":
        return _helm_release(body, f, at)
    return _located(blocks.fill(blocks.workload(rtype, body, _plain), f.known), f, at)


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
                blocks.fill_text(text, f.known), f.path, f.find(r"<<-?\s*[A-Za-z_]+\s*$", start) + 1
            )

    def documents(entry: Any) -> list[Any]:
        text = _unquote(entry) if isinstance(entry, str) else ""
        call = _CALL.match(text)
        if call is not None and call.group(1) == "yamlencode":
            return [blocks.fill(_hcl_object(call.group(2)), f.known)]
        if text.startswith("${"):
            return []  # file(...), templatefile(...): read where the file is
        docs, issues = compose(blocks.fill_text(text, f.known), f.path)
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
        text = blocks.fill_text(_unquote(text), f.known)
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
