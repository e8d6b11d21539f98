"""Files beside a manifest (a KServe runtime in the same directory): the directory is listed once
a run however many of its files are linted, and a sibling that links out of the directory is not
read. Rebuilt from security review 3's S17 and S20."""

from __future__ import annotations

import os

from conftest import FIXTURES

from kvlint.run.lint import read_and_lint
from kvlint.run.settings import Settings

ISVC = FIXTURES / "stacks" / "kserve-isvc" / "runtime-beside"


def test_s17_a_directory_is_listed_once_however_many_of_its_files_are_linted(tmp_path, monkeypatch):
    """S17: every linted file listed, sorted and stat'ed its whole directory again (1,000 manifests
    beside 20,000 files: 16.8 s). The listing is now kept per directory for the run."""
    for i in range(60):
        (tmp_path / f"isvc-{i:03}.yaml").write_text((ISVC / "isvc.yaml").read_text())
    for i in range(2000):
        (tmp_path / f"filler-{i:05}.yaml").write_text("a: 1\n")
    (tmp_path / "a-runtime.yaml").write_text((ISVC / "runtime.yaml").read_text())  # sorted first
    listed: list[str] = []
    real_listdir = os.listdir

    def counting(path="."):
        listed.append(os.fspath(path))
        return real_listdir(path)

    monkeypatch.setattr(os, "listdir", counting)
    results = [read_and_lint(str(tmp_path / f"isvc-{i:03}.yaml"), Settings(), "x.yaml") for i in range(60)]
    assert all(not isinstance(r, str) and not r.findings for r in results)  # each found the runtime
    assert listed.count(str(tmp_path)) == 1, listed.count(str(tmp_path))


def test_s20_a_sibling_that_links_out_of_the_directory_is_not_read(tmp_path):
    """S20: deploy/runtime.yaml -> ../outside/runtime.yaml was read (the verdict changed, KV004
    became "no problems found"), though the directory walk refuses the same link."""
    deploy, outside = tmp_path / "deploy", tmp_path / "outside"
    deploy.mkdir()
    outside.mkdir()
    (deploy / "isvc.yaml").write_text((ISVC / "isvc.yaml").read_text())
    (outside / "runtime.yaml").write_text((ISVC / "runtime.yaml").read_text())
    os.symlink("../outside/runtime.yaml", deploy / "runtime.yaml")
    linked = read_and_lint(str(deploy / "isvc.yaml"), Settings(), "deploy/isvc.yaml")
    os.remove(deploy / "runtime.yaml")
    alone = read_and_lint(str(deploy / "isvc.yaml"), Settings(), "deploy/isvc.yaml")
    assert not isinstance(linked, str) and not isinstance(alone, str)
    assert [f.rule for f in linked.findings] == [f.rule for f in alone.findings] == ["KV004"]
    os.symlink("runtime-real.yaml", deploy / "runtime.yaml")  # a link that stays inside is read
    (deploy / "runtime-real.yaml").write_text((ISVC / "runtime.yaml").read_text())
    inside = read_and_lint(str(deploy / "isvc.yaml"), Settings(), "deploy/isvc.yaml")
    assert not isinstance(inside, str) and "KV004" not in [f.rule for f in inside.findings]


_OPEN_MODEL = (
    "apiVersion: llmaz.io/v1alpha1\nkind: OpenModel\nmetadata: {name: m}\nspec:\n"
    "  source: {modelHub: {modelID: Qwen/Qwen2-0.5B-Instruct}}\n"
    "  inferenceConfig: {flavors: [{name: l4, limits: {nvidia.com/gpu: 1}}]}\n"
)
_PLAYGROUND = (
    "---\napiVersion: inference.llmaz.io/v1alpha1\nkind: Playground\nmetadata: {name: p}\n"
    "spec: {replicas: 1, modelClaim: {modelName: m}, backendRuntimeConfig: {backendName: sglang}}\n"
)


def test_each_document_s_kind_is_read_once_however_many_workloads_look_objects_up(monkeypatch):
    """llmaz Playgrounds each look up their OpenModel among the file's documents: the documents are
    indexed by kind once, not scanned again by each workload (n workloads x n documents)."""
    from conftest import lint

    from kvlint.load.tree import Mapping

    real = Mapping.value

    def reads(n: int) -> int:
        count = 0

        def counting(self, key, *args, **kwargs):
            nonlocal count
            count += key == "kind"
            return real(self, key, *args, **kwargs)

        monkeypatch.setattr(Mapping, "value", counting)
        try:
            result = lint(_OPEN_MODEL + _PLAYGROUND * n)
        finally:
            monkeypatch.setattr(Mapping, "value", real)
        assert len(result.deployments) == n
        return count

    assert reads(200) <= 2.5 * reads(100)  # linear in the documents; a scan per workload is 4x
