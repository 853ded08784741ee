# Provisioner end to end, case 2: an "extra" build on top of a fat image
# (with fat-common.pkr.hcl, source_image_name = the fat image): one
# feature group, no update; repos swapped in and disabled again.
build {
  sources = ["source.fatimage-openstack.lab"]

  provisioner "fatimage" {
    repos           = data.fatimage-ark.rocky.repos
    groups          = ["sssd"]
    update          = false
    manifest_output = var.manifest_output
  }
}
