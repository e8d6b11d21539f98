"""Fuzzing the fix engine (security review 3, classes D and E): whatever way the YAML writes the
arguments, a fix that kvlint applies means what it says, and a write never leaves the tree.

Targets:
- `test_edit_placement`: a container's command line in every writing kvlint meets (flow sequences
  on one or several lines, block sequences, `sh -c` strings in double / single quotes or literal
  and folded block scalars, plain / quoted / escaped / anchored / aliased / tagged items, comments
  after values, CRLF, a BOM). kvlint's own extractor locates the value, the fix engine places an
  edit (replace the `--max-num-seqs` value, or add `--max-model-len N` after the last argument) or
  refuses it. When it places one: the edited text parses (ruamel.yaml's own loader, not kvlint's),
  the command line decodes to exactly the intended words (through ruamel and shlex, and through
  kvlint's reader), and nothing else in the document changed.
- `test_fix_rounds`: whole-pipeline `fix_bytes` on mutated fix fixtures: the fixed file parses,
  re-linting shows no new reading finding (KV001-KV005, KV007), every fix kvlint says it applied
  is gone, and each `--flag value` a fix names is what the engine would read (last occurrence wins).
- `test_writes_stay_in_the_tree`: the file to fix is regular, a link inside, a link out, hard
  linked, or swapped for a link to outside mid-run: nothing outside the tree is written, and the
  file is either the old text or the new one, never a mix.

The default run is small (a few seconds). The campaign (>= 100,000 cases in all):
    KVLINT_FUZZ=campaign KVLINT_FUZZ_EXAMPLES=96000 python -m pytest tests/test_fuzz_fix.py -k placement
    KVLINT_FUZZ=campaign KVLINT_FUZZ_EXAMPLES=1500 python -m pytest tests/test_fuzz_fix.py -k rounds
    KVLINT_FUZZ=campaign KVLINT_FUZZ_EXAMPLES=6000 python -m pytest tests/test_fuzz_fix.py -k 'writes or placement'
(`writes` stops when hypothesis has tried every combination, 630.)
"""

from __future__ import annotations

import io
import os
import re
import shlex
import stat
from collections import Counter

from conftest import FIXTURES
from hypothesis import HealthCheck, assume, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from kvlint.extract.pod.argv import container_commands, read_env
from kvlint.findings import Applicability, Edit, Fix
from kvlint.fix import files
from kvlint.fix.apply import apply_fixes, fix_bytes
from kvlint.fix.materialize import SourceLines, materialize_fix
from kvlint.fix.verify import READING
from kvlint.load import load_bytes
from kvlint.run.lint import file_linter, lint_text
from kvlint.run.settings import Settings

SEEN: Counter[str] = Counter()  # what the placement target did: placed or refused, by layout
# the default suite runs a few cases of the slow targets (each case of `test_fix_rounds` lints up to
# 12 times); the campaign profile sets its own count
CAMPAIGN = os.environ.get("KVLINT_FUZZ") == "campaign"


def _quick(examples: int) -> dict:
    return {} if CAMPAIGN else {"max_examples": examples}


def _yaml():
    y = YAML(typ="safe")  # the C loader (libyaml): the constructor, not kvlint's builder, decodes
    y.version = (1, 1)
    return y


# --- the command line, written every way ------------------------------------------------------

_WORDS = ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"]
_FLAGS = [["--max-num-seqs", "4"], ["--enforce-eager"], ["--port", "8000"], ["--dtype", "half"]]


@st.composite
def argv(draw) -> list[str]:
    """An engine command line with `--max-num-seqs 4` (or `=4`) somewhere in it."""
    flags = draw(st.permutations(_FLAGS))[: draw(st.integers(1, len(_FLAGS)))]
    if ["--max-num-seqs", "4"] not in flags:
        flags = [["--max-num-seqs", "4"], *flags]
    words = list(_WORDS)
    for f in flags:
        if len(f) == 2 and draw(st.booleans()) and draw(st.booleans()):
            words.append(f"{f[0]}={f[1]}")
        else:
            words += f
    return words


