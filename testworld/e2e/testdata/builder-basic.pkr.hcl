# Builder end to end, case 1: source_image_name, a floating IP from the
# external network, a shell provisioner, and image settings.
variable "image_name" {
  type = string
}

source "fatimage-openstack" "lab" {
  # Credentials and endpoints come from OS_CLOUD and OS_CLIENT_CONFIG_FILE.
  source_image_name   = "Rocky-9-GenericCloud-Base-9.6"
  flavor              = "m1.small"
  floating_ip_network = "public"
  ssh_username        = "rocky"
  ssh_timeout         = "2m"

  image_name       = var.image_name
  image_visibility = "private"
  image_tags       = ["fatimage", "e2e"]
  image_min_disk   = 20
  image_properties = {
    hw_scsi_model = "virtio-scsi"
  }
}

build {
  sources = ["source.fatimage-openstack.lab"]

  provisioner "shell" {
    inline = ["sudo touch /etc/fatimage-e2e", "test ! -e /var/lib/ansible-init.done"]
  }
}
