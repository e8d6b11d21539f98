"""The native ServingSpec: schema problems are located KV001 findings naming key and range."""

from conftest import lint, rules_of

BASE = "kind: ServingSpec\nmodel: meta-llama/Llama-3.1-8B-Instruct\ngpu: L4\n"


def test_unknown_key_suggests_the_right_one():
    r = lint(BASE + "max_contex: 4096\n")
    (f,) = r.findings
    assert (f.rule, f.where.line, f.where.column) == ("KV001", 4, 1)
    assert "did you mean 'max_context'" in f.message


def test_unknown_nested_key():
    r = lint(BASE + "budget:\n  gpu_mem: 24GB\n")
    (f,) = r.findings
    assert f.where.line == 5 and "budget.gpu_mem" in f.message and "gpu_memory" in f.message


def test_negative_and_out_of_range_values_name_key_and_range():
    r = lint(BASE + "max_sequences: -1\ngpu_memory_utilization: 0\nbudget:\n  fragmentation: 1.0\n")
    msgs = {f.where.line: f.message for f in r.findings}
    assert set(rules_of(r)) == {"KV001"}
    assert "max_sequences" in msgs[4]
    assert "gpu_memory_utilization" in msgs[5] and "(0, 1]" in msgs[5]
    assert "budget.fragmentation" in msgs[7]


def test_wrong_type_is_located():
    r = lint(BASE + "tensor_parallel: two\n")
    (f,) = r.findings
    assert f.rule == "KV001" and f.where.line == 4 and "tensor_parallel" in f.message


def test_sizes_and_token_counts_accept_suffixes():
    r = lint(
        BASE + "max_context: 4k\nmax_sequences: 4\nbudget:\n  gpu_memory: 21.95GiB\n  weights: 16.06GB\n"
    )
    # read as vLLM reads it (4,000), and KV304 asks whether 4,096 was meant, as it does for --max-model-len=4k:
    # the safe fix spells out 4000 (the number the engine reads), 4096 is the unsafe alternative
    assert [f.rule for f in r.findings] == ["KV304"]
    assert [(x.edits[0].text, x.applicability) for x in r.findings[0].fixes] == [
        ("4000", "safe"),
        ("4096", "unsafe"),
    ]
    d = r.deployments[0].deployment
    assert d.max_context.value == 4000
    assert d.budget["gpu_memory"].value.bytes == 23_568_633_037  # 21.95 x 2^30 = 23,568,633,036.8, rounded


def test_missing_model_is_located():
    r = lint("kind: ServingSpec\ngpu: L4\n")
    (f,) = r.findings
    assert f.rule == "KV001" and "needs 'model'" in f.message


def test_documents_that_are_not_specs_are_silent():
    assert lint("apiVersion: v1\nkind: Service\nmetadata: {name: x}\n").findings == []
    assert lint("just: a config\n").findings == []


def test_engine_must_be_known():
    r = lint(BASE + "engine: jetstream\n")
    assert rules_of(r) == ["KV001"] and "vllm, sglang, tgi" in r.findings[0].message
