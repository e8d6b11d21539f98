"""The course's worked examples and plan.go's eight scenarios, reproduced exactly."""

import pytest

from kvlint.capacity.course import (
    fits,
    kv_budget,
    kv_per_token,
    longest_context,
    max_concurrent,
    plan_go,
    usable_budget,
)

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30


def test_kv_per_token_worked_example():
    per_token = kv_per_token(layers=32, kv_heads=8, head_dim=128, bytes_per_value=2)
    assert per_token == 131_072
    assert per_token == 128 * KIB
    assert per_token * 4096 == 512 * MIB
    assert per_token * 4096 * 4 == 2 * GIB


def test_kv_budget_24_minus_14_minus_2_is_8():
    assert kv_budget(24 * GIB, 14 * GIB, 2 * GIB) == 8 * GIB


def test_kv_budget_negative_raises():
    with pytest.raises(ValueError):
        kv_budget(24 * GIB, 23 * GIB, 2 * GIB)


def test_sixteen_sequences_of_512_mib_fit_in_8_gib():
    assert max_concurrent(8 * GIB, 4096, 128 * KIB) == 16


def test_two_sequences_of_4_gib_fit_in_8_gib():
    assert max_concurrent(8 * GIB, 32_768, 128 * KIB) == 2


def test_usable_budget_and_its_range():
    assert usable_budget(8 * GIB, 0.25) == 6 * GIB
    assert usable_budget(8 * GIB, 0) == 8 * GIB
    for bad in (-0.1, 1.0, 1.5):
        with pytest.raises(ValueError):
            usable_budget(8 * GIB, bad)


def test_usable_budget_is_exact_in_the_fraction_as_written():
    """The fraction is read as its decimal text (0.1 is 1/10, not the float nearest it) and the
    product truncated toward zero, as exact rational arithmetic gives it."""
    from fractions import Fraction

    assert usable_budget(10, 0.1) == 9  # 10 x 0.9 = 9 exactly; the float product is 8.999999999999998
    assert usable_budget(-10, 0.15) == -8  # -8.5 truncated toward zero
    for budget in (0, 1, 7, 999_999_937, 80 * GIB, -3 * GIB - 1):
        for frac in (0.0, 0.05, 0.1, 0.123456789, 1e-05, 0.999999, 1 / 3):
            assert usable_budget(budget, frac) == int(Fraction(budget) * (1 - Fraction(str(frac))))


def test_fits_and_longest_context():
    assert fits(8 * GIB, [4096] * 16, 128 * KIB)
    assert not fits(8 * GIB, [4096] * 17, 128 * KIB)
    assert fits(8 * GIB, [32_768, 16_384, 16_384], 128 * KIB)
    assert longest_context(8 * GIB, 16, 128 * KIB) == 4096
    assert longest_context(8 * GIB, 2, 128 * KIB) == 32_768


# plan.go: Model{name, params, layers, kvHeads, headDim, weightBytes, kvBytes}; plan(m, gpuGB, gpus, tokens)
M8 = ("8B FP16", 8e9, 32, 8, 128, 2, 2)
M8Q = ("8B 4-bit weights", 8e9, 32, 8, 128, 0.5, 2)
M70 = ("70B FP16", 70e9, 80, 8, 128, 2, 2)
M70Q = ("70B 8-bit, FP8 KV", 70e9, 80, 8, 128, 1, 1)

# Expected lines worked by hand: free = gpuGB x gpus x 0.9 - weights; seqs = free x 1e9 / (KV/token x tokens)
PLAN_GO = [
    (
        M8,
        24,
        1,
        4096,
        "8B FP16                on 1x24GB  weights  16.0 GB  KV/token  128 KiB  ->   10 sequences of 4096 tokens",
    ),
    (
        M8Q,
        24,
        1,
        4096,
        "8B 4-bit weights       on 1x24GB  weights   4.0 GB  KV/token  128 KiB  ->   33 sequences of 4096 tokens",
    ),
    (
        M8,
        80,
        1,
        4096,
        "8B FP16                on 1x80GB  weights  16.0 GB  KV/token  128 KiB  ->  104 sequences of 4096 tokens",
    ),
    (
        M8,
        80,
        1,
        32768,
        "8B FP16                on 1x80GB  weights  16.0 GB  KV/token  128 KiB  ->   13 sequences of 32768 tokens",
    ),
    (M70, 80, 1, 4096, "70B FP16               on 1x80GB  weights 140.0 GB  KV/token  320 KiB  DOES NOT FIT"),
    (
        M70,
        80,
        2,
        4096,
        "70B FP16               on 2x80GB  weights 140.0 GB  KV/token  320 KiB  ->    3 sequences of 4096 tokens",
    ),
    (
        M70Q,
        80,
        1,
        4096,
        "70B 8-bit, FP8 KV      on 1x80GB  weights  70.0 GB  KV/token  160 KiB  ->    3 sequences of 4096 tokens",
    ),
    (
        M70,
        180,
        1,
        4096,
        "70B FP16               on 1x180GB  weights 140.0 GB  KV/token  320 KiB  ->   16 sequences of 4096 tokens",
    ),
]


@pytest.mark.parametrize(("model", "gpu_gb", "gpus", "tokens", "line"), PLAN_GO)
def test_plan_go_scenarios(model, gpu_gb, gpus, tokens, line):
    name, params, layers, kv_heads, head_dim, wb, kvb = model
    plan = plan_go(name, params, layers, kv_heads, head_dim, wb, kvb, gpu_gb, gpus, tokens)
    assert plan.line(gpus, gpu_gb, tokens) == line


def test_plan_go_sequence_counts_are_the_hand_arithmetic():
    plan = plan_go(*M8[:1], *M8[1:5], M8[5], M8[6], 24, 1, 4096)
    assert plan.sequences == pytest.approx((24 * 0.9 - 16) * 1e9 / (131072 * 4096))
    assert plan_go(*M70[:1], *M70[1:5], M70[5], M70[6], 80, 1, 4096).sequences is None
