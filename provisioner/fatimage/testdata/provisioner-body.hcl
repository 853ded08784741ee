# The body of a `provisioner "fatimage" { ... }` block using most options.
repos = [
  { name = "baseos", repo_file = "rocky", repo_name = "baseos", gpgcheck = true,
    baseurl = "https://ark.stackhpc.com/pulp/content/rocky/9.6/BaseOS/x86_64/os/20251106T211545" },
  { name = "epel", repo_file = "epel", repo_name = "epel", gpgcheck = true,
    baseurl = "https://ark.stackhpc.com/pulp/content/epel/9/Everything/x86_64/20251106T211545" },
]
repo_username = "site-user"
repo_password = "not-a-real-password"

gpg_keys {
  path = "/etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-9"
}

groups          = ["fatimage"]
packages        = ["htop"]
update_exclude  = ["grafana", "apptainer"]
reboot          = "auto"
reboot_timeout  = "15m"
selinux         = "disabled"

users {
  name   = "slurm"
  uid    = 202
  home   = "/etc/slurm"
  shell  = "/sbin/nologin"
  system = true
}
users {
  name        = "prometheus"
  uid         = 981
  group       = "prometheus"
  gid         = 976
  home        = "/var/lib/prometheus"
  shell       = "/usr/sbin/nologin"
  system      = true
  create_home = true
}

binaries {
  name    = "node_exporter"
  version = "1.11.1"
  sha256  = "9f5ea48e5bc7b656f8a91a32e7d7deb89f70f73dabd0d974418aca15f37d6810"
}
binaries {
  name    = "prometheus"
  version = "3.5.3"
  sha256  = "8c30b9d99664e39b0363c0ba54fab30a7958e9d3de27246bf26ed85e6cfb8946"
  files   = ["prometheus", "promtool"]
}
binaries {
  name    = "alertmanager"
  version = "0.32.1"
  sha256  = "e3ba4a543111dd4bbf436838385cbf88108f0b128a723e61fe97d3569294ad4d"
  files   = ["alertmanager", "amtool"]
}

skip_cleanup_steps = ["resolv-conf"]
manifest_output    = "fatimage-manifest.json"
