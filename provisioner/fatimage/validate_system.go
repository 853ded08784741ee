package fatimage

import (
	"strings"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/internal/safepath"
)

// minRebootTimeout is the shortest reboot_timeout: a reboot takes longer
// on every cloud.
const minRebootTimeout = time.Minute

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
	} else if c.RebootTimeout < minRebootTimeout {
		errs.add("reboot_timeout: %s is shorter than %s: no VM reboots that fast, so the build would fail after every reboot", c.RebootTimeout, minRebootTimeout)
	}
	switch c.SELinux {
	case "enforcing", "permissive", "disabled", "unchanged":
	case "": // with appliance_environment: the site's selinux_state
	default:
		errs.add("selinux: %q is not one of enforcing, permissive, disabled, unchanged", c.SELinux)
	}
	for i, s := range c.SkipCleanupSteps {
		if _, ok := cleanupStepByName(s); !ok {
			errs.add("skip_cleanup_steps[%d]: unknown step %q (known: %s)", i, s, strings.Join(cleanupStepNames(), ", "))
		}
	}
	if c.LoginHome != "" {
		if msg := safepath.Dest(c.LoginHome, false); msg != "" {
			errs.add("login_home: %q %s (the login user's home, its own directory)", c.LoginHome, msg)
		}
	}
	if !strings.Contains(c.ExecuteCommand, "{{.Path}}") {
		errs.add("execute_command: must contain {{.Path}}")
	}
	if msg := safepath.Dest(c.RemoteFolder, true); msg != "" {
		errs.add("remote_folder: %q %s", c.RemoteFolder, msg)
	}
	return errs
}
