# Builder end to end: an image shared with a second project and accepted
# for it. The lab's credentials are a project member's, as on a real site,
# so Glance refuses the owner's accept and the builder accepts as the
# member project (the lab user has a role there).
packer {
  required_plugins {
    fatimage = {
      source  = "github.com/stackhpc/fatimage"
      version = ">= 0.1.0"
    }
  }
}

variable "image_name" {
  type = string
}

variable "member" {
  type = string
}

source "fatimage-openstack" "lab" {
  source_image_name = "Rocky-9-GenericCloud-Base-9.6"
  flavor            = "m1.small"
  communicator      = "none"

  image_name                = var.image_name
  image_visibility          = "shared"
  image_members             = [var.member]
  image_auto_accept_members = true
}

build {
  sources = ["source.fatimage-openstack.lab"]
}
