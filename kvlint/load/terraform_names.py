"""What `var.NAME` and `local.NAME` are in a Terraform module, as far as its files state them: one resolver
for everything kvlint reads from .tf files (the Kubernetes objects and Helm values they carry, the node
pools they define).

Terraform's own order (developer.hashicorp.com/terraform/language/values/variables, "Variable
Definition Precedence"): a variable's `default`, then `terraform.tfvars`, then `*.auto.tfvars` in
lexical order, each later one winning (`-var` / `-var-file` / TF_VAR_ are the caller's, not the
repository's: not read). A `locals` entry is its value once the variables and locals it names are
known (`local.a = var.b`, `"${var.region}-a"`); one that stays an expression is not stated.
A reference reads into a stated object or list (`var.pool.machine_type`, `var.pools[0].type`,
`local.m["k"]`). Anything else stays its `${...}` text: a placeholder, never a guess.

The module is the file's folder: its other `.tf` files and the two tfvars forms, regular files (a link
followed only when it ends inside the repository: `module_entries`), at most MODULE_FILES_MAX of them,
each at most MODULE_FILE_BYTES.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from typing import Any

from kvlint.fileio import nearest_up, read_regular
from kvlint.load import terraform_eval as tf_eval
from kvlint.load import terraform_types as tf_types

MODULE_FILES_MAX = 64  # files of one folder whose variables and locals are read
MODULE_FILE_BYTES = 1 << 20
_UP = 16  # folders walked up looking for the repository's top (terraform_files.py)
_ROUNDS = 4  # locals that name locals: resolved this many levels deep
# `${var.x}`, `${local.x.y}`, `${var.x[0]}`, `${local.m["k"]}`
_REF = re.compile(
    r"\$\{\s*(var|local)\.([A-Za-z_][A-Za-z0-9_-]*)((?:\.[A-Za-z_][A-Za-z0-9_-]*|\[\s*(?:\d+|\"[^\"]*\")\s*\])*)\s*\}"
)
_STEP = re.compile(r"\.([A-Za-z_][A-Za-z0-9_-]*)|\[\s*(\d+|\"[^\"]*\")\s*\]")


def names(tree: dict[str, Any], plain) -> dict[str, Any]:
    """`var.x` and `local.x` of one file as written: variable defaults and locals (settled later:
    `settle`), by `var.x` / `local.x`."""
    out: dict[str, Any] = {}
    for block in tree.get("variable") or []:
        for name, body in block.items() if isinstance(block, dict) else ():
            if isinstance(body, dict) and "default" in body:
                value = plain(body["default"])
                if value is not None:
                    out[f"var.{plain(name)}"] = value
            if isinstance(body, dict) and isinstance(body.get("type"), str):
                out[f"type.{plain(name)}"] = body["type"]  # its optional attributes' defaults: `settle`
    for block in tree.get("locals") or []:
        for name, value in block.items() if isinstance(block, dict) else ():
            if not name.startswith("__"):
                out[f"local.{name}"] = plain(value)
    return out


def tfvars(tree: dict[str, Any], plain) -> dict[str, Any]:
    """The assignments of a .tfvars file, as `var.x`."""
    return {f"var.{plain(k)}": plain(v) for k, v in tree.items() if not str(k).startswith("__")}


def settle(known: dict[str, Any], files: Any = None) -> dict[str, Any]:
    """`known` with each variable given its type's optional attributes and each local filled from the
    others, evaluated where it is an expression (terraform_eval.py); a local that stays unknown is
    dropped, one partly known (a list of objects one of whose values is computed) is kept. `files`
    reads what `file()` / `templatefile()` name (terraform_files.py reader)."""
    out = {k: v for k, v in known.items() if not k.startswith("type.")}
    for key, type_text in known.items():
        if key.startswith("type.") and f"var.{key[5:]}" in out:
            out[f"var.{key[5:]}"] = tf_types.typed(out[f"var.{key[5:]}"], type_text)
    for _ in range(_ROUNDS):
        pending = {k: v for k, v in out.items() if k.startswith("local.") and _open(v)}
        if not pending:
            break
        for k, v in pending.items():
            out[k] = _fill_text_only(v, {n: x for n, x in out.items() if n != k})
    pending = {k: v for k, v in out.items() if k.startswith("local.") and _open(v)}
    if pending:
        scope = tf_eval.Scope(out, files=files)
        for k, v in pending.items():
            got = tf_eval.settled(v, scope)
            if got is not None:
                out[k] = got
    return {k: v for k, v in out.items() if not (k.startswith("local.") and _open(v) and not _partial(v))}


def _partial(value: Any, depth: int = 0) -> bool:
    """A list or an object some of whose values are known (kept: its known parts are read)."""
    if depth > tf_eval.DEPTH_MAX:
        return False
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else None
    if items is None:
        return not (isinstance(value, str) and "${" in value)
    return any(_partial(v, depth + 1) for v in items)


def _open(value: Any) -> bool:
    """True when a value still holds an interpolation (`${...}`) anywhere."""
    if isinstance(value, str):
        return "${" in value
    if isinstance(value, dict):
        return any(_open(v) for v in value.values())
    if isinstance(value, list):
        return any(_open(v) for v in value)
    return False


def _lookup(m: re.Match[str], known: dict[str, Any]) -> tuple[bool, Any]:
    """(found, value) of one reference, read into the stated object along its steps."""
    key = f"{m.group(1)}.{m.group(2)}"
    if key not in known:
        return False, None
    value = known[key]
    for step in _STEP.finditer(m.group(3) or ""):
        attr, index = step.groups()
        if attr is not None and isinstance(value, dict) and attr in value:
            value = value[attr]
        elif index is not None and index.isdigit() and isinstance(value, list) and int(index) < len(value):
            value = value[int(index)]
        elif index is not None and not index.isdigit() and isinstance(value, dict) and index[1:-1] in value:
            value = value[index[1:-1]]
        else:
            return False, None
    return True, value


def fill(value: Any, known: dict[str, Any], bound: dict[str, Any] | None = None) -> Any:
    """Replace the stated variables and locals in plain data (module docstring); an expression is
    evaluated (terraform_eval.py: `bound` names what `each` or an iterator is), what stays unknown
    keeps its `${...}` text."""
    if not known and not bound:
        return value
    return _fill(value, known, tf_eval.Scope(known, bound), 0)


def fill_scoped(value: Any, scope: tf_eval.Scope) -> Any:
    """`fill` in a scope already made (one per module: its locals evaluated once)."""
    return _fill(value, scope.module.known, scope, 0)


def _fill(value: Any, known: dict[str, Any], scope: tf_eval.Scope, depth: int) -> Any:
    if depth > tf_eval.DEPTH_MAX:
        return value
    if isinstance(value, dict):
        return {k: _fill(v, known, scope, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, known, scope, depth + 1) for v in value]
    if isinstance(value, str) and "${" in value:
        whole = _REF.fullmatch(value.strip())
        if whole is not None:
            found, got = _lookup(whole, known)
            if found:
                return got
        got = tf_eval.settled(value, scope)
        return got if got is not None else fill_text(value, known)
    return value


def _fill_text_only(value: Any, known: dict[str, Any]) -> Any:
    """`fill` by references alone (the rounds that settle locals before any is evaluated)."""
    if isinstance(value, dict):
        return {k: _fill_text_only(v, known) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill_text_only(v, known) for v in value]
    if isinstance(value, str):
        whole = _REF.fullmatch(value.strip())
        if whole is not None:
            found, got = _lookup(whole, known)
            if found:
                return got
        return fill_text(value, known)
    return value


def fill_text(text: str, known: dict[str, Any]) -> str:
    """A string's references to stated scalars replaced by their text (a boolean as Terraform writes it)."""

    def one(m: re.Match[str]) -> str:
        found, v = _lookup(m, known)
        text = as_text(v) if found else None
        return m.group(0) if text is None else text

    return _REF.sub(one, text) if known and "${" in text else text


