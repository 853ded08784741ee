# A site's appliance read by the build (with fat-common.pkr.hcl): a copy
# of the appliance checkout whose fatimage.yml gains a role the plugin
# does not know, and a site environment with a post hook; both run
# through the site's Ansible against the build VM.
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

variable "git_url" {
  type    = string
  default = env("LAB_GIT_URL")
}

variable "pypi_url" {
  type    = string
  default = env("LAB_PYPI_URL")
}

variable "appliance_strict" {
  type    = bool
  default = false
}

build {
  sources = ["source.fatimage-openstack.lab"]

  provisioner "fatimage" {
    repos                      = data.fatimage-ark.rocky.repos
    update                     = false
    appliance_dir              = var.appliance_dir
    appliance_environment      = var.appliance_environment
    appliance_roles_path       = var.appliance_roles_path
    appliance_collections_path = var.appliance_collections_path
    appliance_strict           = var.appliance_strict
    # the built-in groups of the build host's groups in this environment
    # (builder, dnf_repos, kernel_modules; rebuild's role runs on every
    # build host)
    groups                = ["always", "kernel_modules", "rebuild"]
    git_base_url          = var.git_url
    python_index_url      = var.pypi_url
    python_index_insecure = true
    gpg_keys {
      path = "/etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-9"
    }
    manifest_output = var.manifest_output
  }
}
