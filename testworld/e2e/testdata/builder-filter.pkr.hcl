# Builder end to end, case 3: the newest image matching a filter, with a
# name pattern (Glance itself matches names exactly).
variable "image_name" {
  type = string
}

source "fatimage-openstack" "lab" {
  source_image_filter {
    filters {
      name       = "rocky-nightly-*"
      tags       = ["nightly"]
      visibility = "public"
    }
    most_recent = true
  }
  flavor              = "m1.small"
  floating_ip_network = "public"
  ssh_username        = "rocky"
  ssh_timeout         = "2m"
  image_name          = var.image_name
}

build {
  sources = ["source.fatimage-openstack.lab"]

  provisioner "shell" {
    inline = ["true"]
  }
}
