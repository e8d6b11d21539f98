"""README.md and docs/: every quoted output is the real output, every generated table is current, and
every relative link resolves.

A quoted output is a fenced block right after a marker naming the command:

    <!-- kvlint-example: kvlint --isolated fixtures/KV102/bad-llama-8b-l4-128k.yaml -->
    ```console
    $ kvlint --isolated fixtures/KV102/bad-llama-8b-l4-128k.yaml
    ...what the command prints (stdout and stderr as a terminal shows them)...
    ```

The command runs from the checkout's root, in-process (click's CliRunner, as tests/test_snapshots.py
runs the fixtures), with the machine's CI, colour and cache switches removed. A generated part sits
between `<!-- kvlint-generated: NAME -->` and `<!-- end kvlint-generated -->`; NAME is one of
GENERATORS below. `KVLINT_UPDATE_DOCS=1 python -m pytest tests/test_docs.py` rewrites both kinds in
place; review `git diff README.md docs/` before committing.
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import ROOT, SHARED
from test_snapshots import ENVIRONMENT

from kvlint.cli import main

UPDATE = bool(os.environ.get("KVLINT_UPDATE_DOCS"))
COMMAND = "KVLINT_UPDATE_DOCS=1 python -m pytest tests/test_docs.py"
DOCS = ROOT / "docs"
PAGES = sorted([ROOT / "README.md", *DOCS.rglob("*.md")])
# Pages whose links are checked: the above, and the generated rule pages they link to.
LINKED = PAGES + sorted((ROOT / "rules").glob("*.md"))

EXAMPLE = re.compile(
    r"^<!-- kvlint-example: (?P<cmd>.+?) -->\n(?P<fence>```+)(?P<lang>[a-z]*)\n(?P<body>.*?)^(?P=fence)$",
    flags=re.M | re.S,
)
GENERATED = re.compile(
    r"^<!-- kvlint-generated: (?P<name>[a-z-]+) -->\n(?P<body>.*?)^<!-- end kvlint-generated -->$",
    flags=re.M | re.S,
)
VLLM_LOGS = SHARED / "calibration" / "vllm_startup_logs.yaml"


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


@pytest.fixture
def user_shell(monkeypatch, tmp_path):
    """The checkout's root as the working directory, and nothing from the machine's environment."""
    for name in ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("KVLINT_MODELS_DIR", str(tmp_path / "no-pulled-models"))
    monkeypatch.setenv("KVLINT_NO_CACHE", "1")
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.chdir(ROOT)


def run_example(cmd: str) -> str:
    """The block a marked command should show: the prompt line, then what kvlint prints."""
    words = shlex.split(cmd)
    assert words[0] == "kvlint", f"an example runs kvlint itself, not {words[0]!r}: {cmd}"
    result = CliRunner().invoke(main, words[1:], catch_exceptions=False)
    out = result.output
    return f"$ {cmd}\n{out}" + ("" if out.endswith("\n") or not out else "\n")


def _rules_index() -> str:
    from kvlint.app import list_rules

    return list_rules("markdown", link_base="../rules/")


def _accuracy_table() -> str:
    if not VLLM_LOGS.is_file():
        pytest.skip(f"{VLLM_LOGS} is absent (the ../shared reference folder is not beside this checkout)")
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "accuracy.py"), "--markdown", "--vllm", str(VLLM_LOGS)],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


# The generated parts: each a function of the checkout, named by its marker.
GENERATORS = {"rules-index": _rules_index, "accuracy": _accuracy_table}


def _examples() -> list[tuple[Path, str]]:
    return [
        (page, m.group("cmd")) for page in PAGES for m in EXAMPLE.finditer(page.read_text(encoding="utf-8"))
    ]


def _generated() -> list[tuple[Path, str]]:
    return [
        (page, m.group("name"))
        for page in PAGES
        for m in GENERATED.finditer(page.read_text(encoding="utf-8"))
    ]


def _check_or_rewrite(page: Path, pattern: re.Pattern, key: str, value: str, expected_body: str) -> None:
    text = page.read_text(encoding="utf-8")
    match = next(m for m in pattern.finditer(text) if m.group(key) == value)
    actual = match.group("body")
    if actual == expected_body:
        return
    if UPDATE:
        start, end = match.span("body")
        page.write_text(text[:start] + expected_body + text[end:], encoding="utf-8", newline="\n")
        return
    diff = difflib.unified_diff(
        actual.splitlines(keepends=True), expected_body.splitlines(keepends=True), _rel(page), "real output"
    )
    pytest.fail(f"{_rel(page)}: {value!r} is stale: {COMMAND}\n" + "".join(list(diff)[:120]), pytrace=False)


def test_the_docs_quote_some_examples():
    pages = {_rel(page) for page, _ in _examples()}
    assert "README.md" in pages and len(pages) >= 3, pages


@pytest.mark.parametrize(("page", "cmd"), _examples(), ids=lambda v: _rel(v) if isinstance(v, Path) else v)
def test_quoted_output_is_the_real_output(page, cmd, user_shell):
    _check_or_rewrite(page, EXAMPLE, "cmd", cmd, run_example(cmd))


@pytest.mark.parametrize(("page", "name"), _generated(), ids=lambda v: _rel(v) if isinstance(v, Path) else v)
def test_generated_part_is_current(page, name, user_shell):
    assert name in GENERATORS, f"{_rel(page)}: no generator named {name!r} (known: {sorted(GENERATORS)})"
    _check_or_rewrite(page, GENERATED, "name", name, GENERATORS[name]())


def test_each_generator_is_used():
    assert {name for _, name in _generated()} == set(GENERATORS)


# Links: [text](target) outside code, where target is not a URL.
LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", flags=re.M | re.S)


def _prose(text: str) -> str:
    return re.sub(r"`[^`\n]*`", "", FENCE.sub("", text))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_\[\]()]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    headings = re.findall(r"^#{1,6} (.+)$", FENCE.sub("", page.read_text(encoding="utf-8")), flags=re.M)
    return {slug(h) for h in headings}


def broken_links(page: Path) -> list[str]:
    bad = []
    for target in LINK.findall(_prose(page.read_text(encoding="utf-8"))):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            bad.append(f"{target} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            bad.append(f"{target} (no heading #{anchor})")
    return bad


@pytest.mark.parametrize("page", LINKED, ids=_rel)
def test_relative_links_resolve(page):
    assert not broken_links(page)


def test_the_link_check_sees_a_broken_link(tmp_path):
    (tmp_path / "there.md").write_text("# Here it is\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](there.md) [ok](there.md#here-it-is) [web](https://example.com/x)\n"
        "[gone](missing.md) [no anchor](there.md#nowhere) `[in code](missing.md)`\n"
    )
    assert broken_links(page) == ["missing.md (no such file)", "there.md#nowhere (no heading #nowhere)"]


def test_every_docs_page_is_linked_from_the_readme_or_another_page():
    linked = set()
    for page in PAGES:
        for target in LINK.findall(_prose(page.read_text(encoding="utf-8"))):
            if not re.match(r"[a-z][a-z0-9+.-]*:", target) and target.partition("#")[0]:
                linked.add((page.parent / target.partition("#")[0]).resolve())
    orphans = [_rel(p) for p in PAGES if p.parent == DOCS and p.resolve() not in linked]
    assert not orphans


def test_readme_is_short():
    """A newcomer's five minutes: the rest lives in docs/."""
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 300


