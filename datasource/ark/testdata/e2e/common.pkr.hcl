# Shared by the end-to-end tests: the plugin, and a file builder that
# writes every output of data.fatimage-ark.snap to out.json.
packer {
  required_plugins {
    fatimage = {
      source  = "github.com/stackhpc/fatimage"
      version = ">= 0.1.0"
    }
  }
}

variable "content_url" {
  type = string
}

source "file" "out" {
  content = jsonencode({
    repos           = data.fatimage-ark.snap.repos
    timestamps      = data.fatimage-ark.snap.timestamps
    snapshot_id     = data.fatimage-ark.snap.snapshot_id
    timestamps_yaml = data.fatimage-ark.snap.timestamps_yaml
  })
  target = "out.json"
}

build {
  sources = ["source.file.out"]
}
