package fatimage

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"
)

// stepReboot does what the reboot option says after the package
// transaction: "always" reboots; "auto" leaves a pending reboot to the
// first later step that needs the running kernel (runSteps), so a build
// without one snapshots unrebooted; "never" only says what is pending.
func stepReboot(ctx context.Context, s *state) error {
	switch {
	case s.cfg.Reboot == "always":
		s.say("reboot (reboot = \"always\")")
		if len(s.pending) == 0 {
			s.pending = []string{`reboot = "always"`}
		}
		return s.reboot(ctx)
	case len(s.pending) > 0:
		s.say(fmt.Sprintf("a reboot is pending (%s); not done: %s", strings.Join(s.pending, "; "), map[string]string{
			"auto":  "no later step needs the running kernel, the image boots into the new one",
			"never": `reboot = "never"`,
		}[s.cfg.Reboot]))
	}
	return nil
}

const bootIDCommand = "cat /proc/sys/kernel/random/boot_id"

// reboot reboots the VM and waits until it answers with a new boot id.
func (s *state) reboot(ctx context.Context) error {
	before, err := s.runPlain(ctx, bootIDCommand)
	if err != nil {
		return err
	}
	before = strings.TrimSpace(before)
	// The session ends with the reboot: a dropped connection (or a session
	// that never ends, bounded here) is the expected outcome.
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	_, err = s.runScript(rctx, newScript("reboot"))
	cancel()
	var ce *cmdError
	if err != nil && !(errors.As(err, &ce) && ce.Status == packersdk.CmdDisconnect) && !(errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil) {
		return err
	}
	deadline := time.Now().Add(s.cfg.RebootTimeout)
	// Poll quickly for a while (a VM can be back in seconds), then every 2s.
	for i := 0; ; i++ {
		wait := 100 * time.Millisecond
		if i >= 100 {
			wait = 2 * time.Second
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("reboot: the VM did not come back within reboot_timeout (%s)", s.cfg.RebootTimeout)
		}
		cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		out, err := s.runPlain(cctx, bootIDCommand)
		cancel()
		if err == nil && strings.TrimSpace(out) != "" && strings.TrimSpace(out) != before {
			break
		}
	}
	s.reboots++
	s.rebooted = appendUnique(s.rebooted, s.pending...)
	s.pending = nil
	s.say("the VM is back")
	return s.makeWorkDir(ctx)
}
