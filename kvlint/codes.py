"""Codes of the rules whose findings the pipeline stages raise as `Issue`s.

load, extract and resolve notice these problems (a file that cannot be read, a GPU or model kvlint
does not know, a workload it cannot model, a setting it cannot read); each is reported by the rule
module that owns the code (kvlint/rules/kv00N_*.py, whose `id` is the constant here). The stages
sit below the rules, so the constants live in this base module rather than in the rule modules.
`IssueCode` lets the type checker reject a mistyped code, and tests/test_rule_codes.py checks that
every code has its rule. The capacity rules (KV1xx-KV3xx) are raised only by their own module and
keep their code there.
"""

from __future__ import annotations

from typing import Final, Literal

IssueCode = Literal["KV001", "KV002", "KV003", "KV004", "KV005", "KV006", "KV007"]

INVALID_INPUT: Final = "KV001"
UNKNOWN_GPU: Final = "KV002"
UNKNOWN_MODEL: Final = "KV003"
NOT_CHECKABLE: Final = "KV004"
UNPARSED_SETTING: Final = "KV005"
UNUSED_SUPPRESSION: Final = "KV006"
MATCHED_BY_NAME: Final = "KV007"

ISSUE_CODES: Final[tuple[IssueCode, ...]] = (
    INVALID_INPUT,
    UNKNOWN_GPU,
    UNKNOWN_MODEL,
    NOT_CHECKABLE,
    UNPARSED_SETTING,
    UNUSED_SUPPRESSION,
    MATCHED_BY_NAME,
)
