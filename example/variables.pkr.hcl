# The appliance's variables, with its defaults.
variable "networks" {
  type        = list(string)
  default     = []
  description = "Network UUIDs for the build VM; empty lets the cloud pick its only network."
}

variable "source_image_name" {
  type        = string
  default     = null
  description = "Name of the source image; give this or source_image."
}

variable "source_image" {
  type        = string
  default     = null
  description = "UUID of the source image."
}

variable "flavor" {
  type = string
}

variable "ssh_username" {
  type    = string
  default = "rocky"
}

variable "ssh_private_key_file" {
  type    = string
  default = null
}

variable "ssh_keypair_name" {
  type    = string
  default = null
}

variable "security_groups" {
  type    = list(string)
  default = []
}

variable "image_visibility" {
  type    = string
  default = "private"
}

variable "ssh_bastion_host" {
  type    = string
  default = null
}

variable "ssh_bastion_username" {
  type    = string
  default = null
}

variable "ssh_bastion_private_key_file" {
  type    = string
  default = null
}

variable "ssh_debug_public_key" {
  type        = string
  default     = null
  description = "An additional public key to inject for the default user (through cloud-init user data)."
}

variable "floating_ip_network" {
  type    = string
  default = null
}

variable "floating_ip" {
  type        = string
  default     = null
  description = "ID (or address) of an existing floating IP to attach; floating_ip_network is then not needed."
}

variable "manifest_output_path" {
  type    = string
  default = "packer-manifest.json"
}

variable "use_blockstorage_volume" {
  type    = bool
  default = true
}

variable "volume_type" {
  type    = string
  default = null
}

variable "volume_size" {
  type    = number
  default = 20
}

variable "volume_name" {
  type        = string
  default     = null
  description = "Declared as the appliance declares it; its source block names the volume after the image."
}

variable "image_disk_format" {
  type    = string
  default = "raw"
}

variable "metadata" {
  type    = map(string)
  default = {}
}

variable "image_name" {
  type    = string
  default = "openhpc"
}

variable "git_commit" {
  type        = string
  default     = env("GIT_COMMIT")
  description = "Commit of the site's appliance checkout; its first 8 characters end the image name."
}

# --- the fatimage provisioner and data source ---

variable "inventory_groups" {
  type        = string
  default     = "fatimage"
  description = "Comma-separated inventory groups, as the appliance's build takes them."
}

variable "inventory" {
  type        = list(string)
  default     = []
  description = "Without appliance_environment: an appliance environment's inventory paths, common then site then environment (e.g. [\"../ansible-slurm-appliance/environments/common/inventory\", ...]); empty: inventory_groups name built-in sets."
}

variable "vendor_repos" {
  type        = list(map(string))
  default     = []
  description = "Vendor repositories the data source does not give (the doca, cuda, lustre and slurm_recompile groups need theirs): repos entries with name, repo_file, repo_name, baseurl, gpgcheck and any further key = value lines."
}

variable "os_version" {
  type        = string
  default     = "9.8"
  description = "Rocky version of the source image, which the repositories are resolved for (the appliance builds RL9 from 9.8 today); the provisioner fails when the build VM's major differs and warns when its minor does."
}

variable "os_label" {
  type        = string
  default     = "RL9"
  description = "Key of this OS in cluster_image.auto.tfvars.json; also an image property."
}

variable "ark_content_url" {
  type        = string
  default     = env("ARK_CONTENT_URL")
  description = "Pulp content URL; empty means StackHPC's Ark."
}

variable "ark_mode" {
  type        = string
  default     = null
  description = "How the data source chooses snapshots; unset: the timestamps file's pins, as the appliance builds; \"latest\" or \"not_after\" otherwise."
}

variable "timestamps_file" {
  type        = string
  default     = ""
  description = "Without appliance_environment: the appliance's dnf_repo_timestamps.yml; empty means the copy next to this template."
}

variable "gpg_keys" {
  type        = map(string)
  default     = {}
  description = "Keys besides the built-in ones (the standard repositories' keys are built in): key path in the image => local armored key file (\"\" when the image already has it). A built-in key's path replaces it."
}

variable "release_base_url" {
  type        = string
  default     = ""
  description = "Mirror of the Prometheus release downloads; empty means GitHub."
}

