"""Loading: positions of values (not document starts), YAML 1.1 values, and located problems."""

import pytest
from conftest import cpu_seconds

from kvlint.load import load_bytes
from kvlint.load.tree import Mapping, Scalar


def load(text: str | bytes, **kw):
    data = text.encode("utf-8") if isinstance(text, str) else text
    return load_bytes(data, "f.yaml", **kw)


def test_positions_are_stream_absolute_across_documents():
    f = load("a: 1\n---\nkind: Deployment\nspec:\n  replicas: 3\n")
    assert len(f.documents) == 2
    doc = f.documents[1].root
    node = doc.at("spec", "replicas")
    where = node.where("f.yaml")
    assert (where.line, where.column, where.end_column) == (5, 13, 14)


def test_yaml_11_values_as_kubernetes_reads_them():
    f = load("a: yes\nb: off\nc: 017\nd: 0x1F\ne: ~\nf: '8192'\ng: 1.5\nh: 12:30\n")
    root = f.documents[0].root
    values = {k: v.value for k, v in root.items()}
    assert values == {"a": True, "b": False, "c": 15, "d": 31, "e": None, "f": "8192", "g": 1.5, "h": 750}


def test_merge_keys_apply_and_explicit_keys_win():
    f = load("base: &b {x: 1, y: 2}\nuse:\n  <<: *b\n  y: 3\n")
    use = f.documents[0].root.at("use")
    assert isinstance(use, Mapping)
    assert use.value("x") == 1 and use.value("y") == 3
    assert use.scalar("x").line == 0  # the merged value keeps its own position (in the anchor)


def test_duplicate_keys_are_located_errors():
    f = load("spec:\n  replicas: 1\n  replicas: 2\n")
    assert [(i.code, i.where.line, i.where.column) for i in f.issues] == [("KV001", 3, 3)]
    assert "duplicate key 'replicas' (first at line 2)" in f.issues[0].message


def test_syntax_error_is_located_not_raised():
    f = load("a: [1, 2\nb: 3\n")
    assert len(f.issues) == 1
    issue = f.issues[0]
    assert issue.code == "KV001" and issue.where.line == 2
    assert "YAML syntax error" in issue.message


def test_tabs_get_a_hint():
    f = load("a:\n\tb: 1\n")
    assert f.issues[0].where.line == 2
    assert "tab" in (f.issues[0].fix or "")


def test_merge_conflict_markers():
    f = load("a: 1\n<<<<<<< HEAD\nb: 2\n=======\nb: 3\n>>>>>>> branch\n")
    assert [(i.code, i.where.line) for i in f.issues] == [("KV001", 2)]
    assert "merge-conflict" in f.issues[0].message


def test_binary_and_non_utf8():
    assert "binary" in load(b"\x00\x01\x02abc").issues[0].message
    bad = load(b"a: 1\nb: caf\xe9\n")
    assert bad.issues[0].where.line == 2 and "not UTF-8" in bad.issues[0].message


def test_utf16_with_bom_is_read():
    f = load("a: 1\n".encode("utf-16"))
    assert not f.issues and f.documents[0].root.value("a") == 1


def test_size_cap():
    f = load("a: 1\n" * 1000, max_bytes=100)
    assert f.issues and "over the 100-byte limit" in f.issues[0].message and not f.documents


def test_empty_and_comment_only_files():
    for text in ("", "# nothing\n", "---\n---\n"):
        f = load(text)
        assert not f.issues
        assert all(d.root is None for d in f.documents)


def test_alias_bomb_is_bounded():
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 10):
        prev = f"*a{i - 1}"
        lines.append(f"a{i}: &a{i} [{', '.join([prev] * 10)}]")
    start = cpu_seconds()
    f = load("\n".join(lines) + "\n")
    assert cpu_seconds() - start < 2
    assert any("alias bomb" in i.message for i in f.issues)


def test_deep_nesting_is_a_finding():
    f = load("a: " + "[" * 5000 + "]" * 5000 + "\n")
    assert f.issues and f.issues[0].code == "KV001"


def test_scalar_keeps_raw_text_and_quoting():
    f = load('a: "1e3"\nb: 32k\n')
    a, b = f.documents[0].root.scalar("a"), f.documents[0].root.scalar("b")
    assert isinstance(a, Scalar) and a.quoted and a.value == "1e3"
    assert b.value == "32k" and not b.quoted


