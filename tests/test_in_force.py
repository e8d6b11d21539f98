"""What resolve settles beside the deployment (kvlint/deployment.py `InForce`): the engine, its release,
the GPU as named and the context in force. Resolve records them on `Resolved.in_force` and leaves the
extracted deployment's fields as the file states them (the context the plan settles: test_tgi_defaults)."""

from __future__ import annotations

from conftest import lint

from kvlint.resolve import Defaults

LLAMA = "meta-llama/Llama-3.1-8B-Instruct"  # max_position_embeddings 131072


def _spec(extra: str = "") -> str:
    return f"kind: ServingSpec\nname: m\nmodel: {LLAMA}\n{extra}"


def test_the_configurations_engine_and_release_are_in_force_not_written_on_the_deployment():
    (r,) = lint(_spec("gpu: L4\n"), defaults=Defaults(engine="sglang", engine_version="0.5.2")).deployments
    d, f = r.deployment, r.in_force
    assert (d.engine, d.engine_version) == (None, None)
    assert (f.engine.value, f.engine.origin, f.engine_name) == ("sglang", "default", "sglang")
    assert (f.engine_version.value, f.engine_version.origin) == ("0.5.2", "inferred")
    assert r.settings.engine == "sglang" and f.gpu is d.gpu


def test_a_stated_engine_and_gpu_are_in_force_as_stated():
    (r,) = lint(_spec("engine: tgi\ngpu: H100\n"), defaults=Defaults(engine="sglang")).deployments
    assert r.in_force.engine is r.deployment.engine and r.in_force.engine.origin == "stated"
    assert r.in_force.gpu is r.deployment.gpu and r.settings.engine == "tgi"
