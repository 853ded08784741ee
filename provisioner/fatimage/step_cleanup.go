package fatimage

import (
	"context"
	"slices"
	"strings"
)

// cleanupStep is one named cleanup action: the function
// cleanup_<name with _ for -> of scripts/cleanup.sh.
type cleanupStep struct {
	Name string
	// Final steps run at the very end: after them SSH logins may fail.
	Final bool
}

var cleanupSteps = []cleanupStep{
	{Name: "dnf-clean"}, // the name users skip it by; no dnf runs,
	{Name: "resolv-conf"},
	{Name: "nm-cloud-init"},
	{Name: "cloud-init"},
	{Name: "journal"},
	{Name: "machine-id"},
	{Name: "munge-key"},
	{Name: "slurm-conf"},
	{Name: "slurm-logs"},
	{Name: "tmp"},
	// the appliance's cleanup.yml items 8 and 9, on every build
	{Name: "scanner-files"},
	{Name: "rclone-stub"},
	{Name: "ssh-host-keys", Final: true},
	{Name: "login-ssh-keys", Final: true},
}

func cleanupStepByName(n string) (cleanupStep, bool) {
	for _, s := range cleanupSteps {
		if s.Name == n {
			return s, true
		}
	}
	return cleanupStep{}, false
}

func cleanupStepNames() []string {
	var n []string
	for _, s := range cleanupSteps {
		n = append(n, s.Name)
	}
	return n
}

// addCleanup adds to sc the calls of the selected steps (final or not)
// minus skipped ones.
func addCleanup(sc *vmScript, skip []string, final bool) {
	for _, s := range cleanupSteps {
		if s.Final == final && !slices.Contains(skip, s.Name) {
			sc.call("cleanup_step", s.Name)
		}
	}
}

// stepCleanup runs the cleanup steps that are not final.
func stepCleanup(ctx context.Context, s *state) error {
	s.say("cleanup")
	sc := newScript("cleanup")
	addCleanup(sc, s.cfg.SkipCleanupSteps, false)
	if sc.empty() {
		return nil
	}
	_, err := s.runScript(ctx, sc)
	return err
}

// cleanupFunction is the shell function of a cleanup step.
func cleanupFunction(name string) string { return "cleanup_" + strings.ReplaceAll(name, "-", "_") }
