# RPMs by URL and a pinned Grafana plugin end to end (with
# fat-common.pkr.hcl): an unsigned RPM (disable_gpg_check, as the
# appliance installs prometheus-slurm-exporter) and a signed one checked
# against the imported keys, both from the lab's release server and
# installed in the one package transaction; the grafana group's plugin
# fetched as a zip from the release server's grafana.com-like API. By the
# VM or (content_source = "host") by the plugin. The provisioner runs
# twice and the second run must change nothing.
variable "content_source" {
  type    = string
  default = "vm"
}

variable "exporter_url" {
  type = string
}

variable "exporter_sha256" {
  type = string
}

# false: the unsigned exporter must fail the signature check
variable "exporter_disable_gpg_check" {
  type    = bool
  default = true
}

variable "rstudio_url" {
  type = string
}

variable "rstudio_sha256" {
  type = string
}

variable "grafana_plugin_url" {
  type    = string
  default = env("LAB_GRAFANA_PLUGINS_URL")
}

variable "grafana_plugin_sha256" {
  type = string
}

build {
  sources = ["source.fatimage-openstack.lab"]

  provisioner "fatimage" {
    repos           = data.fatimage-ark.rocky.repos
    update          = false
    selinux         = "unchanged"
    move_login_home = false
    groups          = ["grafana"]
    # the group's dashboards from the lab
    grafana_dashboards_url = var.grafana_dashboards_url
    packages               = ["oddjob"]
    content_source         = var.content_source
    rpm_urls {
      url               = var.exporter_url
      sha256            = var.exporter_sha256
      disable_gpg_check = var.exporter_disable_gpg_check
    }
    rpm_urls {
      url    = var.rstudio_url
      sha256 = var.rstudio_sha256
    }
    grafana_plugin_url    = var.grafana_plugin_url
    grafana_plugin_sha256 = { "grafana-opensearch-datasource" = var.grafana_plugin_sha256 }
    manifest_output       = var.manifest_output
  }

  # again: nothing changes
  provisioner "fatimage" {
    repos           = data.fatimage-ark.rocky.repos
    update          = false
    selinux         = "unchanged"
    move_login_home = false
    groups          = ["grafana"]
    # the group's dashboards from the lab
    grafana_dashboards_url = var.grafana_dashboards_url
    packages               = ["oddjob"]
    content_source         = var.content_source
    rpm_urls {
      url               = var.exporter_url
      sha256            = var.exporter_sha256
      disable_gpg_check = var.exporter_disable_gpg_check
    }
    rpm_urls {
      url    = var.rstudio_url
      sha256 = var.rstudio_sha256
    }
    grafana_plugin_url    = var.grafana_plugin_url
    grafana_plugin_sha256 = { "grafana-opensearch-datasource" = var.grafana_plugin_sha256 }
    manifest_output       = var.manifest_output
  }
}
