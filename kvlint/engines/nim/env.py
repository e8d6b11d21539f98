"""NIM's own variables -> the options its vLLM backend takes, and the profile it runs.

NIM maps its NIM_* variables onto the backend's arguments, above the profile's own tags (tp, pp) and
below arguments given on the command line (docs.nvidia.com/nim/large-language-models/2.0.0/reference/
advanced-configuration.html, Configuration Priority). The variables read, each where NVIDIA documents it:
- NIM_MODEL_PROFILE: the profile, by id or descriptive name (docs.nvidia.com/nim/large-language-models/
  1.1.0/profiles.html, Profile Selection);
- NIM_TENSOR_PARALLEL_SIZE (docs.nvidia.com/nim/large-language-models/1.2.0/configuration.html, Shared
  memory flag), NIM_PIPELINE_PARALLEL_SIZE and NIM_MAX_MODEL_LEN (docs.nvidia.com/nim/large-language-models/
  2.0.4-pb6/genindex.html, nim_llm.utils.envs);
- NIM_PASSTHROUGH_ARGS: vLLM options as a command line, above the NIM_* variables (advanced-configuration.html
  above, Passthrough Arguments);
- NIM_MODEL_NAME / NIM_MODEL_PATH: the model of the multi-LLM NIM (launch.py).
"""

from __future__ import annotations

import shlex

from kvlint.extract.pod.argv import EnvVar, Token
from kvlint.extract.pod.engine_args.apply import env_value

# NIM variable -> the vLLM option it sets
TO_VLLM = {
    "NIM_TENSOR_PARALLEL_SIZE": "--tensor-parallel-size",
    "NIM_PIPELINE_PARALLEL_SIZE": "--pipeline-parallel-size",
    "NIM_MAX_MODEL_LEN": "--max-model-len",
}
MODEL_VARIABLES = ("NIM_MODEL_NAME", "NIM_MODEL_PATH")
PROFILE = "NIM_MODEL_PROFILE"
PASSTHROUGH = "NIM_PASSTHROUGH_ARGS"


def vllm_tokens(env: dict[str, EnvVar], model: Token | None) -> list[Token]:
    """The vLLM options NIM's variables set (and `--model` for the model it serves); an option
    NIM_PASSTHROUGH_ARGS gives wins over the variable that sets the same."""
    passed = passthrough(env)
    given = {t.text.split("=", 1)[0] for t in passed if t.text.startswith("--")}
    tokens: list[Token] = []
    if model is not None:
        tokens += [Token("--model", model.where), model]
    for name, option in TO_VLLM.items():
        tok = env_value(env, name)
        if tok is not None and option not in given:
            tokens += [Token(option, tok.where), tok]
    return tokens + passed


def passthrough(env: dict[str, EnvVar]) -> list[Token]:
    """NIM_PASSTHROUGH_ARGS split as a shell would (each word located at the variable)."""
    tok = env_value(env, PASSTHROUGH)
    if tok is None:
        return []
    try:
        words = shlex.split(tok.text)
    except ValueError:
        words = tok.text.split()
    return [Token(w, tok.where, f"env {PASSTHROUGH}") for w in words]


def model_variable(env: dict[str, EnvVar]) -> Token | None:
    """NIM_MODEL_NAME (or NIM_MODEL_PATH) without its `hf://` scheme."""
    for name in MODEL_VARIABLES:
        tok = env_value(env, name)
        if tok is not None and tok.text.strip():
            text = tok.text.strip()
            return Token(text[5:] if text.startswith("hf://") else text, tok.where, tok.note)
    return None


def profile_variable(env: dict[str, EnvVar]) -> Token | None:
    tok = env_value(env, PROFILE)
    return tok if tok is not None and tok.text.strip() else None