# What the pages say, checked against the code they describe.


def _yaml_blocks(page: Path) -> list[str]:
    return re.findall(r"```yaml\n(.+?)\n```", page.read_text(encoding="utf-8"), flags=re.S)


def _table_keys(text: str) -> set[str]:
    """The keys in the first column of a Markdown table (`key`, or `a`, `b` on one row)."""
    return {
        k for row in re.findall(r"^\| (`[^|]+`) \|", text, flags=re.M) for k in re.findall(r"`([^`]+)`", row)
    }


def test_configuration_page_names_every_key_of_the_schema():
    import json

    schema = json.loads((ROOT / "kvlint" / "run" / "config_schema.json").read_text(encoding="utf-8"))
    text = (DOCS / "configuration.md").read_text(encoding="utf-8")
    top, gpu, model = (
        text.split("## Every key", 1)[1].split("A `gpus:` entry:", 1)[0],
        text.split("A `gpus:` entry:", 1)[1].split("A `models:` entry:", 1)[0],
        text.split("A `models:` entry:", 1)[1].split("\n## ", 1)[0],
    )
    assert _table_keys(top) == set(schema["properties"])
    assert _table_keys(gpu) == set(schema["$defs"]["GpuEntry"]["properties"])
    assert _table_keys(model) == set(schema["$defs"]["ModelEntry"]["properties"])


def test_configuration_page_example_is_valid(tmp_path, monkeypatch):
    block = next(b for b in _yaml_blocks(DOCS / "configuration.md") if b.startswith("# .kvlint.yaml"))
    (tmp_path / ".kvlint.yaml").write_text(block)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["config"])
    assert result.exit_code == 0, result.output
    assert "KV004  (.kvlint.yaml)" in result.output and "h20" in result.output


def test_inputs_page_spec_example_lints_cleanly_of_schema_errors():
    from conftest import lint

    block = next(b for b in _yaml_blocks(DOCS / "inputs.md") if b.startswith("kind: ServingSpec"))
    result = lint(block, "spec.yaml")
    assert result.deployments and "KV001" not in [f.rule for f in result.findings]


def test_inputs_page_names_every_reader_in_the_registry():
    from kvlint.extract import registry

    text = (DOCS / "inputs.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`([^`]+)`", text))
    readers = {
        *registry.KUBERNETES_KINDS,
        *(kind for _, kind in registry.GROUP_KINDS),
        *(name for name, _, _ in registry.DOCUMENT_KINDS),
        *(kind for _, kind in registry.NODE_POOL_KINDS),
        *registry.NODE_POOL_TEMPLATES,
        *(name for name, _, _ in registry.NODE_POOL_FILES),
    }
    assert readers - named == set()


BLOCK = re.compile(r"^(?P<fence>```+)(?P<lang>[a-z]*)\n(?P<body>.*?)^(?P=fence)$", flags=re.M | re.S)


def unmarked_outputs(text: str) -> list[str]:
    """Fenced console/text blocks that show output (a line that is not a `$ ` command) without a marker."""
    marked = {m.start("fence") for m in EXAMPLE.finditer(text)}
    bad = []
    for m in BLOCK.finditer(text):
        if m.group("lang") not in ("console", "text", "") or m.start() in marked:
            continue
        if any(line and not line.startswith("$ ") for line in m.group("body").splitlines()):
            bad.append(m.group("body").splitlines()[0])
    return bad


@pytest.mark.parametrize("page", PAGES, ids=_rel)
def test_every_quoted_output_is_a_marked_example(page):
    assert not unmarked_outputs(page.read_text(encoding="utf-8"))


def test_the_marker_check_sees_an_unmarked_output():
    text = (
        "```console\n$ kvlint deploy/   # a command alone is fine\n```\n"
        "<!-- kvlint-example: kvlint x.yaml -->\n```console\n$ kvlint x.yaml\nout\n```\n"
        "```yaml\nkey: value\n```\n"
        "```text\nkvlint: 1 finding\n```\n"
    )
    assert unmarked_outputs(text) == ["kvlint: 1 finding"]