def _escape(word: str, draw) -> str:
    """The word in double quotes, some characters written as escapes."""
    out = []
    for ch in word:
        kind = draw(st.sampled_from(["", "", "", "", "x", "u"]))
        out.append(f"\\x{ord(ch):02X}" if kind == "x" else f"\\u{ord(ch):04X}" if kind == "u" else ch)
    return '"' + "".join(out) + '"'


@st.composite
def item(draw, word: str, anchors: dict[str, str]) -> str:
    """One YAML scalar for `word`: plain, quoted, escaped, tagged, anchored, or an alias of an anchor."""
    if word in anchors and draw(st.booleans()):
        return "*" + anchors[word]
    style = draw(st.sampled_from(["plain", "double", "single", "escaped", "tagged", "anchored"]))
    plain_ok = re.fullmatch(r"[A-Za-z/-][\w./=-]*", word) is not None and not re.fullmatch(
        r"(?i)y|n|yes|no|on|off|true|false|null", word
    )
    if style == "plain" and plain_ok:
        return word
    if style == "single":
        return "'" + word.replace("'", "''") + "'"
    if style == "escaped":
        return _escape(word, draw)
    text = '"' + word + '"'
    if style == "tagged":
        return "!!str " + text
    if style == "anchored":
        name = f"a{len(anchors)}"
        anchors[word] = name
        return f"&{name} {text}"
    return text


def _comment(draw) -> str:
    return draw(st.sampled_from(["", "", "  # note", " # a: b, [c]", "\t# tab"]))


@st.composite
def container(draw) -> tuple[str, list[str], bool]:
    """(the YAML of a container's command/args, its argv, whether it is an `sh -c` script)."""
    words = draw(argv())
    indent = " " * 10
    layout = draw(
        st.sampled_from(["flow", "flow-lines", "block", "sh-double", "sh-single", "sh-literal", "sh-folded"])
    )
    if layout.startswith("sh-"):
        tail = draw(st.sampled_from(["", "", " # tail", "; echo done", " && true", " &", " | cat"]))
        script = " ".join(words) + tail
        if layout == "sh-double":
            body = f'command: ["sh", "-c", "{script}"]{_comment(draw)}'
        elif layout == "sh-single":
            body = f"command: ['sh', '-c', '{script}']{_comment(draw)}"
        else:
            mark = "|" if layout == "sh-literal" else ">"
            body = f"command:\n{indent}  - sh\n{indent}  - -c\n{indent}  - {mark}\n{indent}    {script}"
        return body, ["sh", "-c", script], True
    anchors: dict[str, str] = {}
    items = [draw(item(w, anchors)) for w in words]
    if layout == "flow":
        return "args: [" + ", ".join(items) + "]" + _comment(draw), words, False
    if layout == "flow-lines":
        lines = [f"{indent}  {x}," + _comment(draw) for x in items]
        lines[-1] = lines[-1].split(",")[0] if "#" not in lines[-1] else lines[-1].replace(",", "", 1)
        return "args: [\n" + "\n".join(lines) + f"\n{indent}]", words, False
    return "args:\n" + "\n".join(f"{indent}  - {x}{_comment(draw)}" for x in items), words, False


def manifest(body: str) -> str:
    return (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: m\nspec:\n  template:\n    spec:\n"
        "      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.10.1\n"
        f"          {body}\n          env: [{{name: A, value: b}}]\n"
    )


# --- the oracles --------------------------------------------------------------------------------


def _decoded_argv(text: str, shell: bool) -> tuple[list[str], dict]:
    """The command line as the engine sees it: ruamel.yaml's loader, then shlex for a script."""
    doc = _yaml().load(io.StringIO(text))
    c = doc["spec"]["template"]["spec"]["containers"][0]
    words = [str(w) for w in (c.get("command") or [])] + [str(w) for w in (c.get("args") or [])]
    if shell:
        lexer = shlex.shlex(words[2].replace("\n", " "), posix=True, punctuation_chars=";&|")
        lexer.whitespace_split = True
        lexer.commenters = "#"
        return words[:2] + list(lexer), doc
    return words, doc


