"""KV003 for a model reference that names no model id: an info saying what was not checked and how to
tell kvlint which model it is (the classes: kvlint/catalog/model_refs.py).

A Hub id kvlint does not find stays a warning (resolve_model.py): it is a typo or a private model the author
can name. A variable, a placeholder, a path or a storage URI is not wrong, only unreadable.
"""

from __future__ import annotations

from kvlint.catalog import model_refs
from kvlint.catalog import models as model_catalog
from kvlint.codes import UNKNOWN_MODEL
from kvlint.findings import Issue, IssueKind, Location, Severity

_ALIAS = "add it under `models:` in .kvlint.yaml with this reference among its `aliases`"
_FIX = {
    model_refs.VARIABLE: "lint the file with the variable filled in (envsubst, helm template), or " + _ALIAS,
    model_refs.PLACEHOLDER: "fill it in with the model's Hub id (org/name; `kvlint models pull ORG/NAME` "
    "if kvlint does not know it), or " + _ALIAS,
    model_refs.VOLUME: _ALIAS,
    model_refs.PATH: "point `model` at a directory holding its config.json, or " + _ALIAS,
}


def issue(ref: str, tried: str, where: Location) -> Issue | None:
    """The info for `ref` when it names no model id (`tried`: what the look-up said), else None."""
    if model_refs.cache_id(ref) is not None:
        return None  # a Hugging Face cache path names its Hub id: not found, that id is a warning
    found = model_refs.classify(ref)
    if found is None:
        return None
    message = f"model {ref!r} is {found.what}, not a model id: which model it is was not checked ({tried})"
    if found.kind in (model_refs.PATH, model_refs.VOLUME):
        close = model_catalog.suggest(model_refs.last_segment(ref))
        if close:  # a hint only: a folder's name does not say which checkpoint it holds
            message += f"; its last part resembles {close[0]}, not assumed"
    return Issue(
        UNKNOWN_MODEL,
        message,
        where,
        fix=_FIX[found.kind],
        severity=Severity.INFO,
        kind=IssueKind.MODEL_NOT_READABLE,
    )
