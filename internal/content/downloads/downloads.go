//go:generate packer-sdc mapstructure-to-hcl2 -type Download
//go:generate packer-sdc struct-markdown

// Package downloads is the `downloads` content kind: files fetched by URL
// and checked against their sha256 before any package work, then put at
// a path or unpacked into a directory. Its VM side is downloads.sh.
package downloads

// Download is a file fetched by URL and checked against its sha256 before
// anything is installed: put at a path, or (extract) a tar archive
// unpacked into a directory.
type Download struct {
	// http(s) URL of the file.
	URL string `mapstructure:"url" required:"true"`
	// sha256 (hex) of the file. Required unless `insecure_skip_checksum`.
	SHA256 string `mapstructure:"sha256"`
	// Install the file without a sha256 to check it against, as the
	// appliance fetches its k3s, helm, k9s and opkssh downloads: whatever
	// the URL serves on the day goes into the image. Warned about in the
	// build output and marked unchecked in image.json (with the sha256
	// the file had).
	InsecureSkipChecksum bool `mapstructure:"insecure_skip_checksum"`
	// Absolute path of the file, or with `extract` the directory the
	// archive is unpacked into (files already there and not in the
	// archive are kept). Not a system directory (/usr, /etc, ...), except
	// for `members` of an archive added to one as root (/usr/bin).
	Destination string `mapstructure:"destination" required:"true"`
	// Unpack the file as a tar archive (gzip, bzip2 and xz compression
	// are recognised) instead of copying it.
	Extract bool `mapstructure:"extract"`
	// With `extract`: leading path components dropped from each entry,
	// like tar's --strip-components (1 drops an archive's top
	// directory), at most 16.
	StripComponents int `mapstructure:"strip_components"`
	// With `extract`: only these members of the archive (paths as the
	// archive names them, before strip_components), e.g.
	// ["linux-amd64/helm"]. Default: everything.
	Members []string `mapstructure:"members"`
	// Owner as user or user:group. Default root:root.
	Owner string `mapstructure:"owner"`
	// Octal mode of a file download. Default 0644. With `extract` the
	// archive's modes are kept.
	Mode string `mapstructure:"mode"`
}
