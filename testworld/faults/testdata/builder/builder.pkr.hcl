# A builder-only build for the fault tests: every optional step can be
# switched on (network discovery, boot volume, image update) so a test can
# interrupt or fail the build at that step.
variable "image_name" {
  type = string
}

variable "use_volume" {
  type    = bool
  default = false
}

variable "discovery_cidrs" {
  type    = list(string)
  default = []
}

# Seconds the shell provisioner sleeps after printing its marker.
variable "sleep" {
  type    = number
  default = 0
}

source "fatimage-openstack" "lab" {
  source_image_name       = "Rocky-9-GenericCloud-Base-9.6"
  flavor                  = "m1.small"
  floating_ip_network     = "public"
  network_discovery_cidrs = var.discovery_cidrs
  ssh_username            = "rocky"
  ssh_timeout             = "2m"
  instance_name           = var.image_name
  image_name              = var.image_name
  image_tags              = ["faults"]
  use_blockstorage_volume = var.use_volume
}

build {
  sources = ["source.fatimage-openstack.lab"]

  provisioner "shell" {
    inline = ["echo fault-provision-marker", "sleep ${var.sleep}"]
  }
}
