"""The engine registry: each registered name loads a package whose ENGINE answers the protocol for that
name, the fix flag it names is one of the engine's own options and sets the field asked about, and a name
kvlint does not model is accounted for as the default engine."""

from __future__ import annotations

import pytest

from kvlint import engines
from kvlint.engines import native
from kvlint.engines.base import BatchCheck, KvHeadSharding, LongSequence, Startup
from kvlint.engines.memory_entry import MemoryOption

NAMES = engines.names()
FIX_FIELDS = ["max_context", "tensor_parallel", "max_sequences", "kv_cache_dtype"]
# (engine, field) for the fields the engine has a setting of: one it has none of (native.Absent, e.g.
# llama.cpp's tensor parallelism) is said at the key instead (tests/test_stated_values.py)
OWN_FIELDS = [(n, f) for n in NAMES for f in FIX_FIELDS if not isinstance(native.entry(n, f), native.Absent)]
SHARES = [n for n in NAMES if not isinstance(native.entry(n, "gpu_memory_utilization"), native.Absent)]


@pytest.mark.parametrize("name", NAMES)
def test_each_package_is_the_engine_it_is_registered_as(name):
    e = engines.get(name)
    assert (e.name, e.display) == (name, engines.display(name))
    assert isinstance(e.kv_heads, KvHeadSharding)
    assert all(isinstance(c, BatchCheck) for c in e.batch_checks)
    assert e.memory_options() and all(isinstance(v, MemoryOption) for v in e.memory_options().values())


@pytest.mark.parametrize(("name", "field"), OWN_FIELDS)
def test_the_flag_a_fix_writes_is_the_engines_own_and_sets_the_field(name, field):
    e = engines.get(name)
    flag = e.flag_for(field)
    assert e.options().lookup(flag) == (flag, False), f"{e.display} has no option {flag}"
    assert e.mapping()[flag][0] == field


@pytest.mark.parametrize("name", SHARES)
def test_the_memory_share_flag_sets_the_engines_fraction(name):
    e = engines.get(name)
    flag = e.flag_for(e.fraction_field)
    assert flag.startswith("--") and e.mapping()[flag][0] == e.fraction_field


@pytest.mark.parametrize("name", NAMES)
def test_a_sequence_that_does_not_fit_gets_a_typed_answer(name):
    answer = engines.get(name).long_sequence(None, None)
    assert isinstance(answer, LongSequence) and isinstance(answer.startup, Startup)
    # shrinks: the length it starts with is the engine's own (`shrinks_to`) or, when only the plan knows it
    # (TensorRT-LLM bounds max_seq_len by the blocks its pool holds), the plan's max_len_that_fits (KV102)
    assert answer.startup is not Startup.SHRINKS or answer.shrinks_to or answer.says


def test_a_name_kvlint_does_not_model_is_the_default_engine():
    assert not engines.known("jetstream")
    assert engines.get("jetstream") is engines.get(engines.DEFAULT)
    assert engines.display("jetstream") == "jetstream"
