# Provisioner end to end, case 1: a fat build from the GenericCloud image
# (with fat-common.pkr.hcl): the data source's snapshots, a control
# node's built-in sets' packages, binaries, users and services, files,
# cleanup.
build {
  sources = ["source.fatimage-openstack.lab"]

  provisioner "fatimage" {
    repos = data.fatimage-ark.rocky.repos
    # the built-in sets of a control node (without the appliance's
    # inventories, which decide more: see docs/migration.md)
    groups = ["kernel_modules", "dnf_repos", "journald", "cluster", "openhpc", "always", "node_exporter", "prometheus", "alertmanager", "grafana", "firewalld"]
    # no gpg_keys: the image's own key (RPM-GPG-KEY-Rocky-9, which the
    # lab signs every repository with) is imported without being named
    release_base_url = var.release_base_url
    # control's grafana dashboards from the lab
    grafana_dashboards_url = var.grafana_dashboards_url
    dynamic "binaries" {
      for_each = var.binary_sha256
      content {
        name   = binaries.key
        sha256 = binaries.value
      }
    }
    files {
      source      = "playbooks"
      destination = "/etc/ansible-init/playbooks"
    }
    manifest_output = var.manifest_output
    sbom_output     = var.sbom_output
  }
}
