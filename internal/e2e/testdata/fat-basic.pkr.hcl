# Provisioner end to end, case 1 (first cut): data source + builder +
# fatimage provisioner (with fat-common.pkr.hcl).
build {
  sources = ["source.fatimage-openstack.lab"]

  provisioner "fatimage" {
    repos  = data.fatimage-ark.rocky.repos
    groups = ["control"]
    gpg_keys {
      path = "/etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-9"
    }
  }
}