def _command_words(words: list[str], shell: bool) -> tuple[list[str], list[str]]:
    """(the engine command, what follows it: a separator and the rest of the script)."""
    if not shell:
        return words, []
    for i, w in enumerate(words):
        if i > 1 and set(w) <= set(";&|"):
            return words[:i], words[i:]
    return words, []


def _expected(words: list[str], op: str) -> list[str]:
    out = []
    for i, w in enumerate(words):
        if op == "replace" and w == "--max-num-seqs=4":
            w = "--max-num-seqs=7"
        elif op == "replace" and w == "4" and i > 0 and words[i - 1] == "--max-num-seqs":
            w = "7"
        out.append(w)
    return out


def _without_command(doc: dict) -> dict:
    c = dict(doc["spec"]["template"]["spec"]["containers"][0])
    c.pop("command", None)
    c.pop("args", None)
    return {**doc, "spec": {"template": {"spec": {"containers": [c]}}}}


@given(container(), st.sampled_from(["replace", "append"]), st.booleans(), st.booleans())
@hsettings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
def test_edit_placement(case, op, crlf, bom):
    body, _, shell = case
    text = manifest(body)
    if crlf:
        text = text.replace("\n", "\r\n")
    data = (b"\xef\xbb\xbf" if bom else b"") + text.encode()
    loaded = load_bytes(data, "f.yaml")
    assume(loaded.documents and not [i for i in loaded.issues if i.code == "KV001"])
    try:
        before, doc = _decoded_argv(loaded.source.text, shell)
    except Exception:  # noqa: BLE001 - a text the independent reader takes otherwise is not a case
        assume(False)
        raise
    root = loaded.documents[0].root
    c = root.at("spec", "template", "spec", "containers", 0)
    (tokens, *_) = container_commands(c, "f.yaml", loaded.source.lines, read_env(c, "f.yaml"))
    if op == "replace":
        at = next(i for i, t in enumerate(tokens) if t.text.startswith("--max-num-seqs"))
        tok = tokens[at] if "=" in tokens[at].text else tokens[at + 1]
        where = tok.where
        if "=" in tok.text and where is not None and where.end_column is not None:
            from kvlint.extract.pod.argv import split_flag

            where = split_flag(tok)[1].where
        edit = Edit(where, "7", reads="7")
    else:
        written = [t for t in tokens if t.where and not t.note]
        edit = Edit(written[-1].where, append=("--max-model-len", "1234"), reads="1234")
    assume(edit.where is not None)
    src = SourceLines(loaded.source.text)
    fix = materialize_fix(Fix("f", Applicability.SAFE, (edit,)), src)
    if not fix.edits:
        SEEN[f"refused {op} {body.split(':')[0]}"] += 1
        return
    new, applied = apply_fixes(loaded.source.text, [fix])
    assert applied
    SEEN[f"placed {op}"] += 1
    after, new_doc = _decoded_argv(new, shell)  # the edited text parses: ruamel raises otherwise
    command, rest = _command_words(before, shell)
    want = _expected(command, op)
    if op == "append":
        appended = after[len(command) : len(command) + 2]
        assert appended in (["--max-model-len", "1234"],) or after[len(command)] == "--max-model-len=1234", (
            new,
            after,
        )
        after = after[: len(command)] + after[len(command) + (1 if "=" in after[len(command)] else 2) :]
    assert after == want + rest, (text, new, after, want + rest)
    assert _without_command(new_doc) == _without_command(doc)  # nothing else changed
    reread = load_bytes(new.encode(), "f.yaml")  # and kvlint's own reader reads what the fix said
    c2 = reread.documents[0].root.at("spec", "template", "spec", "containers", 0)
    words = [t.text for t in container_commands(c2, "f.yaml", reread.source.lines, read_env(c2, "f.yaml"))[0]]
    if op == "replace":
        assert "7" in words or "--max-num-seqs=7" in words, words
    else:
        assert "1234" in words or "--max-model-len=1234" in words, words


