"""`kvlint upgrade`: each deployment walked over the releases kvlint has read, its verdict under each the
one `kvlint check` gives under that release (the invariant across fixtures x releases), the first release
that changes it for vLLM, SGLang and TGI, the release-table rows it cites, and the report pinned."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import FIXTURES, ROOT

from kvlint import engines
from kvlint.cli import main
from kvlint.engines import facts
from kvlint.entry import COMMANDS
from kvlint.run.discover import SUFFIXES
from kvlint.run.flags import build_settings
from kvlint.run.lint import lint_text
from kvlint.upgrade import releases
from kvlint.upgrade.deployments import walk_file
from kvlint.upgrade.rows import changed
from kvlint.upgrade.walk import lint_at, state

DATA = ROOT / "tests" / "data" / "upgrade"
VLLM = DATA / "vllm-cuda-graphs.yaml"  # hand-written: fits at 0.11.0, CUDA graphs from 0.20.0 do not
SGLANG = FIXTURES / "KV103" / "bad-sglang-l4-64-requests.yaml"  # SGLang v0.4.6.post1
TGI = FIXTURES / "KV102" / "good-tgi-8b-l4-8k.yaml"  # TGI 3.0.1
LLAMACPP = FIXTURES / "KV102" / "good-llamacpp-8b-l4.yaml"  # llama.cpp build b6500
LMDEPLOY = FIXTURES / "KV102" / "good-lmdeploy-8b-l4-16k.yaml"  # LMDeploy v0.7.3
TRTLLM = FIXTURES / "KV102" / "good-trtllm-8b-l4-16k.yaml"  # TensorRT-LLM 1.0.0
OLDEST_START = "0.10.1"  # --engine-version for the workloads no image pins, so they walk too
UPDATE = bool(os.environ.get("KVLINT_UPDATE_SNAPSHOTS"))


def _settings(**opts):
    settings, error = build_settings({"isolated": True, **opts})
    assert settings is not None, error
    return settings


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _first_change(walk):
    prev = walk.first
    for step in walk.steps:
        if step.state.verdict != prev.verdict:
            return prev, step
        prev = step.state
    return None


# --- the invariant: the walk's verdict at R is `kvlint check`'s under R ------------------------------


def _bumped(text: str, old: str, new: str) -> str:
    """The file with release `old` (as its image tag or spec states it, `v` or not) replaced by `new`."""
    return re.sub(rf"(?<![\w.])(v?){re.escape(old)}(?![\w]|\.\d|\.post)", rf"\g<1>{new}", text)


def _checked(path: Path, display: str, engine: str, release: str, starts) -> list[tuple | None]:
    """`kvlint check` under `release` for the file's `engine` workloads: `--engine-version R` where no
    image pins a release, the file with its pinned release bumped to R where one does (None for a
    workload whose release is pinned in another file: a runtime beside it)."""
    text = path.read_text(encoding="utf-8")
    pinned = {s.release for e, s in starts if e == engine and s.how != "--engine-version"}
    for old in pinned:
        text = _bumped(text, old, release)
    result = lint_text(text.encode(), display, _settings(engine_version=release), str(path.parent), str(path))
    out: list[tuple | None] = []
    for i, r in enumerate(result.deployments):
        version = r.in_force.engine_version
        out.append(
            _summary(state(result, i, release)) if version is not None and version.value == release else None
        )
    return out


def _summary(s) -> tuple:
    return s.worst, s.codes, s.kv_tokens


FIXTURE_FILES = sorted(p for p in FIXTURES.rglob("*") if p.is_file() and p.suffix in SUFFIXES)


def _compare(paths, pick) -> tuple[int, set[str]]:
    """For each file, each release `pick(engine, start)` names: the state `kvlint upgrade` takes under it
    (walk.lint_at, the run its walk makes) is `kvlint check`'s."""
    settings = _settings(engine_version=OLDEST_START)
    compared, engines_seen = 0, set()
    for path in paths:
        display = _rel(path)
        base = lint_at(str(path), display, settings, None, None)
        if isinstance(base, str):
            continue
        starts = [
            (r.in_force.engine_name if r.in_force.engine else "", _start(r, settings))
            for r in base.deployments
        ]
        for engine in {e for e, _ in starts if releases.has_table(e)}:
            wanted = {x for e, st in starts if e == engine for x in pick(engine, st)}
            for release in wanted:
                checked = _checked(path, display, engine, release, starts)
                walked = lint_at(str(path), display, settings, engine, release)
                for i, (e, st) in enumerate(starts):
                    if e == engine and release in pick(engine, st) and checked[i] is not None:
                        assert _summary(state(walked, i, release)) == checked[i], (display, i, release)
                        compared += 1
                        engines_seen.add(engine)
    return compared, engines_seen


