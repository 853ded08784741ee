# Builder end to end, case 2: boot from a Cinder volume and upload it as a
# raw image, as the appliance builds.
variable "image_name" {
  type = string
}

source "fatimage-openstack" "lab" {
  source_image_name       = "Rocky-9-GenericCloud-Base-9.6"
  flavor                  = "m1.small"
  floating_ip_network     = "public"
  use_blockstorage_volume = true
  volume_size             = 20
  image_disk_format       = "raw"
  ssh_username            = "rocky"
  ssh_timeout             = "2m"
  image_name              = var.image_name
}

build {
  sources = ["source.fatimage-openstack.lab"]

  provisioner "shell" {
    inline = ["echo volume-built | sudo tee /etc/fatimage-e2e"]
  }
}