variable "git_base_url" {
  type        = string
  default     = "https://github.com"
  description = "Where the built-in groups clone from (<base>/<owner>/<name>.git): the Open OnDemand apps."
}

variable "github_releases_url" {
  type        = string
  default     = "https://github.com"
  description = "Where the built-in groups download GitHub release assets from (<base>/<owner>/<repo>/releases/download/...): the slurm exporter RPM."
}

variable "rstudio_download_url" {
  type        = string
  default     = "https://download2.rstudio.org"
  description = "Where the openondemand_rstudio group downloads rstudio-server from (<base>/server/rhel<major>/x86_64/...)."
}

variable "python_index_url" {
  type        = string
  default     = "https://pypi.org/simple"
  description = "Package index of the built-in groups' Python environments (the ansible-init venv)."
}

variable "python_index_insecure" {
  type        = bool
  default     = false
  description = "Accept a plain-http python_index_url (pip then trusts its host; only hash pins check what it serves)."
}

variable "grafana_dashboards_url" {
  type        = string
  default     = "https://grafana.com"
  description = "Where the grafana group downloads the appliance's grafana.com dashboards from (<base>/api/dashboards/<id>/revisions/<rev>/download), e.g. a mirror."
}

variable "netlib_url" {
  type        = string
  default     = "http://www.netlib.org/benchmark/hpl"
  description = "Where the hpctests group downloads hpl-2.3.tar.gz from, e.g. a mirror."
}

variable "hpl_sha256" {
  type        = string
  default     = ""
  description = "sha256 of hpl-2.3.tar.gz at netlib_url when a mirror serves another file than netlib's; empty: the built-in pin."
}

variable "appliance_dir" {
  type        = string
  default     = env("APPLIANCES_REPO_ROOT")
  description = "The site's appliance checkout (holding ansible/ and environments/), as the environment's activate exports it; without appliance_environment only the groups gateway and compute_init read it."
}

variable "appliance_environment" {
  type        = string
  default     = env("APPLIANCES_ENVIRONMENT_ROOT")
  description = "The site's appliance environment, as its activate exports it; empty: no site appliance (inventory or built-in groups)."
}

variable "appliance_roles_path" {
  type        = list(string)
  default     = []
  description = "Where the site installed its Galaxy roles, when its ansible.cfg does not name it."
}

variable "appliance_collections_path" {
  type        = list(string)
  default     = []
  description = "Where the site installed its Galaxy collections, when its ansible.cfg does not name it."
}

variable "appliance_strict" {
  type        = bool
  default     = false
  description = "Refuse at validate what fatimage.yml runs for the build host that the plugin does not do natively, instead of running it through the site's Ansible."
}

variable "sssd_install_ldap" {
  type        = bool
  default     = false
  description = "Install sssd-ldap with the sssd group, as the appliance's variable of that name; only without appliance_environment, whose own sssd_install_ldap decides."
}

variable "container_registry" {
  type        = string
  default     = ""
  description = "A registry (host[:port]) serving the appliance's container images under their names and tags, e.g. a site mirror; empty: each image's own registry (docker.io, docker.elastic.co)."
}

variable "container_registry_insecure" {
  type        = bool
  default     = false
  description = "container_registry speaks plain HTTP or has a certificate the build VM does not trust."
}

variable "binary_source" {
  type    = string
  default = "vm"
}

variable "binary_sha256" {
  type        = map(string)
  default     = {}
  description = "Checksums overriding the built-in binaries' (a mirror with other builds)."
}

variable "files" {
  type        = map(string)
  default     = {}
  description = "Local file or directory (relative to the template) => path in the image."
}

variable "image_manifest_path" {
  type        = string
  default     = ""
  description = "Local JSON with the image's package list, for diffing builds."
}

variable "sbom_path" {
  type        = string
  default     = ""
  description = "Local CycloneDX 1.6 SBOM of the image (empty: none)."
}

variable "previous_manifest" {
  type        = string
  default     = ""
  description = "The previous build's SBOM or image manifest (path or URL) the change report compares with."
}

variable "change_report_path" {
  type        = string
  default     = ""
  description = "Local Markdown change report (the JSON one goes beside it; empty: none)."
}
