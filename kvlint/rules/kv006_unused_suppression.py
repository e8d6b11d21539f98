from kvlint.codes import UNUSED_SUPPRESSION
from kvlint.findings import Severity
from kvlint.rules.base import IssueRule


class UnusedSuppression(IssueRule):
    """A `# kvlint: disable=…` comment or `kvlint.io/ignore` annotation that suppresses nothing.

    ## What it does
    Reports suppressions that matched no finding, name no kvlint rule, or cannot be read
    (`# kvlint: disabel=KV103`).

    ## Why is this bad?
    A stale suppression hides the next real finding on that line without anyone noticing.

    ## How to fix
    Delete the comment or annotation, or correct the rule code.

    `--fix` deletes a `# kvlint:` comment that suppresses nothing (with the blanks before it, or its
    whole line when it stands alone): safe, as ruff's RUF100 is. Annotations and misspelt codes are
    left to the user.

    ## Suppress
    `ignore = ["KV006"]` in the configuration.
    """

    id = UNUSED_SUPPRESSION
    name = "unused-suppression"
    severity = Severity.INFO
    infos = {None: "suppression comments or annotations that suppress nothing — remove them (`--fix` does)"}
    fix_applicability = "safe"
