"""kvlint: lint LLM serving deployments for GPU memory and KV-cache capacity."""

__version__ = "0.1.0"