def _start(r, settings):
    stated = r.deployment.engine_version
    return releases.start(
        r.in_force.engine_name,
        str(stated.value) if stated else None,
        stated.note if stated else "",
        settings.defaults.engine_version,
    )


# the engines with releases to walk (NVIDIA NIM keeps none: its tag is NIM's release, not its backend's)
WALKED = {e for e in engines.names() if releases.has_table(e)}


def test_walked_releases_give_checks_verdict_on_the_engine_examples():
    """The engine examples, every release their walks read."""
    compared, seen = _compare(
        [VLLM, SGLANG, TGI, LLAMACPP, LMDEPLOY, TRTLLM], lambda e, st: releases.later(e, st.release, None)
    )
    assert seen == WALKED and compared >= 30


def test_the_newest_release_gives_checks_verdict_on_every_fixture():
    """Every fixture with a workload of a modelled engine, under the newest release its walk reads (the
    slow test below takes every release)."""
    compared, seen = _compare(FIXTURE_FILES, lambda e, st: releases.later(e, st.release, None)[-1:])
    assert seen == WALKED and compared > 100


@pytest.mark.slow
def test_every_walked_release_gives_checks_verdict_on_every_fixture():
    """Every fixture x every release its walk reads (a run of minutes: under the slow marker)."""
    compared, seen = _compare(FIXTURE_FILES, lambda e, st: releases.later(e, st.release, None))
    assert seen == WALKED and compared > 1000


def test_the_walk_reports_the_states_its_runs_give():
    """walk_file's states are walk.lint_at's, release by release (what the tests above compare)."""
    settings = _settings()
    [w] = walk_file(str(VLLM), _rel(VLLM), settings, None).walks
    for release, got in zip(w.walked, w.states, strict=True):
        assert got == state(lint_at(str(VLLM), _rel(VLLM), settings, "vllm", release), 0, release)


# --- the first release that changes the verdict, per engine ------------------------------------------


def test_vllm_cuda_graph_memory_turns_a_fitting_deployment_into_kv102():
    [w] = walk_file(str(VLLM), _rel(VLLM), _settings(), None).walks
    assert (w.start.release, w.first.worst) == ("0.11.0", None)
    before, step = _first_change(w)
    assert step.state.release == "0.20.0" and step.state.codes == ("KV102",) and w.breaks
    rows = {r.key: r for r in step.rows}
    assert step.before == "0.19.1"  # the release read before: what 0.20.0 itself brings is two rows
    assert {r.key for r in step.rows_here} == {"gpu_memory_utilization", "cudagraph_memory"}
    assert rows["cudagraph_memory"].after == "estimated"
    assert rows["cudagraph_memory"].source.startswith("vllm==0.20.0:vllm/envs.py:1724")
    assert ("CUDA graphs" in dict(step.state.terms)) and ("CUDA graphs" not in dict(before.terms))
    # kvlint check agrees: the image bumped to the release before passes, to 0.20.0 fails
    text = VLLM.read_text(encoding="utf-8")
    for release, codes in (("0.18.0", ()), ("0.20.0", ("KV102",))):
        result = lint_text(_bumped(text, "0.11.0", release).encode(), "f.yaml", _settings())
        assert result.deployments[0].in_force.engine_version.value == release
        assert state(result, 0, release).codes == codes


def test_sglang_fixture_first_changes_at_0_5_20():
    [w] = walk_file(str(SGLANG), _rel(SGLANG), _settings(), None).walks
    assert w.start.release == "0.4.6.post1" and w.first.codes == ("KV103",)
    _, step = _first_change(w)
    assert step.state.release == "0.5.20" and step.state.worst.label == "error" and w.breaks
    assert {"small_graph_bs", "small_chunked"} <= {r.key for r in step.rows}
    assert all(r.source.startswith("sglang==0.5.20:") for r in step.rows if r.since == "0.5.20")


