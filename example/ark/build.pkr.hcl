# Resolve the newest Pulp snapshots of the appliance's repositories and
# print them. Run against the demo's Pulp double with `make demo`, or
# against Ark with ARK_USERNAME and ARK_PASSWORD set:
#
#   packer build -var content_url=https://ark.stackhpc.com/pulp/content example/ark
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

variable "os_version" {
  type    = string
  default = "9.6"
}

variable "mode" {
  type        = string
  default     = "latest"
  description = "latest, pinned (the file's timestamps) or not_after."
}

variable "not_after" {
  type    = string
  default = null
}

data "fatimage-ark" "rocky" {
  content_url     = var.content_url
  os_version      = var.os_version
  timestamps_file = "${path.root}/dnf_repo_timestamps.yml"
  mode            = var.mode
  not_after       = var.not_after
}

locals {
  snapshots = data.fatimage-ark.rocky
}

source "null" "snapshots" {
  communicator = "none"
}

build {
  sources = ["source.null.snapshots"]

  provisioner "shell-local" {
    inline = concat(
      ["echo 'Rocky ${var.os_version} snapshots (snapshot_id ${local.snapshots.snapshot_id}):'"],
      [for r in local.snapshots.repos : "printf '  %-16s %s  %s\\n' '${r.name}' '${r.timestamp}' '${r.baseurl}'"],
    )
  }

  # Write the resolved pins back in the appliance's format.
  provisioner "shell-local" {
    inline = ["printf '%s' \"$PINS\" > '${path.root}/dnf_repo_timestamps.resolved.yml'", "echo 'Pins written to ${path.root}/dnf_repo_timestamps.resolved.yml'"]
    env    = { PINS = local.snapshots.timestamps_yaml }
  }
}
