# A Rocky 8.10 build (with fat-common.pkr.hcl, source_image_name the
# lab's Rocky-8-GenericCloud-Base-8.10): the built-in groups whose values
# differ by major and openhpc, from the lab's el8 snapshots, with no appliance
# checkout (the groups' own per-major values). The repositories' os_version
# says 8.10, so Prepare resolves the groups for Rocky 8.
variable "container_registry" {
  type    = string
  default = env("LAB_REGISTRY")
}

variable "releases_url" {
  type = string
}

data "fatimage-ark" "rocky8" {
  content_url = var.content_url
  password    = var.ark_password
  os_version  = "8.10"
  repo {
    name      = "baseos"
    path      = "rocky/8.10/BaseOS/x86_64/os"
    repo_file = "Rocky-BaseOS"
  }
  repo {
    name      = "appstream"
    path      = "rocky/8.10/AppStream/x86_64/os"
    repo_file = "Rocky-AppStream"
  }
  repo {
    name      = "crb"
    path      = "rocky/8.10/PowerTools/x86_64/os"
    repo_file = "Rocky-PowerTools"
    repo_name = "powertools"
  }
  repo {
    name      = "extras"
    path      = "rocky/8.10/extras/x86_64/os"
    repo_file = "Rocky-Extras"
  }
  repo {
    name = "epel"
    path = "epel/8/Everything/x86_64"
  }
  repo {
    name      = "OpenHPC"
    path      = "OpenHPC/2/EL_8"
    repo_file = "OpenHPC"
  }
  repo {
    name      = "OpenHPC-updates"
    path      = "OpenHPC/2/updates/EL_8"
    repo_file = "OpenHPC"
  }
  repo {
    name      = "TurboVNC"
    path      = "turbovnc/x86_64"
    repo_file = "TurboVNC"
  }
}

build {
  sources = ["source.fatimage-openstack.lab"]

  provisioner "fatimage" {
    repos = data.fatimage-ark.rocky8.repos
    # the groups the appliance's fatimage builds whose values differ on
    # RL8: the slurm-tools and ansible-init venvs (python3.9 from
    # python39), the desktop's python3.9 and websockify venv, mysql's
    # python39 and its client libraries in python3.9, rstudio-server's
    # rhel8 RPM, the extra packages (python312 on 8.10); and openhpc,
    # the Slurm that the extra build chained on this image rebuilds
    groups                = ["dnf_repos", "extra_packages", "slurm_stats", "ansible_init", "openondemand_desktop", "openondemand_rstudio", "mysql", "openhpc"]
    git_base_url          = var.git_base_url
    python_index_url      = var.python_index_url
    python_index_insecure = true
    rstudio_download_url  = var.releases_url
    container_registry    = var.container_registry
    container_registries {
      host     = var.container_registry
      insecure = true
    }
    manifest_output = var.manifest_output
  }
}