def test_tgi_fixture_first_changes_at_3_1_with_the_wiggle_room():
    [w] = walk_file(str(TGI), _rel(TGI), _settings(), None).walks
    assert w.start.release == "3.0.1" and w.first.worst is None
    _, step = _first_change(w)
    assert step.state.release == "3.1.0" and step.state.codes == ("KV103",) and not w.breaks
    wiggle = {r.key: r for r in step.rows}["wiggle_room"]
    assert wiggle.source.startswith("huggingface/text-generation-inference@v3.1.0:")


def test_a_workload_no_release_names_starts_at_kvlints_assumption_and_says_so():
    path = FIXTURES / "KV102" / "good-llama-8b-l4-16k.yaml"
    walks = walk_file(str(path), _rel(path), _settings(), None).walks
    w = walks[0]
    assert w.start.assumed and w.start.release == releases.newest("vllm") and w.walked == ()
    assert "kvlint assumes vLLM" in w.start.how


OLLAMA = """apiVersion: apps/v1
kind: Deployment
metadata: {name: ollama}
spec:
  template:
    spec:
      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}
      containers:
        - name: ollama
          image: ollama/ollama:0.9.0
          resources: {limits: {nvidia.com/gpu: "1"}}
"""


def test_an_engine_with_two_release_lines_walks_the_workloads_own(tmp_path):
    """llama.cpp's engine reads builds (releases.json) and Ollama releases (ollama_releases.json): an
    Ollama image walks Ollama's releases, never builds."""
    path = tmp_path / "ollama.yaml"
    path.write_text(OLLAMA, encoding="utf-8")
    [w] = walk_file(str(path), "ollama.yaml", _settings(), None).walks
    ollama = releases.table_for("llamacpp", "0.9.0")
    assert ollama != releases.MAIN and releases.table_for("llamacpp", "b6500") == releases.MAIN
    assert w.start.release == "0.9.0" and w.walked == releases.later("llamacpp", "0.9.0", None)
    assert w.walked and all(r in releases.known("llamacpp", ollama) for r in w.walked)
    assert {r.key for r in changed("llamacpp", "0.9.0", w.walked[-1])} <= {
        r["key"] for r in facts.load("llamacpp", ollama)["rows"]
    }


def test_to_stops_the_walk():
    [w] = walk_file(str(VLLM), _rel(VLLM), _settings(), "0.18.0").walks
    assert w.walked[-1] == "0.18.0" and not w.steps and not w.breaks


def test_rows_are_those_whose_value_changes_between_the_two_releases():
    keys = {r.key for r in changed("vllm", "0.19.0", "0.20.0")}
    assert {"gpu_memory_utilization", "cudagraph_memory"} <= keys
    assert changed("vllm", "0.20.0", "0.20.0") == ()
    assert "read_at" not in {r.key for r in changed("sglang", "0.4.4", "0.5.23")}


def test_each_engine_walks_the_releases_its_tables_name():
    for name in engines.names():
        for table in releases.tables(name):
            known = releases.known(name, table)
            assert known[-1] == releases.newest(name, table)
            assert [releases.order(name, r) for r in known] == sorted(releases.order(name, r) for r in known)


def _between_rows(paths) -> int:
    """A TGI release between two of the table's releases plans each file's TGI workloads as the older
    one does (the same verdict and KV pool): the table names every release TGI's modelled accounting
    changes at. The number of (workload, release) pairs compared."""
    known = releases.known("tgi")
    settings = _settings()
    checked = 0
    for path in paths:
        base = lint_at(str(path), _rel(path), settings, None, None)
        mine = [
            i for i, r in enumerate(base.deployments) if r.in_force.engine and r.in_force.engine_name == "tgi"
        ]
        for a, b in zip(known, known[1:], strict=False) if mine else ():
            x, y, z = (releases.order("tgi", a) or (0, 0, 0))[:3]
            after = releases.order("tgi", b) or ()
            between = [
                t for t in (f"{x}.{y}.{z + 1}", f"{x}.{y + 1}.0") if (releases.order("tgi", t) or ()) < after
            ]
            older = lint_at(str(path), _rel(path), settings, "tgi", a) if between else None
            for t in between:
                other = lint_at(str(path), _rel(path), settings, "tgi", t)
                for i in mine:
                    assert _summary(state(older, i, a)) == _summary(state(other, i, t)), (_rel(path), a, t)
                    checked += 1
    return checked


