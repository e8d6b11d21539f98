"""docker compose files read as `docker compose` reads them: `${VAR}` interpolation with the `.env` beside the
file (docker/docs content/reference/compose-file/interpolation.md @9f02705; compose-spec/compose-go
template/template.go @1ce62c3e), `env_file` feeding the container's environment, and `ipc` deciding whose
/dev/shm the container has (docker/docs engine/containers/run.md "IPC settings (--ipc)").

kvlint reads a file as compose does on a machine whose shell sets none of the variables: what the `.env`
beside the file sets, else the default the file writes, else a placeholder named as such."""

from __future__ import annotations

import os

import pytest

from kvlint.extract.kinds.compose_vars import interpolate, parse_env_file
from kvlint.resolve import Defaults
from kvlint.run.lint import read_and_lint
from kvlint.run.settings import Settings

SET = {"A": "a", "EMPTY": ""}


def _i(text: str, values: dict[str, str] = SET):
    return interpolate(text, values.get)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("$A ${A}", "a a"),  # both forms
        ("${EMPTY:-d} ${EMPTY-d} ${NONE-d} ${NONE:-d}", "d  d d"),  # `:-` empty or unset, `-` unset only
        ("${A:+alt}|${EMPTY:+alt}|${EMPTY+alt}", "alt||alt"),  # `:+` set and not empty, `+` set
        ("${NONE:-${A:-x}}", "a"),  # nested defaults are interpolated
        ("$$A $${A}", "$A ${A}"),  # `$$` is a literal `$`: no interpolation
        ("cost: $5 ${A/a/b}", "cost: $5 ${A/a/b}"),  # not a variable: kept as written
        ("${EMPTY?err}", ""),  # `?` is met by an empty value, `:?` is not
    ],
)
def test_interpolation_follows_compose(text, want):
    done = _i(text)
    assert done.text == want and not done.unknown


def test_a_variable_no_file_sets_stays_a_named_placeholder():
    done = _i("--model ${MODEL} --max-model-len $LEN ${NEED:?set it} ${ALT:+x}")
    assert done.text == "--model $(MODEL) --max-model-len $(LEN) $(NEED) $(ALT)"
    assert done.unknown == ["MODEL", "LEN", "NEED", "ALT"] and done.required == ["NEED"]
    assert _i("${EMPTY:?x}").required == ["EMPTY"]  # set but empty: compose refuses `:?`


def test_env_file_syntax():
    """docker/docs content/compose/environment-variables/env-file.md's rules, line by line."""
    text = (
        '# comment\n\nexport LLM_MODEL_ID="meta-llama/Meta-Llama-3-8B-Instruct"\n'
        "PLAIN=VAL # comment\nHASH=VAL# not a comment\nSINGLE='$PLAIN'\nDOUBLE=\"${PLAIN}\\tx\"\n"
        "FROM_SHELL\nUSES_SHELL=${host_ip}:8090\nDEFAULTED=${host_ip:-localhost}\n"
        'MULTI="one\ntwo"\n'
    )
    env = parse_env_file(text)
    assert env.values == {
        "LLM_MODEL_ID": "meta-llama/Meta-Llama-3-8B-Instruct",
        "PLAIN": "VAL",
        "HASH": "VAL# not a comment",
        "SINGLE": "$PLAIN",
        "DOUBLE": "VAL\tx",
        "DEFAULTED": "localhost",
        "MULTI": "one\ntwo",
    }
    assert env.unknown == {"FROM_SHELL": ["FROM_SHELL"], "USES_SHELL": ["host_ip"]}


_TGI = (
    "services:\n  tgi-service:\n    image: ghcr.io/huggingface/text-generation-inference:2.4.1\n"
    "    command: --model-id ${LLM_MODEL_ID} --max-input-length ${MAX_IN:-1024}\n"
    "    deploy:\n      resources:\n        reservations:\n          devices:\n"
    "            - driver: nvidia\n              count: ${GPUS:-1}\n              capabilities: [gpu]\n"
)


def _lint(folder, text: str = _TGI, name: str = "compose.yaml", **kw):
    path = folder / name
    path.write_text(text)
    result = read_and_lint(str(path), Settings(defaults=Defaults(gpu="l4"), **kw), name)
    assert not isinstance(result, str)
    return result


