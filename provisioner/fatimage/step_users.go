package fatimage

import (
	"context"
	"fmt"
)

// stepUsers creates the groups and users with fixed ids.
func stepUsers(ctx context.Context, s *state) error {
	s.say("users")
	_, err := s.runScript(ctx, usersScript(s.plan.users))
	return err
}

func usersScript(users []User) *vmScript {
	sc := newScript("users")
	for _, u := range users {
		if u.Group != "" {
			sc.call("ensure_group", u.Group, fmt.Sprint(u.GID), flag01(u.System))
		}
		sc.call("ensure_user", u.Name, fmt.Sprint(u.UID), u.Group, u.Home, u.Shell, flag01(u.System), flag01(u.CreateHome))
	}
	return sc
}
