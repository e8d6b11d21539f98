"""The few types every stage shares: where a value sits, how bad a finding is, the finding itself."""

from __future__ import annotations

from enum import Enum, IntEnum

from kvlint.codes import IssueCode
from kvlint.record import field, record


class Severity(IntEnum):
    INFO = 1
    WARNING = 2
    ERROR = 3

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Severity:
        try:
            return cls[text.strip().upper()]
        except KeyError:
            raise ValueError(f"unknown severity {text!r} (expected error, warning or info)") from None


class IssueKind(Enum):
    """What an issue says, for a later stage that acts on it (never by matching its message text)."""

    GPU_NOT_STATED = "gpu-not-stated"  # resolve names no GPU type: kvlint/run/fleet.py checks on the fleet
    MODEL_NOT_STATED = "model-not-stated"  # the workload names no model: nothing the author wrote is wrong
    # the reference names no model id (a variable, placeholder, path or volume: catalog/model_refs.py)
    MODEL_NOT_READABLE = "model-not-readable"
    # why a workload or a setting was not checked; the text report counts infos by it (report/infos.py)
    ENGINE_NOT_MODELLED = "engine-not-modelled"  # Ollama, NIM, TensorRT-LLM, llama.cpp, a custom program
    ACCELERATOR_NOT_MODELLED = "accelerator-not-modelled"  # TPU, Neuron, Gaudi, Ascend, CPU
    OPTION_NOT_MODELLED = "option-not-modelled"  # an engine option whose memory the plan leaves out
    DEFINED_ELSEWHERE = "defined-elsewhere"  # a template whose model or GPUs another object gives
    NOT_READ_AS_WORKLOAD = (
        "not-read-as-workload"  # GPUs or an engine command in a layout kvlint does not read
    )
    YAML_SYNTAX = "yaml-syntax"  # the YAML parser's error: load/compose.py gives the file a second look


@record(frozen=True)
class Location:
    """A 1-based position of the value at fault; end_column is the column after the value."""

    file: str
    line: int
    column: int
    end_line: int | None = None
    end_column: int | None = None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


class Applicability:
    """How far a fix may be trusted, as ruff grades them.

    SAFE: the file as written cannot work and the edit keeps everything else the author stated
    (`--fix` applies it). UNSAFE: the edit changes what the deployment does (fewer sequences, a
    shorter context, more GPUs); only `--unsafe-fixes` applies it. DISPLAY: a choice the user must
    make; shown, never applied.
    """

    SAFE = "safe"
    UNSAFE = "unsafe"
    DISPLAY = "display-only"
    ORDER = (SAFE, UNSAFE, DISPLAY)


@record(frozen=True)
class Edit:
    """Replace the text of `where` (start to end, 1-based, end column exclusive) with `text`.

    An edit with `append` adds those words after the item `where` spans instead — a new item of the
    YAML sequence (`--flag=value` or `--flag`, `value`, as its neighbours write them) or a new
    `key: value` line of the mapping — and `kvlint.fix.materialize` turns it into a plain
    replacement once the source text is at hand.

    `reads`: the value the engine's reader must read from the edited text once the fix is applied
    (kvlint/fix/verify.py checks it); None when the edit sets no setting (a comment deleted).
    """

    where: Location
    text: str = ""
    append: tuple[str, ...] = ()
    reads: str | None = None


@record(frozen=True)
class Fix:
    """One way to fix a finding: what it does, how far it may be trusted, and its edits."""

    message: str
    applicability: str
    edits: tuple[Edit, ...] = ()


@record(frozen=True)
class Issue:
    """A problem noticed by load or extract, turned into a finding by the rule that owns `code`."""

    code: IssueCode
    message: str
    where: Location
    details: tuple[str, ...] = ()
    fix: str | None = None
    severity: Severity | None = None  # None: the owning rule's default
    # a key the serving stack itself ignores (chart_layouts.keys_not_read): kvlint read the file; what is
    # deployed simply lacks the setting, so checks of the deployed configuration are no guess
    stack_ignores: bool = False
    kind: IssueKind | None = None
    # the variables the value uses that the container does not set ($(MODEL_PATH)): an input kind that
    # sets one itself (OME's MODEL_PATH, extract/kinds/ome.py) drops the issue about it
    unset: tuple[str, ...] = ()


@record
class Finding:
    rule: str
    name: str
    severity: Severity
    message: str
    where: Location
    details: tuple[str, ...] = ()
    fix: str | None = None
    deployment: str | None = None
    fixes: tuple[Fix, ...] = field(default=(), compare=False)
    suppressed_by: str | None = field(default=None, compare=False)
    kind: IssueKind | None = field(default=None, compare=False)  # the issue's kind (not in JSON or SARIF)
    # what one device of the workload is called ("chip" on a TPU; None: a GPU or not known), for the
    # text report's info summary, whose reasons say "per {device}" (report/infos.py; not in JSON or SARIF)
    device: str | None = field(default=None, compare=False)

    def sort_key(self) -> tuple:
        return (self.where.file, self.where.line, self.where.column, self.rule, self.message)
