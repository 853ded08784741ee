//go:generate packer-sdc mapstructure-to-hcl2 -type File
//go:generate packer-sdc struct-markdown

// Package files is the `files` content kind: local files and directories,
// literal content, empty directories and symbolic links placed in the
// image. Its VM side is files.sh.
package files

// File is a local file or directory copied into the image.
type File struct {
	// Local file or directory. A directory is copied recursively: its
	// contents land in destination, which it becomes. Required unless
	// `content`, `directory` or `symlink` is set.
	Source string `mapstructure:"source"`
	// Absolute, clean path in the image, given once. Not a system
	// directory (/, /etc, /usr, /var/lib, ...: internal/safepath) except
	// with `directory = true` owned by root, which sets its owner and
	// mode; nothing on /proc, /sys, /dev or /run.
	Destination string `mapstructure:"destination" required:"true"`
	// Literal content written to destination, instead of a source.
	Content string `mapstructure:"content"`
	// Create destination as an empty directory (mode Mode, default
	// 0755), instead of copying a source.
	Directory bool `mapstructure:"directory"`
	// Make destination a symbolic link to this absolute path (which need
	// not exist yet), instead of copying a source; a link already there
	// is replaced, a file or directory is not.
	Symlink string `mapstructure:"symlink"`
	// Owner as user or user:group. Default root:root.
	Owner string `mapstructure:"owner"`
	// Octal mode of files, e.g. "0644", at most 0777 (no setuid, setgid
	// or sticky bits). Default 0644; executables found in a directory
	// source keep 0755. Directories get 0755.
	Mode string `mapstructure:"mode"`
}

// EffectiveMode is the mode a `files` entry gets: its own, else 0755 for
// a directory and 0644 for a file (a symbolic link has none).
func (f File) EffectiveMode() string {
	switch {
	case f.Symlink != "":
		return ""
	case f.Mode != "":
		return f.Mode
	case f.Directory:
		return "0755"
	}
	return "0644"
}
