# The appliance's extra build from the site's appliance (with
# fat-common.pkr.hcl, source_image_name = a fat image): the build host in
# doca and cuda of the site's environment, the vendor repositories and
# cuda's pins from the site's variables (no vendor repos entry), the
# lab's snapshots of the standard repositories.
variable "appliance_dir" {
  type = string
}

variable "appliance_environment" {
  type = string
}

variable "appliance_roles_path" {
  type = list(string)
}

variable "appliance_collections_path" {
  type = list(string)
}

variable "lab_repos" {
  type = list(map(string))
}

variable "git_base_url" {
  type    = string
  default = env("LAB_GIT_URL")
}

variable "python_index_url" {
  type    = string
  default = env("LAB_PYPI_URL")
}

build {
  sources = ["source.fatimage-openstack.lab"]

  provisioner "fatimage" {
    repos                      = var.lab_repos
    appliance_dir              = var.appliance_dir
    appliance_environment      = var.appliance_environment
    appliance_roles_path       = var.appliance_roles_path
    appliance_collections_path = var.appliance_collections_path
    inventory_groups           = "doca,cuda"
    release_base_url           = var.release_base_url
    git_base_url               = var.git_base_url
    python_index_url           = var.python_index_url
    python_index_insecure      = true
    manifest_output            = var.manifest_output
  }
}
