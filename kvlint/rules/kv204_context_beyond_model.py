from collections.abc import Iterator

from kvlint import engines
from kvlint.findings import Finding, Severity
from kvlint.rules.base import ModelContext, ModelRule
from kvlint.rules.facts import spec_key
from kvlint.rules.fixes import SAFE, display, replace_text


class ContextBeyondModel(ModelRule):
    """max_context is longer than the model's maximum as the engine derives it.

    ## What it does
    Compares a stated `max_context` (vLLM `--max-model-len`, SGLang `--context-length`) with the
    model's maximum the way vLLM derives it (`_get_and_verify_max_len`): the smallest of
    `max_position_embeddings` and the other length keys, multiplied by the rope-scaling factor
    unless the rope type (llama3, longrope) already states the extended length, yarn as
    `original_max_position_embeddings x factor`. Engine options that change the model are applied
    first: vLLM `--hf-overrides` (and `--rope-scaling` / `--rope-theta`), SGLang
    `--json-model-override-args`, TGI `--rope-scaling` / `--rope-factor` (a YaRN factor 4 over
    Qwen3's 32,768 original positions is its documented 131,072-token recipe, not an error).

    ## Why is this bad?
    vLLM refuses to start: "User-specified max_model_len (N) is greater than the derived
    max_model_len (max_position_embeddings=M …)", unless `VLLM_ALLOW_LONG_MAX_MODEL_LEN=1`, which
    "may lead to incorrect model outputs or CUDA errors". SGLang has the same check.

    ## Formula
    error when `max_context > derived max_model_len`.

    ## Example
    `--max-model-len=16384` for gemma-2-9b (8,192 positions).

    Use instead: `--max-model-len=8192`.

    ## How to fix
    Lower the context to the model's maximum, or pick a long-context variant of the model.

    `--fix` writes the model's maximum in place: safe, since the engine cannot start as written and
    every request it could serve is still served. With `VLLM_ALLOW_LONG_MAX_MODEL_LEN=1` set the long
    context is deliberate; the fix is then only shown.

    ## Suppress
    `# kvlint: disable=KV204 -- reason` on the line (e.g. with VLLM_ALLOW_LONG_MAX_MODEL_LEN on purpose).
    """

    id = "KV204"
    name = "context-beyond-model"
    severity = Severity.ERROR
    fix_applicability = "safe"

    def check(self, ctx: ModelContext) -> Iterator[Finding]:
        d, arch = ctx.deployment, ctx.model
        v = ctx.in_force.max_context
        if (
            v is None
            or v.origin == "default"
            or not engines.known(ctx.in_force.engine_name)
            or not engines.get(ctx.in_force.engine_name).refuses_context_beyond_model
            or arch.family == "declared"
        ):
            return
        if int(v.value) <= arch.max_positions:
            return
        allow = d.extra.get("VLLM_ALLOW_LONG_MAX_MODEL_LEN")
        allowed = allow is not None and str(allow.value).strip() in ("1", "true", "True")
        key = spec_key(d, "max_context", ctx.in_force.engine_name)
        message = (
            f"User-specified max_model_len ({int(v.value):,}) is greater than the derived max_model_len "
            f"({arch.max_positions_note}"
            + (f" = {arch.max_positions:,}" if " x " in arch.max_positions_note else "")
            + f") of {arch.id}"
        )
        if allowed:
            yield ctx.finding(
                self,
                v.where,
                message
                + "; VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 lets it start, with outputs the model was not trained for",
                fix=f"{key} {arch.max_positions}",
                severity=Severity.WARNING,
                fixes=[display(f"lower {key} to {arch.max_positions} (the model's maximum)")],
            )
        else:
            yield ctx.finding(
                self,
                v.where,
                message + ": the engine refuses to start",
                fix=f"{key} {arch.max_positions}",
                fixes=[
                    replace_text(
                        v,
                        str(arch.max_positions),
                        f"lower {key} to {arch.max_positions} (the model's maximum)",
                        SAFE,
                    )
                ],
            )
