package fatimage

import (
	"context"
)

// stepServices leaves the services stopped and disabled.
func stepServices(ctx context.Context, s *state) error {
	s.say("services left stopped and disabled")
	_, err := s.runScript(ctx, newScript("services").call("disable_services", s.plan.disabledServices()...))
	return err
}
