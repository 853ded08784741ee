# The Slurm appliance's packer/openstack.pkr.hcl build VM, with only the
# source type renamed from "openstack" to "fatimage-openstack". Until the
# fatimage provisioner lands, a shell provisioner stands in for the Ansible
# playbook.
#
#   packer build -var-file=lab.pkrvars.hcl example/openstack      # on the local lab
#   packer build -var-file=site.pkrvars.hcl example/openstack     # on a real cloud
packer {
  required_plugins {
    fatimage = {
      source  = "github.com/stackhpc/fatimage"
      version = ">= 0.1.0"
    }
  }
}

locals {
  timestamp          = formatdate("YYMMDD-hhmm", timestamp())
  image_name_version = var.image_name_version == "auto" ? "-${local.timestamp}" : var.image_name_version
}

source "fatimage-openstack" "openhpc" {
  # Build VM:
  flavor                  = var.flavor
  use_blockstorage_volume = var.use_blockstorage_volume
  volume_type             = var.volume_type
  volume_size             = var.volume_size
  metadata                = var.metadata
  instance_metadata = {
    ansible_init_disable = "true"
  }
  networks            = var.networks
  floating_ip_network = var.floating_ip_network
  security_groups     = var.security_groups

  # Input image:
  source_image      = var.source_image
  source_image_name = var.source_image_name

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
}

build {
  source "source.fatimage-openstack.openhpc" {
    image_name = "${var.image_name}${local.image_name_version}"
  }

  provisioner "shell" {
    inline = ["cat /etc/os-release", "test ! -e /var/lib/ansible-init.done"]
  }

  post-processor "manifest" {
    output = var.manifest_output_path
    custom_data = {
      source = "${source.name}"
    }
  }
}
