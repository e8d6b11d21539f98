from kvlint.codes import INVALID_INPUT
from kvlint.findings import Severity
from kvlint.rules.base import IssueRule


class InvalidInput(IssueRule):
    """The file could not be read as YAML, or a kvlint spec breaks its schema.

    ## What it does
    Reports YAML syntax errors, duplicate keys, unresolved merge-conflict markers, binary or
    non-UTF-8 files, files over the size limit, alias bombs and nesting too deep to read, and
    ServingSpec documents with unknown keys, wrong types or impossible values (a negative count,
    `gpu_memory_utilization` outside (0, 1], `fragmentation` outside [0, 1)).

    ## Why is this bad?
    A file kvlint cannot read is a file nothing was checked in; Kubernetes rejects most of these
    too (duplicate keys, syntax errors). Saying so, at the line, beats passing silently.

    ## How to fix
    Fix the YAML at the reported line and column; for an unknown key, use the suggested name.

    ## Suppress
    Not suppressible inline (an unreadable file has no trustworthy comments); exclude the path
    with `--exclude` or `exclude` in the configuration if it is not a manifest.
    """

    id = INVALID_INPUT
    name = "invalid-input"
    severity = Severity.ERROR
    suppressible = False  # an unreadable file has no trustworthy comments
