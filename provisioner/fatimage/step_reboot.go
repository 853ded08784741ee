package fatimage

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"
)

// stepReboot reboots as the reboot option says: always, or (auto) when an
// earlier step asked for it.
func stepReboot(ctx context.Context, s *state) error {
	switch {
	case s.cfg.Reboot == "always" || (s.cfg.Reboot == "auto" && s.rebootNeeded):
		s.say("reboot")
		return s.reboot(ctx)
	case s.rebootNeeded:
		s.say("a reboot is needed but reboot = \"never\"")
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
	s.say("the VM is back")
	return s.makeWorkDir(ctx)
}
