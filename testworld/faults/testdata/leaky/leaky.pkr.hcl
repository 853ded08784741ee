# A deliberately leaky build for the secret audit's negative test: a shell
# provisioner writes one secret into a file it keeps and another into a
# file it deletes before the snapshot, and runs a command with the kept
# one in its argv. The secrets come base64-encoded from
# PKR_VAR_kept_b64 / PKR_VAR_removed_b64 so no quoting can mangle them.
variable "image_name" {
  type = string
}

variable "kept_b64" {
  type      = string
  sensitive = true
}

variable "removed_b64" {
  type      = string
  sensitive = true
}

source "fatimage-openstack" "lab" {
  source_image_name   = "Rocky-9-GenericCloud-Base-9.6"
  flavor              = "m1.small"
  floating_ip_network = "public"
  ssh_username        = "rocky"
  ssh_timeout         = "2m"
  instance_name       = var.image_name
  image_name          = var.image_name
  image_tags          = ["faults"]
}

build {
  sources = ["source.fatimage-openstack.lab"]

  provisioner "shell" {
    inline = [
      "echo '${var.kept_b64}' | base64 -d | sudo tee /etc/leaky-kept.conf >/dev/null",
      "echo '${var.removed_b64}' | base64 -d | sudo tee /etc/leaky-removed.conf >/dev/null",
      "sh -c 'sleep 2; true' \"$(echo '${var.kept_b64}' | base64 -d)\"",
      "sync",
      "sudo rm /etc/leaky-removed.conf",
    ]
  }
}
