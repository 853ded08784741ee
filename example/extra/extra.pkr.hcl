# An "extra" build on top of the newest fat image: a site adds only the
# groups it needs (no update, no users, no binaries beyond those groups');
# the repositories are swapped in and disabled again and cleanup runs.
# Chain it after example/ (the fat build):
#
#   packer build -var-file=example/site.pkrvars.hcl -var extra_groups=nfs example/extra
#
# or as the appliance's extra build, from the site's appliance (its
# environment activated): the doca and cuda repositories and pins come
# from its variables (doca_repo_url, cuda_repo_url, ...), slurm_recompile
# and lustre run their roles through its Ansible:
#
#   . environments/mysite/activate
#   packer build -var-file=$APPLIANCES_ENVIRONMENT_ROOT/builder.pkrvars.hcl \
#     -var extra_inventory_groups=doca,cuda example/extra
#
# or from the site's inventory alone, with its vendor repositories
# (vendor_repos, e.g. the doca and cuda sections):
#
#   packer build -var-file=example/site.pkrvars.hcl -var extra_inventory_groups=doca,cuda \
#     -var 'inventory=[...]' -var-file=vendor.pkrvars.hcl example/extra
#
# The variables are the fat build's (variables.pkr.hcl is a link to it).
packer {
  required_plugins {
    fatimage = {
      source  = "github.com/stackhpc/fatimage"
      version = ">= 0.1.0"
    }
  }
}

variable "extra_groups" {
  type        = string
  default     = "nfs"
  description = "Comma-separated groups the extra build adds."
}

variable "extra_inventory_groups" {
  type        = string
  default     = ""
  description = "Comma-separated inventory groups of an appliance extra build (e.g. \"doca,cuda\"), resolved with `inventory`; when set, extra_groups is not used and `update` follows the inventory (the appliance's extra builds do not update)."
}

variable "extra_name" {
  type    = string
  default = "extra"
}

locals {
  # the site's appliance: its environment's inventory, variables and plays
  site       = var.appliance_environment != ""
  inv        = var.extra_inventory_groups != ""
  timestamp  = formatdate("YYMMDD-hhmm", timestamp())
  git_commit = var.git_commit == "" ? "nogit" : substr(var.git_commit, 0, 8)
  image_name = "${var.image_name}-${var.extra_name}-${local.timestamp}-${local.git_commit}"
}

data "fatimage-ark" "rocky" {
  content_url     = var.ark_content_url
  os_version      = var.os_version
  appliance_dir   = local.site ? var.appliance_dir : null
  timestamps_file = local.site ? null : (var.timestamps_file == "" ? "${path.root}/dnf_repo_timestamps.yml" : var.timestamps_file)
  mode            = var.ark_mode
}

source "fatimage-openstack" "extra" {
  flavor                  = var.flavor
  use_blockstorage_volume = var.use_blockstorage_volume
  volume_type             = var.volume_type
  volume_size             = var.volume_size
  instance_metadata = {
    ansible_init_disable = "true"
  }
  networks            = var.networks
  floating_ip_network = var.floating_ip_network
  security_groups     = var.security_groups

  # The newest fat image for this OS: its dated name by pattern (matched
  # by the plugin; Glance compares names exactly), and the properties the
  # fat build sets, so earlier extra images never match.
  source_image_filter {
    filters {
      name = "${var.image_name}-*"
      properties = {
        fatimage_kind = "fat"
        fatimage_os   = var.os_label
      }
    }
    most_recent = true
  }

  ssh_username                 = var.ssh_username
  ssh_timeout                  = "20m"
  ssh_private_key_file         = var.ssh_private_key_file
  ssh_keypair_name             = var.ssh_keypair_name
  ssh_bastion_host             = var.ssh_bastion_host
  ssh_bastion_username         = var.ssh_bastion_username
  ssh_bastion_private_key_file = var.ssh_bastion_private_key_file

  image_name        = local.image_name
  image_disk_format = var.image_disk_format
  image_visibility  = var.image_visibility
  image_properties = {
    fatimage_kind        = var.extra_name
    fatimage_os          = var.os_label
    fatimage_snapshot_id = data.fatimage-ark.rocky.snapshot_id
  }
}

build {
  sources = ["source.fatimage-openstack.extra"]

  provisioner "fatimage" {
    repos = concat(data.fatimage-ark.rocky.repos, var.vendor_repos)
    # the site's appliance (its groups, values and plays), else its
    # inventory, else built-in groups
    appliance_dir              = var.appliance_dir
    appliance_environment      = var.appliance_environment
    appliance_roles_path       = var.appliance_roles_path
    appliance_collections_path = var.appliance_collections_path
    appliance_strict           = var.appliance_strict
    groups                     = local.inv ? [] : [for g in split(",", var.extra_groups) : trimspace(g) if trimspace(g) != ""]
    inventory                  = local.inv && !local.site ? var.inventory : []
    inventory_groups           = var.extra_inventory_groups
    update                     = local.inv ? null : false
    # what groups the appliance runs on every build install from (rebuild's venv)
    git_base_url          = var.git_base_url
    github_releases_url   = var.github_releases_url
    python_index_url      = var.python_index_url
    python_index_insecure = var.python_index_insecure
    dynamic "gpg_keys" {
      for_each = var.gpg_keys
      content {
        path = gpg_keys.key
        key  = gpg_keys.value == "" ? null : file(gpg_keys.value)
      }
    }
    # mitigations.yml runs on extra builds too (the same file again: unchanged)
    modprobe_blacklist {
      name    = "appliance"
      modules = ["esp4", "esp6", "rxrpc", "ip6_tunnel", "act_pedit", "openvswitch"]
    }
    manifest_output      = var.image_manifest_path
    sbom_output          = var.sbom_path
    previous_manifest    = var.previous_manifest
    change_report_output = var.change_report_path
  }

  post-processor "manifest" {
    output = var.manifest_output_path
    custom_data = {
      image_name  = local.image_name
      snapshot_id = data.fatimage-ark.rocky.snapshot_id
    }
  }
}
