"""Model references that name no model kvlint could look up, by class; the Hub id a cache path names.

KV003 warns about a model the author named that kvlint does not know: a typo, a private model, a
release the catalog lacks. A reference of the classes below is not that: it names no model id at all,
only where the files are or will be, so nothing the author wrote is wrong and kvlint cannot read
which model it is. Such a reference is an info, counted once per run with how to tell kvlint:

- an unexpanded variable: `$VAR` and `${VAR}` (shell, Docker Compose), `$(VAR)` (a Kubernetes
  dependent environment variable), `{{ ... }}` (Helm and Go templates, Jinja);
- a placeholder the author left to fill in: `YOUR-…`/`YOUR_…`, `<…>`, `CHANGEME`, `REPLACE_ME`,
  `PLACEHOLDER`;
- a volume or object-store URI: `pvc://`, `s3://`, `gs://`, `oci://`, `hdfs://`, `webhdfs://`,
  `file://` (the storage URIs KServe's storage initializer downloads from:
  kserve/website docs/modelserving/storage/storagecontainers.md `supportedUriFormats`; `pvc://` and
  `oci://` are its PVC and modelcar sources);
- a local path (absolute, `./`, `../`, `~`) that holds no config.json kvlint can read.

A path is never matched to a model by the look of its last segment here: a wrong match is worse than
an unknown, so a close catalog id is at most named as a hint. (The name rules of
kvlint/catalog/name_rules.py match a path whose last segment is a catalogued name exactly, as KV007.)

One path does name its model: the Hugging Face cache layout `…/models--{org}--{name}/snapshots/<sha>`
(huggingface_hub: https://huggingface.co/docs/huggingface_hub/guides/manage-cache, "models--" + the
repo id with "/" written "--"). `cache_id` reads org/name from it.
"""

from __future__ import annotations

import re

from kvlint.lazy_re import lazy
from kvlint.record import record

VARIABLE = "variable"
PLACEHOLDER = "placeholder"
VOLUME = "volume"
PATH = "path"

_VARIABLE = lazy(r"\$\{[A-Za-z_]\w*\}|\$\([A-Za-z_]\w*\)|\$[A-Za-z_]\w*|\{\{.*?\}\}")
_PLACEHOLDER = lazy(r"(?<![a-z0-9])your[-_]|<[^<>]+>|change[-_]?me|replace[-_]?me|placeholder", re.IGNORECASE)
_VOLUME = lazy(r"^(pvc|s3|gs|oci|hdfs|webhdfs|file)://", re.IGNORECASE)
_PATH_STARTS = ("/", "./", "../", "~")

# huggingface_hub's cache folder for a model repository: models--{org}--{name}; both parts are Hub
# names (letters, digits, '-', '_', '.'), and neither may hold "--" (the separator)
_CACHE_FOLDER = lazy(r"(?:^|/)models--([A-Za-z0-9][\w.-]*?)--([\w.]+(?:-[\w.]+)*)(?:/|$)")


@record(frozen=True)
class Unreadable:
    """A model reference kvlint cannot read as a model: its class and what it is, in words."""

    kind: str  # VARIABLE, PLACEHOLDER, VOLUME or PATH
    what: str  # e.g. "an unexpanded variable ($MODEL_ID)"


def classify(ref: str) -> Unreadable | None:
    """The class of a reference that names no model id, or None (a Hub id, a bare name)."""
    text = ref.strip()
    found = _VARIABLE().search(text)
    if found:
        return Unreadable(VARIABLE, f"an unexpanded variable ({found.group(0)})")
    found = _PLACEHOLDER().search(text)
    if found:
        return Unreadable(PLACEHOLDER, f"a placeholder left to fill in ({found.group(0).rstrip('-_')})")
    found = _VOLUME().match(text)
    if found:
        return Unreadable(VOLUME, f"a {found.group(1).lower()}:// storage location")
    if text.startswith(_PATH_STARTS) or text.startswith("local:"):
        return Unreadable(PATH, "a local path")
    return None


def cache_id(ref: str) -> str | None:
    """org/name from a Hugging Face cache path (`…/models--org--name/snapshots/<sha>`), else None."""
    found = _CACHE_FOLDER().search(ref.strip()) if "models--" in ref else None
    if found is None or "--" in found.group(2):
        return None
    return f"{found.group(1)}/{found.group(2)}"


def last_segment(ref: str) -> str:
    """The last part of a path or URI (`/models/llava-1.5-7b-hf/` -> `llava-1.5-7b-hf`)."""
    return ref.strip().rstrip("/").rsplit("/", 1)[-1]
