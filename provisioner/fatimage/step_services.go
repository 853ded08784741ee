package fatimage

import (
	"context"
	"slices"
)

// disabledServices are the groups' services and disable_services.
func (c *Config) disabledServices() []string {
	return appendUnique(slices.Clone(c.groupSets().Services), c.DisableServices...)
}

// stepServices leaves the services stopped and disabled.
func stepServices(ctx context.Context, s *state) error {
	s.say("services left stopped and disabled")
	_, err := s.runScript(ctx, newScript("services").call("disable_services", s.cfg.disabledServices()...))
	return err
}
