# The appliance's variables, with its defaults.
variable "networks" {
  type = list(string)
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

variable "floating_ip_network" {
  type    = string
  default = null
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
  default = 15
}

variable "image_disk_format" {
  type    = string
  default = "qcow2"
}

variable "metadata" {
  type    = map(string)
  default = {}
}

variable "image_name" {
  type    = string
  default = "openhpc"
}

variable "image_name_version" {
  type        = string
  default     = "auto"
  description = "Suffix for the image name; 'auto' appends a timestamp."
}
