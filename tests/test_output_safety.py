"""Output that cannot be hijacked (security review F10, F12, F15, F16, F17, F29).

Every string that comes from input is neutralised for the format it is written in
(kvlint/report/safe.py): no terminal escape or new line in text/concise, no workflow command in
GitHub output or on stderr, no Markdown/HTML/mermaid markup in the summary, no lone surrogate
anywhere, percent-encoded SARIF URIs, and positions on the lines editors and GitHub count.
"""

from __future__ import annotations

import json
import os
import re

import pytest
from click.testing import CliRunner
from conftest import FIXTURES, SHARED

from kvlint.cli import main
from kvlint.report import safe

BAD = FIXTURES / "KV102" / "bad-llama-8b-l4-128k.yaml"
FORMATS = ["text", "concise", "json", "sarif", "github", "markdown", "rdjson"]


def pod(
    name: str, args: list[str] | None = None, gpus: str = "abc", model="meta-llama/Llama-3.1-70B-Instruct"
) -> str:
    return (
        "apiVersion: apps/v1\nkind: Deployment\n"
        f"metadata: {{name: {json.dumps(name)}}}\n"
        "spec: {template: {spec: {nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4},\n"
        f"  containers: [{{name: vllm, image: vllm/vllm-openai:v0.10.1, command: {json.dumps(['vllm', 'serve', model])},"
        f" args: {json.dumps(args or [])}, resources: {{limits: {{nvidia.com/gpu: {json.dumps(gpus)}}}}}}}]}}}}}}\n"
    )


def cli(*args, env=None):
    return CliRunner().invoke(main, ["--isolated", "--no-color", *args], env=env)


def no_command_lines(text: str) -> bool:
    """No line a GitHub runner would read as a workflow command, except kvlint's own annotations."""
    own = re.compile(r"^::(error|warning|notice) (file=|title=kvlint)")
    return all(not line.startswith("::") or own.match(line) for line in text.split("\n"))


HOSTILE_NAMES = [
    "x\ud800",  # F10: a lone surrogate from a YAML escape
    "x\x1b]0;PWNED-TITLE\x07\x1b[2J\x1b[1;32mALL CHECKS PASSED\x1b[0m",  # F16
    "x\n::error file=README.md,line=1::INJECTED\n",  # F16 line injection
    "x\r::add-mask::x",
    "x\u2028::warning::LS",
    "x\u202egnp.exe",  # bidi override
    "x`<img src=https://evil.example/p.png>`\r```\r<script>alert(1)</script>\r[click](https://evil.example)",  # F17
    "a|b</td><img src=x onerror=alert(1)>",
]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", HOSTILE_NAMES, ids=range(len(HOSTILE_NAMES)))
def test_hostile_names_reach_no_format_raw(tmp_path, fmt, name):
    """F10/F16/F17: the other file's KV102 is reported, and the hostile name is inert."""
    hostile = tmp_path / "this.yaml"
    hostile.write_text(pod(name, ["--foo\n::add-mask::x"]), encoding="utf-8", errors="surrogatepass")
    r = cli("--format", fmt, str(BAD), str(hostile), env={"GITHUB_ACTIONS": "true"})
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert r.exit_code == 1, r.output
    out = r.stdout
    assert "KV102" in out  # the real finding in the other file survives
    assert "\x1b" not in out and "\ud800" not in out and "\u202e" not in out and "\u2028" not in out
    assert "\r" not in out
    assert no_command_lines(out) and no_command_lines(r.stderr)
    if fmt in ("json", "sarif", "rdjson"):
        json.loads(out)
    if fmt == "markdown":
        check_markdown(out)


def check_markdown(out: str) -> None:
    """Markdown that renders as kvlint wrote it: no raw tag, no link, fences balanced and only
    kvlint's own, every table row with its column count."""
    assert "<" not in out.replace("&lt;", "")
    assert "](" not in out.replace("\\](", "")
    fences = [line for line in out.split("\n") if line.startswith("```")]
    assert all(f in ("```mermaid", "```") for f in fences) and len(fences) % 2 == 0, fences
    for line in out.split("\n"):
        if line.startswith("|"):
            cells = re.split(r"(?<!\\)\|", line)
            assert len(cells) in (6, 10), line  # 4 or 8 columns, plus the two outer edges
    assert out.count("### Findings") == 1


def test_f15_stderr_diagnostics_cannot_inject_workflow_commands(tmp_path):
    """F15: a committed broken symlink whose name carries a workflow command."""
    name = "evil\n::error file=README.md,line=1,title=pwn::INJECTED-FROM-FILENAME\n.yaml"
    os.symlink("/nonexistent", tmp_path / name)
    r = cli(str(tmp_path), env={"GITHUB_ACTIONS": "true"})
    assert r.exit_code == 2
    assert "INJECTED-FROM-FILENAME" in r.stderr  # reported, escaped
    assert no_command_lines(r.stderr) and no_command_lines(r.stdout), r.stderr
    assert "\\n::error" in r.stderr


