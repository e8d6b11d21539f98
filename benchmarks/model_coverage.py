"""How many of the models real deployments name kvlint resolves offline (a script, not a test).

    python benchmarks/model_coverage.py [--list-resolved]

Collects the distinct model ids named in ../shared/corpus/manifests/, ../shared/corpus/manifests2/ and
../shared/calibration/: the models kvlint's own extractors find in each workload, plus every value of a
model-naming key or flag (`model:`, `hfModelId:`, llmaz's `modelID:`, `--model`, `--model-path`, `MODEL_ID=`, `hf://...`) in the
files' text, since catalogues such as a platform's model list name models no workload runs yet. Local paths
(`/models/x`, `./x`, `s3://`, `pvc://`, `gs://`, `oci://`) and templated or private references (`$VAR`,
`{{ }}`, `<...>`) are set aside and counted separately, and so are Ollama library names (`ollama://phi4`,
`gemma2:27b`): Ollama's library is its own namespace of GGUF builds (quantization chosen by the tag), with no
published mapping to Hugging Face repositories, so no rule can name the config.json they come from. Comment
lines are prose, not model references, and are skipped. Each id is resolved with no network, as
`kvlint deploy.yaml` would: the catalog (an encoder-only model counts as resolved: no KV cache), a local
pulled copy, or a name rule (shown). Prints the share resolved and every unresolved id with the reason.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
sys.path.insert(0, str(ROOT))

from kvlint.catalog import models  # noqa: E402

_KEY = re.compile(
    r"""(?:hfModelId|modelId|modelID|model_id|modelName|model_name|MODEL_ID|MODEL_NAME|MODEL|model|modelPath|--model|"""
    r"""--model-path|--model-id|--model_name_or_path|--tokenizer)["']?\s*[:= ]\s*["']?"""
    r"""((?:hf://)?[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*)(?![A-Za-z0-9_./-])"""
)
_HF = re.compile(r"(?:hf://|huggingface\.co/)([A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*)")
_LOCAL = ("/", "./", "../", "~", "s3://", "gs://", "pvc://", "oci://", "file://")
_TEMPLATE = re.compile(r"[$<>{}]")
# Not model repositories: Hub datasets/docs/spaces paths, container registries, and label keys (an
# organisation name on the Hub has no dot).
_NOT_MODELS = re.compile(r"^(?:datasets|docs|spaces|vllm|lmsysorg|registry)/|^[^/]*\.[^/]*/", re.IGNORECASE)


def _extracted(folder: Path, adapters: dict[str, str]) -> set[str]:
    """Model references kvlint's extractors find in the folder's workloads (its JSON report); the LoRA
    adapters they serve go to `adapters` (adapter id -> the base model its workload runs)."""
    cmd = [sys.executable, "-m", "kvlint", "--isolated", "--format", "json", str(folder)]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=False).stdout
    deployments = json.loads(out)["deployments"]
    for d in deployments:
        for adapter in d.get("adapters") or []:
            if d.get("model"):
                adapters[models.strip_ref(str(adapter["ref"]))] = str(d["model"])
    return {str(d["model"]) for d in deployments if d.get("model")}


_COMMENT = re.compile(r"^\s*(?:#|//)")  # a YAML / shell / JS comment line: prose, not a model a file names
_OLLAMA = re.compile(r"ollama://([\w.:/-]+)")


def _named(folder: Path) -> tuple[set[str], set[str]]:
    """Model ids named by a model-naming key or URL (comment lines skipped), and `ollama://` names."""
    found: set[str] = set()
    ollama: set[str] = set()
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.name == "INDEX.yaml" or path.stat().st_size > 4_000_000:
            continue
        text = "\n".join(
            line for line in path.read_text(errors="replace").splitlines() if not _COMMENT.match(line)
        )
        found.update(m.group(1) for m in _KEY.finditer(text))
        found.update(m.group(1) for m in _HF.finditer(text))
        ollama.update(m.group(1) for m in _OLLAMA.finditer(text))
    return {f for f in found if not _NOT_MODELS.match(f)}, ollama


def _calibration() -> set[str]:
    out: set[str] = set()
    for path in sorted((SHARED / "calibration").glob("*.yaml")):
        for line in path.read_text().splitlines():
            m = re.match(r"\s+model:\s*(.+?)\s*$", line)
            if m:
                out.add(m.group(1).split(" (")[0].strip().strip("'\""))
    return out


def _known_but_unpriced() -> dict[str, str]:
    """Configs benchmarks/catalog_sources.json found but left out, by the stem of their name: the reason."""
    from kvlint.catalog.name_rules import split_quant, stem

    excluded = json.loads((ROOT / "benchmarks" / "catalog_sources.json").read_text()).get("excluded", [])
    out: dict[str, str] = {}
    for entry in excluded:
        for ident in entry["ids"]:
            name = split_quant(ident.rsplit("/", 1)[-1])[0]
            out.setdefault(stem(name), f"its config is known ({ident}) but not priced: {entry['reason']}")
    return out


