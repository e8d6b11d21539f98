"""A call of a Terraform module kept in the same repository (`module "aks" { source = "./modules/aks"
node_pools = {...} }`): the module's files, and what `var.x` / `local.x` are inside it for this call.

Terraform's rules (developer.hashicorp.com/terraform/language/modules/syntax, "Module Sources": a
local path begins with `./` or `../` and is relative to the calling module's folder): each argument
of the call other than the meta-arguments (source, version, count, for_each, providers, depends_on)
sets the module's variable of that name, over its default; the module's locals are its own.
An argument kvlint cannot evaluate in the caller is unknown inside the module too (never read there as
text: a `local.x` of the caller is not the module's `local.x`).

Bounded and read-only as the template files are (terraform_files.py): the folder, once resolved, lies
inside the repository of the calling file; its regular `.tf` files only (a link only when it ends inside the repository), at most
MODULE_FILES_MAX of them, each at most MODULE_FILE_BYTES; the reader bounds the calls one file leads to
(how many, how deep, the bytes they read: extract/kinds/node_pools_tf.py) and reads a module calling
itself once.
"""

from __future__ import annotations

import os
from typing import Any

from kvlint.fileio import read_regular
from kvlint.load import terraform_files as tf_files
from kvlint.load import terraform_names as tf_names

MODULE_FILES_MAX = tf_names.MODULE_FILES_MAX
MODULE_FILE_BYTES = tf_names.MODULE_FILE_BYTES
META = ("source", "version", "count", "for_each", "providers", "depends_on")
_UNKNOWN_INPUT = "${caller.input}"  # what an argument not known in the caller is inside the module


def folder(caller_real: str, source: Any) -> str | None:
    """The folder a local `source` names, None when it is not a local path or lies outside the repository."""
    if not isinstance(source, str) or not source.startswith(("./", "../")) or "${" in source:
        return None
    here = os.path.dirname(os.path.abspath(caller_real))
    top = os.path.realpath(tf_files.repository_top(here))
    target = os.path.realpath(os.path.join(here, source))
    if os.path.commonpath([target, top]) != top or not os.path.isdir(target):
        return None
    return target


def files(module_folder: str, budget: list[int]) -> list[tuple[str, str]]:
    """(path, text) of the module's `.tf` files, by name, within the bounds (terraform_names.py
    module_entries: a link only when it ends inside the repository) and while `budget[1]` (bytes the
    caller's calls may still read) lasts."""
    out = []
    for _name, path in tf_names.module_entries(module_folder, (".tf",)):
        if budget[1] <= 0:
            break
        try:
            text = read_regular(path, min(MODULE_FILE_BYTES, budget[1])).decode("utf-8", "replace")
        except (OSError, ValueError):
            continue
        budget[1] -= len(text)
        out.append((path, text))
    return out


def known(module_files: list[tuple[str, str]], call: dict[str, Any], parse, plain) -> dict[str, Any]:
    """`var.x` / `local.x` inside the module for this call: its variables' defaults and its locals,
    the call's arguments over the defaults (settled: terraform_names.settle)."""
    stated: dict[str, Any] = {}
    for _path, text in module_files:
        if "variable" in text or "locals" in text:
            tree = parse(text)
            if isinstance(tree, dict):
                stated.update(tf_names.names(tree, plain))
    for key, value in call.items():
        if key not in META and not key.startswith("__"):
            stated[f"var.{key}"] = _closed(value)
    return tf_names.settle(stated)


def _closed(value: Any, depth: int = 0) -> Any:
    """An argument's value with what stays unknown in the caller made unknown in the module too."""
    if depth > 40:
        return _UNKNOWN_INPUT
    if isinstance(value, dict):
        return {k: _closed(v, depth + 1) for k, v in value.items() if not str(k).startswith("__")}
    if isinstance(value, list):
        return [_closed(v, depth + 1) for v in value]
    if isinstance(value, str) and "${" in value:
        return _UNKNOWN_INPUT
    return value