def test_no_tgi_release_between_two_rows_plans_the_example_differently():
    assert _between_rows([TGI]) >= 10


@pytest.mark.slow
def test_no_tgi_release_between_two_rows_plans_a_fixture_differently():
    """Every fixture with a TGI workload (a run of a minute: under the slow marker)."""
    assert _between_rows(FIXTURE_FILES) > 100


def test_the_read_lists_are_read_whole():
    """Every release a table's `read` text or `read_at` rows list is walked (a form read_list does not
    know would drop releases silently)."""
    for name in ("vllm", "sglang"):
        doc = facts.load(name, "releases")
        listed = [*re.findall(r"\d+\.\d+\.\d+(?:\.post\d+)?", str(doc.get("read", "")))]
        listed += [
            t.lstrip("v") for r in doc["rows"] if r["key"] == "read_at" for t in str(r["value"]).split(", ")
        ]
        walked = {releases.order(name, t) for t in releases.known(name)}
        assert listed and all(releases.order(name, t) in walked for t in listed), name
    assert releases.read_list("0.5.0-0.5.3, every X.Y.0 from 0.8.0 to 0.10.0 (note), 0.8.2-0.8.3.post1") == [
        "0.8.0",
        "0.9.0",
        "0.10.0",
        "0.5.0",
        "0.5.1",
        "0.5.2",
        "0.5.3",
        "0.8.2",
        "0.8.3",
        "0.8.3.post1",
    ]


# --- the command ---------------------------------------------------------------------------------------


def _run(*args):
    return CliRunner().invoke(main, ["upgrade", "--isolated", *args])


def test_exit_1_when_a_later_release_breaks_a_passing_deployment():
    assert _run(_rel(VLLM)).exit_code == 1
    assert _run(_rel(TGI)).exit_code == 0  # fits -> a warning: not an error
    assert _run("--to", "0.18.0", _rel(VLLM)).exit_code == 0


def test_bad_input_is_a_located_diagnostic_and_exit_2():
    result = _run(_rel(FIXTURES / "KV001" / "bad-syntax.yaml"))
    assert result.exit_code == 2
    assert re.search(r"fixtures/KV001/bad-syntax.yaml:\d+:\d+: KV001 YAML syntax error", result.stderr)
    assert "Traceback" not in result.output + result.stderr
    missing = _run("no-such-file.yaml")
    assert missing.exit_code == 2 and "no-such-file.yaml" in missing.stderr
    bad = _run("--to", "newest", _rel(VLLM))
    assert bad.exit_code == 2 and "--to 'newest' is not a release" in bad.stderr


def test_stdin_is_refused_and_a_release_past_the_newest_read_walks_nothing(tmp_path):
    assert _run("-").exit_code == 2
    newer = tmp_path / "newer.yaml"
    newer.write_text(VLLM.read_text(encoding="utf-8").replace("v0.11.0", "v0.99.0"), encoding="utf-8")
    result = _run(str(newer))
    assert result.exit_code == 0
    assert f"no later release kvlint has read (the newest: {releases.newest('vllm')})" in result.stdout


def test_json_says_what_the_text_says():
    doc = json.loads(_run("--format", "json", _rel(VLLM)).stdout)
    [d] = doc["deployments"]
    assert d["start"] == {
        "release": "0.11.0",
        "how": "from the image tag vllm/vllm-openai:v0.11.0",
        "assumed": False,
    }
    [change] = d["changes"]
    assert change["release"] == "0.20.0" and change["verdict"]["codes"] == ["KV102"] and d["breaks"]
    assert "cudagraph_memory" in {r["key"] for r in change["rows"]}


def test_upgrade_is_a_command():
    assert "upgrade" in COMMANDS
    assert "upgrade" in CliRunner().invoke(main, ["--help"]).stdout


# --- the report, pinned ----------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_report_snapshot(fmt):
    args = ["--format", fmt, _rel(VLLM), _rel(SGLANG), _rel(TGI)]
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        result = _run(*args)
    finally:
        os.chdir(cwd)
    got = f"exit {result.exit_code}\n{result.stdout}"
    snap = DATA / f"report.{fmt}.snap"
    if UPDATE:
        snap.write_text(got, encoding="utf-8")
    assert snap.exists(), "run KVLINT_UPDATE_SNAPSHOTS=1 python -m pytest tests/test_upgrade.py"
    assert got == snap.read_text(encoding="utf-8")
