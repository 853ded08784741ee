# A fat Slurm appliance image: the appliance's packer/openstack.pkr.hcl
# with the source type renamed to fatimage-openstack, and the Ansible
# provisioner (ansible/fatimage.yml) replaced by the fatimage provisioner
# fed by the fatimage-ark data source. See docs/migration.md.
#
# A site builds from its appliance as the appliance's own build does: with
# the environment activated (APPLIANCES_REPO_ROOT, APPLIANCES_ENVIRONMENT_ROOT),
# the groups, the values and what fatimage.yml runs come from the checkout
# and the environment, and the pins from the checkout's
# dnf_repo_timestamps.yml:
#
#   . environments/mysite/activate
#   packer init example
#   packer build -var-file=$APPLIANCES_ENVIRONMENT_ROOT/builder.pkrvars.hcl example
#
# Without an environment (example/lab.pkrvars.hcl, `make demo`: the local
# lab) inventory_groups name built-in sets, or `inventory` an appliance
# inventory layout.
packer {
  required_plugins {
    fatimage = {
      source  = "github.com/stackhpc/fatimage"
      version = ">= 0.1.0"
    }
  }
}

locals {
  # the site's appliance: its environment's inventory, variables and plays
  site = var.appliance_environment != ""
  # <image_name>-YYMMDD-hhmm-<8 chars of git commit>, as the appliance names images
  timestamp  = formatdate("YYMMDD-hhmm", timestamp())
  git_commit = var.git_commit == "" ? "nogit" : substr(var.git_commit, 0, 8)
  image_name = "${var.image_name}-${local.timestamp}-${local.git_commit}"
  groups     = [for g in split(",", var.inventory_groups) : trimspace(g) if trimspace(g) != ""]
}

# The pinned snapshots, as the appliance builds (or the newest with
# ark_mode = "latest"): the site checkout's dnf_repo_timestamps.yml, else
# the timestamps file. Credentials: ARK_USERNAME and ARK_PASSWORD.
data "fatimage-ark" "rocky" {
  content_url     = var.ark_content_url
  os_version      = var.os_version
  appliance_dir   = local.site ? var.appliance_dir : null
  timestamps_file = local.site ? null : (var.timestamps_file == "" ? "${path.root}/dnf_repo_timestamps.yml" : var.timestamps_file)
  mode            = var.ark_mode
}

source "fatimage-openstack" "openhpc" {
  # Build VM:
  flavor                  = var.flavor
  use_blockstorage_volume = var.use_blockstorage_volume
  volume_type             = var.volume_type
  volume_size             = var.volume_size
  volume_name             = local.image_name
  metadata                = var.metadata
  instance_metadata = {
    ansible_init_disable = "true"
  }
  networks            = var.networks
  floating_ip_network = var.floating_ip_network
  floating_ip         = var.floating_ip
  security_groups     = var.security_groups
  user_data           = var.ssh_debug_public_key == null ? null : <<-EOT
    #cloud-config
    ssh_authorized_keys:
    - ${var.ssh_debug_public_key}
  EOT

  # Input image:
  source_image      = var.source_image
  source_image_name = var.source_image_name

  # SSH:
  ssh_username                 = var.ssh_username
  ssh_timeout                  = "20m"
  ssh_private_key_file         = var.ssh_private_key_file
  ssh_keypair_name             = var.ssh_keypair_name
  ssh_bastion_host             = var.ssh_bastion_host
  ssh_bastion_username         = var.ssh_bastion_username
  ssh_bastion_private_key_file = var.ssh_bastion_private_key_file

  # Output image:
  image_name        = local.image_name
  image_disk_format = var.image_disk_format
  image_visibility  = var.image_visibility
  image_properties = {
    # what example/extra and CI find the newest fat image by
    fatimage_kind        = "fat"
    fatimage_os          = var.os_label
    fatimage_snapshot_id = data.fatimage-ark.rocky.snapshot_id
  }
}

build {
  sources = ["source.fatimage-openstack.openhpc"]

  provisioner "fatimage" {
    repos = concat(data.fatimage-ark.rocky.repos, var.vendor_repos)
    # The site's appliance: the build host's groups are builder plus
    # inventory_groups in the environment's inventory, their values the
    # site's variables, and what fatimage.yml runs beyond the plugin's own
    # steps runs through the site's Ansible (appliance_strict refuses it).
    appliance_environment      = var.appliance_environment
    appliance_roles_path       = var.appliance_roles_path
    appliance_collections_path = var.appliance_collections_path
    appliance_strict           = var.appliance_strict
    # Without one: an appliance inventory layout (inventory), or built-in
    # sets named by inventory_groups.
    groups           = local.site || length(var.inventory) > 0 ? [] : local.groups
    inventory        = local.site ? [] : var.inventory
    inventory_groups = local.site || length(var.inventory) > 0 ? var.inventory_groups : ""
    # the built-in groups' own content: the Open OnDemand apps, the
    # ansible-init venv, the playbooks of gateway and compute_init
    git_base_url          = var.git_base_url
    github_releases_url   = var.github_releases_url
    python_index_url      = var.python_index_url
    python_index_insecure = var.python_index_insecure
    appliance_dir         = var.appliance_dir
    sssd_install_ldap     = var.sssd_install_ldap
    container_registry    = var.container_registry
    rstudio_download_url  = var.rstudio_download_url
    # the grafana group's dashboards and the hpctests group's HPL source
    grafana_dashboards_url = var.grafana_dashboards_url
    netlib_url             = var.netlib_url
    # a download of the same destination replaces the group's (its pin)
    dynamic "downloads" {
      for_each = var.hpl_sha256 != "" ? [var.hpl_sha256] : []
      content {
        url         = "${var.netlib_url}/hpl-2.3.tar.gz"
        sha256      = downloads.value
        destination = "/opt/hpl/hpl-2.3.tar.gz"
        mode        = "0644"
      }
    }
    dynamic "gpg_keys" {
      for_each = var.gpg_keys
      content {
        path = gpg_keys.key
        key  = gpg_keys.value == "" ? null : file(gpg_keys.value)
      }
    }
    release_base_url = var.release_base_url
    binary_source    = var.binary_source
    dynamic "binaries" {
      for_each = var.binary_sha256
      content {
        name   = binaries.key
        sha256 = binaries.value
      }
    }
    dynamic "files" {
      for_each = var.files
      content {
        # relative sources are relative to this template
        source      = abspath(files.key) == files.key ? files.key : "${path.root}/${files.key}"
        destination = files.value
      }
    }
    dynamic "container_registries" {
      for_each = var.container_registry != "" ? [var.container_registry] : []
      content {
        host     = container_registries.value
        insecure = var.container_registry_insecure
      }
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
      timestamps  = jsonencode(data.fatimage-ark.rocky.timestamps)
    }
  }
}
