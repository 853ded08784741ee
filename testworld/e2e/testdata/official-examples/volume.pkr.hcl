source "fatimage-openstack" "example" {
  availability_zone       = "ru-3a"
  flavor                  = "1001"
  identity_endpoint       = "https://api.selvpc.com/identity/v3"
  image_name              = "Test image"
  networks                = "9aab504e-bedf-48af-9256-682a7fa3dabb"
  password                = "foo"
  region                  = "ru-3"
  source_image            = "5f58ea7e-6264-4939-9d0f-0c23072b1132"
  ssh_username            = "root"
  tenant_id               = "2e90c5c04c7b4c509be78723e2b55b77"
  use_blockstorage_volume = true
  username                = "foo"
  volume_type             = "fast.ru-3a"
}

build {
  sources = ["source.fatimage-openstack.example"]
}
