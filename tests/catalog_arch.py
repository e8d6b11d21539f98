"""Shared look-ups of the catalog tests: a catalogued id's ModelArch, and the expert weights a token does not use."""

from __future__ import annotations

from kvlint.catalog import models


def arch_of(model_id: str):
    """The ModelArch the catalog resolves `model_id` to; fails the test naming the id when there is none."""
    arch = models.resolve(model_id).arch
    assert arch is not None, model_id
    return arch


def idle_expert_params(arch) -> int:
    """Weights of the routed experts a token does not visit: (experts - experts per token) x matrices x hidden x width."""
    mats = 3 if arch.gated_mlp else 2
    return (
        arch.moe_layers
        * (arch.num_experts - arch.experts_per_token)
        * mats
        * arch.hidden_size
        * arch.moe_intermediate_size
    )
