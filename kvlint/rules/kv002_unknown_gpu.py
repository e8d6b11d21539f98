from kvlint.codes import UNKNOWN_GPU
from kvlint.findings import Severity
from kvlint.rules.base import IssueContext, IssueRule, skipped_note


class UnknownGpu(IssueRule):
    """The GPU type is missing, not in the catalog, ambiguous, or of unknown memory.

    ## What it does
    Reports a serving workload whose GPU kvlint cannot identify: no GPU stated (no `gpu:`, no
    GPU node label, no instance type), a name not in the catalog, a name that several cards share
    (`A100` is sold with 40 GB and 80 GB), or a card whose memory is not known. The message lists
    the checks that were skipped because of it.

    ## Why is this bad?
    Every capacity check needs the memory the engine sees on the card. Without it kvlint would
    have to guess, and a guess is a wrong number.

    ## How to fix
    Select the GPU explicitly (`gpu: H100`, a `nodeSelector` on `nvidia.com/gpu.product` or
    `cloud.google.com/gke-accelerator`), pass `--gpu NAME`, set `gpu` in the configuration, or
    declare a new card under `gpus:` in the configuration.

    ## Suppress
    `# kvlint: disable=KV002 -- reason` on the workload's line, or `kvlint.io/ignore: "KV002=reason"`.
    """

    id = UNKNOWN_GPU
    name = "unknown-gpu"
    severity = Severity.WARNING

    def note(self, ctx: IssueContext) -> str:
        """Which rules could not run on the deployment for want of this fact."""
        return skipped_note(ctx)