def as_text(value: Any) -> str | None:
    """A value as Terraform writes it inside a string (`true`, `8192`), None for a list or an object."""
    if isinstance(value, bool):
        return str(value).lower()
    return str(value) if isinstance(value, (str, int, float)) else None


def module_entries(folder: str, suffixes: tuple[str, ...]) -> list[tuple[str, str]]:
    """(name, path to read) of a module folder's files with these suffixes, by name, at most
    MODULE_FILES_MAX: regular files, and links that end at a regular file inside the repository (a
    module's shared variables linked from one folder, as GoogleCloudPlatform/accelerated-platforms
    links `_cluster_variables.tf`); a link out of it is not followed."""
    try:
        entries = sorted((e for e in os.scandir(folder) if e.name.endswith(suffixes)), key=lambda e: e.name)
    except OSError:
        return []
    top = os.path.realpath(nearest_up(folder, (".git",), _UP) or folder)
    out: list[tuple[str, str]] = []
    for entry in entries[:MODULE_FILES_MAX]:
        try:
            if entry.is_symlink():
                real = os.path.realpath(entry.path)
                if os.path.commonpath([real, top]) == top and os.path.isfile(real):
                    out.append((entry.name, real))
            elif entry.is_file(follow_symlinks=False):
                out.append((entry.name, entry.path))
        except (OSError, ValueError):
            continue
    return out


def module_names(real_path: str, parse, plain) -> tuple[dict[str, Any], dict[str, Any]]:
    """What the other files of a .tf file's folder state, not yet settled: (defaults and locals, the
    tfvars assignments that override them); `parse(text)` gives a file's HCL tree, `plain` its values."""
    own = os.path.abspath(real_path)
    defaults: dict[str, Any] = {}
    assigned: list[tuple[int, str, dict[str, Any]]] = []
    for name, path in module_entries(os.path.dirname(own), (".tf", ".tfvars")):
        rank = 1 if name == "terraform.tfvars" else 2 if name.endswith(".auto.tfvars") else 0
        if name.endswith(".tfvars") and not rank:
            continue  # a -var-file the caller names: not the repository's choice
        if os.path.join(os.path.dirname(own), name) == own:
            continue
        try:
            st = os.stat(path)
        except OSError:
            continue
        found = _file_names(path, st.st_mtime_ns, st.st_size, bool(rank), parse, plain)
        if rank:
            assigned.append((rank, name, found))
        else:
            defaults.update(found)
    values: dict[str, Any] = {}
    for _rank, _name, found in sorted(assigned, key=lambda a: (a[0], a[1])):
        values.update(found)
    return defaults, values


@lru_cache(maxsize=256)
def _file_names(path: str, _mtime: int, size: int, assigns: bool, parse, plain) -> dict[str, Any]:
    if size > MODULE_FILE_BYTES:
        return {}
    try:
        source = read_regular(path, MODULE_FILE_BYTES).decode("utf-8", "replace")
    except (OSError, ValueError):
        return {}
    if not assigns and "variable" not in source and "locals" not in source:
        return {}
    tree = parse(source)
    if not isinstance(tree, dict):
        return {}
    return tfvars(tree, plain) if assigns else names(tree, plain)