def test_the_env_file_beside_the_compose_file_fills_its_variables(tmp_path):
    (tmp_path / ".env").write_text('export LLM_MODEL_ID="Qwen/Qwen2.5-7B-Instruct"\n')
    (r,) = _lint(tmp_path).deployments
    assert r.deployment.model.value == "Qwen/Qwen2.5-7B-Instruct"
    assert r.deployment.gpus_per_pod.value == 1  # `count: ${GPUS:-1}`: the default, read as a number
    assert r.plan is not None


def test_an_unset_variable_is_a_placeholder_not_a_false_kv005(tmp_path, monkeypatch):
    """The linting machine's environment is never read: kvlint must give every machine one answer."""
    monkeypatch.setenv("LLM_MODEL_ID", "Qwen/Qwen2.5-7B-Instruct")
    result = _lint(tmp_path)
    assert not [f for f in result.findings if f.rule in ("KV005", "KV003")]
    (info,) = [f for f in result.findings if f.rule == "KV004"]
    assert "${LLM_MODEL_ID}" in info.message and "no .env beside the file" in info.message
    assert "shell's environment" in info.message and info.where.line == 4
    assert result.deployments[0].plan is None


def test_the_container_s_environment_does_not_fill_compose_s_variables(tmp_path):
    """`${MODEL}` is compose's to fill; the service's `environment: MODEL` is the container's, and only a
    shell inside the container (`$$MODEL`) reads it."""
    text = (
        "services:\n  vllm:\n    image: vllm/vllm-openai:v0.10.0\n    environment:\n"
        "      MODEL: Qwen/Qwen2.5-7B-Instruct\n    command: --model ${MODEL}\n"
        "    deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 1, capabilities: [gpu]}]}}}\n"
    )
    (r,) = _lint(tmp_path, text).deployments
    assert r.deployment.model is None or "$" in str(r.deployment.model.value)
    shell = text.replace(
        "    command: --model ${MODEL}\n", "    entrypoint: [sh, -c, 'vllm serve $$MODEL']\n"
    )
    (r,) = _lint(tmp_path, shell).deployments
    assert r.deployment.model.value == "Qwen/Qwen2.5-7B-Instruct"


def test_env_file_entries_feed_the_engine_environment(tmp_path):
    """TGI reads MODEL_ID from its environment (text-generation-launcher `--model-id`, env MODEL_ID)."""
    (tmp_path / "tgi.env").write_text("MODEL_ID=Qwen/Qwen2.5-7B-Instruct\n")
    text = (
        "services:\n  tgi:\n    image: ghcr.io/huggingface/text-generation-inference:2.4.1\n"
        "    env_file: [tgi.env, {path: optional.env, required: false}]\n"
        "    deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 1, capabilities: [gpu]}]}}}\n"
    )
    result = _lint(tmp_path, text)
    (r,) = result.deployments
    assert r.deployment.model.value == "Qwen/Qwen2.5-7B-Instruct"
    assert not [f for f in result.findings if f.rule == "KV004"]  # an optional file absent: nothing to say
    (tmp_path / "tgi.env").unlink()
    result = _lint(tmp_path, text)
    assert any("env_file tgi.env not read (absent)" in f.message for f in result.findings)


def test_env_files_are_read_only_inside_the_directory_and_bounded(tmp_path):
    """As the files-beside readers (security review 3, S20): no link out, no `..`, no FIFO, a size cap."""
    deploy, outside = tmp_path / "deploy", tmp_path / "outside"
    deploy.mkdir()
    outside.mkdir()
    (outside / "env").write_text("LLM_MODEL_ID=Qwen/Qwen2.5-7B-Instruct\n")
    os.symlink("../outside/env", deploy / ".env")
    assert _lint(deploy).deployments[0].deployment.model is None  # not read: the placeholder stays
    os.remove(deploy / ".env")
    os.mkfifo(deploy / ".env")  # a FIFO: not read, never waited on
    assert _lint(deploy).deployments[0].deployment.model is None  # not read: the placeholder stays
    os.remove(deploy / ".env")
    (deploy / ".env").write_text("LLM_MODEL_ID=Qwen/Qwen2.5-7B-Instruct\n" + "#" * 300_000)
    assert _lint(deploy).deployments[0].deployment.model is None  # not read: the placeholder stays
    up = _TGI.replace("    deploy:", "    env_file: ../outside/env\n    deploy:")
    result = _lint(deploy, up)
    assert any(
        "env_file ../outside/env not read (outside the file's directory)" in f.message
        for f in result.findings
    )


