# The demo on the local lab: resolve the newest Pulp snapshots with the
# fatimage-ark data source, boot a build VM with the fatimage-openstack
# builder, point its dnf at the snapshots and install packages from them,
# then save the image. Until the fatimage provisioner lands, a shell
# provisioner does the repository work.
#
#   make lab-up && . .lab/env && packer build example/lab
packer {
  required_plugins {
    fatimage = {
      source  = "github.com/stackhpc/fatimage"
      version = ">= 0.1.0"
    }
  }
}

variable "content_url" {
  type    = string
  default = env("ARK_CONTENT_URL")
}

variable "ark_username" {
  type    = string
  default = env("ARK_USERNAME")
}

variable "ark_password" {
  type      = string
  default   = env("ARK_PASSWORD")
  sensitive = true
}

variable "packages" {
  type    = list(string)
  default = ["munge", "ohpc-slurm-server", "htop"]
}

data "fatimage-ark" "rocky" {
  content_url = var.content_url
  username    = var.ark_username
  password    = var.ark_password
  os_version  = "9.6"
  only        = ["baseos", "appstream", "crb", "epel", "OpenHPC", "OpenHPC-updates"]
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
}

locals {
  snapshots = data.fatimage-ark.rocky
  # One dnf repo section per snapshot, credentials filled in on the VM.
  repo_file = join("\n", [for r in local.snapshots.repos :
    "[${r.repo_name}]\nname=${r.name}\nbaseurl=${r.baseurl}\ngpgcheck=${r.gpgcheck ? 1 : 0}\nusername=@ARK_USERNAME@\npassword=@ARK_PASSWORD@\n"
  ])
}

source "fatimage-openstack" "demo" {
  source_image_name   = "Rocky-9-GenericCloud-Base-9.6"
  flavor              = "m1.small"
  floating_ip_network = "public"
  ssh_username        = "rocky"
  image_name          = "demo-fat-${local.snapshots.snapshot_id}-${formatdate("YYMMDD-hhmmss", timestamp())}"
  image_properties = {
    fatimage_snapshot_id = local.snapshots.snapshot_id
  }
}

build {
  sources = ["source.fatimage-openstack.demo"]

  provisioner "shell" {
    environment_vars = ["ARK_USERNAME=${var.ark_username}", "ARK_PASSWORD=${var.ark_password}", "REPOS=${local.repo_file}"]
    inline = [
      "set -e",
      "echo 'Swapping the VM repositories for the Pulp snapshots'",
      "sudo rpm --import /etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-9",
      "printf '%s\\n' \"$REPOS\" | sed \"s|@ARK_USERNAME@|$ARK_USERNAME|; s|@ARK_PASSWORD@|$ARK_PASSWORD|\" | sudo tee /etc/yum.repos.d/pulp.repo >/dev/null",
      "sudo chmod 600 /etc/yum.repos.d/pulp.repo",
      "sudo dnf -y -q --disablerepo='*' --enablerepo='baseos,appstream,crb,epel,OpenHPC,OpenHPC-updates' install ${join(" ", var.packages)}",
      "rpm -q ${join(" ", var.packages)}",
      "echo 'Disabling the repositories and removing their credentials'",
      "sudo sed -i '/^username=/d; /^password=/d; s/^\\[\\(.*\\)\\]$/[\\1]\\nenabled=0/' /etc/yum.repos.d/pulp.repo",
      "! sudo grep -rq \"$ARK_PASSWORD\" /etc/yum.repos.d",
    ]
  }

  post-processor "manifest" {
    output = "${path.root}/manifest.json"
    custom_data = {
      snapshot_id = local.snapshots.snapshot_id
      timestamps  = jsonencode(local.snapshots.timestamps)
    }
  }
}
