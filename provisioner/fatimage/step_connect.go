package fatimage

import (
	"context"
	"fmt"
	"strings"
)

// stepConnect finds the login user, checks the VM's OS version against
// the repositories', makes the plan for the VM's Rocky major when nothing
// else said it, and makes the run's work dir.
func stepConnect(ctx context.Context, s *state) error {
	out, err := s.runPlain(ctx, "id -un")
	if err != nil {
		return fmt.Errorf("finding the login user: %w", err)
	}
	s.loginUser = strings.TrimSpace(out)
	// the groups' values depend on the major: read it when nothing said it
	needMajor := s.plan.osMajor == "" && len(s.plan.sets.groups) > 0
	if len(reposOSVersions(s.plan.repos)) > 0 || needMajor {
		osRelease, err := s.runPlain(ctx, osReleaseCommand)
		if err != nil {
			return fmt.Errorf("reading the VM's /etc/os-release: %w", err)
		}
		if vm := osReleaseVersion(osRelease); vm != "" {
			warnings, err := checkOSVersion(vm, s.plan.repos)
			if err != nil {
				return err
			}
			for _, w := range warnings {
				s.say(w)
			}
			if needMajor {
				if err := s.planForVM(vm); err != nil {
					return err
				}
			}
		}
	}
	return s.makeWorkDir(ctx)
}