def test_standard_input_reads_no_env_file(tmp_path, monkeypatch):
    from conftest import lint

    (tmp_path / ".env").write_text("LLM_MODEL_ID=Qwen/Qwen2.5-7B-Instruct\n")
    monkeypatch.chdir(tmp_path)
    (r,) = lint(_TGI, "compose.yaml").deployments
    assert r.deployment.model is None


_OPEA_TGI = (  # the keys of opea-project/GenAIExamples ChatQnA/docker_compose/nvidia/gpu/compose.yaml's tgi-service
    "services:\n  tgi-service:\n    image: ghcr.io/huggingface/text-generation-inference:2.4.1\n"
    "    environment:\n      HF_TOKEN: ${HF_TOKEN}\n      HF_HUB_DISABLE_PROGRESS_BARS: 1\n    ipc: host\n"
    "    command: --model-id ${LLM_MODEL_ID}\n"
    "    deploy:\n      resources:\n        reservations:\n          devices:\n"
    "            - driver: nvidia\n              count: 1\n              capabilities: [gpu]\n"
)


def test_opea_chatqna_with_its_set_env_lines_as_env(tmp_path):
    """OPEA's ChatQnA TGI service, with the model line of its set_env.sh @28b3c31 (`export
    LLM_MODEL_ID="meta-llama/Meta-Llama-3-8B-Instruct"`, a line compose's .env syntax reads as written) as
    the .env beside it. HF_TOKEN, which no check reads, is not said."""
    alone = _lint(tmp_path, _OPEA_TGI)
    assert [f.rule for f in alone.findings if f.severity.name != "INFO"] == []
    (said,) = [f.message for f in alone.findings if f.rule == "KV004"]
    assert "${LLM_MODEL_ID}" in said and "HF_TOKEN" not in said
    (tmp_path / ".env").write_text('export LLM_MODEL_ID="meta-llama/Meta-Llama-3-8B-Instruct"\n')
    result = _lint(tmp_path, _OPEA_TGI)
    (r,) = result.deployments
    assert r.deployment.model.value == "meta-llama/Meta-Llama-3-8B-Instruct" and r.plan is not None
    assert not [f for f in result.findings if f.rule == "KV207"]  # ipc: host


_TP2 = (
    "services:\n  vllm:\n    image: vllm/vllm-openai:v0.10.0\n"
    "    command: --model Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size 2\n{ipc}"
    "    deploy: {{resources: {{reservations: {{devices: [{{driver: nvidia, count: 2, capabilities: [gpu]}}]}}}}}}\n"
    "  holder:\n    image: busybox\n{holder}"
)


def _kv207(tmp_path, ipc: str, holder: str = ""):
    return [f for f in _lint(tmp_path, _TP2.format(ipc=ipc, holder=holder)).findings if f.rule == "KV207"]


def test_ipc_decides_whose_dev_shm_the_service_has(tmp_path):
    (found,) = _kv207(tmp_path, "")
    assert found.message.startswith("2 GPUs per container, TP 2 x PP 1,")  # the layout's unit, not "pod"
    assert not _kv207(tmp_path, "    ipc: host\n    shm_size: 1mb\n")  # the host's /dev/shm: shm_size is moot
    assert _kv207(tmp_path, "    ipc: shareable\n")  # its own namespace, Docker's 64 MiB: still too small
    assert not _kv207(tmp_path, "    ipc: shareable\n    shm_size: 16gb\n")
    assert not _kv207(tmp_path, "    ipc: service:holder\n", "    ipc: shareable\n    shm_size: 16gb\n")
    assert _kv207(tmp_path, "    ipc: service:holder\n", "    ipc: shareable\n")  # the holder's 64 MiB
    assert not _kv207(tmp_path, "    ipc: container:elsewhere\n")  # a container the file does not describe
