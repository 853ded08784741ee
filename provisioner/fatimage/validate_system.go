package fatimage

import (
	"path"
	"strings"
)

// validateSystem checks how the run treats the VM: reboots, SELinux,
// cleanup, the login home and how scripts run.
func validateSystem(c *Config, _ *plan) []error {
	var errs problems
	switch c.Reboot {
	case "auto", "always", "never":
	default:
		errs.add("reboot: %q is not one of auto, always, never", c.Reboot)
	}
	if c.RebootTimeout < 0 {
		errs.add("reboot_timeout: must be positive, got %s", c.RebootTimeout)
	}
	switch c.SELinux {
	case "disabled", "permissive", "unchanged":
	default:
		errs.add("selinux: %q is not one of disabled, permissive, unchanged", c.SELinux)
	}
	for i, s := range c.SkipCleanupSteps {
		if _, ok := cleanupStepByName(s); !ok {
			errs.add("skip_cleanup_steps[%d]: unknown step %q (known: %s)", i, s, strings.Join(cleanupStepNames(), ", "))
		}
	}
	if c.LoginHome != "" && (!path.IsAbs(c.LoginHome) || path.Clean(c.LoginHome) != c.LoginHome || c.LoginHome == "/") {
		errs.add("login_home: %q must be an absolute, clean path other than /", c.LoginHome)
	}
	if !strings.Contains(c.ExecuteCommand, "{{.Path}}") {
		errs.add("execute_command: must contain {{.Path}}")
	}
	if !path.IsAbs(c.RemoteFolder) {
		errs.add("remote_folder: %q must be absolute", c.RemoteFolder)
	}
	return errs
}
