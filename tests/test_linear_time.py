"""Every parser of input text runs in linear time on adversarial input: suppression comments,
sizes and counts, gitignore/exclude wildmatch, shell words (block and one-line scripts),
suppression matching, engine flag parsing (unknown, abbreviated and `=`-joined options of vLLM,
SGLang and TGI), `$(VAR)` / `${VAR}` / `$((…))` expansion, the YAML reader (composition from
parser events, duplicate keys, aliases), the mapping onto physical lines, and the source excerpt
under a finding in the text report. Each is timed at size n and 8n on the strings that made the old code
backtrack; linear growth gives a ratio near 8, quadratic near 64. CPU time of this process (not
wall-clock), the best of several runs, with the garbage collector paused, so a loaded 2-core
machine does not make the ratio noisy."""

from __future__ import annotations

import contextlib
import gc
import time
from collections.abc import Callable

import pytest

# Timed at n and 8n, best of five runs each: ~25 s on 2 cores, so under the `slow` marker (.ci/run runs
# it with `pytest -m slow`); a single timing has no quick version that still tells 8 from 64.
pytestmark = pytest.mark.slow

FACTOR = 8
LIMIT = 24  # linear ~8, quadratic ~64: a wide margin either way


def _cpu(fn: Callable[[], object], repeat: int = 5) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        try:
            start = time.process_time()
            fn()
            best = min(best, time.process_time() - start)
        finally:
            gc.enable()
    return best


def assert_linear(make: Callable[[int], Callable[[], object]], n: int) -> None:
    small, large = make(n), make(n * FACTOR)
    small()  # warm caches and imports
    t_small = max(_cpu(small), 1e-4)
    t_large = _cpu(large)
    assert t_large / t_small < LIMIT, (t_small, t_large)


def _directive_line(n: int):
    from kvlint.load.directives import read_directives

    lines = [f"max_context: 4096  # kvlint: disable={' ' * n}!", "# kvlint: disable=" + "\t" * n + "x"]
    return lambda: read_directives(lines, "f")


def _many_hashes(n: int):
    from kvlint.load.directives import read_directives

    lines = ["a: 1 " + "#   " * n + " kvlint"]
    return lambda: read_directives(lines, "f")


def _size(n: int):
    from kvlint.units import parse_size

    def go():
        for text in ("1" + " " * n + "!", "1" * n + "!", "1." + "1" * n + "e", " " * n + "1GiB" + " " * n):
            with contextlib.suppress(ValueError):
                parse_size(text)

    return go


def _count(n: int):
    from kvlint.units import parse_count

    def go():
        for text in ("1" * min(n, 4000) + "K!", " " * n + "32k" + " " * n + "!"):
            with contextlib.suppress(ValueError):
                parse_count(text)

    return go


def _glob(n: int):
    from kvlint.wildmatch import compile_pattern

    star = compile_pattern("*a*a*a*a*a*a*a*a*a*a*b")
    deep = compile_pattern("/".join(["**"] * 14) + "/x")
    name = "a" * n
    path = "/".join(["d"] * (n // 8))
    return lambda: (star.matches(name, False), deep.matches(path, False))


def _script(n: int):
    """A shell script whose words are never found verbatim (`e "a"b` is the word `ab`)."""
    from conftest import lint

    script = "\n".join(['          e "a"b e "a"b e "a"b' for _ in range(n)])
    text = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n    - name: c\n"
        "      image: vllm/vllm-openai:v0.10.1\n      command: [sh, -c]\n      args:\n        - |\n"
        f"{script}\n"
    )
    return lambda: lint(text)


def _one_line_script(n: int):
    from conftest import lint

    words = ' e "a"b' * n
    text = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n    - name: c\n"
        f"      image: vllm/vllm-openai:v0.10.1\n      command: [sh, -c, 'vllm serve x{words}']\n"
    )
    return lambda: lint(text)


