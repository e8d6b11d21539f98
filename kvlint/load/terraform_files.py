"""Files a .tf file renders into what it applies: `templatefile(path, {vars})` (a YAML template whose
`${name}` the vars fill) and `file(path)` of a template file (`.tpl`, `.tmpl`: a plain `.yaml` / `.json`
is linted on its own, as is), inside `yamldecode(...)` or as a helm_release `values` entry.

Terraform's rules (developer.hashicorp.com/terraform/language/functions/templatefile, /file,
/expressions/references "path.module"): the path is relative to the working directory, written with
`${path.module}` (the .tf file's folder) in modules; a template's `${name}` is the vars entry, `$${` a
literal `${`, `%{ ... }` a directive (not evaluated here: kept as written). A `${name}` the vars do not
give (Terraform itself refuses the call) or that is an expression stays its text: a placeholder, said once.

Bounded and read-only as the files beside a manifest are (security review 3, S20): the path, once
`${path.module}` and stated `var.x` are filled, must resolve inside the repository that holds the .tf file
(its nearest folder with `.git`; without one, the .tf file's own folder); a regular file of at most
FILE_BYTES; nothing else is opened.
"""

from __future__ import annotations

import os
import re
from typing import Any

from kvlint.fileio import nearest_up, read_regular
from kvlint.load import terraform_names as tf_names

FILE_BYTES = 1 << 20
_UP = 16  # folders walked up looking for the repository's top
_CALLS = re.compile(r'^\s*(templatefile|file)\(\s*("(?:[^"\\]|\\.)*")\s*(?:,(.*))?\)\s*$', re.S)
_TEMPLATES = (".tpl", ".tmpl", ".tftpl", ".template")
_TEMPLATE_REF = re.compile(r"(?<!\$)\$\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}")
_ANY_REF = re.compile(r"(?<!\$)\$\{([^}]*)\}")


def call_of(expr: str) -> tuple[str, str, str] | None:
    """(function, quoted path, vars expression) of a `templatefile(...)` / `file(...)` call's text."""
    m = _CALLS.match(expr)
    return (m.group(1), m.group(2), (m.group(3) or "").strip()) if m else None


def repository_top(folder: str) -> str:
    """The nearest folder at or above `folder` holding `.git` (else `folder` itself)."""
    return nearest_up(folder, (".git",), _UP) or folder


def reader(real_path: str):
    """What an expression evaluated in the .tf file at `real_path` reads (terraform_eval.py Scope
    `files`): `file(path)` of any file, `templatefile(path, vars)` rendered, with the bounds above;
    None when not read or when the template leaves a placeholder the vars do not give."""

    def read(fn: str, path_text: str, variables: Any) -> str | None:
        text, _shown, left = rendered(
            fn, path_text, variables, real_path, real_path, {}, templates_only=False
        )
        return None if text is None or left else text

    return read


def rendered(
    fn: str,
    path_text: str,
    variables: Any,
    real_path: str | None,
    shown: str,
    known: dict[str, Any],
    templates_only: bool = True,
) -> tuple[str | None, str, list[str]]:
    """(text, the file as findings show it, placeholders left) of one call; text None when not read
    (the reason then stands in the second item's place: "not read: why"). `templates_only`: a
    `file(...)` of a plain YAML or JSON file is not read (the loader lints it on its own)."""
    rel = tf_names.fill_text(path_text, known).replace("${path.module}", ".").replace("${path.root}", ".")
    if "${" in rel:
        return None, f"not read: its path {rel} is computed", []
    if fn == "file" and templates_only and not rel.endswith(_TEMPLATES):
        return None, "", []  # a YAML or JSON file: linted on its own
    if real_path is None:
        return None, "not read: the .tf file came from standard input", []
    folder = os.path.dirname(os.path.abspath(real_path))
    target = os.path.normpath(os.path.join(folder, rel))
    top = os.path.realpath(repository_top(folder))
    display = os.path.normpath(os.path.join(os.path.dirname(shown), rel))
    try:
        real = os.path.realpath(target)
        if os.path.commonpath([real, top]) != top:
            return None, f"not read: {display} lies outside the repository", []
        text = read_regular(real, FILE_BYTES).decode("utf-8", "replace")
    except (OSError, ValueError):
        return None, f"not read: {display} is not a regular file of at most {FILE_BYTES:,} bytes", []
    if fn == "file":
        return text, display, []
    return _filled(text, variables if isinstance(variables, dict) else {}), display, _left(text, variables)


def _filled(text: str, variables: dict[str, Any]) -> str:
    def one(m: re.Match[str]) -> str:
        text = tf_names.as_text(variables.get(m.group(1)))
        return m.group(0) if text is None or "${" in text else text  # `each.value.id`: no value here

    return _TEMPLATE_REF.sub(one, text).replace("$${", "${")


def _left(text: str, variables: Any) -> list[str]:
    given = variables if isinstance(variables, dict) else {}
    out: list[str] = []
    for m in _ANY_REF.finditer(text):
        name = m.group(1).strip()
        value = tf_names.as_text(given.get(name))
        if (value is None or "${" in value) and name not in out:
            out.append(name)
    return out
