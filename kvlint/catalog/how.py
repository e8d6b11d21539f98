"""How a model reference was resolved: the values of `catalog.models.Resolution.how` (and
`resolve.Resolved.model_how`), in one place.

Every way of finding a model has its label here; a new way (a name rule, a pulled copy, a
safetensors header …) adds its label and says whether it is an exact find. Whatever is not an
exact catalog find is shown with the findings that used the model's facts (text: a detail line;
JSON: the deployment's `model_resolution`), so what kvlint assumed is named.
"""

from __future__ import annotations

EXACT = "kvlint catalog"  # the reference is a catalogued model id, matched exactly
DECLARED = "declared architecture"  # the spec's `architecture:` block, no model named or found
LOCAL_FILE = "local file"  # + the path: a config.json the reference points at
LOCAL_DIRECTORY = "local directory"  # + the path: a directory holding a config.json
HF_CACHE = "local Hugging Face cache"
MATCHED_BY_NAME = "matched by name"  # a derived id resolved to its catalogued base by name rules
PULLED = "pulled copy"  # + the path: an entry `kvlint models pull` wrote to the project's models directory
OTHER_KIND = "kind recognised by name"  # not a text-generation checkpoint (catalog/model_kinds.py)
CACHE_PATH = "id read from its Hugging Face cache path"  # + the id: `.../models--org--name/snapshots/...`
HUB = "Hub copy fetched by --hub"  # + the cache: fetched on the fly by `kvlint --hub`


def is_exact(how: str) -> bool:
    """True for an exact catalog find (nothing to name); False for every other way."""
    return how == EXACT


def shown(how: str) -> str:
    """The detail line that names how the model was found, or '' for an exact catalog find."""
    return "" if not how or is_exact(how) else f"model facts: {how}"
