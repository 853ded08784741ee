source "fatimage-openstack" "example" {
  domain_name       = "Default"
  flavor            = "m1.tiny"
  identity_endpoint = "http://192.0.2.10:5000/v3"
  image_name        = "Test image"
  insecure          = "true"
  password          = "devstack-admin-password"
  region            = "RegionOne"
  source_image      = "0b7e3c4a-5f4e-4b0a-9a57-3a1d2f6c8e90"
  ssh_username      = "root"
  tenant_name       = "admin"
  username          = "admin"
}

build {
  sources = ["source.fatimage-openstack.example"]
}