def _suppression_matching(n: int):
    from kvlint.findings import Finding, Location, Severity
    from kvlint.load import LoadedFile
    from kvlint.load.directives import Directive
    from kvlint.load.source import SourceText
    from kvlint.run import suppress
    from kvlint.run.settings import Settings

    findings = [Finding("KV103", "x", Severity.WARNING, "m", Location("f", i, 1)) for i in range(1, n + 1)]
    directives = [Directive("line", ("KV102",), "", Location("f", i, 5), i) for i in range(1, 4 * n + 1)]
    loaded = LoadedFile(SourceText("f", ""), directives=directives)
    return lambda: suppress.apply(list(findings), [None] * n, [], loaded, Settings())


def _engine_flags(n: int):
    from kvlint import engines
    from kvlint.extract.pod.argv import Token
    from kvlint.findings import Location

    words = ["--max-model-le", "4096", "--gpu-memory-util=0.9", "--tp", "2", "--x-unknown=1", "--enable-pre"]
    tokens = [Token(w, Location("f", 1 + i, 1)) for i in range(n) for w in words]
    tables = [engines.get(e).options() for e in engines.names()]
    return lambda: [t.parse(tokens) for t in tables]


def _expansion(n: int):
    from kvlint.extract.pod.argv import EnvVar, expand

    env = {"A": EnvVar("x" * 8, None), "B": EnvVar("$(A)", None), "N": EnvVar("7", None)}
    texts = ["$(A)" * n, "$(" * n, "$$(A)" * n, "${A" * n, "$((N * N + " * n + "1", "$(B)$(" * n]

    def go():
        for t in texts:
            expand(t, env)
            expand(t, env, shell=True)

    return go


def _yaml_reader(n: int):
    from kvlint.load import load_bytes

    dups = ("a: 1\n" * n).encode()
    aliases = ("x: &x [1, 2]\n" + "".join(f"k{i}: *x\n" for i in range(n))).encode()
    flow = ("[" + "{a: 1, b: [x, y]}, " * n + "]\n").encode()
    return lambda: [load_bytes(d, "f.yaml") for d in (dups, aliases, flow)]


def _physical_lines(n: int):
    from kvlint.findings import Location
    from kvlint.load.physical import Physical

    text = ('a: "x\u2028y\x85"\n' * n) + "b: \u2029" * n
    spots = [Location("f", i, 2, i, 3) for i in range(1, 3 * n, 3)]

    def go():
        phys = Physical(text)
        return [phys.where(w) for w in spots]

    return go


def _excerpt(n: int):
    from kvlint.findings import Finding, Location, Severity
    from kvlint.report import render
    from kvlint.run.lint import FileResult, RunResult
    from kvlint.run.settings import Settings

    line = "max_context: " + "\u202e\t\x1b[2J" * n + "131072"
    findings = [
        Finding("KV102", "x", Severity.ERROR, "m", Location("f", 1, 14 + k, 1, 20 + k)) for k in range(20)
    ]
    run = RunResult(files=[FileResult("f", findings=findings, lines={1: line})])
    return lambda: render("text", run, Settings())


CASES = {
    "suppression comment, long blanks (F2)": (_directive_line, 20_000),
    "suppression comment, many hashes": (_many_hashes, 20_000),
    "size, trailing blanks and junk (F13)": (_size, 20_000),
    "count (vLLM human_readable_int)": (_count, 20_000),
    "gitignore / exclude wildmatch (F3)": (_glob, 2_000),
    "shell words in a block script (F11)": (_script, 300),
    "shell words on one line": (_one_line_script, 300),
    "suppression matching (F14)": (_suppression_matching, 1_000),
    "engine flag parsing (vLLM, SGLang, TGI)": (_engine_flags, 400),
    "$(VAR) / ${VAR} / $((...)) expansion (F6)": (_expansion, 2_000),
    "YAML reader: duplicate keys, aliases, flow collections": (_yaml_reader, 2_000),
    "physical lines after NEL/LS/PS": (_physical_lines, 2_000),
    "source excerpt under findings (text report)": (_excerpt, 2_000),
}


@pytest.mark.parametrize("name", list(CASES))
def test_parser_time_grows_linearly(name):
    make, n = CASES[name]
    assert_linear(make, n)