# --- whole rounds on real fixture bodies --------------------------------------------------------

_PAIRS = sorted(p for p in FIXTURES.glob("KV*/fix-*.yaml") if not p.name.endswith(".after.yaml"))


def _respelled(inner: str, kind: str, at: int, n: int) -> str:
    """A double-quoted scalar written another way that reads the same (or, with an anchor or a
    tag, that kvlint must refuse to edit)."""
    if kind == "escape":
        return (
            '"' + inner[:at] + f"\\x{ord(inner[at]):02X}" + inner[at + 1 :] + '"'
            if ord(inner[at]) < 128
            else f'"{inner}"'
        )
    if kind == "anchor":
        return f'&z{n} "{inner}"'
    if kind == "tag":
        return f'!!str "{inner}"'
    if kind == "single" and "'" not in inner:
        return f"'{inner}'"
    return f'"{inner}"'


@st.composite
def mutated_fixture(draw) -> bytes:
    """A fix fixture with some quoted values respelled, comments after values, CRLF, a BOM."""
    text = draw(st.sampled_from(_PAIRS)).read_text()
    quoted = list(re.finditer(r'"([^"\\\n]{1,60})"', text))
    chosen = (
        draw(st.lists(st.sampled_from(quoted), max_size=3, unique_by=lambda m: m.start())) if quoted else []
    )
    for n, m in enumerate(sorted(chosen, key=lambda m: -m.start())):
        kind = draw(st.sampled_from(["escape", "anchor", "tag", "single"]))
        at = draw(st.integers(0, len(m.group(1)) - 1))
        text = text[: m.start()] + _respelled(m.group(1), kind, at, n) + text[m.end() :]
    if draw(st.booleans()):
        text = re.sub(r"(\d)\n", r"\1  # c\n", text, count=draw(st.integers(0, 3)))
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    return (b"\xef\xbb\xbf" if draw(st.booleans()) else b"") + text.encode()


def _last_values(data: bytes) -> list[str]:
    """Every word of every container command line (decoded), scripts split by shlex."""
    text = data.decode("utf-8-sig")
    out: list[str] = []
    for doc in _yaml().load_all(io.StringIO(text)):
        stack = [doc]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                for key, value in node.items():
                    if isinstance(value, list) and re.search(r"(?i)args|command", str(key)):
                        for w in value:
                            out += shlex.split(str(w), comments=True) if " " in str(w) else [str(w)]
                stack += list(node.values())
            elif isinstance(node, list):
                stack += node
    return out


