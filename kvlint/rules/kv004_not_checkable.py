from kvlint.catalog import tpus
from kvlint.codes import NOT_CHECKABLE
from kvlint.findings import IssueKind, Severity
from kvlint.rules.base import IssueRule


class NotCheckable(IssueRule):
    """A serving workload kvlint recognises but cannot evaluate, and why.

    ## What it does
    Reports, once per workload, inputs that serve a model with something kvlint does not model:
    KAITO Workspaces (and InferenceSet templates) whose parallelism the operator picks at run time from
    what kvlint cannot see (a preset missing from KAITO's model catalog, a VM missing from its SKU table,
    MIG partitions, or the ConfigMap neither in the file nor beside it; otherwise the operator's node
    estimate and parallelism are computed as KAITO computes them and the Workspace is checked as the vLLM
    it runs), TensorRT-LLM when its settings are in a file kvlint does not have (Triton's model repository
    when neither a folder beside the file nor a mounted ConfigMap holds its config.pbtxt, an LLM-API options
    file not in the file or beside it) or its backend is AutoDeploy, Ollama when the file names no model (it pulls one at run time), llama.cpp on the
    host CPU (its CPU image build, or a container given no GPU), TPU and AWS Neuron accelerators,
    engines other than vLLM, SGLang, TGI, llama.cpp and TensorRT-LLM, TGI's backends other than its CUDA and ROCm servers as its
    image tag names them (Intel CPU/XPU, Neuron, Gaudi, TensorRT-LLM, llama.cpp; for llama.cpp the KV
    cache's size on the GPU is stated when the options fix it), and unrendered Helm templates (`{{ .Values… }}`): a
    file in a chart's `templates/` directory, one that does not parse as YAML, or one where an action
    is YAML structure (`name: {{ .Release.Name }}`) is skipped whole; template text inside the
    strings of a file that parses (an annotation, an alert's summary) is read as written, the rest
    of the file is checked, and one finding points at the first such string.
    Also a part of a workload kvlint cannot see: a KServe InferenceService whose ServingRuntime /
    ClusterServingRuntime is neither in the same file nor in a YAML file beside it (the runtime's
    command, args, env and /dev/shm are then unknown, not assumed empty), and KServe's Hugging Face
    server when it runs the model on transformers (`--backend huggingface`, or `--backend auto` for a
    model kvlint cannot tell vLLM supports). A file that gives no workload but holds a container
    requesting GPUs (or TPUs, Neuron, Gaudi), such a request in a layout kvlint does not know, or an
    engine command line, gets one KV004 per document: never "no problems found".
    Also, at the model, a model kvlint knows but whose weights it cannot price: a GGUF repository that
    does not name the file (and so the quant type) served, and an MLX conversion (`mlx-community/…-4bit`),
    which no GPU engine kvlint models loads (docs/models.md).
    Also, as a warning at `-ngl`, llama.cpp layers left on the CPU ("N of M layers on the CPU: it runs,
    slowly"): kvlint checks the GPU's share only. Ollama's scheduler leaves layers on the CPU only when the
    pod's GPUs together cannot hold them: a model one GPU cannot hold is first spread over more of them.
    Also, as an info at the option, an engine option that changes GPU memory in a way kvlint's plan leaves
    out: a vLLM draft model (`--speculative-config`), a KV connector not known to transfer from the pool in
    place, an all-to-all backend's buffers, CUDA-graph settings in `--compilation-config` beyond the capture
    sizes, SGLang redundant experts or DeepEP, TGI `--speculate`, `--lora-adapters`, `--cuda-graphs`. The
    capacity figures are still shown, for the deployment without that option. Each engine's options and
    what kvlint does with each (modelled, by which function; not modelled, and what it changes; no effect)
    are data in `kvlint/engines/{vllm,sglang,tgi,llamacpp}/data/memory_options.json`, with the engine source
    line that says so.

    ## Why is this bad?
    It is not bad in itself: it tells you which workloads were not checked, instead of a silent
    pass or a wrong number.

    ## How to fix
    Nothing to fix. Render Helm charts first (`helm template … | kvlint -`); lint a KServe runtime's
    file together with the InferenceService (same directory, or the same file).

    ## Suppress
    `# kvlint: disable=KV004` on the line, `ignore = ["KV004"]` in the configuration.
    """

    id = NOT_CHECKABLE
    name = "not-checkable"
    severity = Severity.INFO
    infos = {
        IssueKind.ENGINE_NOT_MODELLED: "workloads not checked: their engine or operator sizes memory in a way "
        "kvlint does not model — nothing to fix",
        IssueKind.ACCELERATOR_NOT_MODELLED: "workloads not checked: they run on accelerators kvlint does not model "
        f"(Neuron, Gaudi, NPUs, CPUs, and TPUs other than vLLM's on {tpus.planned()}) — nothing to fix",
        IssueKind.OPTION_NOT_MODELLED: "engine options whose memory the plan leaves out (its figures are for the "
        "deployment without them) — keep headroom for them",
        IssueKind.DEFINED_ELSEWHERE: "serving templates not checked: the model or the GPUs come from each object "
        "that uses them — lint them together (same file or directory)",
        IssueKind.NOT_READ_AS_WORKLOAD: "documents that request GPUs or name an engine in a layout kvlint does not "
        "read as a serving workload — if one serves an LLM, lint its rendered manifest",
        None: "workloads or parts not checked for another reason (a runtime, base model, template or program "
        "kvlint cannot see) — each says what to lint with it (--show-infos)",
    }
