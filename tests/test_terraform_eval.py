"""Terraform expressions kvlint evaluates (load/terraform_eval.py, terraform_functions.py) and the node
pools they give (extract/kinds/node_pools_tf.py with load/terraform_instances.py, terraform_modules.py).

Each class is the shape of a published file, cut to what the test needs:
- for expressions, concat() of conditionals, merge(): GoogleCloudPlatform/ai-on-gke @8676d66
  modules/gke-standard-public-cluster/main.tf:15-17, infrastructure/main.tf:80 and :85-117,
  infrastructure/variables.tf:225-262 (list(object({... optional(string, "") ...})));
- `for_each = local.node_pools` with `each.value`, `lookup()`, a `dynamic "guest_accelerator"`:
  terraform-google-modules/kubernetes-engine private-cluster-update-variant as copied in
  pakolee867/vllm-production-stack-terraform @46898b6 gke/modules/private-cluster-update-variant
  main.tf:52, cluster.tf:754-757, :852, :965-970, variables.tf:170-179;
- a module of the repository called with `for_each` (two levels): the same repository's
  aks/main.tf:41-60 and :155-170, aks/modules/avm-res-cs-managedcluster/main.nodepool.tf:1-8,
  modules/nodepool/main.tf:1-5;
- a module folder's variables linked from one place: GoogleCloudPlatform/accelerated-platforms
  @9320f3b platforms/gke/base/core/container_cluster/_cluster_variables.tf ->
  ../../_shared_config/cluster_variables.tf;
- `range()` and `format()`: ai-on-gke benchmarks/infra/65k-cpu-cluster/main.tf:101-105;
- `yamldecode(file(...))` of a file of the repository: written for the test, in the form
  awslabs/data-on-eks infra/terraform/*.tf write their `yamldecode(templatefile(...))` locals.
"""

from __future__ import annotations

import os

from kvlint.extract.kinds import node_pools_tf
from kvlint.load import terraform_eval as tf_eval
from kvlint.load import terraform_names as tf_names
from kvlint.load import terraform_types as tf_types


def _eval(text: str, known: dict | None = None, bound: dict | None = None):
    return tf_eval.evaluate(text, tf_eval.Scope(known or {}, bound))


def _unknown(value) -> bool:
    return isinstance(value, tf_eval.Unknown)


# ---- the expression classes


_GPU_POOLS = [
    {"name": "gpu-pool", "machine_type": "n1-standard-16", "accelerator_count": 2, "node_locations": ""}
]


def test_for_expressions_build_lists_and_maps():
    known = {"var.pools": _GPU_POOLS + [{"name": "cpu-pool", "machine_type": "n2-standard-4"}]}
    assert (
        _eval("${{ for np in var.pools : np.name => np }}", known)["cpu-pool"]["machine_type"]
        == "n2-standard-4"
    )
    assert _eval('${[for np in var.pools : np.name if np.machine_type != "n2-standard-4"]}', known) == [
        "gpu-pool"
    ]
    assert _eval('${{for k, v in {a = "x", b = "x"} : v => k...}}') == {"x": ["a", "b"]}  # grouping
    assert _eval("${[for i, np in var.pools : i]}", known) == [0, 1]


def test_concat_of_conditionals_and_merge():
    known = {
        "var.enable_gpu": True,
        "var.enable_tpu": False,
        "var.gpu_pools": _GPU_POOLS,
        "var.tpu_pools": [],
    }
    known["var.cpu_pools"] = [{"name": "cpu-pool"}]
    got = _eval(
        "${concat((var.enable_gpu ? var.gpu_pools : []), (var.enable_tpu ? var.tpu_pools : []), var.cpu_pools)}",
        known,
    )
    assert [p["name"] for p in got] == ["gpu-pool", "cpu-pool"]
    assert _eval("${merge({a = 1, b = 2}, {b = 3})}") == {"a": 1, "b": 3}


