package fatimage

import (
	"os"
	"path"
	"regexp"
)

var reOwner = regexp.MustCompile(`^[a-z_][a-z0-9_-]*(:[a-z_][a-z0-9_-]*)?$`) // user or user:group

// validateFiles checks the files entries.
func (c *Config) validateFiles() []error {
	var errs problems
	for i, f := range c.Files {
		n := 0
		for _, set := range []bool{f.Source != "", f.Content != "", f.Directory, f.Symlink != ""} {
			if set {
				n++
			}
		}
		switch {
		case n == 0:
			errs.add("files[%d]: one of source, content, directory = true or symlink is required", i)
		case n > 1:
			errs.add("files[%d]: source, content, directory = true and symlink exclude each other", i)
		case f.Symlink != "":
			if !path.IsAbs(f.Symlink) || path.Clean(f.Symlink) != f.Symlink {
				errs.add("files[%d]: symlink %q must be an absolute, clean path", i, f.Symlink)
			}
			if f.Mode != "" {
				errs.add("files[%d]: mode does not apply to a symlink", i)
			}
		case f.Source != "":
			if _, err := os.Stat(f.Source); err != nil {
				errs.add("files[%d]: source: %v", i, err)
			}
		}
		for _, msg := range fileDestProblems(f) {
			errs.add("files[%d]: %s", i, msg)
		}
		if f.Owner != "" && !reOwner.MatchString(f.Owner) {
			errs.add("files[%d]: owner %q must be user or user:group", i, f.Owner)
		}
	}
	return append(errs, duplicateFiles(c.Files)...)
}
