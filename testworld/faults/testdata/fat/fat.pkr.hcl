# With testworld/buildtest/fat-common.pkr.hcl (laid out next to it): update, reboot if needed, the openhpc group.
build {
  sources = ["source.fatimage-openstack.lab"]

  provisioner "fatimage" {
    repos         = data.fatimage-ark.rocky.repos
    repo_password = var.repo_password
    groups        = ["openhpc"]
    gpg_keys {
      path = "/etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-9"
    }
    manifest_output = var.manifest_output
  }
}
