source "fatimage-openstack" "example" {
  flavor       = "2"
  image_name   = "ubuntu1404_packer_test_1"
  source_image = "91d9c168-d1e5-49ca-a775-3bfdbb6c97f1"
  ssh_username = "root"
}

build {
  sources = ["source.fatimage-openstack.example"]
}
