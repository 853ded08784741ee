# The site Pulp end to end: the build VM cannot reach the Ark double, so
# the data source syncs the chosen snapshots into the lab's site Pulp and
# the provisioner installs from there. Run twice: the second build must
# reuse everything. testworld/faults runs it too (testdata/sitepulp), with
# short task timeouts and verification off.
packer {
  required_plugins {
    fatimage = {
      source  = "github.com/stackhpc/fatimage"
      version = ">= 0.1.0"
    }
  }
}

variable "image_name" {
  type = string
}

variable "content_url" {
  type    = string
  default = env("ARK_CONTENT_URL")
}

variable "site_pulp_url" {
  type    = string
  default = env("LAB_SITE_PULP_URL")
}

variable "site_pulp_username" {
  type    = string
  default = env("LAB_SITE_PULP_USERNAME")
}

variable "site_task_timeout" {
  type    = string
  default = "1h"
}

variable "verify" {
  type    = bool
  default = true
}

variable "site_pulp_password" {
  type      = string
  default   = env("LAB_SITE_PULP_PASSWORD")
  sensitive = true
}

data "fatimage-ark" "rocky" {
  content_url = var.content_url
  os_version  = "9.6"
  verify      = var.verify
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
  site_pulp {
    url          = var.site_pulp_url
    username     = var.site_pulp_username
    password     = var.site_pulp_password
    policy       = "immediate"
    task_timeout = var.site_task_timeout
  }
}

source "fatimage-openstack" "lab" {
  source_image_name   = "Rocky-9-GenericCloud-Base-9.6"
  flavor              = "m1.small"
  floating_ip_network = "public"
  ssh_username        = "rocky"
  image_name          = var.image_name
  instance_name       = var.image_name
  ssh_timeout         = "2m"
}

build {
  sources = ["source.fatimage-openstack.lab"]

  provisioner "fatimage" {
    repos            = data.fatimage-ark.rocky.repos
    packages         = ["munge-devel"]
    update           = false
    selinux          = "unchanged"
    default_binaries = false
    gpg_keys {
      path = "/etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-9"
    }
  }
}
