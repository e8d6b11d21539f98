from kvlint.codes import MATCHED_BY_NAME
from kvlint.findings import Severity
from kvlint.rules.base import IssueRule


class ModelMatchedByName(IssueRule):
    """The model is not catalogued; kvlint used a catalogued base that its name points to.

    ## What it does
    Reports a model id that kvlint resolved through its name rules rather than an exact
    catalog entry, a local `config.json` or a pulled copy: a quantization suffix (`-FP8`,
    `-AWQ`, `-GPTQ-Int4`, `-quantized.w8a8`, `-bnb-4bit`, `-NVFP4`, ...), a known republisher
    (RedHatAI, neuralmagic, hugging-quants, unsloth, TheBloke, nvidia, amd, ...) or an
    instruct/chat/base twin of the same organisation (`-Instruct`, `-Chat`, `-it`, `-hf`, date
    stamps such as `-2507`). The message names the base, the weight format taken from the name
    and the rules that matched; JSON `model_source` reads `matched by name: BASE + FORMAT (from the name)`.

    ## Why is this bad?
    It usually is not: a quantized republication has its base's architecture. But the figures
    rest on a name, not on the checkpoint: a context length, vocabulary or quantization the
    publisher changed is not seen. Teams that want every figure from a real config forbid the
    guess with `--strict` (which makes this rule an error) or select it explicitly.

    ## How to fix
    Make the model known exactly: `kvlint models pull <id>` writes its config into the
    project's `.kvlint/models/` catalog, or point `model:` at a local checkpoint directory.

    ## Suppress
    `# kvlint: disable=KV007 -- reason` on the model's line, or `ignore = ["KV007"]`.
    """

    id = MATCHED_BY_NAME
    name = "model-matched-by-name"
    severity = Severity.INFO
    infos = {
        None: "models taken from a catalogued model their name points to, not from their own config.json — "
        "`kvlint models pull <id>`, or point `model` at a directory holding config.json"
    }
