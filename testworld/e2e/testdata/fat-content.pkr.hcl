# Content kinds end to end (with fat-common.pkr.hcl): git checkouts from
# the lab's git server, downloads from its release server, a venv from
# its Python index, by the VM or (content_source = "host") by the plugin,
# and system settings; the
# provisioner runs twice
# and the second run must change nothing.
variable "content_source" {
  type    = string
  default = "vm"
}

variable "git_url" {
  type    = string
  default = env("LAB_GIT_URL")
}

# the commit v3.0 of slurm-openstack-tools must be at
variable "slurm_tools_commit" {
  type = string
}

variable "pypi_url" {
  type    = string
  default = env("LAB_PYPI_URL")
}

# pinned with hashes, from the lab's index
variable "python_requirements" {
  type = list(string)
}

variable "archive_url" {
  type = string
}

variable "archive_sha256" {
  type = string
}

variable "file_url" {
  type = string
}

variable "file_sha256" {
  type = string
}

locals {
  git_checkouts = [
    { repo = "${var.git_url}/stackhpc/slurm-openstack-tools.git", tag = "v3.0", commit = var.slurm_tools_commit, branch = null, destination = "/opt/slurm-tools-src", owner = null },
    { repo = "${var.git_url}/stackhpc/ood-stackhpc-rstudio.git", tag = "2025.08.1", commit = null, branch = null, destination = "/var/www/ood/apps/sys/rstudio", owner = "podman" },
    { repo = "${var.git_url}/OSC/bc_example_jupyter.git", tag = null, commit = null, branch = "master", destination = "/var/www/ood/apps/sys/jupyter", owner = null },
  ]
  downloads = [
    { url = var.archive_url, sha256 = var.archive_sha256, destination = "/opt/node_exporter", extract = true, strip_components = 1, owner = "podman:podman", mode = null },
    { url = var.file_url, sha256 = var.file_sha256, destination = "/etc/fatimage-e2e/sha256sums.txt", extract = false, strip_components = 0, owner = null, mode = "0640" },
  ]
}

build {
  sources = ["source.fatimage-openstack.lab"]

  provisioner "fatimage" {
    repos   = data.fatimage-ark.rocky.repos
    update  = false
    selinux = "unchanged"
    # the lab's PyPI double is plain http
    python_index_insecure = true
    packages              = ["oddjob"]
    groups                = ["podman"]
    content_source        = var.content_source
    systemd_units {
      name     = "mysql.service"
      content  = "[Unit]\nDescription=MySQL in podman\n[Service]\nUser=podman\nExecStart=/usr/bin/podman run --rm --name mysql docker.io/library/mysql:8.0.30\n[Install]\nWantedBy=multi-user.target\n"
      drop_ins = { slurm_app = "# appliance state directory drop-in" }
    }
    systemd_units {
      name    = "filebeat.service"
      content = "[Unit]\nDescription=filebeat in podman\n[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n"
      state   = "enabled"
    }
    systemd_units {
      name  = "firewalld.service"
      state = "masked"
    }
    sysctl {
      name     = "90-opensearch"
      settings = { "vm.max_map_count" = "262144" }
    }
    modprobe_blacklist {
      name    = "appliance"
      modules = ["esp4", "esp6", "rxrpc", "ip6_tunnel", "act_pedit", "openvswitch"]
    }
    tmpfiles {
      name    = "podman"
      content = "d /run/podman 0755 podman podman -"
    }
    limits {
      name    = "custom"
      content = "podman soft nofile 65536"
    }
    kernel_args = ["rd.auto=1"]
    python_envs {
      path         = "/opt/jupyter-venv"
      requirements = var.python_requirements
      index_url    = var.pypi_url
      owner        = "podman"
    }
    gpg_keys {
      path = "/etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-9"
    }
    dynamic "git_checkouts" {
      for_each = local.git_checkouts
      content {
        repo        = git_checkouts.value.repo
        tag         = git_checkouts.value.tag
        commit      = git_checkouts.value.commit
        branch      = git_checkouts.value.branch
        destination = git_checkouts.value.destination
        owner       = git_checkouts.value.owner
      }
    }
    dynamic "downloads" {
      for_each = local.downloads
      content {
        url              = downloads.value.url
        sha256           = downloads.value.sha256
        destination      = downloads.value.destination
        extract          = downloads.value.extract
        strip_components = downloads.value.strip_components
        owner            = downloads.value.owner
        mode             = downloads.value.mode
      }
    }
  }

  provisioner "fatimage" {
    repos   = data.fatimage-ark.rocky.repos
    update  = false
    selinux = "unchanged"
    # the lab's PyPI double is plain http
    python_index_insecure = true
    packages              = ["oddjob"]
    groups                = ["podman"]
    content_source        = var.content_source
    systemd_units {
      name     = "mysql.service"
      content  = "[Unit]\nDescription=MySQL in podman\n[Service]\nUser=podman\nExecStart=/usr/bin/podman run --rm --name mysql docker.io/library/mysql:8.0.30\n[Install]\nWantedBy=multi-user.target\n"
      drop_ins = { slurm_app = "# appliance state directory drop-in" }
    }
    systemd_units {
      name    = "filebeat.service"
      content = "[Unit]\nDescription=filebeat in podman\n[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n"
      state   = "enabled"
    }
    systemd_units {
      name  = "firewalld.service"
      state = "masked"
    }
    sysctl {
      name     = "90-opensearch"
      settings = { "vm.max_map_count" = "262144" }
    }
    modprobe_blacklist {
      name    = "appliance"
      modules = ["esp4", "esp6", "rxrpc", "ip6_tunnel", "act_pedit", "openvswitch"]
    }
    tmpfiles {
      name    = "podman"
      content = "d /run/podman 0755 podman podman -"
    }
    limits {
      name    = "custom"
      content = "podman soft nofile 65536"
    }
    kernel_args = ["rd.auto=1"]
    python_envs {
      path         = "/opt/jupyter-venv"
      requirements = var.python_requirements
      index_url    = var.pypi_url
      owner        = "podman"
    }
    gpg_keys {
      path = "/etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-9"
    }
    dynamic "git_checkouts" {
      for_each = local.git_checkouts
      content {
        repo        = git_checkouts.value.repo
        tag         = git_checkouts.value.tag
        commit      = git_checkouts.value.commit
        branch      = git_checkouts.value.branch
        destination = git_checkouts.value.destination
        owner       = git_checkouts.value.owner
      }
    }
    dynamic "downloads" {
      for_each = local.downloads
      content {
        url              = downloads.value.url
        sha256           = downloads.value.sha256
        destination      = downloads.value.destination
        extract          = downloads.value.extract
        strip_components = downloads.value.strip_components
        owner            = downloads.value.owner
        mode             = downloads.value.mode
      }
    }
  }
}
