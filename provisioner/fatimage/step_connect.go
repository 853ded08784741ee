package fatimage

import (
	"context"
	"fmt"
	"strings"
)

// stepConnect finds the login user and makes the run's work dir.
func stepConnect(ctx context.Context, s *state) error {
	out, err := s.runPlain(ctx, "id -un")
	if err != nil {
		return fmt.Errorf("finding the login user: %w", err)
	}
	s.loginUser = strings.TrimSpace(out)
	return s.makeWorkDir(ctx)
}
