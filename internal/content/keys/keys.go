//go:generate packer-sdc mapstructure-to-hcl2 -type GPGKey
//go:generate packer-sdc struct-markdown

// Package keys is the `gpg_keys` content kind: GPG keys written and
// imported by the repos step, with the built-in keys of the standard
// repositories in `repos` (internal/gpgkeys) before them. Its VM side is
// keys.sh.
package keys

// GPGKey is a key to import with `rpm --import`. The standard
// repositories' keys are built in (see "GPG keys"); an entry with the
// path of a built-in key replaces it.
type GPGKey struct {
	// Path of the key in the image, a file in /etc/pki/rpm-gpg/, e.g.
	// /etc/pki/rpm-gpg/RPM-GPG-KEY-EPEL-9.
	// Required unless `builtin` is set (the default is then the built-in
	// key's path for the image's OS major).
	Path string `mapstructure:"path"`
	// Armored key written to Path (0644 root). Empty: Path is already in the image.
	Key string `mapstructure:"key"`
	// A built-in key to write and import, for the image's OS major:
	// `RStudio` or `ceph-release` (keys no repository in `repos` brings),
	// or a standard repository's (`epel`, `openhpc`, `ceph`, `cernvmfs`,
	// `TurboVNC`, `ondemand-web`).
	Builtin string `mapstructure:"builtin"`
}
