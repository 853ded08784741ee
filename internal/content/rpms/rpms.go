//go:generate packer-sdc mapstructure-to-hcl2 -type RPMURL
//go:generate packer-sdc struct-markdown

// Package rpms is the `rpm_urls` content kind: RPM packages fetched by
// URL and checked (sha256, signature) before any package work, then
// installed by the provisioner's packages step in its one transaction.
// Its VM side is rpms.sh.
package rpms

// RPMURL is an RPM package fetched by URL (a release asset, a vendor's
// download) and installed in the same dnf transaction as the
// repositories' packages. The file is checked before any package work:
// its sha256, then its signature against the keys imported from
// `gpg_keys` (as dnf checks the repositories' packages).
type RPMURL struct {
	// http(s) URL of the .rpm file (its path ends in .rpm).
	URL string `mapstructure:"url" required:"true"`
	// sha256 (hex) of the file. Required unless `insecure_skip_checksum`.
	SHA256 string `mapstructure:"sha256"`
	// Install the file without a sha256 to check it against: whatever the
	// URL serves on the day goes into the image. Warned about in the build
	// output and recorded in image.json (with the sha256 the file had).
	InsecureSkipChecksum bool `mapstructure:"insecure_skip_checksum"`
	// Install the package without checking its signature, as the appliance
	// does for its unsigned downloads (prometheus-slurm-exporter,
	// code-server, k3s-selinux, nvidia-mig-manager). An unsigned package
	// needs it; warned about and recorded in image.json.
	DisableGPGCheck bool `mapstructure:"disable_gpg_check"`
}
