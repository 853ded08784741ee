package fatimage

import (
	"context"
	"fmt"
	"os"
	"strings"
)

// stepFiles copies the files and directories of `files` into the image.
func stepFiles(ctx context.Context, s *state) error {
	s.say("files")
	var files []staged
	sc := newScript("files")
	var place [][]string // calls after the unpacking
	for i, f := range s.cfg.Files {
		st, err := os.Stat(f.Source)
		if err != nil {
			return fmt.Errorf("files[%d]: %w", i, err)
		}
		mode := f.Mode
		if mode == "" {
			mode = "0644"
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
		name := fmt.Sprintf("file-%d", i)
		files = append(files, staged{name, data})
		owner, group := "root", "root"
		if f.Owner != "" {
			owner, group, _ = strings.Cut(f.Owner, ":")
			if group == "" {
				group = owner
			}
		}
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
