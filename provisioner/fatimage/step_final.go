package fatimage

import (
	"context"
	"fmt"
	"strings"
)

// stepFinal reports the run's counts and step times, then runs the final cleanup steps
// (which may end SSH logins), removes the link the login-home step left
// and the work dir.
func stepFinal(ctx context.Context, s *state) error {
	s.say(fmt.Sprintf("done: %d dnf command(s), %d reboot(s)", s.dnfRuns, s.reboots))
	s.say("step times: " + strings.Join(s.took, ", "))
	sc := newScript("cleanup", "final")
	if *s.cfg.Cleanup {
		addCleanup(sc, s.cfg.SkipCleanupSteps, true)
	}
	sc.call("unlink_old_home").call("remove_workdir")
	_, err := s.runScript(ctx, sc)
	return err
}
