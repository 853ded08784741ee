# Read by the Packer integrations site together with the README files that
# `make generate` writes into this directory.
integration {
  name        = "Fat image"
  description = "Build fat Rocky Linux images for Slurm clusters on OpenStack from pinned Pulp snapshots."
  identifier  = "packer/stackhpc/fatimage"
  # The builder's artifact gives HCP Packer its image metadata (provider
  # "openstack", region, source image); testworld's TestWebDocsMetadata
  # holds this flag to that.
  flags = ["hcp-ready"]
  docs {
    process_docs    = true
    readme_location = "./README.md"
    external_url    = "https://github.com/stackhpc/packer-plugin-fatimage"
  }
  license {
    type = "Apache-2.0"
    url  = "https://github.com/stackhpc/packer-plugin-fatimage/blob/main/LICENSE"
  }
  component {
    type = "builder"
    name = "OpenStack"
    slug = "openstack"
  }
  component {
    type = "provisioner"
    name = "fatimage"
    slug = "fatimage"
  }
  component {
    type = "data-source"
    name = "Ark snapshots"
    slug = "ark"
  }
}
