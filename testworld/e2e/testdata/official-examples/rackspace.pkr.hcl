source "fatimage-openstack" "example" {
  flavor       = "2"
  image_name   = "Test image"
  password     = "foo"
  region       = "DFW"
  source_image = "23b564c9-c3e6-49f9-bc68-86c7a9ab5018"
  ssh_username = "root"
  username     = "foo"
}

build {
  sources = ["source.fatimage-openstack.example"]
}
