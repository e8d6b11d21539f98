"""Model ids of another kind than a text-generation checkpoint: recognised by class, never priced.

A serving stack names more than LLM checkpoints. kvlint checks the KV cache and weights of
text-generation engines (vLLM, SGLang, TGI); for the classes below it says what the model is and why
its capacity is not checked, instead of calling it unknown (KV003). Each class is a naming convention
its publisher documents, so it holds for every id of that kind, not for one file:

- CTranslate2 Whisper conversions (speech to text), the `faster-whisper-<size>` and
  `faster-distil-whisper-<size>` repositories faster-whisper downloads by size
  (SYSTRAN/faster-whisper@00a5b26b:faster_whisper/utils.py `_MODELS`: e.g. "medium.en" ->
  Systran/faster-whisper-medium.en). They run on CTranslate2, not on an LLM engine. The parameter
  count is openai/whisper's for that size (openai/whisper@b9f17e1f:README.md "Available models":
  tiny 39 M, base 74 M, small 244 M, medium 769 M, large 1550 M); distilled and turbo sizes have no
  published count there and none is claimed.
- Stable Diffusion pipelines (text to image, run by diffusers): `stable-diffusion-*` repositories.
  Stable Diffusion 2.x is "a downsampling-factor 8 autoencoder with an 865M UNet and OpenCLIP
  ViT-H/14 text encoder", 2.1 "the same number of parameters and architecture as 2.0"
  (Stability-AI/stablediffusion@8284465e:README.md); other versions: no count claimed.
- Speculative-decoding drafts in the speculators format, published as `<verifier>-speculator.<algorithm>`
  (vllm-project/speculators@c05b95b3:README.md, its model table: RedHatAI/Qwen3-32B-speculator.eagle3,
  -speculator.dflash, -speculator.peagle, ...). A draft is served beside its verifier: `vllm serve
  <speculator_model>` runs the verifier named in the draft's speculators_config with the draft attached
  (same README, "vLLM Inference"). The verifier is what to check; the draft's own weights and KV (one
  decoder layer and a draft-vocabulary head) are not priced, and it is never matched to the verifier's
  catalogued architecture (tests/data/not_derived_ids.txt).
"""

from __future__ import annotations

import re

from kvlint.record import record

WHISPER_SOURCE = "SYSTRAN/faster-whisper@00a5b26b:faster_whisper/utils.py _MODELS"
WHISPER_PARAMS_SOURCE = "openai/whisper@b9f17e1f:README.md 'Available models and languages'"
SD2_SOURCE = "Stability-AI/stablediffusion@8284465e:README.md 'Stable Diffusion v2'"
SPECULATORS_SOURCE = "vllm-project/speculators@c05b95b3:README.md"
_DRAFT_ALGOS = {"eagle3": "EAGLE-3", "eagle": "EAGLE", "dflash": "DFlash", "peagle": "P-EAGLE"}

# openai/whisper README: parameters per size (the .en models are the same size)
_WHISPER_PARAMS = {"tiny": 39, "base": 74, "small": 244, "medium": 769, "large": 1550}

# the suffixes after a size in faster-whisper's _MODELS table (tiny.en, large-v1..v3, large-v3-turbo): only these
# names are SYSTRAN's conversions of an openai/whisper checkpoint; any other faster-whisper-* repository (a
# fine-tune, a language variant, a quantised copy) is a Whisper of that size whose exact base the name does not state
_OPENAI_SUFFIXES = ("", ".en", "-v1", "-v2", "-v3", "-v3-turbo")
_FASTER_WHISPER = re.compile(r"^faster-(?P<distil>distil-)?whisper-(?P<size>[a-z]+)(?P<rest>[\w.-]*)$")
_STABLE_DIFFUSION = re.compile(r"^stable-diffusion-(?P<version>[\w.-]+)$")
_SPECULATOR = re.compile(r"^(?P<verifier>.+)-speculator\.(?P<algo>[a-z0-9]+)$")


@record(frozen=True)
class OtherKind:
    kind: str  # e.g. "speech-to-text model (CTranslate2 Whisper)"
    what: str  # what the id is, with its source
    params_m: int | None = None  # published parameter count in millions, when a source states it
    why_not_checked: str = "not a text-generation checkpoint"

    def describe(self) -> str:
        size = f"; {self.params_m:,} M parameters" if self.params_m else ""
        return f"a {self.kind}, {self.why_not_checked}: {self.what}{size}"


def classify(ident: str) -> OtherKind | None:
    """The class of a model id that is not a text-generation checkpoint, or None."""
    name = ident.rstrip("/").rsplit("/", 1)[-1].lower()
    m = _FASTER_WHISPER.match(name)
    if m:
        size = m["size"]
        distil = bool(m["distil"])
        params = None if distil or "turbo" in m["rest"] else _WHISPER_PARAMS.get(size)
        if distil:
            origin = f"distil-whisper {size}{m['rest']}"
        elif size in _WHISPER_PARAMS and m["rest"] in _OPENAI_SUFFIXES:
            origin = f"openai/whisper-{size}{m['rest']}"
        else:  # not a name of faster-whisper's table: no openai/whisper repository (nor its size) is claimed
            origin, params = f"a Whisper checkpoint named {name!r} (its base is not stated by the name)", None
        return OtherKind(
            "speech-to-text model (CTranslate2 Whisper, served by faster-whisper)",
            f"a CTranslate2 conversion of {origin} ({WHISPER_SOURCE}"
            + (f"; size from {WHISPER_PARAMS_SOURCE}" if params else "")
            + ")",
            params,
        )
    m = _SPECULATOR.match(ident.rstrip("/").rsplit("/", 1)[-1])
    if m and m["algo"].lower() in _DRAFT_ALGOS:
        return OtherKind(
            "speculative-decoding draft (speculators format)",
            f"a draft head ({_DRAFT_ALGOS[m['algo'].lower()]}) for the verifier {m['verifier']} (its name, "
            f"{SPECULATORS_SOURCE}); `vllm serve` on it runs the verifier its speculators_config names with "
            "this draft attached, so check that verifier as the model; the draft's own weights and KV "
            "(one decoder layer, a draft-vocabulary head) are not priced",
            why_not_checked="not capacity-checked on its own",
        )
    m = _STABLE_DIFFUSION.match(name)
    if m:
        version = m["version"]
        sd2 = version.startswith("2")
        return OtherKind(
            "text-to-image diffusion pipeline (Stable Diffusion, served by diffusers)",
            (
                f"Stable Diffusion {version}: an 865M-parameter UNet with an OpenCLIP ViT-H/14 text encoder "
                f"and an autoencoder ({SD2_SOURCE})"
                if sd2
                else f"Stable Diffusion {version}, a latent diffusion pipeline"
            ),
        )
    return None
