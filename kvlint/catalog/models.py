"""Resolve a model reference to a ModelArch: local config.json, the shipped catalog, the HF cache.

No network: a model kvlint cannot find here stays unknown (KV003 says so and what was skipped).
"""

from __future__ import annotations

import json
import os
import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from kvlint.catalog import how, model_refs, pulled, shipped
from kvlint.catalog.arch import ENCODER_ONLY, ModelArch
from kvlint.catalog.hf_config import ConfigError, parse_config
from kvlint.catalog.hf_keys import from_mistral_params
from kvlint.catalog.resolution import Resolution
from kvlint.fileio import shown
from kvlint.lazy_re import lazy
from kvlint.record import record, replace

if TYPE_CHECKING:  # the name rules, kinds and safetensors readers load only when an id needs them
    from kvlint.catalog.name_rules import NameIndex

DATA = os.path.join(os.path.dirname(__file__), "data")
MAX_CONFIG_BYTES = 4 * 1024 * 1024


def _found(arch: ModelArch, found_how: str) -> Resolution:
    """A resolved config; an encoder-only one (an embedding model, a reranker) keeps no KV cache."""
    if arch.family in ENCODER_ONLY:
        why = f"an encoder-only model ({arch.family}): no KV cache"
        return Resolution(None, f"{found_how}: {arch.id} is {why}", no_kv_cache=True)
    return Resolution(arch, found_how)


def _norm(ref: str) -> str:
    return ref.strip().lower()


@record(frozen=True)
class _Index:
    rows: dict[str, dict[str, Any]]  # lower-case id -> catalog row (arch key or inline config)
    archs: dict[
        str, Any
    ]  # arch key -> compact config (JSON text until first used, kvlint/catalog/shipped.py)
    aliases: dict[str, str]  # lower-case alias -> lower-case id


@lru_cache(maxsize=1)
def _index() -> _Index:
    """Read models.json once, on the first look-up (nothing is read at import)."""
    data, archs = shipped.read(os.path.join(DATA, "models.json"))
    rows: dict[str, dict[str, Any]] = {}
    aliases: dict[str, str] = {}
    for row in list(data["models"]) + list(_EXTRA):
        key = _norm(row["id"])
        rows[key] = row
        for alias in row.get("aliases", ()):
            aliases[_norm(strip_ref(alias))] = key  # written as a reference is (`/data/` is `/data`)
    return _Index(rows, archs, aliases)


_EXTRA: list[dict[str, Any]] = []


def register_models(entries: list[dict[str, Any]]) -> None:
    """The catalog entries the configuration adds (id, source, config, optional aliases); replaces
    any set before."""
    if not entries and not _EXTRA:
        return
    _EXTRA[:] = entries
    _index.cache_clear()
    arch_for_entry.cache_clear()
    _suggest.cache_clear()
    _name_index.cache_clear()


def _key(ref: str) -> str | None:
    idx = _index()
    key = _norm(strip_ref(ref))
    key = idx.aliases.get(key, key)
    return key if key in idx.rows else None


def lookup(ref: str) -> dict[str, Any] | None:
    """The catalog entry for an id or alias (case-insensitive, `hf://`/URL prefixes and `@rev` ignored):
    {id, source, config, ...} with `config` the compact config.json facts; None when not catalogued."""
    key = _key(ref)
    if key is None:
        return None
    idx = _index()
    row = idx.rows[key]
    if "config" in row:
        return dict(row)
    return dict(row, config=shipped.config(idx.archs, row["arch"]))


def all_ids() -> list[str]:
    """Every catalogued id (aliases not included), sorted case-insensitively."""
    return sorted((row["id"] for row in _index().rows.values()), key=str.lower)


catalog_ids = all_ids


def _merge(base: dict, add: dict) -> dict:
    out = dict(base)
    for k, v in add.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


@lru_cache(maxsize=256)
def arch_for_entry(key: str) -> ModelArch:
    entry = lookup(key)
    if entry is None:
        raise KeyError(key)
    config = _merge(entry["config"], entry["additions"]) if entry.get("additions") else entry["config"]
    return parse_config(
        config,
        entry["id"],
        f"kvlint catalog ({entry.get('source', 'source not recorded')})",
        hf_quant=entry.get("hf_quant_config"),
        checkpoint_bytes=entry.get("checkpoint_bytes"),
        checkpoint_source=entry.get("checkpoint_bytes_source", ""),
    )


