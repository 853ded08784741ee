# Provisioner end to end, case 3: the VM cannot reach the release server,
# the plugin fetches the tarballs on the build host (with
# fat-common.pkr.hcl). var.binary_source switches back to "vm" for the
# negative control.
variable "binary_source" {
  type    = string
  default = "host"
}

build {
  sources = ["source.fatimage-openstack.lab"]

  provisioner "fatimage" {
    repos            = data.fatimage-ark.rocky.repos
    groups           = ["node_exporter", "prometheus"]
    update           = false
    selinux          = "unchanged"
    binary_source    = var.binary_source
    release_base_url = var.release_base_url
    dynamic "binaries" {
      for_each = var.binary_sha256
      content {
        name   = binaries.key
        sha256 = binaries.value
      }
    }
  }
}
