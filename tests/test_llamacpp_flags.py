"""llama-server's options by build (kvlint/engines/llamacpp/data/flag_sets.json): an option the build in force
lacks stops it ("error: invalid argument"); an error where the image pins a build read (or one between two
read builds that both lack it), a warning that names the assumption where none is pinned. Its parser takes
no prefix, reads `--x_y` as `--x-y`, and LLAMA_ARG_* variables are not options."""

from __future__ import annotations

import json

from conftest import gpu_pod, lint

from kvlint.engines import flag_builds, flag_sets
from kvlint.engines.llamacpp import options
from kvlint.findings import Severity

IMAGE = "ghcr.io/ggml-org/llama.cpp:server-cuda-"


def _server(image: str, *flags: str, env: dict[str, str] | None = None) -> str:
    """llama-server with Llama-3.1-8B Q4_K_M (fixtures/KV102/good-llamacpp-8b-l4.yaml's model), `flags` after
    its context and offload."""
    args = ["-m", "bartowski/Meta-Llama-3.1-8B-Instruct-GGUF:Q4_K_M", "-c", "16384", "-ngl", "99", *flags]
    return gpu_pod(image, args, env)


def _kv005(image: str, *flags: str, env: dict[str, str] | None = None) -> list[tuple[Severity, str]]:
    result = lint(_server(image, *flags, env=env), "cpp.yaml")
    return [(f.severity, f.message) for f in result.findings if f.rule == "KV005"]


def test_the_table_reads_builds_in_order_with_the_parser_s_rules():
    t = flag_sets.table("llamacpp")
    assert t is not None and t.releases[0] == "3716"
    numbers = [int(r) for r in t.releases]
    assert numbers == sorted(numbers)
    assert all(t.read[r] == f"llamacpp=={r}:common/arg.cpp" for r in t.releases)
    assert t.exact and t.underscores and not t.abbreviations and not t.inverses and t.parser == "llama.cpp"


def test_every_option_kvlint_reads_is_an_option_of_a_build_read():
    t = flag_sets.table("llamacpp")
    assert t is not None
    with open(options.OPTIONS, encoding="utf-8") as fh:
        table = json.load(fh)
    spellings = {*table["options"], *table["aliases"]}
    assert {s.replace("_", "-") for s in spellings} - set(t.spans) == set()
    assert set(options.MAPPING) - set(t.spans) == set()


def test_an_option_added_in_b4729_is_an_error_on_b4701_and_clean_on_b4729():
    """--reasoning-format: b4729 common/arg.cpp:2103-2112 `.set_examples({LLAMA_EXAMPLE_SERVER,
    LLAMA_EXAMPLE_MAIN})`; b4701's arg.cpp has no such option."""
    [(severity, message)] = _kv005(IMAGE + "b4701", "--jinja", "--reasoning-format", "deepseek")
    assert severity == Severity.ERROR
    assert "llama.cpp 4701 has no option --reasoning-format (llama.cpp 4729 to" in message
    assert "'error: invalid argument: --reasoning-format'" in message
    assert _kv005(IMAGE + "b4729", "--jinja", "--reasoning-format", "deepseek") == []


def test_a_build_between_two_read_builds_is_judged_by_both():
    """b4600 lies between b4500 and b4701: --jinja (b4701 has it) is taken, --reasoning-format (neither has
    it) is an error naming both."""
    t = flag_sets.table("llamacpp")
    assert t is not None
    assert flag_builds.judged_by(t.releases, t.between, "b4600")[0] == ("4500", "4701")
    assert _kv005(IMAGE + "b4600", "--jinja") == []
    [(severity, message)] = _kv005(IMAGE + "b4600", "--reasoning-format", "deepseek")
    assert severity == Severity.ERROR
    assert "judged by 4500 and 4701" in message


def test_a_build_far_from_any_read_build_is_not_judged():
    """b6500 (the corpus's image) lies in the builds not read: an option some build read has is taken."""
    assert _kv005(IMAGE + "b6500", "--reasoning-format", "deepseek") == []
    [(severity, message)] = _kv005(IMAGE + "b6500", "--max-model-len", "4096")
    assert severity == Severity.WARNING and "kvlint has not read the flags of llama.cpp b6500" in message


def test_no_prefix_is_taken_and_a_short_spelling_is_judged():
    """`--ctx` is no option (no abbreviation); `-kvu` is --kv-unified's short spelling, which b4747 lacks."""
    [(severity, message)] = _kv005(IMAGE + "b4747", "--ctx", "8192")
    assert severity == Severity.ERROR and "llama.cpp 4747 has no option --ctx:" in message
    [(severity, message)] = _kv005(IMAGE + "b4747", "-kvu")
    assert severity == Severity.ERROR and "llama.cpp 4747 has no option -kvu" in message


def test_underscores_are_read_as_dashes():
    """common_params_parse_ex rewrites `_` to `-` in a `--` argument (b3716 common/arg.cpp:219)."""
    assert _kv005(IMAGE + "b4747", "--n_gpu_layers", "99") == []


def test_a_variable_is_not_an_option():
    """LLAMA_ARG_KV_UNIFIED on a build without --kv-unified is ignored, not refused."""
    assert _kv005(IMAGE + "b4747", env={"LLAMA_ARG_KV_UNIFIED": "1"}) == []


def test_an_unpinned_image_gives_a_warning_not_an_error():
    [(severity, message)] = _kv005("ghcr.io/ggml-org/llama.cpp:server-cuda", "--ctx", "8192")
    assert severity == Severity.WARNING
    assert "llama.cpp has no option --ctx in the releases kvlint read (3716 to" in message
    assert _kv005("ghcr.io/ggml-org/llama.cpp:server-cuda", "--reasoning-format", "deepseek") == []


def test_an_option_written_with_its_value_after_an_equals_sign_is_refused_and_not_read():
    """common_params_parse_ex looks `--ctx-size=8192` up whole (no `=value` form in any build read)."""
    result = lint(gpu_pod(IMAGE + "b4729", ["-m", "x.gguf", "--ctx-size=8192"]), "cpp.yaml")
    [f] = [f for f in result.findings if f.rule == "KV005"]
    assert f.severity == Severity.ERROR and f.fix == "write --ctx-size and its value as two arguments"
    assert "error: invalid argument: --ctx-size=8192" in f.message
    assert result.deployments[0].deployment.max_context is None
