package fatimage

import (
	"context"
	"strings"
)

// selinuxDir is where the VM's SELinux configuration and policies are.
const selinuxDir = "/etc/selinux"

func changesSELinux(s *state) bool { return s.plan.selinux.state != "unchanged" }

// stepSELinux sets the SELinux mode (and policy) of the next boot.
func stepSELinux(ctx context.Context, s *state) error {
	m := s.plan.selinux
	head := "SELinux " + m.state
	if m.policy != "" {
		head += ", policy " + m.policy
	}
	if m.fromSite {
		head += " (the site's " + selinuxStateVar + ")"
	}
	s.say(head)
	out, err := s.runScript(ctx, newScript("selinux").call("selinux_set", selinuxDir, m.state, m.policy))
	if strings.Contains(out, "REBOOT-NEEDED") {
		s.pending = appendUnique(s.pending, "SELinux mode set to "+m.state)
	}
	return err
}
