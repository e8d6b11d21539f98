"""Which runner Ollama starts for a model: its own engine (Go model code over ggml, `ollama runner --ollama-engine`)
or the llama.cpp runner it keeps for every other architecture (llama.cpp's own graph and scheduler).

ollama/ollama llm/server.go NewLlamaServer (:147 at v0.15.5): the own engine when OLLAMA_NEW_ENGINE is set or the
GGUF's architecture is one `OllamaEngineRequired` lists (fs/ggml/ggml.go:256-278 at v0.15.5; the list by release in
data/ollama_releases.json `engine_archs`, read tag by tag), else the llama.cpp runner; a model the own engine
cannot load falls back to the llama.cpp runner ("switching to compatibility mode", :151-154). The runner decides
the compute buffer on several GPUs: llama.cpp runs the layer split as a pipeline with 4 copies of each GPU's
inputs (compute.py), Ollama's engine does not (ml/backend/ggml/ggml.go:383-391 at v0.15.5, `parallel` false),
while Ollama's scheduler sizes both without the copies (llm/memory.go, llm/server.go:613-635): where the copies
do not fit, the runner's allocation fails or, on a vendored llama.cpp that retries, runs unpipelined.

The GGUF architecture is the name Ollama's converter gives the Hugging Face model type (convert/convert_*.go at
v0.15.5: gemma3, gptoss, qwen3moe, deepseek2, mistral3, ...); kvlint reads it from the model's text family.
"""

from __future__ import annotations

from kvlint.catalog.arch import ModelArch
from kvlint.engines.llamacpp.releases import ollama_default

# Hugging Face model_type (the text model's) -> the GGUF architecture Ollama's converter writes, where the two
# differ by more than underscores (convert/convert_deepseek2.go:52, convert_gemma3.go:58, convert_gptoss.go:42,
# convert_llama4.go:40, convert_nomicbert.go, convert_mistral.go:65 at v0.15.5)
GGUF_ARCH = {
    "deepseek_v2": "deepseek2",
    "deepseek_v3": "deepseek2",
    "gemma3_text": "gemma3",
    "gemma3n_text": "gemma3n",
    "llama4_text": "llama4",
    "qwen3_vl_text": "qwen3vl",
    "qwen3_vl_moe_text": "qwen3vlmoe",
    "nomic_bert": "nomic-bert",
}
OWN, LLAMA = "ollama", "llama.cpp"


def gguf_arch(arch: ModelArch) -> str:
    """The GGUF architecture of the model as Ollama converts it. Mistral's text family is Mistral 7B's
    (`llama` in Ollama's library GGUF, convert/testdata/Mistral-7B-Instruct-v0.2.json) unless it has a vision
    tower (Mistral Small 3.x, `mistral3`)."""
    family = arch.family.lower()
    if family == "mistral":
        return "mistral3" if arch.vision_params else "llama"
    return GGUF_ARCH.get(family, family.replace("_", "").replace("-", ""))


def runner(arch: ModelArch, version: str | None, new_engine: bool) -> tuple[str, str]:
    """(OWN or LLAMA, why) for this model on this Ollama release."""
    if new_engine:
        return OWN, "OLLAMA_NEW_ENGINE is set (llm/server.go:147)"
    row = ollama_default("engine_archs", version)
    name = gguf_arch(arch)
    listed = {str(a).replace("-", "") for a in row.value} if isinstance(row.value, list) else set()
    if name.replace("-", "") in listed:
        return OWN, f"Ollama's own engine runs {name} ({row.source})"
    return LLAMA, f"Ollama runs {name} on its llama.cpp runner, not its own engine ({row.source})"
