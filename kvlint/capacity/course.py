"""The course's capacity API, exactly as the memory-budgeting notes define it (integer bytes).

    kv_budget(total, weights, reserved)      what is left for the KV cache; ValueError if negative
    usable_budget(budget, fragmentation)     budget x (1 - fragmentation), fragmentation in [0, 1)
    max_concurrent(budget, seq_tokens, per_token)
    fits(budget, lengths, per_token)
    longest_context(budget, n_sequences, per_token)

The capacity rules decide with these: KV102 asks `fits` whether one request of max_model_len
fits, KV103 applies `usable_budget` (fragmentation) and asks `fits` for max_num_seqs requests and
`max_concurrent` for how many to admit, and SGLang's and TGI's plans take their longest equal
context from `longest_context`. They count in the engine's unit of allocation (Plan.pool_units and
Plan.request_units: vLLM KV blocks, SGLang/TGI token slots, with per_token 1), so the engine's own
pool arithmetic (blocks, sliding windows, the null block) stays in kvlint/engines/<engine>/.

And `plan_go`, the memory-planning notes' plan.go planner (weights + 10 % overhead), kept so its
eight scenarios can be reproduced and compared with the engine-exact plan.
"""

from __future__ import annotations

from decimal import Decimal

from kvlint.record import record


def kv_per_token(layers: int, kv_heads: int, head_dim: int, bytes_per_value: int | float) -> int:
    """2 x layers x kv_heads x head_dim x bytes: a key and a value per KV head per layer."""
    return int(2 * layers * kv_heads * head_dim * bytes_per_value)


def kv_budget(total_bytes: int, weight_bytes: int, reserved_bytes: int) -> int:
    budget = total_bytes - weight_bytes - reserved_bytes
    if budget < 0:
        raise ValueError(
            f"no memory left for the KV cache: {total_bytes:,} total - {weight_bytes:,} weights - "
            f"{reserved_bytes:,} reserved = {budget:,} bytes"
        )
    return budget


def usable_budget(budget: int, fragmentation: float) -> int:
    if not 0 <= fragmentation < 1:
        raise ValueError(f"fragmentation must be in [0, 1), got {fragmentation}")
    # budget x (1 - fragmentation) in exact arithmetic, truncated toward zero, the fraction read as
    # its decimal text ("0.05" is 1/20, not the float nearest it)
    num, den = Decimal(str(fragmentation)).as_integer_ratio()
    kept = budget * (den - num)
    return kept // den if kept >= 0 else -(-kept // den)


def max_concurrent(budget: int, seq_tokens: int, per_token: int) -> int:
    if seq_tokens <= 0 or per_token <= 0:
        raise ValueError("seq_tokens and per_token must be positive")
    return max(0, budget) // (seq_tokens * per_token)


def fits(budget: int, lengths: list[int], per_token: int) -> bool:
    if any(n < 0 for n in lengths):
        raise ValueError("sequence lengths cannot be negative")
    return sum(lengths) * per_token <= budget


def longest_context(budget: int, n_sequences: int, per_token: int) -> int:
    if n_sequences <= 0 or per_token <= 0:
        raise ValueError("n_sequences and per_token must be positive")
    return max(0, budget) // (n_sequences * per_token)


@record(frozen=True)
class CoursePlan:
    name: str
    weights_gb: float
    kv_per_token: float
    sequences: float | None  # None: DOES NOT FIT

    def line(self, gpus: int, gpu_gb: float, tokens: float) -> str:
        """The line plan.go prints for this scenario."""
        head = (
            f"{self.name:<22} on {gpus}x{gpu_gb:.0f}GB  weights {self.weights_gb:5.1f} GB  "
            f"KV/token {self.kv_per_token / 1024:4.0f} KiB  "
        )
        if self.sequences is None:
            return head + "DOES NOT FIT"
        return head + f"-> {self.sequences:4.0f} sequences of {tokens:.0f} tokens"


def plan_go(
    name: str,
    params: float,
    layers: int,
    kv_heads: int,
    head_dim: int,
    weight_bytes: float,
    kv_bytes: float,
    gpu_gb: float,
    gpus: int,
    tokens_per_seq: float,
) -> CoursePlan:
    """plan.go's arithmetic in the same float64 operations (decimal GB, 10 % overhead)."""
    overhead = 0.10
    weights_gb = params * weight_bytes / 1e9
    per_token = 2 * float(layers * kv_heads * head_dim) * kv_bytes
    total = gpu_gb * float(gpus)
    free = total * (1 - overhead) - weights_gb
    if free <= 0:
        return CoursePlan(name, weights_gb, per_token, None)
    return CoursePlan(name, weights_gb, per_token, free * 1e9 / (per_token * tokens_per_seq))