def test_f15_config_errors_are_escaped_on_stderr(tmp_path, monkeypatch):
    (tmp_path / ".kvlint.yaml").write_text(
        '"x\\n::error file=README.md,line=1::INJECTED-VIA-CONFIG-KEY\\n": 1\n'
    )
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, [str(BAD)], env={"GITHUB_ACTIONS": "true"})
    assert r.exit_code == 2
    assert "INJECTED-VIA-CONFIG-KEY" in r.stderr and no_command_lines(r.stderr), r.stderr


def test_f16_text_caret_line_is_escaped_and_the_caret_still_points_at_the_value():
    from conftest import lint

    from kvlint.report import render
    from kvlint.run.lint import RunResult
    from kvlint.run.settings import Settings

    # YAML refuses raw C0 controls; a bidi override (and LS, NEL) it takes as printable text
    text = "kind: ServingSpec\nname: x\nmodel: meta-llama/Llama-3.1-8B-Instruct\ngpu: L4\nmax_context: \u202e131072 # \u202e\n"
    out = render("text", RunResult(files=[lint(text)]), Settings())
    lines = out.split("\n")
    row = next(i for i, line in enumerate(lines) if line.startswith("    5 | "))
    assert lines[row] == "    5 | max_context: \\u202e131072 # \\u202e"
    assert "\u202e" not in out
    caret = lines[row + 1]
    assert caret.index("^") == lines[row].index("\\u202e131072")
    assert caret.strip() == "^" + "~" * (len("\\u202e131072") - 1)


