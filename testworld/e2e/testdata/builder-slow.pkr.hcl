# Builder end to end, case 5: interrupted and failing builds.
variable "image_name" {
  type = string
}

source "fatimage-openstack" "lab" {
  source_image_name   = "Rocky-9-GenericCloud-Base-9.6"
  flavor              = "m1.small"
  floating_ip_network = "public"
  ssh_username        = "rocky"
  ssh_timeout         = "2m"
  instance_name       = var.image_name
  image_name          = var.image_name
}

build {
  sources = ["source.fatimage-openstack.lab"]

  provisioner "shell" {
    inline = ["true"]
  }
}
