"""Building a finding's fixes: edits at the spans the extractors recorded.

A rule says what the setting should become and how far the change may be trusted; these helpers
say where: the value's own characters when the file states it, a new engine flag after the last
argument (or a new key in kvlint's own spec) when the value is the engine's default. What cannot be
placed exactly is a display-only fix: shown, never applied.
"""

from __future__ import annotations

from kvlint import engines
from kvlint.deployment import Deployment, Value
from kvlint.findings import Applicability, Edit, Fix
from kvlint.rules.facts import flag

SAFE, UNSAFE, DISPLAY = Applicability.SAFE, Applicability.UNSAFE, Applicability.DISPLAY

# why a stated value's fix is display-only when the value has no exact span (kvlint/extract/pod/argv.py
# scalar_where): its characters in the file are not its text's
UNPLACED = "not applied: the value is written with escapes, an anchor or a tag; edit it by hand"

# kvlint's own spec keys for the settings fixes change
SPEC_KEYS = {"utilization": "gpu_memory_utilization"}


def display(message: str) -> Fix:
    return Fix(message, DISPLAY)


def replace_text(v: Value | None, text: str, message: str, applicability: str) -> Fix:
    """Write `text` in place of the value's characters (only a value the file states)."""
    if v is None or v.origin != "stated" or v.where is None:
        return display(message)
    if v.where.end_column is None:  # located at its start alone: its source is not its text
        return display(f"{message} ({UNPLACED})")
    return Fix(message, applicability, (Edit(v.where, text, reads=text),))


def set_setting(
    d: Deployment,
    engine: str,
    v: Value | None,
    setting: str,
    new: int | float | str,
    message: str,
    applicability: str,
) -> Fix:
    """Set an engine setting: in place when stated, else as a new flag (or spec key) after the last one."""
    text = f"{new:g}" if isinstance(new, float) else str(new)
    if v is not None and v.origin == "stated":
        return replace_text(v, text, message, applicability)
    if d.args_end is None:
        return display(message)
    if d.kind == "ServingSpec":
        return Fix(
            message,
            applicability,
            (Edit(d.args_end, append=(f"{SPEC_KEYS.get(setting, setting)}: {text}",), reads=text),),
        )
    name = flag(engine, setting)
    if not name.startswith("--"):  # an environment variable (TGI's CUDA_MEMORY_FRACTION): the user's choice
        return display(message)
    return Fix(message, applicability, (Edit(d.args_end, append=(name, text), reads=text),))


def other_run(d: Deployment, arch, gpu, s, ok) -> tuple[str, Fix] | None:
    """The first run one setting of the engine selects (Engine.alternatives: NIM's other published profiles)
    whose plan passes `ok`: the words the fix's summary gives it, and a display-only fix (a profile to choose,
    which changes the precision or the GPUs the deployment runs on: the author's call, never applied)."""
    for said, message, alt in engines.get(s.engine).alternatives(d, arch, gpu, s):
        if ok(engines.get(alt.engine).plan(arch, gpu, alt)):
            return said, display(message)
    return None
