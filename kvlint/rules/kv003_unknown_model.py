from kvlint.codes import UNKNOWN_MODEL
from kvlint.findings import IssueKind, Severity
from kvlint.rules.base import IssueContext, IssueRule, skipped_note


class UnknownModel(IssueRule):
    """The model cannot be resolved to an architecture, so capacity checks were skipped.

    ## What it does
    Reports a model reference kvlint cannot resolve: not in the shipped catalog, not a local
    `config.json` (or its directory) relative to the file, and not in the local Hugging Face
    cache (`HF_HUB_CACHE`, `HF_HOME/hub`, `~/.cache/huggingface/hub`). kvlint never downloads.
    The message names the checks that were skipped. A workload (or chart values) that names no
    model at all is an info: nothing the author wrote is wrong, and the text report counts such
    workloads once per run with what to do. A reference that names no model id — an unexpanded
    variable (`$MODEL_ID`, `{{ .Values.model }}`), a placeholder (`YOUR-MODEL-PATH`), a local path or a
    storage URI (`pvc://`, `s3://`) with no config.json to read — is an info too, counted the same way
    (the classes: kvlint/catalog/model_refs.py). A Hugging Face cache path
    (`.../models--org--name/snapshots/<sha>`) names its model, and is read as org/name. A model id it
    names and kvlint cannot resolve is a warning at that name (a typo, a private model, or a model
    kvlint does not know yet).

    ## Why is this bad?
    Layers, KV heads, head size and parameter count decide every number kvlint computes.
    Unknown is not fine: without them nothing about capacity was checked.

    ## How to fix
    Point `model:` at a local `config.json`, declare the model under `models:` in the
    configuration (same schema as the catalog), or state its facts under `architecture:`
    (layers, kv_heads, head_dim, params).

    ## Suppress
    `# kvlint: disable=KV003 -- reason` on the model's line, or `kvlint.io/ignore: "KV003=reason"`.
    """

    id = UNKNOWN_MODEL
    name = "unknown-model"
    severity = Severity.WARNING
    infos = {
        IssueKind.MODEL_NOT_STATED: "workloads not checked for memory: the model is not stated — name it "
        "on the engine's command line (vLLM --model, llama-server -m), or lint it with the object that sets it",
        IssueKind.MODEL_NOT_READABLE: "workloads not checked for memory: the model is a variable, placeholder, "
        "path or storage URI that names no model id — say which model it is: `models:` in .kvlint.yaml with "
        "the reference among its aliases, a path to its config.json, or the Hub id (`kvlint models pull`)",
    }

    def note(self, ctx: IssueContext) -> str:
        """Which rules could not run on the deployment for want of this fact."""
        return skipped_note(ctx)
