package fatimage

import (
	"context"
	"strings"
)

func changesSELinux(s *state) bool { return s.cfg.SELinux != "unchanged" }

// stepSELinux sets the SELinux mode of the next boot.
func stepSELinux(ctx context.Context, s *state) error {
	s.say("SELinux " + s.cfg.SELinux)
	out, err := s.runScript(ctx, newScript("selinux").set("SELINUX_MODE", s.cfg.SELinux))
	if strings.Contains(out, "REBOOT-NEEDED") {
		s.pending = appendUnique(s.pending, "SELinux mode set to "+s.cfg.SELinux)
	}
	return err
}
