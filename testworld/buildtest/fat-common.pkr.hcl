# Shared by the fat builds of testworld/e2e (fat-*.pkr.hcl) and
# testworld/faults (embedded as buildtest.FatCommon): the plugin, the lab's
# snapshots through the data source, and a build VM from the
# GenericCloud-like image, named like the image so server faults can
# target it. The Ark credentials come from ARK_USERNAME/ARK_PASSWORD
# unless ark_password/repo_password are given.
variable "image_name" {
  type = string
}

# The lab's release server and the checksums of its stand-in tarballs,
# which replace the built-in (real) ones.
variable "release_base_url" {
  type    = string
  default = env("LAB_RELEASES_URL")
}

# grafana.com's dashboard API as the lab serves it (the grafana group's
# dashboards)
variable "grafana_dashboards_url" {
  type    = string
  default = env("LAB_GRAFANA_URL")
}

# the lab's git server and package index (the groups' checkouts and venvs)
variable "git_base_url" {
  type    = string
  default = env("LAB_GIT_URL")
}

variable "python_index_url" {
  type    = string
  default = env("LAB_PYPI_URL")
}

variable "binary_sha256" {
  type    = map(string)
  default = {}
}

variable "source_image_name" {
  type    = string
  default = "Rocky-9-GenericCloud-Base-9.6"
}

variable "manifest_output" {
  type    = string
  default = ""
}

variable "sbom_output" {
  type    = string
  default = ""
}

# Empty: ARK_PASSWORD.
variable "ark_password" {
  type      = string
  default   = ""
  sensitive = true
}

variable "repo_password" {
  type      = string
  default   = ""
  sensitive = true
}

variable "content_url" {
  type    = string
  default = env("ARK_CONTENT_URL")
}

data "fatimage-ark" "rocky" {
  content_url = var.content_url
  password    = var.ark_password
  os_version  = "9.6"
  repo {
    name      = "baseos"
    path      = "rocky/9.6/BaseOS/x86_64/os"
    repo_file = "rocky"
  }
  repo {
    name      = "appstream"
    path      = "rocky/9.6/AppStream/x86_64/os"
    repo_file = "rocky"
  }
  repo {
    name      = "crb"
    path      = "rocky/9.6/CRB/x86_64/os"
    repo_file = "rocky"
  }
  repo {
    name      = "extras"
    path      = "rocky/9.6/extras/x86_64/os"
    repo_file = "rocky-extras"
  }
  repo {
    name = "epel"
    path = "epel/9/Everything/x86_64"
  }
  repo {
    name      = "OpenHPC"
    path      = "OpenHPC/3/EL_9"
    repo_file = "OpenHPC"
  }
  repo {
    name      = "OpenHPC-updates"
    path      = "OpenHPC/3/updates/EL_9"
    repo_file = "OpenHPC"
  }
  repo {
    name     = "grafana"
    path     = "grafana/oss/rpm"
    gpgcheck = false
  }
}

source "fatimage-openstack" "lab" {
  source_image_name   = var.source_image_name
  flavor              = "m1.small"
  floating_ip_network = "public"
  ssh_username        = "rocky"
  image_name          = var.image_name
  instance_name       = var.image_name
  ssh_timeout         = "2m"
}