_PREFIXES = lazy(r"^(?:hf://|https?://huggingface\.co/|huggingface\.co/|hf\.co/)", re.IGNORECASE)


def strip_ref(ref: str) -> str:
    """`hf://org/name`, `https://huggingface.co/org/name` and `org/name@rev` all mean org/name."""
    ref = _PREFIXES().sub("", ref.strip())
    ref = ref.split("@", 1)[0] if "@" in ref and "/" in ref.split("@", 1)[0] else ref
    return ref.rstrip("/")


_HUB_ID = lazy(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def is_hub_id(ident: str) -> bool:
    """`org/name` as the Hugging Face Hub spells repository ids (not a path, not a bare name)."""
    return bool(_HUB_ID().match(ident)) and not ident.startswith((".", "~")) and ".." not in ident


def _read_json(path: str, limit: int = MAX_CONFIG_BYTES) -> Any:
    """JSON from a file only if it is a regular file (never a FIFO, device or directory), read capped by
    bytes read, not by st_size (the shipped catalog is read by kvlint/catalog/shipped.py)."""
    from kvlint.fileio import TooLarge, read_regular

    try:
        data = read_regular(path, limit)
    except TooLarge:
        raise ConfigError(f"{path} is larger than {limit:,} bytes") from None
    try:
        return json.loads(data.decode("utf-8"))
    except RecursionError:
        raise ConfigError(f"{path}: JSON nested too deeply to read") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 (byte {exc.start})") from None


def from_file(path: str, model_id: str) -> ModelArch:
    """Exactly the named JSON file. Its directory's checkpoint and quantization files are read only
    when it is that directory's config.json: beside `llama70b.json` they describe another model."""
    if os.path.basename(path) == "config.json":
        return from_directory(os.path.dirname(path) or ".", model_id)
    config = _read_json(path)
    if os.path.basename(path) == "params.json":
        config = from_mistral_params(config)
    if not isinstance(config, dict):
        raise ConfigError(f"{path}: not a JSON object of config.json keys")
    return parse_config(config, model_id, path, None, None, "")


def from_directory(directory: str, model_id: str) -> ModelArch:
    """A model directory (or the directory of a config.json): config + optional index and ModelOpt file."""
    config_path = os.path.join(directory, "config.json")
    params_path = os.path.join(directory, "params.json")
    if not os.path.isfile(config_path) and os.path.isfile(params_path):
        config_path, config = params_path, from_mistral_params(_read_json(params_path))
    else:
        config = _read_json(config_path)
    total, total_source = None, ""
    from kvlint.catalog import safetensors

    exact = safetensors.checkpoint_bytes(directory)  # headers only: exact, preferred
    index = os.path.join(directory, "model.safetensors.index.json")
    if exact is not None:
        total, total_source = exact
    elif os.path.isfile(index):
        doc = _read_json(index)
        meta = doc.get("metadata") if isinstance(doc, dict) else None
        if not isinstance(doc, dict) or not isinstance(meta, (dict, type(None))):
            raise ConfigError(f"{shown(index)}: not a safetensors index (an object with a metadata object)")
        meta = meta or {}
        if isinstance(meta.get("total_size"), int):
            total, total_source = meta["total_size"], f"{shown(index)} metadata.total_size"
    hf_quant = None
    quant_path = os.path.join(directory, "hf_quant_config.json")
    if os.path.isfile(quant_path):
        hf_quant = _read_json(quant_path)
    return parse_config(config, model_id, shown(config_path), hf_quant, total, total_source)


def _hf_cache_dirs() -> list[str]:
    dirs = []
    if os.environ.get("HF_HUB_CACHE"):
        dirs.append(os.environ["HF_HUB_CACHE"])
    if os.environ.get("HF_HOME"):
        dirs.append(os.path.join(os.environ["HF_HOME"], "hub"))
    dirs.append(os.path.join(os.path.expanduser("~"), ".cache", "huggingface", "hub"))
    return dirs


def _shown_in(exc: BaseException, path: str | None = None) -> str:
    """An error's text with the paths in it as messages show them (fileio.shown): the read path
    itself, and the home directory (the caches live there) as `~`."""
    text = str(exc)
    if path is not None and os.path.isabs(path):
        text = text.replace(path, shown(path))
    home = os.path.expanduser("~")
    return (
        text.replace(home.rstrip(os.sep) + os.sep, "~" + os.sep)
        if os.path.isabs(home) and home != os.sep
        else text
    )


def from_hf_cache(model_id: str) -> ModelArch | None:
    if model_id.count("/") != 1:
        return None
    folder = "models--" + model_id.replace("/", "--")
    for cache in _hf_cache_dirs():
        snapshots = os.path.join(cache, folder, "snapshots")
        if not os.path.isdir(snapshots):
            continue
        snaps = [os.path.join(snapshots, name) for name in os.listdir(snapshots)]
        for snap in sorted(snaps, key=os.path.getmtime, reverse=True):
            if os.path.isfile(os.path.join(snap, "config.json")):
                arch = from_directory(snap, model_id)
                return arch
    return None


def _looks_like_path(raw: str) -> bool:
    return raw.startswith(("/", "./", "../", "~")) or raw.endswith(".json")


def _local(raw: str, base_dir: str, looks_like_path: bool) -> Resolution | None:
    """A config.json (or a directory holding one) at the path `raw` names; None when it names none."""
    # a Hub id (org/name) is a local directory only when written as a path (`./org/name`, absolute,
    # `local:org/name`): a directory committed beside the manifest must not shadow the Hub model (S3)
    directory_ok = looks_like_path or not is_hub_id(raw)
    # `~` is not expanded: a manifest's home directory is the container's, not the linting user's
    # (expanding it let `model: ~/.docker` probe which files exist in the runner's home)
    # an absolute path stays as it is; a relative one is relative to the manifest's directory
    candidate = raw if os.path.isabs(raw) or base_dir in ("", ".") else os.path.join(base_dir, raw)
    label = os.path.normpath(
        shown(candidate)
    )  # messages never carry the runner's home or filesystem layout (F29)
    try:
        if candidate.endswith(".json") and os.path.lexists(candidate):
            return _found(from_file(candidate, raw), f"{how.LOCAL_FILE} {label}")
        if (
            directory_ok
            and os.path.isdir(candidate)
            and any(os.path.isfile(os.path.join(candidate, f)) for f in ("config.json", "params.json"))
        ):
            return _found(from_directory(candidate, raw), f"{how.LOCAL_DIRECTORY} {label}")
    except (OSError, ValueError, ConfigError) as exc:
        return Resolution(None, f"could not read {label}: {_shown_in(exc, candidate)}", read_failed=True)
    return None


def resolve(ref: str, base_dir: str = ".") -> Resolution:
    """Find the architecture of `ref`: a path to config.json or its directory, a catalog id or alias,
    or a model in the local Hugging Face cache."""
    raw = ref.strip()
    if raw.startswith("local:"):  # `local:org/name`: a directory, said so explicitly
        raw = "./" + raw[len("local:") :].lstrip("/") if not raw[6:].startswith("/") else raw[6:]
    if not raw:
        return Resolution(None, "no model named")
    looks_like_path = _looks_like_path(raw)
    local = _local(raw, base_dir, looks_like_path)
    if local is not None:
        return local

    named = model_refs.cache_id(raw)
    if (
        named is not None
    ):  # a Hugging Face cache path names its model: its id, said so (catalog/model_refs.py)
        by_id = resolve(named, base_dir)
        return replace(by_id, how=f"{by_id.how} ({how.CACHE_PATH}: {named})")
    ident = strip_ref(raw)
    try:  # the project's pulled models come first (kvlint models pull)
        found = pulled.find(ident)
    except (OSError, ValueError, ConfigError) as exc:
        return Resolution(None, f"pulled copy of {ident} is unreadable: {exc}", read_failed=True)
    if found is not None:
        return _found(found[0], found[1])
    idx = _index()
    key = _norm(ident)
    key = idx.aliases.get(key, key)
    if key in idx.rows:
        row = idx.rows[key]
        if row.get("kv_cache") == "none":
            why = row.get("kv_cache_note") or "the catalog records no KV cache for it"
            return Resolution(None, f"kvlint catalog: {row['id']} is {why}", no_kv_cache=True)
        return _found(arch_for_entry(key), how.EXACT)
    try:
        cached = from_hf_cache(ident)
    except (OSError, ValueError, ConfigError) as exc:
        return Resolution(
            None, f"Hugging Face cache copy of {ident} is unreadable: {_shown_in(exc)}", read_failed=True
        )
    if cached is not None:
        return _found(cached, how.HF_CACHE)
    from kvlint.catalog import model_kinds

    other = model_kinds.classify(ident)
    if other is not None:
        return Resolution(None, f"{how.OTHER_KIND}: {ident} is {other.describe()}", kind=other.kind)
    # Not catalogued: the name rules (kvlint/catalog/name_rules.py), e.g. /models/Qwen3-8B or a quantized copy.
    has_org = not (looks_like_path or "/" not in ident or ident.count("/") > 1)
    return _by_name(ident, has_org)


def from_hub(ident: str) -> Resolution:
    """`kvlint --hub`: the model's Hub config and safetensors headers, fetched once into a cache."""
    from kvlint.catalog import hub

    cache = hub.cache_dir()
    try:
        found = pulled.find(ident, cache)
        if found is None:
            hub.pull(ident, cache)
            found = pulled.find(ident, cache)
    except hub.HubError as exc:
        return Resolution(None, f"--hub: {exc}", fix=exc.fix)
    except (OSError, ValueError, ConfigError) as exc:
        return Resolution(None, f"--hub: cached copy of {ident} is unreadable: {exc}")
    if found is None:
        return Resolution(None, f"--hub: {ident} was fetched but not written to {cache}")
    return _found(found[0], f"{how.HUB}, cached in {cache}")


@lru_cache(maxsize=1)
def _name_index() -> NameIndex:
    from kvlint.catalog.name_rules import NameIndex

    idx = _index()
    keys = [(k, k) for k in idx.rows] + list(idx.aliases.items())
    return NameIndex(keys, _identity)


def _identity(key: str) -> str:
    """Entries whose capacity facts agree are one architecture (a name fitting both is not ambiguous)."""
    row = _index().rows[key]
    if row.get("kv_cache") == "none":
        return "no KV cache: " + str(row.get("arch") or row["id"])
    a = arch_for_entry(key)
    facts = (a.layers, a.hidden_size, a.query_heads, a.kv_heads, a.head_dim, a.vocab_size, a.max_positions)
    return repr((facts, a.layer_kinds, a.num_experts, a.params, a.dtype, a.quant, a.mla))


def _by_name(ident: str, has_org: bool) -> Resolution:
    """The name rules (kvlint/catalog/derived.py): an uncatalogued id resolved to a catalogued base."""
    from kvlint.catalog import derived

    found = _name_index().derive(ident, has_org)
    return derived.resolution(found, _index().rows, arch_for_entry)


_WORD = lazy(r"[a-z]{3,}")


def _words(text: str) -> set[str]:
    return set(_WORD().findall(text))


def suggest(ref: str, limit: int = 3) -> list[str]:
    """Catalog ids close to `ref`, for \"did you mean\"; remembered per name (difflib is slow)."""
    return list(_suggest(_norm(strip_ref(ref)), limit))


@lru_cache(maxsize=256)
def _suggest(key: str, limit: int) -> tuple[str, ...]:
    import difflib

    pool = {key: row["id"] for key, row in _index().rows.items()}
    # difflib over the whole catalog costs ~5 ms a call; only ids sharing a word can be close
    words = _words(key)
    candidates = [k for k in pool if words & _words(k)]
    close = difflib.get_close_matches(key, candidates, n=limit, cutoff=0.6)
    if not close:
        tail = key.rsplit("/", 1)[-1]
        close = (
            [k for k in pool if k.rsplit("/", 1)[-1].startswith(tail[:8])][:limit] if len(tail) >= 6 else []
        )
    return tuple(pool[c] for c in close)