def _reason(ident: str, how: str, unpriced: dict[str, str]) -> str:
    from kvlint.catalog.name_rules import split_quant, stem

    return unpriced.get(stem(split_quant(ident.rsplit("/", 1)[-1])[0]), how)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--list-resolved", action="store_true", help="also list every resolved id and how")
    args = ap.parse_args()
    if not SHARED.is_dir():
        sys.exit(f"{SHARED} is absent: nothing to measure")
    refs: set[str] = set()
    ollama_names: set[str] = set()
    adapters: dict[str, str] = {}
    for name in ("manifests", "manifests2"):
        folder = SHARED / "corpus" / name
        named, in_ollama_urls = _named(folder)
        refs |= _extracted(folder, adapters) | named
        ollama_names |= in_ollama_urls
    refs |= {a for a in adapters if models.is_hub_id(a)}  # adapters a workload serves are ids the files name
    refs |= _calibration()
    ids, local, templated, ollama = set(), set(), set(), set()
    for ref in refs:
        ref = models.strip_ref(ref)
        if _NOT_MODELS.match(ref):
            continue
        if (
            ":" in ref or ref in ollama_names
        ):  # an Ollama library name (gemma2:27b, ollama://phi4), not a Hub id
            ollama.add(ref)
        elif _TEMPLATE.search(ref):
            templated.add(ref)
        elif ref.startswith(_LOCAL) or ref.count("/") > 1 or os.path.sep + "models" in ref:
            local.add(ref)
        else:
            ids.add(ref)
    # one id spelled in two cases is one model
    distinct = {i.lower(): i for i in sorted(ids)}
    got = _classify(sorted(distinct.values(), key=str.lower), adapters)
    total = len(distinct)
    ok = total - len(got["unresolved"])
    print(
        f"distinct model ids: {total} (set aside: {len(local)} local paths, {len(templated)} templated refs, "
        f"{len(ollama)} Ollama tags)"
    )
    print(f"resolved offline:   {ok} = {100 * ok / max(total, 1):.1f} %")
    print(f"  catalog / exact:  {len(got['exact'])}")
    print(f"  by a name rule:   {len(got['by_name'])}")
    for key, label in _KNOWN_BUT_NOT_CHECKED:
        print(f"  {label}: {len(got[key])}")
        for ident, how in got[key]:
            print(f"    {ident}: {how}")
    print(f"unresolved:         {len(got['unresolved'])}")
    unpriced = _known_but_unpriced()
    for ident, how in got["unresolved"]:
        close = models.suggest(ident)  # what KV003's "did you mean" names for it
        print(
            f"  {ident}: {_reason(ident, how, unpriced)}"
            + (f"; closest catalogued: {', '.join(close)}" if close else "")
        )
    if args.list_resolved:
        for ident, how in got["by_name"] + got["exact"]:
            print(f"  + {ident}: {how}")


# Resolved ids whose capacity kvlint does not check, each listed with what it is (never a bare "resolved").
_KNOWN_BUT_NOT_CHECKED = (
    ("adapter", "LoRA adapters (served on a resolved base; the workload is checked by the base)"),
    ("gguf", "GGUF repositories (KV from the base; weights not priced: the file picks the quant type)"),
    ("no_kv", "keep no KV cache (encoder-only), not capacity-checked"),
    ("kind", "not text-generation checkpoints (kvlint/catalog/model_kinds.py), not capacity-checked"),
)


def _classify(ids: list[str], adapters: dict[str, str]) -> dict[str, list[tuple[str, str]]]:
    got: dict[str, list[tuple[str, str]]] = {
        k: [] for k in ("exact", "by_name", "adapter", "gguf", "no_kv", "kind", "unresolved")
    }
    by_lower = {ref.lower(): base for ref, base in adapters.items()}
    for ident in ids:
        base = by_lower.get(ident.lower())
        if base is not None:
            res = models.resolve(base)
            if res.arch is not None and not res.unpriced:
                got["adapter"].append((ident, f"a LoRA adapter of {base} ({res.how})"))
                continue
        res = models.resolve(ident)
        if res.unpriced:
            got["gguf"].append((ident, f"{res.how}; {res.unpriced}"))
        elif res.kind:
            got["kind"].append((ident, res.how))
        elif res.no_kv_cache:
            got["no_kv"].append((ident, res.how))
        elif res.arch is None:
            got["unresolved"].append((ident, res.how))
        else:
            got["by_name" if res.derived else "exact"].append((ident, res.how))
    return got


if __name__ == "__main__":
    main()