@given(mutated_fixture())
@hsettings(**_quick(4), suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
def test_fix_rounds(data):
    s = Settings()
    first = lint_text(data, "fuzz.yaml", s)
    assume(not any(f.rule == "KV001" for f in first.findings))
    new, outcome = fix_bytes(data, "fuzz.yaml", file_linter(s, "fuzz.yaml"), unsafe=True)
    if not outcome.changed:
        return
    after = lint_text(new, "fuzz.yaml", s)
    old, now = Counter(f.rule for f in first.findings), Counter(f.rule for f in after.findings)
    assert not [r for r in READING if now[r] > old[r]], [
        f.message for f in after.findings if f.rule in READING
    ]
    still = {(f.rule, x.message) for f in after.findings for x in f.fixes if x.edits}
    applied = [(a.rule, a.message) for a in outcome.applied]
    offered = Counter((f.rule, x.message) for f in first.findings for x in f.fixes if x.edits)
    # each fix once (S22): no more often than findings offered it (two unused suppressions: two deletions)
    assert all(n <= max(offered[k], 1) for k, n in Counter(applied).items()), applied
    assert not [a for a in applied if a in still and len(first.deployments) == 1], applied
    words = _last_values(new)
    for _, message in applied:
        m = re.fullmatch(r"(?:set|lower \S+ to|raise \S+ to) ?(--[\w-]+) (\S+)", message.split(" (")[0])
        m = m or re.fullmatch(r"(?:set|lower|raise) (--[\w-]+)(?: to)? (\S+)", message.split(" (")[0])
        if not m or len(first.deployments) != 1:
            continue
        flag, value = m.groups()
        last = [i for i, w in enumerate(words) if w == flag or w.startswith(flag + "=")]
        if not last:
            continue  # the setting is a key of kvlint's spec or a chart's values, not a flag
        w = words[last[-1]]
        assert (w.split("=", 1)[1] if "=" in w else words[last[-1] + 1]) == value, (message, words)


# --- writes -------------------------------------------------------------------------------------


_SAFE = sorted(p for p in _PAIRS if p.name.startswith("fix-safe-"))


@given(
    st.sampled_from(["regular", "link-in", "link-out", "hard-link", "swap-out", "swap-edit", "swap-dir"]),
    st.sampled_from(_SAFE),
    st.sampled_from([0o644, 0o600, 0o640, 0o664, 0o755]),
    st.booleans(),
)
@hsettings(**_quick(10), suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
def test_writes_stay_in_the_tree(tmp_path_factory, kind, fixture, mode, absolute):
    base = tmp_path_factory.mktemp("w")
    repo, outside = base / "repo", base / "outside"
    (repo / "sub").mkdir(parents=True)
    outside.mkdir()
    before = fixture.read_bytes()
    (outside / "d.yaml").write_bytes(before)
    (repo / "real.yaml").write_bytes(before)
    work = repo / "sub" / "d.yaml"
    if kind == "link-in":
        os.symlink("../real.yaml", work)
    elif kind == "link-out":
        os.symlink(outside / "d.yaml", work)
    else:
        work.write_bytes(before)
        os.chmod(work, mode)
    if kind == "hard-link":
        os.link(work, repo / "other.yaml")
    real = files.fix_bytes

    def racing(*args, **kwargs):
        out = real(*args, **kwargs)
        if kind == "swap-out":
            work.unlink()
            os.symlink(outside / "d.yaml", work)
        elif kind == "swap-edit":
            work.write_bytes(before + b"# edited\n")
        elif kind == "swap-dir":  # the directory itself swapped for a link out, between read and write
            os.rename(repo / "sub", repo / "old-sub")
            os.symlink(outside, repo / "sub")
        return out

    files.fix_bytes = racing
    cwd = os.getcwd()
    try:
        os.chdir(repo)
        s = Settings()
        path = str(work) if absolute else "sub/d.yaml"
        run = files.fix_files(
            [(path, "sub/d.yaml")], lambda p, d: file_linter(s, d, p), s.max_file_size, False, True
        )
    finally:
        os.chdir(cwd)
        files.fix_bytes = real
    assert (outside / "d.yaml").read_bytes() == before  # nothing outside the tree is written
    assert (repo / "real.yaml").read_bytes() == before  # nor through a link
    kept = repo / ("old-sub" if kind == "swap-dir" else "sub") / "d.yaml"
    if kind == "regular":
        assert run.changed_files == 1 and not run.errors, run.errors
        assert stat.S_IMODE(os.stat(kept).st_mode) == mode  # the mode bits kept
        reading = [
            Counter(f.rule for f in lint_text(b, "d.yaml", s).findings if f.rule in READING)
            for b in (before, kept.read_bytes())
        ]
        assert not reading[1] - reading[0], reading  # no new reading finding
    else:
        assert run.changed_files == 0 and not run.applied
        if not os.path.islink(kept):
            assert kept.read_bytes() in (before, before + b"# edited\n")  # the old text, never a mix
    leftovers = [p.name for d in (repo, repo / "sub", outside) for p in d.iterdir() if p.name.startswith(".")]
    assert leftovers == []  # no temporary file left
