"""`--format github` (the default under GitHub Actions): errors and warnings are one annotation each;
infos are summed up in one `::notice title=kvlint infos::` by reason, the block the text report prints
(report/infos.py), and `--show-infos` gives each its own notice."""

from __future__ import annotations

from click.testing import CliRunner
from conftest import FIXTURES

from kvlint.cli import main

# one file with a "GPU not stated" info, one with a warning, one with an error
FILES = [
    str(FIXTURES / "KV002" / "bad-no-gpu-smallest-card.yaml"),
    str(FIXTURES / "KV002" / "bad-unknown-gpu.yaml"),
    str(FIXTURES / "KV002" / "bad-no-gpu-weights-fit-no-card.yaml"),
]


def _github(*args: str) -> list[str]:
    result = CliRunner().invoke(main, ["--isolated", "--format", "github", *args, *FILES])
    return result.stdout.splitlines()


def _text_infos_block(*args: str) -> list[str]:
    out = CliRunner().invoke(main, ["--isolated", "--format", "text", "--no-color", *args, *FILES]).stdout
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if "infos by reason" in line or "info by reason" in line)
    end = next((i for i in range(start, len(lines)) if not lines[i]), len(lines))
    return lines[start:end]


def test_infos_are_one_notice_and_errors_and_warnings_are_annotated():
    lines = _github()
    levels = [line.split(" ", 1)[0] for line in lines]
    assert levels.count("::error") == 1 and levels.count("::warning") == 1
    notices = [line for line in lines if line.startswith("::notice")]
    assert len(notices) == 1 and notices[0].startswith("::notice title=kvlint infos::")
    assert "file=" not in notices[0]  # a run summary, not an annotation on one file
    assert notices[0].split("::", 2)[2] == "%0A".join(_text_infos_block())  # the text report's block


def test_show_infos_gives_each_info_its_annotation():
    lines = _github("--show-infos")
    notices = [line for line in lines if line.startswith("::notice")]
    assert len(notices) == 1 and "file=" in notices[0] and "GPU type is not stated" in notices[0]
    assert not any("title=kvlint infos" in line for line in lines)
