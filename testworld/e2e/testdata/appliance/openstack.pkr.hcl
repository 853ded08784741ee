# The Slurm appliance's packer/openstack.pkr.hcl as sites run it today
# (stackhpc/ansible-slurm-appliance), for the conformance tests of issue 13:
# its variables and its source block are the appliance's, with only the
# source type renamed from "openstack" to "fatimage-openstack". What the lab
# cannot run is replaced, outside the source block:
#   - required_plugins: only this plugin (the git and ansible plugins are
#     not installed offline);
#   - the git-commit data source: var.git_commit;
#   - the Ansible provisioner (fatimage.yml): a shell provisioner printing
#     what the tests check on the build VM.
# One variable is added, image_creation_wait (null unless a test sets it),
# to cover the official option the appliance does not use.

packer {
  required_plugins {
    fatimage = {
      source  = "github.com/stackhpc/fatimage"
      version = ">= 0.1.0"
    }
  }
}

variable "git_commit" {
  type    = string
  default = "0123456789abcdef0123456789abcdef01234567"
}

locals {
  timestamp          = formatdate("YYMMDD-hhmm", timestamp())
  image_name_version = var.image_name_version == "auto" ? "-${local.timestamp}-${substr(var.git_commit, 0, 8)}" : var.image_name_version
}

variable "repo_root" {
  type = string
}

variable "environment_root" {
  type = string
}

variable "networks" {
  type = list(string)
}

variable "source_image_name" {
  type        = string
  default     = null
  description = "name of source image"
}

variable "source_image" {
  type        = string
  default     = null
  description = "UUID of source image"
}

variable "flavor" {
  type = string
}

variable "ssh_username" {
  type    = string
  default = "rocky"
}

variable "ssh_private_key_file" {
  type    = string
  default = null
}

variable "ssh_keypair_name" {
  type    = string
  default = null
}

variable "security_groups" {
  type    = list(string)
  default = []
}

variable "image_visibility" {
  type    = string
  default = "private"
}

variable "ssh_bastion_host" {
  type    = string
  default = null
}

variable "ssh_bastion_username" {
  type    = string
  default = null
}

variable "ssh_bastion_private_key_file" {
  type    = string
  default = null
}

variable "ssh_debug_public_key" {
  type        = string
  description = "An additional public key to inject for the default user"
  default     = null
}

variable "floating_ip_network" {
  type    = string
  default = null
}

variable "floating_ip" {
  type        = string
  description = "ID of pre-existing FIP to attach. Note floating_ip_network is not required when using this"
  default     = null
}

variable "manifest_output_path" {
  type    = string
  default = "packer-manifest.json"
}

variable "use_blockstorage_volume" {
  type    = bool
  default = true
}

variable "volume_type" {
  type    = string
  default = null
}

variable "volume_size" {
  type    = number
  default = 20
}

variable "volume_name" {
  type    = string
  default = null
}

variable "image_disk_format" {
  type    = string
  default = "raw"
}

variable "metadata" {
  type    = map(string)
  default = {}
}

variable "inventory_groups" {
  type        = string
  description = "Comma-separated list of additional inventory groups (other than 'builder') to add build VM to. Default is none."
  default     = ""
}

variable "image_name" {
  type        = string
  description = "Name of image"
  default     = "openhpc"
}

variable "image_name_version" {
  type        = string
  description = "Suffix for image name giving version. Default of 'auto' appends timestamp + short commit"
  default     = "auto"
}

# Added for the conformance tests (see the header).
variable "image_creation_wait" {
  type    = number
  default = null
}

source "fatimage-openstack" "openhpc" {
  # Build VM:
  flavor                  = var.flavor
  use_blockstorage_volume = var.use_blockstorage_volume
  volume_type             = var.volume_type
  volume_size             = var.volume_size
  volume_name             = "${var.image_name}${local.image_name_version}"
  metadata                = var.metadata
  instance_metadata = {
    ansible_init_disable = "true"
  }
  networks            = var.networks
  floating_ip_network = var.floating_ip_network
  floating_ip         = var.floating_ip
  security_groups     = var.security_groups
  user_data = var.ssh_debug_public_key == null ? null : <<-EOT
    #cloud-config
    ssh_authorized_keys:
    - ${var.ssh_debug_public_key}
  EOT

  # Input image:
  source_image      = "${var.source_image}"
  source_image_name = "${var.source_image_name}" # must already exist in OpenStack

  # SSH:
  ssh_username                 = var.ssh_username
  ssh_timeout                  = "20m"
  ssh_private_key_file         = var.ssh_private_key_file
  ssh_keypair_name             = var.ssh_keypair_name
  ssh_bastion_host             = var.ssh_bastion_host
  ssh_bastion_username         = var.ssh_bastion_username
  ssh_bastion_private_key_file = var.ssh_bastion_private_key_file

  # Output image:
  image_disk_format = var.image_disk_format
  image_visibility  = var.image_visibility

  image_creation_wait = var.image_creation_wait
}

build {
  source "source.fatimage-openstack.openhpc" {
    image_name = "${var.image_name}${local.image_name_version}"
  }

  # In place of ansible/fatimage.yml: what the conformance test checks.
  provisioner "shell" {
    inline = [
      "echo conformance-hostname=$(hostname)",
      "echo conformance-nics=$(ls /sys/class/net | grep -v '^lo$' | tr '\\n' ' ')",
    ]
  }

  post-processor "manifest" {
    output = "${var.manifest_output_path}"
    custom_data = {
      source = "${source.name}"
    }
  }
}
