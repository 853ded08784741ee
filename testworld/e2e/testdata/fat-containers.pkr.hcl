# Container images end to end (with fat-common.pkr.hcl): the appliance's
# three images pulled rootless into the podman user's storage from the
# lab's registries (plain HTTP, so insecure), filebeat's from the one
# that needs credentials, by the VM or (content_source = "host") loaded
# from archives the plugin fetched. The provisioner runs twice; the
# second run must change nothing.
variable "content_source" {
  type    = string
  default = "vm"
}

variable "registry" {
  type    = string
  default = env("LAB_REGISTRY")
}

variable "registry_auth" {
  type    = string
  default = env("LAB_REGISTRY_AUTH")
}

variable "registry_username" {
  type    = string
  default = env("LAB_REGISTRY_USERNAME")
}

variable "registry_password" {
  type      = string
  default   = env("LAB_REGISTRY_PASSWORD")
  sensitive = true
}

# the digest library/mysql:8.0.30 must have
variable "mysql_digest" {
  type = string
}

locals {
  containers = [
    { image = "${var.registry}/library/mysql:8.0.30", digest = var.mysql_digest },
    { image = "${var.registry}/opensearchproject/opensearch:2.9.0", digest = null },
    { image = "${var.registry_auth}/beats/filebeat-oss:7.12.1", digest = null },
  ]
  registries = [
    { host = var.registry, username = null, password = null },
    { host = var.registry_auth, username = var.registry_username, password = var.registry_password },
  ]
}

build {
  sources = ["source.fatimage-openstack.lab"]

  provisioner "fatimage" {
    repos           = data.fatimage-ark.rocky.repos
    update          = false
    selinux         = "unchanged"
    groups          = ["podman"]
    content_source  = var.content_source
    manifest_output = var.manifest_output
    dynamic "containers" {
      for_each = local.containers
      content {
        image  = containers.value.image
        digest = containers.value.digest
        user   = "podman"
      }
    }
    dynamic "container_registries" {
      for_each = local.registries
      content {
        host     = container_registries.value.host
        insecure = true
        username = container_registries.value.username
        password = container_registries.value.password
      }
    }
    gpg_keys {
      path = "/etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-9"
    }
  }

  # the second run must change nothing
  provisioner "fatimage" {
    repos           = data.fatimage-ark.rocky.repos
    update          = false
    selinux         = "unchanged"
    groups          = ["podman"]
    content_source  = var.content_source
    manifest_output = var.manifest_output
    dynamic "containers" {
      for_each = local.containers
      content {
        image  = containers.value.image
        digest = containers.value.digest
        user   = "podman"
      }
    }
    dynamic "container_registries" {
      for_each = local.registries
      content {
        host     = container_registries.value.host
        insecure = true
        username = container_registries.value.username
        password = container_registries.value.password
      }
    }
    gpg_keys {
      path = "/etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-9"
    }
  }
}