def test_lookup_and_try_fall_back_only_when_terraform_would():
    pool = {"name": "gpu-pool", "accelerator_count": 2}
    assert _eval('${lookup(each.value, "accelerator_type", "")}', bound={"each": {"value": pool}}) == ""
    assert _eval(
        '${lookup(each.value, "accelerator_count", 0) > 0 ? [1] : []}', bound={"each": {"value": pool}}
    ) == [1]
    assert _eval('${try(var.p.zone, "none")}', {"var.p": pool}) == "none"  # a missing attribute: an error
    assert _unknown(
        _eval('${try(module.gke.zone, "none")}')
    )  # unknown: it may well succeed, no fallback taken
    assert _eval("${can(var.p.zone)}", {"var.p": pool}) is False


def test_a_condition_on_an_unknown_keeps_what_both_ways_give():
    """ai-on-gke infrastructure/main.tf:80: the zones depend on a -var-file value, the machine type not."""
    text = (
        '${[for elm in var.gpu_pools : (local.regional && elm["node_locations"] == "") '
        '? merge(elm, {"node_locations" : "us-central1-a"}) : elm]}'
    )
    (pool,) = _eval(text, {"var.gpu_pools": _GPU_POOLS})  # local.regional is not stated
    assert pool["machine_type"] == "n1-standard-16" and pool["accelerator_count"] == 2
    assert _unknown(pool["node_locations"])
    assert _unknown(_eval("${var.x ? 1 : 2}"))


def test_optional_attributes_take_their_type_s_defaults():
    type_text = '${list(object({name = string, node_locations = optional(string, ""), max_count = optional(number, 3), spot = optional(bool)}))}'
    (pool,) = tf_types.typed([{"name": "gpu-pool"}], type_text)
    assert pool == {"name": "gpu-pool", "node_locations": "", "max_count": 3, "spot": None}
    known = tf_names.settle({"var.pools": [{"name": "a"}], "type.pools": type_text})
    assert known["var.pools"][0]["max_count"] == 3


def test_range_format_splat_and_templates():
    known = {"var.node_pool_count": 3, "var.node_pool_size": 2}
    got = _eval(
        '${{for i in range(var.node_pool_count) : format("pool%02d", i + 1) => var.node_pool_size}}', known
    )
    assert got == {"pool01": 2, "pool02": 2, "pool03": 2}
    assert _eval("${var.p[*].name}", {"var.p": _GPU_POOLS}) == ["gpu-pool"]
    assert _eval("${var.region}-a", {"var.region": "us-east4"}) == "us-east4-a"


def test_what_is_not_known_is_never_guessed():
    for text in (
        "${module.gke.name}",
        "${data.x.y}",
        "${var.unset}",
        '${sha256("a")}',
        '${replace("a", "/a/", "b")}',
    ):
        assert _unknown(_eval(text)), text
    known = tf_names.settle({"local.a": "${local.b}", "local.b": "${local.a}", "var.c": "c"})
    assert known == {"var.c": "c"}  # locals that name each other: unknown, dropped


def test_a_local_partly_known_keeps_its_known_parts_for_the_readers():
    known = tf_names.settle({"local.pools": '${[{name = "gpu", zone = module.net.zone}]}'})
    assert known["local.pools"][0]["name"] == "gpu"
    assert known["local.pools"][0]["zone"].startswith("${")  # a placeholder, as the readers skip it


# ---- bounds: a hostile file must not hang a run


def test_hostile_expressions_stop_at_their_bounds():
    scope = tf_eval.Scope({})
    assert _unknown(tf_eval.evaluate("${[for i in range(2000) : [for j in range(2000) : i * j]]}", scope))
    assert scope.module.steps < 0  # it stopped by the step budget, not by finishing 4,000,000 items
    assert _unknown(_eval("${range(100000000)}"))
    assert _unknown(_eval("${" + "(" * 500 + "1" + ")" * 500 + "}"))
    assert _unknown(_eval("${" + "9" * 5000 + " + 1}"))  # more digits than Python converts
    big = '"' + "a" * 60000 + '"'
    assert _unknown(_eval(f'${{replace({big}, "a", "bbbbbbbbbb")}}'))
    assert _unknown(_eval(f'${{join("", [for i in range(100) : {big}])}}'))
    assert _unknown(_eval("${" + "x" * (tf_eval.TEXT_MAX + 1) + "}"))


