package fatimage

import (
	"context"
	"strings"
)

// stepUpdate runs dnf update and asks dnf whether a reboot is needed.
func stepUpdate(ctx context.Context, s *state) error {
	s.say("dnf update")
	sc := newScript("update").setList("DNF_ENABLE", s.cfg.EnableRepos).call("dnf_update", s.cfg.UpdateExclude...)
	out, err := s.runScript(ctx, sc)
	s.rebootNeeded = s.rebootNeeded || strings.Contains(out, "REBOOT-NEEDED")
	return err
}
