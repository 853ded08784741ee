# The official stack's builder (hashicorp/packer-plugin-openstack, pinned
# in tools/official) against the lab, as a new user would write it: a
# fidelity check of the lab's OpenStack double, run on every make test.
packer {
  required_plugins {
    openstack = {
      source  = "github.com/hashicorp/openstack"
      version = ">= 1.1.2"
    }
  }
}

variable "image_name" {
  type = string
}

variable "cloud" {
  type    = string
  default = env("OS_CLOUD")
}

variable "use_blockstorage_volume" {
  type    = bool
  default = false
}

source "openstack" "lab" {
  # Credentials and endpoints come from OS_CLOUD and OS_CLIENT_CONFIG_FILE.
  cloud                   = var.cloud
  source_image_name       = "Rocky-9-GenericCloud-Base-9.6"
  flavor                  = "m1.small"
  floating_ip_network     = "public"
  ssh_username            = "rocky"
  ssh_timeout             = "3m"
  use_blockstorage_volume = var.use_blockstorage_volume
  volume_size             = 20
  image_name              = var.image_name
  image_visibility        = "private"
  image_tags              = ["official", "e2e"]
}

build {
  sources = ["source.openstack.lab"]

  provisioner "shell" {
    inline = ["sudo touch /etc/official-e2e"]
  }
}
