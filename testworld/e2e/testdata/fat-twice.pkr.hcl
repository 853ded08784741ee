# Provisioner end to end, case 4: the provisioner twice in one build (with
# fat-common.pkr.hcl); the second run must change nothing.
build {
  sources = ["source.fatimage-openstack.lab"]

  provisioner "fatimage" {
    repos  = data.fatimage-ark.rocky.repos
    groups = ["openhpc"]
    gpg_keys {
      path = "/etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-9"
    }
  }

  provisioner "fatimage" {
    repos  = data.fatimage-ark.rocky.repos
    groups = ["openhpc"]
    gpg_keys {
      path = "/etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-9"
    }
  }
}
