# The site's appliance end to end (with fat-common.pkr.hcl): the build's
# groups and their values come from the site's appliance checkout and
# environment, read by the site's Ansible on the build VM; the lab's
# snapshots of every repository the groups install from. With
# inventory_groups = "doca,cuda" and source_image_name a fat image (or
# RL8's base image), the appliance's extra build (its vendor
# repositories from the site's variables: no repos entry names them).
variable "inventory_groups" {
  type    = string
  default = "extra_packages,openhpc,openondemand,grafana,kernel_modules"
}

variable "appliance_dir" {
  type = string
}

variable "appliance_environment" {
  type = string
}

variable "appliance_roles_path" {
  type = list(string)
}

variable "appliance_collections_path" {
  type = list(string)
}

# where the groups' release RPMs come from (slurm_exporter's and
# codeserver's from GitHub's release paths, rstudio's from Posit's), as a
# site with a mirror sets them; "" is the plugin's default, the public
# host; the appliance's own build has no variable for them and resolves
# the names to the lab's mirror (appliancesite's pre hook)
variable "github_releases_url" {
  type    = string
  default = ""
}

variable "rstudio_download_url" {
  type    = string
  default = ""
}

# the HPL source's sha256 where a mirror answering as www.netlib.org
# serves another file than netlib's (the lab's stand-in), as a site pins
# it; "" keeps the hpctests group's own pin
variable "hpl_sha256" {
  type    = string
  default = ""
}

variable "lab_repos" {
  type = list(map(string))
}

# the lab's registry for the groups' container images (mysql, opensearch),
# as a site behind a mirror sets it
variable "container_registry" {
  type    = string
  default = env("LAB_REGISTRY")
}

build {
  sources = ["source.fatimage-openstack.lab"]

  provisioner "fatimage" {
    repos                      = var.lab_repos
    appliance_dir              = var.appliance_dir
    appliance_environment      = var.appliance_environment
    appliance_roles_path       = var.appliance_roles_path
    appliance_collections_path = var.appliance_collections_path
    inventory_groups           = var.inventory_groups
    release_base_url           = var.release_base_url
    grafana_dashboards_url     = var.grafana_dashboards_url
    git_base_url               = var.git_base_url
    github_releases_url        = var.github_releases_url
    rstudio_download_url       = var.rstudio_download_url
    python_index_url           = var.python_index_url
    python_index_insecure      = true
    container_registry         = var.container_registry
    container_registries {
      host     = var.container_registry
      insecure = true
    }
    # a download of the same destination replaces the group's (its pin)
    dynamic "downloads" {
      for_each = var.hpl_sha256 != "" ? [var.hpl_sha256] : []
      content {
        url         = "http://www.netlib.org/benchmark/hpl/hpl-2.3.tar.gz"
        sha256      = downloads.value
        destination = "/opt/hpl/hpl-2.3.tar.gz"
        mode        = "0644"
      }
    }
    dynamic "binaries" {
      for_each = var.binary_sha256
      content {
        name   = binaries.key
        sha256 = binaries.value
      }
    }
    manifest_output = var.manifest_output
  }
}
