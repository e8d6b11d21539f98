from kvlint.codes import UNPARSED_SETTING
from kvlint.findings import Severity
from kvlint.rules.base import IssueContext, IssueRule, skipped_note


class UnparsedSetting(IssueRule):
    """An engine argument or setting kvlint could not interpret, and what it skipped as a result.

    ## What it does
    Reports values kvlint reads but cannot make sense of: a non-numeric `--max-model-len`, an
    ambiguous flag prefix, a `$(VAR)` that names no variable of the container, a Helm
    placeholder left in an argument, an unknown engine flag kvlint needs to read. In the values of a
    chart kvlint reads by its layout (the vLLM project's chart-helm, the OPEA vllm chart), a top-level
    key the chart does not read (not in its values.schema.json / values.yaml nor its templates) is a
    warning naming where the chart reads that setting (`replicas` -> `replicaCount`, `extraArgs` ->
    `extraCmdArgs`): Helm passes it through silently and the engine never gets it. So is a GPU in the
    vLLM chart's `resources.limits` without `resources.requests`, which its schema requires. The same
    holds for a key of a vLLM production-stack `servingEngineSpec.modelSpec[]` entry the chart does not
    read (`maxNumSeqs` -> `vllmConfig.maxNumSeqs`, `replicas` -> `replicaCount`), and an entry without
    `requestGPU` is a warning: the chart then requests 0 GPUs (its default), so the pod gets none.
    A KubeAI `Model` field the CRD does not have (`spec.maxModelLen`, `args` beside `spec`) is a warning
    naming where KubeAI reads it (kubectl's strict field validation rejects it), as is a models-chart
    `catalog.<name>` key its template does not render (`image`, `replicas`); so are a `resourceProfile`
    the controller cannot use (no `:<count>`, a profile name KubeAI's chart does not define, with the
    closest one), a left-out `resourceProfile` (KubeAI has no default: the Model gets no pod) and an
    `engine` outside the CRD's enum (`vllm` for `VLLM`). No GPU count is assumed for such a Model.
    In llm-d `llm-d-modelservice` values, a key outside the chart's values.schema.json and templates (top
    level, `modelArtifacts`, `decode`/`prefill`, their `parallelism` and `containers[]`) is a warning naming
    where it belongs (`decode.args` -> `decode.containers[].args`, `parallelism.tp` -> `parallelism.tensor`);
    where the schema forbids other keys (`modelArtifacts`, `parallelism`, `accelerator`) helm install fails.
    A container that states its GPU count in only one of `resources.limits` / `requests` gets the other
    filled with `parallelism.dataLocal x tensor`; when the two differ Kubernetes rejects the pod. A
    `modelArtifacts.uri` without a scheme the chart knows (`Qwen/Qwen3-8B` for `hf://Qwen/Qwen3-8B`) gives
    `vllm serve` no model argument at all, and a `modelCommand` other than vllmServe / imageDefault / custom,
    or custom (the default) without a `command`, makes helm install fail.
    In production-stack values the same holds one level down: a `servingEngineSpec` key, a `vllmConfig`
    key the templates do not render as a vLLM flag (`maxNumBatchedTokens` -> `extraArgs`; such a key is
    not applied), `pipelineParallelSize` without `raySpec`, and an `lmcacheConfig` key they do not read.
    The operator's `VLLMRuntime` is held to its CRD's fields (`vllmConfig.maxNumSeqs` -> `model.maxNumSeqs`,
    `deploymentConfig.tolerations` -> `toleration`).
    In NVIDIA NIM `nim-llm` values, a top-level or `model.*` key the chart does not read (`probes`,
    `fullname`) is a warning, and so is `model.numGpus` differing from the GPUs the pod gets: it requests
    none (the GPU request is `resources`; left out, the chart's default is 1 GPU). On an AIBrix workload, a
    `model.aibrix.ai/<key>` label AIBrix reads nowhere (`metrics-port` for `metric-port`) is a warning, and
    so is `model.aibrix.ai/name` on a Deployment's own labels but not on its pod template: the gateway
    finds a model's pods by the pod's label, so it never routes to them.
    A flag the release in force does not have is an error where the image's tag pins a release kvlint
    read (vLLM 0.6.0 to 0.33.0, SGLang 0.4.0 to 0.5.13.post1 and LMDeploy's `serve api_server` 0.4.0 to
    0.18.0 from their wheels, TGI's launcher 0.2.0 to 3.3.7 from its tags, trtllm-serve 0.18.2 to 1.2.1
    from each release's documented click options) and a warning that names the assumption otherwise.
    vLLM's, SGLang's and LMDeploy's argparse take an unambiguous prefix and vLLM's its generated `--no-x`;
    LMDeploy reads `--x_y` as `--x-y` from v0.9.2 only; TGI's clap and trtllm-serve's click take neither,
    nor `--x_y` for `--x-y`. llama.cpp's llama-server (builds b3716 to b4747 and b9093 to b11434 read, one
    every ~250; a build between two read ones is judged where both lack the option) takes no prefix,
    reads `--x_y` as `--x-y`, and checks short spellings (`-kvu`) too.

    ## Why is this bad?
    The engine will read that value its own way (or refuse it). kvlint would otherwise check a
    configuration that is not the one deployed.

    ## How to fix
    Write the value as the engine documents it, or expand the variable.

    ## Suppress
    `# kvlint: disable=KV005 -- reason` on the line.
    """

    id = UNPARSED_SETTING
    name = "unparsed-setting"
    severity = Severity.WARNING

    def note(self, ctx: IssueContext) -> str:
        """A setting that could not be read keeps the capacity rules from running: name them."""
        return skipped_note(ctx) if ctx.deployment is not None and ctx.deployment.unreadable else ""
