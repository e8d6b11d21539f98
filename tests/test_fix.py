"""--fix, --unsafe-fixes, --diff: fixture pairs byte for byte, edits that respect the file, and the
real corpus as a property (every offered fix keeps the YAML valid and touches only its span)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import FIXTURES, SHARED, shared

from kvlint.cli import main
from kvlint.findings import Applicability, Edit, Fix, Location
from kvlint.fix.apply import apply_fixes
from kvlint.fix.materialize import SourceLines, materialize_fix
from kvlint.load import load_bytes
from kvlint.run.lint import lint_text
from kvlint.run.settings import Settings

PAIRS = sorted(p for p in FIXTURES.glob("KV*/fix-*.yaml") if not p.name.endswith(".after.yaml"))
CORPUS = [SHARED / "corpus" / "manifests", SHARED / "corpus" / "manifests2"]


def _after(path: Path) -> Path:
    return path.with_name(path.name[: -len(".yaml")] + ".after.yaml")


def _kvlint(*args: str, input: bytes | None = None):
    return CliRunner().invoke(main, ["--isolated", *args], input=input, catch_exceptions=False)


def test_every_rule_that_applies_fixes_has_a_fixture_pair():
    from kvlint.rules import all_rules

    for rule in all_rules():
        if rule.fix_applicability != "display-only":
            assert list((FIXTURES / rule.id).glob("fix-*.after.yaml")), f"{rule.id} has no fix fixture pair"


@pytest.mark.parametrize("before", PAIRS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fix_turns_before_into_after_byte_for_byte(before, tmp_path):
    rule = before.parent.name
    safe = before.name.startswith("fix-safe-")
    work = tmp_path / before.name
    shutil.copyfile(before, work)
    assert rule in {f.rule for f in lint_text(work.read_bytes(), "x.yaml", Settings()).findings}
    result = _kvlint("--fix" if safe else "--unsafe-fixes", "--exit-zero", str(work))
    assert result.exit_code == 0, result.output
    if os.environ.get("KVLINT_WRITE_FIXES"):  # after a change to the arithmetic: review the diff, commit
        shutil.copyfile(work, _after(before))
    assert work.read_bytes() == _after(before).read_bytes(), (
        "the fix changed; if the new figure is right, KVLINT_WRITE_FIXES=1 pytest tests/test_fix.py rewrites it"
    )
    left = lint_text(work.read_bytes(), "x.yaml", Settings(), str(before.parent)).findings
    assert rule not in {f.rule for f in left}, [f.message for f in left]
    if not safe:  # an unsafe fix is never applied by --fix alone
        shutil.copyfile(before, work)
        _kvlint("--fix", "--exit-zero", str(work))
        assert rule in {f.rule for f in lint_text(work.read_bytes(), "x.yaml", Settings()).findings}


@pytest.mark.parametrize("before", PAIRS[:3], ids=lambda p: p.name)
def test_diff_writes_nothing_exits_1_and_applies_with_patch(before, tmp_path):
    if shutil.which("patch") is None:
        pytest.skip("patch is not installed")
    work = tmp_path / "deploy.yaml"
    shutil.copyfile(before, work)
    result = subprocess.run(
        [sys.executable, "-m", "kvlint", "--isolated", "--diff", "--unsafe-fixes", "deploy.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1, result.stderr
    assert work.read_bytes() == before.read_bytes()
    assert result.stdout.startswith("--- deploy.yaml\n+++ deploy.yaml\n")
    subprocess.run(["patch", "-p0", "-s"], cwd=tmp_path, input=result.stdout, text=True, check=True)
    again = subprocess.run(
        [sys.executable, "-m", "kvlint", "--isolated", "--diff", "--unsafe-fixes", "deploy.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert again.returncode == 0 and again.stdout == ""


def test_rerun_after_fix_shows_none_of_the_fixed_findings(tmp_path):
    work = tmp_path / "d.yaml"
    shutil.copyfile(FIXTURES / "KV204" / "fix-safe-sh-c.yaml", work)
    first = _kvlint("--fix", "--show-fixes", str(work))
    assert "KV204 lower --max-model-len to 8192" in first.output
    second = _kvlint(str(work))
    assert "KV204" not in second.output and second.exit_code == 0


def test_stdin_fix_writes_the_fixed_text_to_stdout():
    data = (FIXTURES / "KV304" / "fix-safe-spec-32k.yaml").read_bytes()
    result = subprocess.run(
        [sys.executable, "-m", "kvlint", "--isolated", "--fix", "-"], input=data, capture_output=True
    )
    assert result.stdout == (FIXTURES / "KV304" / "fix-safe-spec-32k.after.yaml").read_bytes()
    assert b"fixed 1 finding" in result.stderr and result.returncode == 0


def test_a_file_with_a_yaml_error_is_never_edited(tmp_path):
    text = (FIXTURES / "KV204" / "fix-safe-args-equals.yaml").read_text() + "\nbroken: [unclosed\n"
    work = tmp_path / "d.yaml"
    work.write_text(text)
    _kvlint("--fix", "--unsafe-fixes", "--exit-zero", str(work))
    assert work.read_text() == text


def _one(text: str, edit: Edit) -> Fix:
    return materialize_fix(Fix("f", Applicability.SAFE, (edit,)), SourceLines(text))


def test_replacement_keeps_quotes_and_refuses_template_expressions():
    made = _one('x: "16384"\n', Edit(Location("f", 1, 4, 1, 11), "8192"))
    assert apply_fixes('x: "16384"\n', [made])[0] == 'x: "8192"\n'
    templ = _one("x: {{ default 16384 .Values.len }}\n", Edit(Location("f", 1, 15, 1, 20), "8192"))
    assert templ.applicability == Applicability.DISPLAY and not templ.edits


def test_appended_flag_follows_its_neighbours():
    block = "args:\n  - --max-num-seqs=4  # keep\n"
    fix = _one(block, Edit(Location("f", 2, 5, 2, 21), append=("--max-model-len", "8192")))
    assert apply_fixes(block, [fix])[0] == "args:\n  - --max-num-seqs=4  # keep\n  - --max-model-len=8192\n"
    pairs = "args:\n  - '--port'\n  - '8000'\n"
    fix = _one(pairs, Edit(Location("f", 3, 6, 3, 10), append=("--max-num-seqs", "4")))
    assert apply_fixes(pairs, [fix])[0] == pairs + "  - '--max-num-seqs'\n  - '4'\n"
    bare = "args:\n  - --port\n  - --x\n"
    fix = _one(bare, Edit(Location("f", 3, 5, 3, 8), append=("--max-num-seqs", "4")))
    assert apply_fixes(bare, [fix])[0] == bare + '  - --max-num-seqs\n  - "4"\n'  # an arg is a string
    flow = 'args: ["--port", "8000"]\n'
    fix = _one(flow, Edit(Location("f", 1, 19, 1, 23), append=("--max-num-seqs", "4")))
    assert apply_fixes(flow, [fix])[0] == 'args: ["--port", "8000", "--max-num-seqs", "4"]\n'


def test_overlapping_fixes_apply_one_per_round():
    text = "a: 1\n"
    one = Fix("one", Applicability.SAFE, (Edit(Location("f", 1, 4, 1, 5), "2"),))
    two = Fix("two", Applicability.SAFE, (Edit(Location("f", 1, 4, 1, 5), "3"),))
    out, applied = apply_fixes(text, [one, two])
    assert out == "a: 2\n" and applied == [one]


def test_sarif_fixes_are_schema_valid_and_rdjson_has_suggestions(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    path = str(FIXTURES / "KV204" / "fix-safe-args-equals.yaml")
    sarif = json.loads(_kvlint("--format", "sarif", path).output)
    (result,) = sarif["runs"][0]["results"]
    (replacement,) = result["fixes"][0]["artifactChanges"][0]["replacements"]
    assert replacement["insertedContent"]["text"] == "8192"
    assert replacement["deletedRegion"]["startColumn"] == 31
    rd = json.loads(_kvlint("--format", "rdjson", path).output)
    (diag,) = rd["diagnostics"]
    assert diag["code"]["value"] == "KV204" and diag["severity"] == "ERROR"
    assert diag["suggestions"] == [
        {"range": {"start": {"line": 21, "column": 31}, "end": {"line": 21, "column": 36}}, "text": "8192"}
    ]
    # last: the schema lives in ../shared; without it this part skips, with the reason
    schema = json.loads(shared("reference", "sarif", "sarif-schema-2.1.0.json").read_text())
    jsonschema.validate(sarif, schema)


def test_rdjson_columns_are_utf8_bytes(tmp_path):
    work = tmp_path / "d.yaml"
    work.write_text(
        "# é\nkind: ServingSpec\nname: é-long\nmodel: google/gemma-2-9b\ngpu: A100-80GB\nmax_context: 16384\n"
    )
    rd = json.loads(_kvlint("--format", "rdjson", str(work)).output)
    kv204 = [d for d in rd["diagnostics"] if d["code"]["value"] == "KV204"]
    assert kv204 and kv204[0]["location"]["range"]["start"] == {"line": 6, "column": 14}


def _corpus_files() -> list[Path]:
    if not CORPUS[0].is_dir():
        return []
    return sorted(
        p for d in CORPUS if d.is_dir() for p in d.iterdir() if p.suffix in (".yaml", ".yml", ".json")
    )


@pytest.mark.skipif(not CORPUS[0].is_dir(), reason="../shared/corpus is not beside the checkout")
def test_every_offered_fix_on_the_real_corpus_keeps_yaml_valid_and_touches_only_its_span():
    offered = 0
    for path in _corpus_files():
        data = path.read_bytes()
        result = lint_text(data, path.name, Settings(), str(path.parent))
        text = data.decode("utf-8-sig", "replace")
        for f in result.findings:
            for fix in f.fixes:
                if not fix.edits:
                    continue
                offered += 1
                new, applied = apply_fixes(text, [fix])
                assert applied == [fix], (path.name, f.rule)
                src = SourceLines(text)
                starts = [src.offset(e.where.line, e.where.column) for e in fix.edits]
                ends = [src.offset(e.where.end_line, e.where.end_column) for e in fix.edits]
                first, last = min(starts), max(ends)
                assert new[:first] == text[:first] and new[len(new) - (len(text) - last) :] == text[last:]
                loaded = load_bytes(new.encode("utf-8"), path.name)
                errors = [i for i in loaded.issues if i.code == "KV001"]
                assert not errors, (path.name, f.rule, fix.message, [i.message for i in errors])
    assert offered >= 10  # the corpus has real deployments with fixable findings


@pytest.mark.skipif(not CORPUS[0].is_dir(), reason="../shared/corpus is not beside the checkout")
def test_corpus_diff_applies_with_patch_and_converges(tmp_path):
    if shutil.which("patch") is None:
        pytest.skip("patch is not installed")
    for d in CORPUS:
        shutil.copytree(d, tmp_path / d.name)
    run = [
        sys.executable,
        "-m",
        "kvlint",
        "--isolated",
        "--diff",
        "--unsafe-fixes",
        *(d.name for d in CORPUS),
    ]
    first = subprocess.run(run, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert first.returncode == 1 and first.stdout.count("\n+++ ") >= 5, first.stderr
    subprocess.run(["patch", "-p0", "-s"], cwd=tmp_path, input=first.stdout, text=True, check=True)
    second = subprocess.run(run, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert second.stdout == "" and second.returncode == 0, second.stdout[:2000]


def test_diff_headers_quote_names_so_a_name_cannot_add_a_header(tmp_path):
    """A file named `x\\n+++ evil.yaml` (or not UTF-8) is one quoted name in the diff, as git writes
    it; `patch -p0` patches that file and nothing else."""
    if shutil.which("patch") is None:
        pytest.skip("patch is not installed")
    before = (FIXTURES / "KV304" / "fix-safe-spec-32k.yaml").read_bytes()
    root = os.fsencode(tmp_path)
    names = [b"x\n+++ evil.yaml", b'lat\xe9n "q".yaml']
    for n in names:
        with open(os.path.join(root, n), "wb") as fh:
            fh.write(before)
    r = subprocess.run(
        [sys.executable, "-m", "kvlint", "--isolated", "--diff", "."],
        cwd=root,
        capture_output=True,
        timeout=120,
    )
    assert r.returncode == 1, r.stderr
    diff = r.stdout.decode("ascii")
    assert '--- "x\\n+++ evil.yaml"' in diff and '+++ "lat\\351n \\"q\\".yaml"' in diff
    assert not any(line.startswith("+++ evil") for line in diff.split("\n"))
    subprocess.run(["patch", "-p0", "-s"], input=r.stdout, cwd=root, check=True, capture_output=True)
    after = (FIXTURES / "KV304" / "fix-safe-spec-32k.after.yaml").read_bytes()
    assert sorted(os.listdir(root)) == sorted(names)
    for n in names:
        with open(os.path.join(root, n), "rb") as fh:
            assert fh.read() == after