def test_directives_are_read_from_raw_lines():
    f = load("a: 1  # kvlint: disable=KV103 -- reason\n# kvlint: disable-file=KV102\n")
    kinds = [(d.kind, d.rules, d.covers_line) for d in f.directives]
    assert kinds == [("line", ("KV103",), 1), ("file", ("KV102",), 0)]
    assert f.directives[0].reason == "reason"


def test_helm_template_detected_but_jinja_chat_templates_are_not():
    assert load("metadata:\n  name: {{ .Release.Name }}\n").source.helm_template.line == 2
    jinja = load("chat: |\n  {{- bos_token }}\n  {%- if x %}\n")
    assert jinja.source.helm_template is None and not jinja.issues
    comment = load("# replicas: {{ .Values.replicas }}\na: 1\n")
    assert comment.source.helm_template is None


SCALARS_11 = [
    "yes",
    "No",
    "on",
    "OFF",
    "y",
    "n",
    "true",
    "False",
    "~",
    "null",
    "",
    "0",
    "-17",
    "0x1F",
    "0o17",
    "017",
    "0b101",
    "1_000",
    "190:20:30",
    "1.5",
    "-.5e3",
    "1e3",
    ".inf",
    "-.Inf",
    ".nan",
    "2024-01-31",
    "2024-01-31T10:00:00Z",
    "8Gi",
    "32k",
    "=",
    "<<",
    "hello",
    "1.0.2",
    "3.14.",
    "+12",
]


@pytest.mark.parametrize("text", SCALARS_11)
def test_rebuilt_yaml11_resolver_agrees_with_ruamels_own(text):
    """load/compose.py rebuilds ruamel.yaml's YAML 1.1 resolver from its internals
    (resolver.implicit_resolvers) for speed, and kvlint's tree builder resolves each untagged
    scalar with it. pyproject pins the ruamel.yaml range this was checked against; this test fails
    if a release changes those internals' meaning."""
    from ruamel.yaml.nodes import ScalarNode
    from ruamel.yaml.resolver import VersionedResolver

    from kvlint.load.compose import _scalar_resolver

    ours = _scalar_resolver()
    stock = VersionedResolver(version=(1, 1))
    for implicit in ((True, False), (False, True)):
        assert ours(text, implicit) == str(stock.resolve(ScalarNode, text, implicit))


def test_ruamel_release_is_in_the_pinned_range():
    import re
    from importlib.metadata import version

    from conftest import ROOT

    deps = (ROOT / "pyproject.toml").read_text()
    pin = re.search(r'"ruamel\.yaml>=([\d.]+),<([\d.]+)"', deps)
    assert pin, "pyproject pins ruamel.yaml to a tested range"
    low, high = (tuple(int(x) for x in v.split(".")) for v in pin.groups())
    installed = tuple(int(p) for p in version("ruamel.yaml").split(".")[:2])
    assert low <= installed < high


def test_second_look_of_the_pure_parser_is_kept_and_bounded(monkeypatch):
    """libyaml refuses a few things the pure-Python parser (and Kubernetes) read: a `\\ud800`
    escape, `{H100:1}` in a flow mapping. Those small files still read; a big file with a syntax
    error at its end keeps libyaml's error, and the pure parser's second look stops after
    SECOND_LOOK_EVENTS events whatever the file's size. The bound is counted in events, not timed:
    its cost in seconds is benchmarks/hostile.py's to measure."""
    import importlib

    compose = importlib.import_module("kvlint.load.compose")
    f = load('name: "x\\ud800"\ngpus: {H100:1}\n')
    assert not f.issues, f.issues
    root = f.documents[0].root
    assert root.get("name").value == "x\ud800" and "H100:1" in root.get("gpus")

    pulled: list[int] = []
    budgeted = compose._budgeted

    def counted(events, budget):
        pulled.append(0)
        for ev in budgeted(events, budget):
            pulled[-1] += 1
            yield ev

    monkeypatch.setattr(compose, "_budgeted", counted)
    seen = []
    for items in (compose.SECOND_LOOK_EVENTS // 4, compose.SECOND_LOOK_EVENTS * 2):
        pulled.clear()
        big = ("[" + "1, " * items + '"\\ud800"\n').encode()
        f = load_bytes(big, "big.yaml")
        assert [i.message[:18] for i in f.issues] == ["YAML syntax error:"], f.issues
        assert len(pulled) == 1 and pulled[0] <= compose.SECOND_LOOK_EVENTS, pulled
        seen.append(pulled[0])
    # the small file was read to its end by the second look; the big one was cut at the bound
    assert compose.SECOND_LOOK_EVENTS // 4 < seen[0] < compose.SECOND_LOOK_EVENTS == seen[1], seen
