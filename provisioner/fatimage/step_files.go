package fatimage

import (
	"context"
	"fmt"
	"os"
)

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

// stepFiles copies the files and directories of `files` into the image.
func stepFiles(ctx context.Context, s *state) error {
	s.say("files")
	var files []staged
	sc := newScript("files")
	var place [][]string // calls after the unpacking
	for i, f := range s.plan.Files {
		owner, group := splitOwner(f.Owner)
		mode := f.EffectiveMode()
		if f.Symlink != "" {
			place = append(place, []string{"make_link", f.Symlink, f.Destination, owner, group})
			continue
		}
		if f.Directory {
			place = append(place, []string{"make_dir", f.Destination, owner, group, mode})
			continue
		}
		name := fmt.Sprintf("file-%d", i)
		if f.Content != "" {
			files = append(files, staged{name, []byte(f.Content)})
			place = append(place, []string{"place_file", s.inWorkDir(name), f.Destination, owner, group, mode})
			continue
		}
		st, err := os.Stat(f.Source)
		if err != nil {
			return fmt.Errorf("files[%d]: %w", i, err)
		}
		var data []byte
		if st.IsDir() {
			data, err = tarDir(f.Source, mode)
		} else {
			data, err = os.ReadFile(f.Source)
		}
		if err != nil {
			return fmt.Errorf("files[%d]: %w", i, err)
		}
		files = append(files, staged{name, data})
		if st.IsDir() {
			place = append(place, []string{"place_dir", s.inWorkDir(name), f.Destination, owner, group})
		} else {
			place = append(place, []string{"place_file", s.inWorkDir(name), f.Destination, owner, group, mode})
		}
	}
	if err := s.stage(sc, files...); err != nil {
		return fmt.Errorf("files: %w", err)
	}
	for _, c := range place {
		sc.call(c[0], c[1:]...)
	}
	_, err := s.runScript(ctx, sc)
	return err
}
