"""`--format json`: the documented schema, version 1 (docs/output-formats.md, "JSON")."""

from __future__ import annotations

import json


def _value(v):
    return None if v is None else v.value


def deployment_dict(r) -> dict:
    d, p, f = r.deployment, r.plan, r.in_force
    plan = None
    if p is not None:
        plan = {
            "gpu_memory_bytes": p.gpu_total,
            "weights_bytes_per_gpu": p.weights_per_gpu,
            "kv_bytes_per_token_per_gpu": p.kv_per_token,
            "kv_cache_bytes_per_gpu": p.kv_pool,
            "kv_cache_tokens": p.kv_tokens,
            "max_concurrency": round(p.max_concurrency, 4),
            "breakdown": {
                "engine": p.engine,
                "generation": p.generation,
                "total_bytes": p.gpu_total,
                "utilization": p.utilization,
                "budget_bytes": p.budget,
                "terms": [{"label": t.label, "bytes": t.bytes, "note": t.note} for t in p.terms],
                "kv_pool_bytes": p.kv_pool,
                "block_size": p.block_size,
                "num_blocks": p.num_blocks,
                "max_len_that_fits": p.max_len_that_fits,
                "context_at_max_sequences": p.context_at_max_seqs,
                "weights_total_bytes": p.weights_total,
                "weights_source": p.weights_source,
                "notes": list(p.notes),  # what the plan assumes or leaves out (LoRA memory, windows, state)
            },
        }
    return {
        "file": d.file,
        "line": d.where.line,
        "kind": d.kind,
        "name": d.name or None,
        "engine": _value(f.engine),
        "engine_version": _value(f.engine_version),
        "model": _value(d.model),
        "model_source": r.model.source if r.model else None,
        "model_resolution": r.model_how or None,  # how the model was found (catalog/how.py)
        "gpu": r.gpu.id if r.gpu else _value(f.gpu),
        "gpus": _value(d.gpus) if d.gpus else (r.settings.tp * r.settings.pp if r.settings else None),
        "tensor_parallel": _value(f.tensor_parallel),
        "pipeline_parallel": _value(f.pipeline_parallel),
        "max_context": _value(f.max_context),
        "max_sequences": _value(f.max_sequences),
        "gpu_memory_utilization": r.settings.utilization if r.settings else _value(f.gpu_memory_utilization),
        "kv_cache_dtype": _value(f.kv_cache_dtype),
        # LoRA adapters served on the model (kvlint/extract/pod/adapters.py): name and reference
        "adapters": [
            {"name": n or None, "ref": ref} for n, ref in _value(d.extra.get("lora_adapters")) or []
        ],
        "defaults": {
            k: {"value": v.value, "note": v.note}
            for k, v in (
                ("max_context", f.max_context),
                ("max_sequences", f.max_sequences),
                ("max_batched_tokens", f.max_batched_tokens),
                ("gpu_memory_utilization", f.gpu_memory_utilization),
                ("tensor_parallel", f.tensor_parallel),
                ("block_size", f.block_size),
                ("kv_cache_dtype", f.kv_cache_dtype),
                ("engine", f.engine),
            )
            if v is not None and v.origin != "stated"
        },
        "plan": plan,
    }


def finding_dict(f) -> dict:
    return {
        "rule": f.rule,
        "name": f.name,
        "severity": f.severity.label,
        "message": f.message,
        "file": f.where.file,
        "line": f.where.line,
        "column": f.where.column,
        "end_line": f.where.end_line,
        "end_column": f.where.end_column,
        "details": list(f.details),
        "fix": f.fix,
        "fixes": [
            {
                "message": x.message,
                "applicability": x.applicability,
                "edits": [
                    {
                        "line": e.where.line,
                        "column": e.where.column,
                        "end_line": e.where.end_line,
                        "end_column": e.where.end_column,
                        "text": e.text,
                    }
                    for e in x.edits
                ],
            }
            for x in f.fixes
        ],
        "deployment": f.deployment,
    }


def render(run, settings, color: bool = False) -> str:
    doc = {
        "version": 1,
        "findings": [finding_dict(f) for f in run.findings],
        "deployments": [deployment_dict(r) for r in run.deployments],
        "errors": list(run.errors),
        "suppressed": [{**finding_dict(f), "suppressed_by": f.suppressed_by} for f in run.suppressed],
        "config_overrides": [{"where": o.where, "message": o.message} for o in settings.overrides],
    }
    from kvlint.report.safe import scrub

    return json.dumps(scrub(doc), indent=2) + "\n"