def test_f29_sarif_uris_are_percent_encoded_and_schema_valid(tmp_path, monkeypatch):
    jsonschema = pytest.importorskip("jsonschema")
    schema_path = SHARED / "reference" / "sarif" / "sarif-schema-2.1.0.json"
    if not schema_path.exists():
        pytest.skip(f"{schema_path} is absent (../shared is not beside this checkout)")
    monkeypatch.chdir(tmp_path)
    names = ["a#b?c%20d.yaml", "with space.yaml", os.fsdecode(b"lat\xe9n.yaml")]
    for n in names:
        (tmp_path / n).write_bytes(BAD.read_bytes())
    r = cli("--format", "sarif", *names)
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, json.loads(schema_path.read_text()))
    uris = sorted(
        {x["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for x in doc["runs"][0]["results"]}
    )
    assert uris == ["a%23b%3Fc%2520d.yaml", "lat%E9n.yaml", "with%20space.yaml"]
    assert "\\udce9" not in r.stdout
    js = cli("--format", "json", *names).stdout
    assert "\\udce9" not in js and "lat\\ufffdn.yaml" in js


def test_f29_unicode_line_separators_do_not_shift_line_numbers():
    from conftest import lint

    text = 'kind: ServingSpec\nname: "a\u2028b\u2029c\x85d"\nmodel: meta-llama/Llama-3.1-8B-Instruct\ngpu: L4\nmax_context: 131072\n'
    r = lint(text)
    kv102 = next(f for f in r.findings if f.rule == "KV102")
    assert (kv102.where.line, kv102.where.column) == (5, 14)
    same_line = 'kind: ServingSpec\nmodel: meta-llama/Llama-3.1-8B-Instruct\ngpu: L4\nname: "a\u2028b"; max_context: 131072\n'
    r = lint(same_line.replace('"; ', '"\n'))
    assert next(f for f in r.findings if f.rule == "KV102").where.line == 5


def test_safe_functions():
    assert safe.plain("a\nb\x1b\x9b\u2028\ud800") == "a\\nb\\x1b\\x9b\\u2028\ufffd"
    assert safe.path("::error::x.yaml") == "./::error::x.yaml" and safe.path(":") == "./:"
    assert safe.markdown("a|b`c`<i>&[x](y)\r\n") == "a\\|b\\`c\\`&lt;i&gt;&amp;\\[x\\](y)  "
    assert safe.mermaid('t"\n```x') == "t___x" or "`" not in safe.mermaid('t"\n```x')
    assert safe.uri("a b#c.yaml") == "a%20b%23c.yaml"
    long = safe.plain("x" * 5000)
    assert len(long) < 2100 and long.endswith("(3,000 more characters)")


def test_f12_findings_and_documents_are_capped_with_a_clear_message():
    from conftest import lint

    from kvlint.bounds import DOCUMENTS_MAX, FINDINGS_PER_RULE_MAX, ISSUES_PER_FILE_MAX

    dup = lint("a: 1\n" * 20_000)
    kv001 = [f for f in dup.findings if f.rule == "KV001"]
    assert len(kv001) <= FINDINGS_PER_RULE_MAX + 1
    assert "more KV001 findings in this file, not listed" in kv001[-1].message or any(
        f"more than {ISSUES_PER_FILE_MAX:,} problems" in f.message for f in kv001
    )
    docs = lint("a: 1\n---\n" * (DOCUMENTS_MAX + 500))
    assert any(f"more than {DOCUMENTS_MAX:,} YAML documents" in f.message for f in docs.findings)


def test_f12_workloads_per_file_are_capped():
    from conftest import lint

    from kvlint.bounds import WORKLOADS_MAX

    spec = "kind: ServingSpec\nmodel: meta-llama/Llama-3.1-8B-Instruct\ngpu: L4\nmax_context: 131072\n"
    r = lint(("---\n" + spec) * (WORKLOADS_MAX + 20))
    assert len(r.deployments) == WORKLOADS_MAX
    kv102 = [f for f in r.findings if f.rule == "KV102"]
    assert len(kv102) == 101 and kv102[-1].message.startswith(f"{WORKLOADS_MAX - 100:,} more KV102 findings")
    assert any(
        f.rule == "KV004" and f"more than {WORKLOADS_MAX:,} serving workloads" in f.message
        for f in r.findings
    )


def test_f12_values_per_document_are_capped():
    from conftest import lint

    from kvlint.bounds import NODES_PER_DOCUMENT_MAX

    r = lint("a: [" + "1," * (NODES_PER_DOCUMENT_MAX + 10) + "1]\n---\nb: 1\n")
    assert any(f"holds more than {NODES_PER_DOCUMENT_MAX:,} values" in f.message for f in r.findings)


RAW_NAMES = [b"lat\xe9n.yaml", b"a\xff\xfe:b.yaml", b"s\xed\xa0\x80.yaml", b"d\xe9/x\xe9.yaml"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_file_names_that_are_not_utf8_reach_every_format(fmt, tmp_path, monkeypatch):
    """A name os.fsdecode turns into lone surrogates (surrogateescape), read from disk, in every
    format, to stdout, to --output, with --diff and with --jobs 2 (a real process for the text and
    SARIF formats, so the names also pass through argv and worker processes): no traceback, exit 1
    (findings), UTF-8 output that parses, the name's bytes percent-encoded in SARIF URIs."""
    import subprocess
    import sys

    root = os.fsencode(tmp_path)
    os.mkdir(os.path.join(root, b"d\xe9"))
    for raw in RAW_NAMES:
        with open(os.path.join(root, raw), "wb") as fh:
            fh.write(BAD.read_bytes().replace(b"131072", b"131072 # kvlint: disable=KV103"))
    with open(os.path.join(root, b"z\xe9.yaml"), "wb") as fh:
        fh.write(b"a: \x00")  # a KV001 with a position, from the decoder
    monkeypatch.chdir(tmp_path)
    out_file = os.fsdecode(b"out\xe9." + fmt.encode())
    base = ["--isolated", "--no-color", "--show-suppressed", "-f", fmt]
    runs = [[], ["-o", out_file], ["--diff"]] + ([["--jobs", "2"]] if fmt in ("text", "sarif") else [])
    for extra in runs:
        if extra[:1] == ["--jobs"]:
            p = subprocess.run(
                [sys.executable, "-m", "kvlint", *base, *extra, "."], capture_output=True, timeout=120
            )
            code, out, err = p.returncode, p.stdout, p.stderr
        else:
            r = CliRunner().invoke(main, [*base, *extra, "."])
            assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
            code, out, err = r.exit_code, r.stdout_bytes, r.stderr_bytes
        assert b"Traceback" not in err, err.decode(errors="replace")
        assert code == 1, (extra, err.decode(errors="replace"))
        body = (_read(os.fsencode(out_file)) if extra[:1] == ["-o"] else out).decode("utf-8")
        err.decode("utf-8")
        if extra == ["--diff"]:  # names in diff headers are quoted as git does; patch reads them
            assert '--- "lat\\351n.yaml"' in body and '+++ "a\\377\\376:b.yaml"' in body
            continue
        if fmt in ("json", "sarif", "rdjson"):
            doc = json.loads(body)
            assert "\\ud" not in body.lower(), "a lone surrogate escaped into JSON"
            assert doc
        if fmt == "sarif":
            uris = {
                x["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                for x in doc["runs"][0]["results"]
            }
            assert {
                "lat%E9n.yaml",
                "a%FF%FE%3Ab.yaml",
                "s%ED%A0%80.yaml",
                "d%E9/x%E9.yaml",
                "z%E9.yaml",
            } <= uris
        if fmt == "github":
            assert no_command_lines(body) and body.count("::error file=") >= 5
        if fmt in ("text", "concise"):
            assert body.count("\ufffd") >= 5 and "KV001" in body and "KV102" in body


def _read(path: bytes) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()
