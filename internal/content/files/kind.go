package files

import (
	_ "embed"
	"fmt"
	"os"
	"path"
	"regexp"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content"
)

// Kind is the files kind.
type Kind struct{}

var _ content.Kind[File] = Kind{}

var reOwner = regexp.MustCompile(`^[a-z_][a-z0-9_-]*(:[a-z_][a-z0-9_-]*)?$`) // user or user:group

//go:embed files.sh
var shell string

// Option implements content.Kind.
func (Kind) Option() string { return "files" }

// ID is the destination: a template entry for a path replaces a group's.
func (Kind) ID(f File) string { return "destination " + f.Destination }

// Shell implements content.Kind: files.sh.
func (Kind) Shell() string { return shell }

// Validate checks the entries; a source must exist on the build host.
func (Kind) Validate(files []File) []error {
	var errs []error
	for i, f := range files {
		add := func(format string, a ...any) {
			errs = append(errs, fmt.Errorf("files[%d]: "+format, append([]any{i}, a...)...))
		}
		checkSource(f, add)
		for _, msg := range destProblems(f) {
			add("%s", msg)
		}
		if f.Owner != "" && !reOwner.MatchString(f.Owner) {
			add("owner %q must be user or user:group", f.Owner)
		}
	}
	return append(errs, duplicates(files)...)
}

// checkSource checks that one of source, content, directory and symlink
// is set, and that one.
func checkSource(f File, add func(string, ...any)) {
	n := 0
	for _, set := range []bool{f.Source != "", f.Content != "", f.Directory, f.Symlink != ""} {
		if set {
			n++
		}
	}
	switch {
	case n == 0:
		add("one of source, content, directory = true or symlink is required")
	case n > 1:
		add("source, content, directory = true and symlink exclude each other")
	case f.Symlink != "":
		if !path.IsAbs(f.Symlink) || path.Clean(f.Symlink) != f.Symlink {
			add("symlink %q must be an absolute, clean path", f.Symlink)
		}
		if f.Mode != "" {
			add("mode does not apply to a symlink")
		}
	case f.Source != "":
		if _, err := os.Stat(f.Source); err != nil {
			add("source: %v", err)
		}
	}
}

// Install stages the files' data (a directory as a tar archive) and
// places each entry: links and empty directories made, files and trees
// placed with their owner and mode.
func (Kind) Install(env content.Env, files []File) (content.Script, error) {
	sc := content.Script{Say: "files"}
	for i, f := range files {
		owner, group := content.SplitOwner(f.Owner)
		mode := f.EffectiveMode()
		switch {
		case f.Symlink != "":
			sc.Call("make_link", f.Symlink, f.Destination, owner, group)
			continue
		case f.Directory:
			sc.Call("make_dir", f.Destination, owner, group, mode)
			continue
		}
		name := fmt.Sprintf("file-%d", i)
		staged := path.Join(env.WorkDir, name)
		data, dir, err := f.data(mode)
		if err != nil {
			return sc, fmt.Errorf("files[%d]: %w", i, err)
		}
		sc.Staged = append(sc.Staged, content.Staged{Name: name, Data: data})
		if dir {
			sc.Call("place_dir", staged, f.Destination, owner, group)
		} else {
			sc.Call("place_file", staged, f.Destination, owner, group, mode)
		}
	}
	return sc, nil
}

// data is what f places: its content, its source file, or its source
// directory as a tar archive (dir true).
func (f File) data(mode string) (data []byte, dir bool, err error) {
	if f.Content != "" {
		return []byte(f.Content), false, nil
	}
	st, err := os.Stat(f.Source)
	if err != nil {
		return nil, false, err
	}
	if st.IsDir() {
		data, err = tarDir(f.Source, mode)
		return data, true, err
	}
	data, err = os.ReadFile(f.Source)
	return data, false, err
}
