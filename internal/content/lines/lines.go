//go:generate packer-sdc mapstructure-to-hcl2 -type LineEdit
//go:generate packer-sdc struct-markdown

// Package lines is the `line_edits` content kind: lines of files already
// in the image changed in place, as Ansible's lineinfile does. Its VM
// side is lines.sh.
package lines

// LineEdit changes one line of a file already in the image (a package's
// or the base image's), as Ansible's lineinfile does: the appliance edits
// files it does not own (tuned's hpc-compute profile, /etc/profile,
// /etc/profile.d/sh.local) rather than replacing them, so an update of
// their package keeps its own other lines.
type LineEdit struct {
	// Absolute path of the file. A missing file fails the build (naming
	// the edit) unless `create` is true.
	Path string `mapstructure:"path" required:"true"`
	// POSIX extended regular expression (as awk and grep -E take it)
	// matched against each line. With `line`: the last matching line is
	// replaced by it; with none matching, `line` is added. With
	// `absent`: every matching line is removed. Without it, `line`
	// itself is looked for.
	Regexp string `mapstructure:"regexp"`
	// The line the file must hold, without newline.
	Line string `mapstructure:"line"`
	// Remove the lines matching `regexp` instead (requires `regexp`).
	Absent bool `mapstructure:"absent"`
	// INI section (e.g. `sysctl` for [sysctl]) the line belongs to: only
	// lines inside it are matched, a new line goes at the section's end,
	// and a missing section is added at the file's end.
	Section string `mapstructure:"section"`
	// Create the file (root:root 0644, parent directories 0755) when it
	// is missing, instead of failing. Default false.
	Create bool `mapstructure:"create"`
}