# ---- node pools


def _write(root, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _read(root, rel: str):
    path = root / rel
    return {p.name: p for p in node_pools_tf.read(path.read_text(), rel, str(path))}


_GKE_MODULE = {
    "main.tf": "locals {\n  node_pools = { for np in var.node_pools : np.name => np }\n}\n",
    "variables.tf": 'variable "node_pools" {\n  type = list(map(any))\n  default = [{ name = "default-node-pool" }]\n}\n',
    "cluster.tf": """
resource "google_container_node_pool" "pools" {
  for_each = local.node_pools
  name     = { for k, v in random_id.name : k => v.hex }[each.key]
  node_config {
    machine_type = lookup(each.value, "machine_type", "e2-medium")
    dynamic "guest_accelerator" {
      for_each = lookup(each.value, "accelerator_count", 0) > 0 ? [1] : []
      content {
        type  = lookup(each.value, "accelerator_type", "")
        count = lookup(each.value, "accelerator_count", 0)
      }
    }
  }
}
""",
}


def test_a_resource_with_for_each_is_one_pool_per_element(tmp_path):
    (tmp_path / ".git").mkdir()
    _write(tmp_path, {f"gke/{k}": v for k, v in _GKE_MODULE.items()})
    (tmp_path / "gke/terraform.tfvars").write_text(
        'node_pools = [\n  { name = "gpu-pool", machine_type = "g2-standard-24", accelerator_type = "nvidia-l4", '
        'accelerator_count = 2 },\n  { name = "cpu-pool", machine_type = "n2-standard-4" },\n]\n'
    )
    found = _read(tmp_path, "gke/cluster.tf")
    assert set(found) == {"pools[gpu-pool]", "pools[cpu-pool]"}  # the name is computed (random_id): the key
    assert found["pools[gpu-pool]"].gpus == (("l4", 2),)  # the dynamic guest_accelerator, written out
    assert found["pools[cpu-pool]"].gpus == () and found["pools[cpu-pool]"].has_gpu is False
    assert found["pools[gpu-pool]"].where.line == 2  # the resource that defines them


def test_a_dynamic_block_on_an_unknown_leaves_the_gpu_unknown(tmp_path):
    (tmp_path / ".git").mkdir()
    _write(
        tmp_path,
        {
            "main.tf": _GKE_MODULE["cluster.tf"].replace(
                "local.node_pools", '{ a = { machine_type = "n1-standard-8", accelerator_count = var.n } }'
            )
        },
    )
    (pool,) = _read(tmp_path, "main.tf").values()
    assert pool.gpus == () and pool.has_gpu is None  # an N1 with accelerators kvlint cannot count


def test_a_module_of_the_repository_gets_the_caller_s_pools(tmp_path):
    """ai-on-gke: infrastructure/main.tf passes gpu_pools (a for expression) to a wrapper module that
    concat()s it into terraform-google-modules' node_pools."""
    (tmp_path / ".git").mkdir()
    _write(
        tmp_path,
        {
            "modules/gke-standard-public-cluster/main.tf": """
locals {
  node_pools = concat((var.enable_gpu ? var.gpu_pools : []), var.cpu_pools)
}
module "gke" {
  source     = "terraform-google-modules/kubernetes-engine/google"
  node_pools = local.node_pools
}
""",
            "modules/gke-standard-public-cluster/variables.tf": (
                'variable "gpu_pools" {\n  type = list(map(any))\n}\n'
                'variable "cpu_pools" {\n  type = list(map(any))\n}\n'
                'variable "enable_gpu" {\n  default = true\n}\n'
            ),
            "infrastructure/main.tf": """
locals {
  gpu_pools = [for elm in var.gpu_pools : (local.regional && elm["node_locations"] == "") ? merge(elm, { "node_locations" : "x" }) : elm]
}

module "public-gke-standard-cluster" {
  count     = var.create_cluster ? 1 : 0
  source    = "../modules/gke-standard-public-cluster"
  cpu_pools = var.cpu_pools
  gpu_pools = local.gpu_pools

  all_node_pools_labels = var.all_node_pools_labels
}
""",
            "infrastructure/variables.tf": """
variable "create_cluster" {
  default = true
}
variable "cpu_pools" {
  default = [{ name = "cpu-pool", machine_type = "n1-standard-16" }]
}
variable "gpu_pools" {
  type = list(object({ name = string, machine_type = string, node_locations = optional(string, ""),
    accelerator_count = optional(number, 0), accelerator_type = optional(string, "nvidia-tesla-t4") }))
  default = [{ name = "gpu-pool", machine_type = "n1-standard-16", accelerator_count = 2 }]
}
""",
        },
    )
    found = _read(tmp_path, "infrastructure/main.tf")
    assert found["gpu-pool"].gpus == (("t4", 2),)  # the type's optional accelerator_type
    assert found["cpu-pool"].gpus == ()
    assert found["gpu-pool"].where.file == "infrastructure/main.tf" and found["gpu-pool"].where.line == 6
    assert "module public-gke-standard-cluster" in found["gpu-pool"].kind
    assert _read(tmp_path, "modules/gke-standard-public-cluster/main.tf") == {}  # alone: gpu_pools unstated


def test_module_calls_with_for_each_nest(tmp_path):
    """pakolee867 aks: main.tf -> avm-res-cs-managedcluster (for_each = var.node_pools) -> nodepool."""
    (tmp_path / ".git").mkdir()
    _write(
        tmp_path,
        {
            "aks/main.tf": """
locals {
  gpu_pool = { gpu = { name = "gpu", vm_size = "Standard_NC4as_T4_v3", labels = { "workload-type" = "gpu" } } }
}
module "aks" {
  source     = "./modules/cluster"
  node_pools = var.inference_hardware == "gpu" ? { gpu = local.gpu_pool.gpu } : {}
}
""",
            "aks/variables.tf": 'variable "inference_hardware" {\n  default = "gpu"\n}\n',
            "aks/modules/cluster/main.nodepool.tf": """
module "nodepools" {
  source      = "./modules/nodepool"
  for_each    = var.node_pools
  name        = each.value.name
  vm_size     = each.value.vm_size
  node_labels = each.value.labels
}
""",
            "aks/modules/cluster/variables.tf": 'variable "node_pools" {\n  default = {}\n}\n',
            "aks/modules/cluster/modules/nodepool/main.tf": """
resource "azurerm_kubernetes_cluster_node_pool" "this" {
  count       = var.create_nodepool_before_destroy ? 0 : 1
  name        = var.name
  vm_size     = var.vm_size
  node_labels = var.node_labels
}
""",
            "aks/modules/cluster/modules/nodepool/variables.tf": 'variable "create_nodepool_before_destroy" {\n  default = false\n}\n',
        },
    )
    (pool,) = _read(tmp_path, "aks/main.tf").values()
    assert pool.name == "gpu" and pool.gpus == (("t4", 1),)
    assert pool.labels["workload-type"] == "gpu" and pool.labels["agentpool"] == "gpu"
    assert (pool.where.file, pool.where.line) == ("aks/main.tf", 5)
    (tmp_path / "aks/variables.tf").write_text('variable "inference_hardware" {\n  default = "cpu"\n}\n')
    assert _read(tmp_path, "aks/main.tf") == {}  # the module's own values: no GPU pool asked for


def test_module_sources_and_files_outside_the_repository_are_not_read(tmp_path):
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    (repo / ".git").mkdir(parents=True)
    _write(
        outside,
        {
            "gke/main.tf": 'module "gke" {\n  source = "x"\n  node_pools = [{ name = "evil", machine_type = "a3-highgpu-8g" }]\n}\n'
        },
    )
    _write(outside, {"pools.yaml": "pools:\n  - name: evil\n    machine_type: a3-highgpu-8g\n"})
    _write(
        repo,
        {
            "main.tf": 'module "m" {\n  source = "../outside/gke"\n}\n',
            "yaml.tf": 'locals {\n  cfg = yamldecode(file("${path.module}/../outside/pools.yaml"))\n}\nmodule "gke" {\n  source = "x"\n  node_pools = local.cfg.pools\n}\n',
        },
    )
    assert _read(repo, "main.tf") == {}
    assert _read(repo, "yaml.tf") == {}


def test_yamldecode_of_a_file_of_the_repository(tmp_path):
    (tmp_path / ".git").mkdir()
    _write(
        tmp_path,
        {
            "infra/pools.yaml": "pools:\n  - name: gpu\n    machine_type: g2-standard-24\n    accelerator_type: nvidia-l4\n    accelerator_count: 2\n",
            "infra/main.tf": 'locals {\n  cfg = yamldecode(file("${path.module}/pools.yaml"))\n}\n\nmodule "gke" {\n  source     = "x"\n  node_pools = local.cfg.pools\n}\n',
        },
    )
    (pool,) = _read(tmp_path, "infra/main.tf").values()
    assert pool.gpus == (("l4", 2),) and pool.where.line == 5  # the call: the list is another file's


def test_a_module_s_variables_linked_inside_the_repository_are_read(tmp_path):
    (tmp_path / ".git").mkdir()
    _write(
        tmp_path,
        {
            "_shared_config/cluster_variables.tf": 'variable "machine" {\n  default = "g2-standard-24"\n}\n',
            "cluster/pool.tf": 'resource "google_container_node_pool" "p" {\n  name = "gpu"\n  node_config {\n    machine_type = var.machine\n  }\n}\n',
        },
    )
    os.symlink("../_shared_config/cluster_variables.tf", tmp_path / "cluster/_cluster_variables.tf")
    assert _read(tmp_path, "cluster/pool.tf")["gpu"].gpus == (("l4", 2),)
    (tmp_path / "cluster/_cluster_variables.tf").unlink()  # now a link out of the repository: not read
    outside = tmp_path.parent / f"{tmp_path.name}-vars.tf"
    outside.write_text('variable "machine" {\n  default = "a3-highgpu-8g"\n}\n')
    os.symlink(str(outside), tmp_path / "cluster/_cluster_variables.tf")
    assert _read(tmp_path, "cluster/pool.tf")["gpu"].instance_types == ()


def test_modules_calling_each_other_are_read_a_bounded_number_of_times(tmp_path, monkeypatch):
    """A hostile repository: two modules whose every call names the other (and itself), 20 calls a file."""
    from kvlint.load import terraform_modules as tf_modules

    (tmp_path / ".git").mkdir()
    for me, other in (("a", "b"), ("b", "a")):
        calls = "".join(
            f'module "m{i}" {{\n  source = "{"../" + other if i % 2 else "./"}"\n  node_pools_x = 1\n}}\n'
            for i in range(20)
        )
        _write(tmp_path, {f"{me}/main.tf": calls})
    reads: list[str] = []
    real_files = tf_modules.files
    monkeypatch.setattr(
        tf_modules, "files", lambda folder, budget: reads.append(folder) or real_files(folder, budget)
    )
    assert _read(tmp_path, "a/main.tf") == {}
    assert 0 < len(reads) <= node_pools_tf._CALLS_MAX  # not 20 ** 3


def test_yamldecode_of_a_templatefile_fills_its_vars_or_stays_unknown(tmp_path):
    (tmp_path / ".git").mkdir()
    template = "pools:\n  - name: gpu\n    machine_type: ${machine}\n    accelerator_type: nvidia-l4\n    accelerator_count: 1\n"
    call = 'yamldecode(templatefile("${path.module}/pools.yaml.tpl", { machine = var.machine }))'
    main = f'locals {{\n  cfg = {call}\n}}\n\nmodule "gke" {{\n  source     = "x"\n  node_pools = local.cfg.pools\n}}\n'
    _write(tmp_path, {"pools.yaml.tpl": template, "main.tf": main})
    _write(tmp_path, {"variables.tf": 'variable "machine" {\n  default = "g2-standard-8"\n}\n'})
    (pool,) = _read(tmp_path, "main.tf").values()
    assert pool.instance_types == ("g2-standard-8",) and pool.gpus == (("l4", 1),)
    (tmp_path / "variables.tf").write_text('variable "machine" {}\n')  # no value: the template is not read
    assert _read(tmp_path, "main.tf") == {}
