"""`lmdeploy serve api_server`'s options -> Deployment fields.

The parser (InternLM/lmdeploy@v0.10.0 lmdeploy/cli/serve.py add_parser_api_server, options from
lmdeploy/cli/utils.py ArgumentHelper) is argparse: MODEL_PATH is the first positional argument, unambiguous
prefixes are accepted, an option it does not have stops it ("unrecognized arguments"); from v0.9.2 its
FlexibleArgumentParser also reads `--session_len` as `--session-len` (data/flag_sets.json: the options of
each release, judged against the release in force by kvlint/engines/flag_sets.py). It reads no
environment variable for these options. --quant-policy is the KV cache's quantization (0 none, 4 int4, 8
int8; from v0.14.0 also 16 fp8 and 17 fp8_e5m2, or their names): kvlint keeps it as written in
kv_cache_dtype and settings.py reads it.
"""

from __future__ import annotations

import os

from kvlint.deployment import Deployment, stated
from kvlint.engines import flag_sets
from kvlint.engines.lmdeploy import memory_options as memory_table
from kvlint.extract.pod.argv import EnvVar, Token
from kvlint.extract.pod.engine_args import memory_options
from kvlint.extract.pod.engine_args.apply import apply
from kvlint.extract.pod.engine_args.options import load_table

OPTIONS = os.path.join(os.path.dirname(__file__), "data", "options.json")

MAPPING: dict[str, tuple[str, str]] = {
    "--session-len": ("max_context", "int"),
    "--tp": ("tensor_parallel", "int"),
    "--dp": ("data_parallel", "int"),
    "--max-batch-size": ("max_sequences", "int"),
    "--cache-max-entry-count": ("cache_max_entry_count", "float"),
    "--cache-block-seq-len": ("block_size", "int"),
    "--quant-policy": ("kv_cache_dtype", "text"),
    "--max-prefill-token-num": ("max_prefill_token_num", "int"),
    "--dtype": ("dtype", "text"),
    "--model-format": ("model_format", "text"),
    "--backend": ("backend", "text"),
    "--eager-mode": ("eager_mode", "bool"),
}
NEEDED = {"--session-len", "--tp", "--cache-max-entry-count", "--quant-policy", "--backend"}


def read(d: Deployment, tokens: list[Token], env: dict[str, EnvVar], strict: bool = True) -> None:
    """The server's command line: the model (its first positional argument) and the options kvlint sizes."""
    parsed = load_table(OPTIONS, "lmdeploy").parse(tokens)
    if not strict:
        parsed.unknown.clear()  # a launcher with options of its own
    prefixes = flag_sets.ambiguous(parsed) if strict else []  # judged against the release in force
    if parsed.positionals and d.model is None:
        first = parsed.positionals[0]
        d.model = stated(first.text, first.where, "lmdeploy serve api_server MODEL_PATH")
    apply(d, parsed, MAPPING, "LMDeploy", NEEDED)
    memory_options.report(d, parsed, memory_table.table(), "LMDeploy", env)
    if strict:  # an option the release in force lacks stops its argparse at start-up
        flag_sets.record_flags(d, "lmdeploy", flag_sets.written(parsed) + prefixes)


__all__ = ["read"]
