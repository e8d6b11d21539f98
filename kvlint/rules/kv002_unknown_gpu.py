from kvlint.codes import UNKNOWN_GPU
from kvlint.findings import IssueKind, Severity
from kvlint.rules.base import IssueContext, IssueRule, skipped_note


class UnknownGpu(IssueRule):
    """The GPU type is missing, not in the catalog, ambiguous, of unknown memory, or a slice the card lacks.

    ## What it does
    Reports a serving workload whose GPU kvlint cannot identify: a name not in the catalog, a name
    that several cards share (`A100` is sold with 40 GB and 80 GB), a card whose memory is not
    known, or a MIG profile the selected card does not have (`nvidia.com/mig-1g.5gb` on an H100:
    no node offers it and the pod stays Pending), or a GPU node-label value no real node carries
    (`nvidia.com/gpu.product: NVIDIA-H100-SXM4-80GB`, a GKE accelerator spelt differently): a warning
    naming the closest real values, since the pod would stay Pending. The message lists the checks
    that were skipped. Chart values that the chart turns into such a label are read the same way:
    the vLLM project's Helm chart renders `gpuModels` as node affinity `nvidia.com/gpu.product In
    gpuModels` when `resources.requests` and `resources.limits` both ask for `nvidia.com/gpu`
    (vllm-project/vllm examples/online_serving/chart-helm/templates/deployment.yaml), so its
    placeholder `TYPE_GPU_USED` left in place is this warning at the `gpuModels` entry. Every chart and
    stack reader checks the labels it renders: production-stack `nodeSelectorTerms` (and a VLLMRuntime's
    `deploymentConfig.nodeSelectorTerms`), llm-d `acceleratorTypes`, nim-llm and NIMService
    `nodeSelector`, a RayService's GPU worker groups, and the `resourceProfiles` of KubeAI's own chart
    values, whose nodeSelector every Model naming that profile gets (a file-level warning there).

    A pod that gets its GPUs through Dynamic Resource Allocation (`spec.resourceClaims` naming a
    ResourceClaim or ResourceClaimTemplate, `resource.k8s.io` v1beta1/v1beta2/v1) is read from the
    claim in the same file or a YAML file beside it: the device class (`gpu.nvidia.com`,
    `mig.nvidia.com`, `gpu.amd.com`, or a DeviceClass found beside it), `count` /
    `allocationMode`, and the CEL selectors on `productName`, `architecture`, `profile`,
    `targetGfxVersion` and `memory` (as the drivers publish them: NVML name, nvidia-smi total).
    KV002 is a warning when the claim is in neither place, or when no catalogued card matches the
    selector (`productName == "A100"`: the driver publishes "NVIDIA A100-SXM4-80GB"). A selector
    that admits several types is checked on each, as a fleet is (below), and KV002 is the info
    that lists where the deployment fits.

    A pod that requests no GPU at all (production-stack's `requestGPU` left out: the chart adds no GPU
    request) has no card to identify: when another finding already warns about the missing request,
    KV002 is an info that points to it rather than a second warning on the same line. So is a KubeAI
    Model whose `resourceProfile` is left out or names no profile KubeAI defines (KV005 says why).

    When the file names no GPU at all (no `gpu:`, no GPU node label, no instance type, no MIG
    profile, no DRA claim — the cluster decides):
    - with a `fleet: [L4, A100-80GB, H100]` in the configuration, every capacity rule runs once on
      each fleet type; KV002 is an info saying on which types the deployment fits and on which it
      does not. A capacity finding that holds on some types only names them and is at most a
      warning (the pod may land where it fits); one that holds on every type keeps its severity.
    - without configuration, KV002 is an info naming the smallest of the usual cloud GPUs on which
      the deployment fits at its GPU count (L4, A10G, L40S, A100-40GB, A100-80GB, H100, H200, B200:
      `common_cloud_gpus` in the GPU catalog), and an error when its weights exceed what even the
      largest of them gives the engine at that count. A deployment whose weights load on the largest
      but whose KV cache holds no full-length request anywhere is a warning. When kvlint cannot plan
      it at all (the model unknown, or a weight placement it would have to guess) "GPU type is not
      stated" is an info: nothing the author wrote is wrong, and the text report counts these
      workloads once per run with what to do.

    ## Why is this bad?
    Every capacity check needs the memory the engine sees on the card. Without it kvlint would
    have to guess, and a guess is a wrong number; a weight set larger than any card at the GPU
    count cannot run wherever the scheduler puts it.

    ## How to fix
    Select the GPU explicitly (`gpu: H100`, a `nodeSelector` on `nvidia.com/gpu.product` or
    `cloud.google.com/gke-accelerator`), pass `--gpu NAME`, set `gpu` or `fleet` in the
    configuration, or declare a new card under `gpus:` in the configuration.

    ## Suppress
    `# kvlint: disable=KV002 -- reason` on the workload's line, or `kvlint.io/ignore: "KV002=reason"`.
    """

    id = UNKNOWN_GPU
    name = "unknown-gpu"
    severity = Severity.WARNING
    infos = {
        IssueKind.GPU_NOT_STATED: "workloads not checked for memory on their own GPU: the GPU type is not stated "
        "(each one kvlint could plan is told the smallest usual cloud GPU it fits) — run `kvlint init` (the fleet "
        "from the repository's node pools, or --nodes FILE of `kubectl get nodes -o json`), pass --gpu, or set "
        "gpu: or fleet: in .kvlint.yaml",
        None: "workloads whose GPU kvlint could not settle (a fleet or a claim admitting several types, node "
        "pools without GPUs) — name the card, or set fleet: in .kvlint.yaml",
    }

    def note(self, ctx: IssueContext) -> str:
        """Which rules could not run on the deployment for want of this fact."""
        return skipped_note(ctx)
