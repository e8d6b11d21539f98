"""`kvlint models pull ID[@REVISION]`: fetch what prices a Hub model exactly, store it in the project.

Only this path imports huggingface_hub (`pip install 'kvlint-serving[hub]'`); it supplies the token (HF_TOKEN
or the token file `huggingface-cli login` writes), the endpoint (HF_ENDPOINT, for mirrors) and the
offline switch (HF_HUB_OFFLINE). Fetched: config.json (or a Mistral-format params.json),
hf_quant_config.json when present, model.safetensors.index.json, and the header of every safetensors
shard through two HTTP range requests each (never the tensors). The result is written in kvlint's compact
catalog form to the project's model directory (kvlint/catalog/pulled.py), which every check reads first.
"""

from __future__ import annotations

import os
import re
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from kvlint.catalog import pulled, safetensors
from kvlint.catalog.hf_config import parse_config
from kvlint.catalog.hf_keys import ConfigError, compact, from_mistral_params
from kvlint.fileio import json_value

MAX_JSON_BYTES = 16 * 1024 * 1024
_CHUNK = 64 * 1024
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/?#@\s]*@")


def without_userinfo(url: str) -> str:
    """`url` without `user:password@` (an authenticated mirror in HF_ENDPOINT): what kvlint shows or
    stores never carries the credential; the request itself still uses it."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return _USERINFO.sub(r"\1", url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


def redact(text: str) -> str:
    """Every `scheme://user:password@` in `text` (an exception's message) without its userinfo."""
    return _USERINFO.sub(r"\1", text)


def cache_dir() -> str:
    """Where `kvlint --hub` keeps what it fetched on the fly ($XDG_CACHE_HOME/kvlint/models)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "kvlint", "models")


class HubError(Exception):
    """A pull that failed; `fix` is the exact step that makes it work."""

    def __init__(self, message: str, fix: str) -> None:
        super().__init__(message)
        self.fix = fix


class _Missing(Exception):
    """The file is not in the repository (404 on a file of a repository that exists)."""


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


class _Client:
    def __init__(self, repo: str, revision: str) -> None:
        try:
            import huggingface_hub
            from huggingface_hub import constants
            from huggingface_hub.utils import build_hf_headers
        except ImportError:
            raise HubError(
                "pulling from the Hugging Face Hub needs the optional huggingface_hub package",
                "pip install 'kvlint-serving[hub]'",
            ) from None
        if _truthy(os.environ.get("HF_HUB_OFFLINE")) or constants.HF_HUB_OFFLINE:
            raise HubError(
                f"HF_HUB_OFFLINE is set: {repo} was not fetched",
                f"unset HF_HUB_OFFLINE and run `kvlint models pull {repo}` once online, then commit "
                f"{pulled.models_dir()}",
            )
        self.hub = huggingface_hub
        self.repo, self.revision = repo, revision
        self.endpoint = (os.environ.get("HF_ENDPOINT") or constants.ENDPOINT).rstrip("/")
        self.shown = without_userinfo(self.endpoint)  # in messages, the entry's source and the cache
        self.token = huggingface_hub.get_token()
        self.headers = build_hf_headers(token=self.token, library_name="kvlint")
        self.session = huggingface_hub.get_session()

    def url(self, filename: str) -> str:
        return self.hub.hf_hub_url(self.repo, filename, revision=self.revision, endpoint=self.endpoint)

    def get(self, filename: str, first: int | None = None, last: int | None = None) -> bytes:
        """The file's body (or bytes first..last), read as a stream and never past its cap: 16 MB for
        a whole file, the length asked for a range. A server that answers a range request with the
        whole file (200), or with more than was asked, is refused before more is read."""
        headers = dict(self.headers)
        cap = MAX_JSON_BYTES
        if first is not None and last is not None:
            headers["Range"] = f"bytes={first}-{last}"
            cap = last - first + 1
        try:
            with self.session.stream(  # httpx (huggingface_hub >= 1.0)
                "GET", self.url(filename), headers=headers, follow_redirects=True, timeout=30
            ) as response:
                self._raise(response, filename)
                if first is not None and response.status_code != 206:
                    raise HubError(
                        f"{self.shown} answered {response.status_code} (not 206, partial content) to a range "
                        f"request for {self.repo}/{filename}: not read",
                        "use an endpoint that honours HTTP Range requests (HF_ENDPOINT)",
                    )
                return self._read_capped(response, cap, filename, first is not None)
        except (HubError, _Missing):
            raise
        except Exception as exc:  # the HTTP client's connection, timeout and protocol errors
            raise HubError(
                f"could not reach {self.shown} for {self.repo}: {type(exc).__name__}: {redact(str(exc))}",
                f"check the network (or HF_ENDPOINT={self.shown}) and run `kvlint models pull {self.repo}` again",
            ) from None

    def _read_capped(self, response: Any, cap: int, filename: str, ranged: bool) -> bytes:
        body = bytearray()
        for chunk in response.iter_bytes(_CHUNK):
            body += chunk
            if len(body) > cap:  # stop reading: what the server sends past the cap is never held
                what = f"more than the {cap:,} bytes asked for" if ranged else f"larger than {cap:,} bytes"
                raise HubError(f"{self.repo}/{filename} is {what}: not read", "report it")
        return bytes(body)

    def _raise(self, response: Any, filename: str) -> None:
        status = response.status_code
        if status < 400:
            return
        code = response.headers.get("X-Error-Code", "")
        where = f"{self.repo}@{self.revision}"
        if status in (401, 403) or code == "GatedRepo":
            fix = (
                f"accept the model's licence on its Hub page and set HF_TOKEN (or `huggingface-cli login`), "
                f"then `kvlint models pull {self.repo}`"
            )
            if self.token:
                fix = f"the token in use has no access to {self.repo}: accept its licence on the Hub with that account"
            raise HubError(f"{where} is gated or private: the Hub answered {status}", fix)
        if code == "EntryNotFound" or (status == 404 and code not in ("RepoNotFound", "RevisionNotFound")):
            raise _Missing(filename)
        if code == "RevisionNotFound":
            raise HubError(
                f"{self.repo} has no revision {self.revision!r}", "name an existing branch, tag or commit"
            )
        if status == 404 or code == "RepoNotFound":
            raise HubError(
                f"{self.repo} is not a model repository on {self.shown}", "check the id's spelling"
            )
        raise HubError(f"{self.shown} answered {status} for {where}/{filename}", "try again later")

    def json(self, filename: str) -> Any:
        try:
            return json_value(self.get(filename).decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise HubError(
                f"{self.repo}/{filename} is not JSON ({exc})", "report it to the model's publisher"
            ) from None

    def optional_json(self, filename: str) -> Any:
        try:
            return self.json(filename)
        except _Missing:
            return None

    def header(self, filename: str) -> dict[str, Any]:
        first = self.get(filename, 0, 7)
        length = safetensors.header_length(first)
        if length > safetensors.MAX_HEADER_BYTES:
            raise HubError(
                f"{self.repo}/{filename}: header length {length:,} B is not a safetensors header", "report it"
            )
        rest = self.get(filename, 8, 8 + length - 1)
        return safetensors.parse_header(first[:8] + rest[:length], f"{self.repo}/{filename}")


def _config(client: _Client) -> tuple[dict[str, Any], str]:
    try:
        return client.json("config.json"), "config.json"
    except _Missing:
        pass
    try:
        return from_mistral_params(client.json("params.json")), "params.json"
    except _Missing:
        raise HubError(
            f"{client.repo} has neither config.json nor params.json",
            "point `model` at a local checkpoint directory, or declare the model under `models:`",
        ) from None


def _weights(client: _Client) -> tuple[int, str] | None:
    index = client.optional_json("model.safetensors.index.json")
    if isinstance(index, dict) and isinstance(index.get("weight_map"), dict):
        shards = sorted({str(v) for v in index["weight_map"].values()})
    else:
        shards = ["model.safetensors"]
    total = 0
    for shard in shards:
        try:
            total += safetensors.tensor_bytes(client.header(shard), f"{client.repo}/{shard}")
        except _Missing:
            return None  # no safetensors (a .bin or GGUF checkpoint): the config's arithmetic prices it
    return total, f"safetensors headers of {len(shards)} file(s) in {client.repo}@{client.revision}"


def pull(ref: str, directory: str | None = None) -> tuple[str, str]:
    """Fetch `ref` (`org/name` or `org/name@revision`), write its entry; (path written, summary)."""
    repo, _, revision = ref.strip().partition("@")
    if repo.count("/") != 1 or not all(repo.split("/")):
        raise HubError(f"{ref!r} is not a Hub model id", "give it as org/name or org/name@revision")
    client = _Client(repo, revision or "main")
    config, config_file = _config(client)
    hf_quant = client.optional_json("hf_quant_config.json")
    weights = _weights(client)
    entry: dict[str, Any] = {
        "id": repo,
        "revision": client.revision,
        "source": f"{client.shown}/{repo} @ {client.revision}: {config_file}, pulled by kvlint models pull",
        "config": compact(config),
    }
    if isinstance(hf_quant, dict):
        entry["hf_quant_config"] = hf_quant
    if weights is not None:
        entry["checkpoint_bytes"], entry["checkpoint_bytes_source"] = weights
    try:  # refuse to store what kvlint cannot price
        arch = parse_config(entry["config"], repo, entry["source"], hf_quant, entry.get("checkpoint_bytes"))
    except (ConfigError, ValueError, TypeError) as exc:
        raise HubError(
            f"{repo}: its {config_file} cannot be priced: {exc}", "declare the model under `models:`"
        ) from None
    path = pulled.write(entry, directory)
    size = (
        f"{weights[0]:,} B of weights from safetensors headers"
        if weights
        else "weights from config arithmetic"
    )
    return path, f"{repo}@{client.revision}: {arch.layers} layers, {arch.kv_heads} KV heads, {size}"
